"""Where a Provider's names are defined and where they are used, read from its files.

Built from the parsed files (buffers over the disk), not from a checked Provider, so it
answers while the Provider has errors. A :class:`Ref` is one written name: a node id, a
code, a Graph id, an entry name, a resource reference or a file path; ``defines`` marks
the place that declares it. Node references in state keys (``train/ship>ship/tag``)
and ``recordNode`` are split at ``>`` and ``/`` so each names its own Graph's node.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ..documents.sourcemap import join_pointer
from .parsed import Parsed, parse_file
from .spans import Span, inner

Kind = Literal["node", "code", "graph", "entry", "file", "resource"]

#: Files looked at under a Provider's directory (a checkout is bigger than a Provider).
MAX_FILES: Final = 4000
_SKIPPED: Final = frozenset({"node_modules", "dist", "__pycache__"})
_SUFFIXES: Final = frozenset({".yaml", ".yml", ".json", ".md"})
GRAPH_SCHEMA: Final = "agent-graph.graph.v1"
TEST_SCHEMA: Final = "agent-graph.test.v1"
CATALOG_SCHEMA: Final = "agent-graph.code-catalog.v1"
ACTION_SCHEMA: Final = "agent-graph.action.v1"


@dataclass(frozen=True, slots=True)
class Ref:
    span: Span
    kind: Kind
    name: str
    graph: str = ""  # the Graph a node or entry name belongs to
    defines: bool = False
    target: Path | None = None  # a file reference's file


@dataclass(slots=True)
class Node:
    graph: str
    id: str
    value: dict[str, Any]
    span: Span


@dataclass(slots=True)
class Graph:
    id: str
    path: Path
    span: Span | None
    nodes: dict[str, Node] = field(default_factory=dict)
    entries: dict[str, Span] = field(default_factory=dict)


@dataclass(slots=True)
class Code:
    code: str
    value: dict[str, Any]
    span: Span


@dataclass(slots=True)
class ProviderIndex:
    root: Path
    manifest: Path
    graphs: dict[str, Graph] = field(default_factory=dict)
    codes: dict[str, Code] = field(default_factory=dict)
    resources: dict[str, Path] = field(default_factory=dict)  # resource id -> its file
    actions: dict[Path, dict[str, Any]] = field(default_factory=dict)
    files: dict[Path, Parsed] = field(default_factory=dict)
    refs: list[Ref] = field(default_factory=list)

    def ref_at(self, path: Path, line: int, column: int) -> Ref | None:
        for ref in self.refs:
            if ref.span.contains(path, line, column):
                return ref
        return None

    def graph_of(self, path: Path) -> Graph | None:
        return next((g for g in self.graphs.values() if g.path == path), None)

    def resolve(self, reference: str) -> Path | None:
        """A resource reference as the loader resolves it: an id first, then a path."""
        found = self.resources.get(reference)
        if found is not None:
            return found
        candidate = Path(os.path.normpath(self.root / reference))
        return candidate if candidate.is_file() else None

    def node_graph(self, name: str, preferred: str) -> str:
        """The Graph a bare node id names: ``preferred`` when it has the node, else the
        first Graph that does (a test's primaryNode may be inside a child Graph)."""
        if name in self.nodes_of(preferred):
            return preferred
        return next((g.id for g in self.graphs.values() if name in g.nodes), preferred)

    def nodes_of(self, graph: str) -> dict[str, Node]:
        found = self.graphs.get(graph)
        return found.nodes if found is not None else {}


def build(manifest: Path, outside: tuple[Path, ...] = ()) -> ProviderIndex:
    """The index of the Provider at ``manifest`` (call inside ``buffers`` to read buffers);
    ``outside``: files of it that are not under its directory (a bound SKILL.md)."""
    index = ProviderIndex(manifest.parent, manifest)
    for path in [*_files(index.root), *outside]:
        parsed = parse_file(path, last_good=True)
        if parsed is not None and isinstance(parsed.value, dict):
            index.files[path] = parsed
    # declarations first, so the references below can name the Graph they point into
    for parsed in index.files.values():
        schema = parsed.value.get("schema")
        if schema == GRAPH_SCHEMA:
            _declare_graph(index, parsed)
        elif schema == CATALOG_SCHEMA:
            _declare_codes(index, parsed)
        elif schema == ACTION_SCHEMA:
            index.actions[parsed.path] = parsed.value
        elif isinstance(parsed.value.get("id"), str) and _is_resource(parsed):
            index.resources.setdefault(parsed.value["id"], parsed.path)
    for parsed in index.files.values():
        schema = parsed.value.get("schema")
        if parsed.path == manifest:
            _manifest_refs(index, parsed)
        elif schema == GRAPH_SCHEMA:
            _graph_refs(index, parsed)
        elif schema == CATALOG_SCHEMA:
            _catalog_refs(index, parsed)
        elif schema == TEST_SCHEMA:
            _test_refs(index, parsed)
        elif parsed.path.name == "SKILL.md":
            _skill_refs(index, parsed)
    return index


def _files(root: Path) -> list[Path]:
    found: list[Path] = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(
            d for d in subdirectories if not d.startswith(".") and d not in _SKIPPED
        )
        for name in sorted(names):
            if Path(name).suffix.lower() in _SUFFIXES:
                found.append(Path(directory) / name)
                if len(found) >= MAX_FILES:
                    return found
    return found


def _is_resource(parsed: Parsed) -> bool:
    schema = parsed.value.get("schema")
    if parsed.path.suffix.lower() == ".md":
        return parsed.path.name != "SKILL.md" and "kind" in parsed.value
    return isinstance(schema, str) and schema.startswith("agent-graph.resource")


def _add(
    index: ProviderIndex, parsed: Parsed, pointer: str, kind: Kind, name: Any, **more: Any
) -> None:
    if not isinstance(name, str):
        return
    span = parsed.span(pointer)
    if span is not None:
        index.refs.append(Ref(inner(span, parsed.lines, name), kind, name, **more))


def _file_ref(index: ProviderIndex, parsed: Parsed, pointer: str, value: Any) -> None:
    if isinstance(value, str):
        target = Path(os.path.normpath(index.root / value))
        _add(index, parsed, pointer, "file", value, target=target)


def _declare_graph(index: ProviderIndex, parsed: Parsed) -> None:
    gid = parsed.value.get("id")
    if not isinstance(gid, str) or gid in index.graphs:
        return
    graph = Graph(gid, parsed.path, parsed.span("/id"))
    index.graphs[gid] = graph
    if graph.span is not None:
        index.refs.append(Ref(inner(graph.span, parsed.lines, gid), "graph", gid, defines=True))
    nodes = parsed.value.get("nodes")
    for i, node in enumerate(nodes if isinstance(nodes, list) else []):
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            span = parsed.span(f"/nodes/{i}/id")
            if span is not None and node["id"] not in graph.nodes:
                span = inner(span, parsed.lines, node["id"])
                graph.nodes[node["id"]] = Node(gid, node["id"], node, span)
                index.refs.append(Ref(span, "node", node["id"], gid, defines=True))
    entries = parsed.value.get("entrypoints")
    for name in entries if isinstance(entries, dict) else {}:
        span = parsed.key_span("/entrypoints", name)
        if span is not None:
            span = inner(span, parsed.lines, name)
            graph.entries[name] = span
            index.refs.append(Ref(span, "entry", name, gid, defines=True))


def _declare_codes(index: ProviderIndex, parsed: Parsed) -> None:
    entries = parsed.value.get("codes")
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, dict) and isinstance(entry.get("code"), str):
            span = parsed.span(f"/codes/{i}/code")
            if span is not None and entry["code"] not in index.codes:
                span = inner(span, parsed.lines, entry["code"])
                index.codes[entry["code"]] = Code(entry["code"], entry, span)
                index.refs.append(Ref(span, "code", entry["code"], defines=True))


def _manifest_refs(index: ProviderIndex, parsed: Parsed) -> None:
    graphs = parsed.value.get("graphs")
    for i, path in enumerate(graphs if isinstance(graphs, list) else []):
        _file_ref(index, parsed, f"/graphs/{i}", path)
    catalogs = parsed.value.get("catalogs")
    if isinstance(catalogs, dict):
        _file_ref(index, parsed, "/catalogs/codes", catalogs.get("codes"))


def _catalog_refs(index: ProviderIndex, parsed: Parsed) -> None:
    entries = parsed.value.get("codes")
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, dict):
            _file_ref(index, parsed, f"/codes/{i}/document", entry.get("document"))


def _graph_refs(index: ProviderIndex, parsed: Parsed) -> None:
    gid = parsed.value.get("id")
    if not isinstance(gid, str) or index.graphs.get(gid, None) is None:
        return
    if index.graphs[gid].path != parsed.path:
        return
    nodes = parsed.value.get("nodes")
    for i, node in enumerate(nodes if isinstance(nodes, list) else []):
        if isinstance(node, dict):
            _node_refs(index, parsed, f"/nodes/{i}", node)
    entries = parsed.value.get("entrypoints")
    for name, target in (entries if isinstance(entries, dict) else {}).items():
        _add(index, parsed, join_pointer("/entrypoints", name), "node", target, graph=gid)
    edges = parsed.value.get("edges")
    for i, edge in enumerate(edges if isinstance(edges, list) else []):
        if isinstance(edge, dict):
            for member in ("from", "to"):
                _add(index, parsed, f"/edges/{i}/{member}", "node", edge.get(member), graph=gid)


def _node_refs(index: ProviderIndex, parsed: Parsed, at: str, node: dict[str, Any]) -> None:
    _file_ref(index, parsed, f"{at}/action", node.get("action"))
    _add(index, parsed, f"{at}/reasonCode", "code", node.get("reasonCode"))
    if node.get("kind") == "subgraph":
        child = node.get("graph")
        _add(index, parsed, f"{at}/graph", "graph", child)
        if isinstance(child, str):
            _add(index, parsed, f"{at}/entry", "entry", node.get("entry"), graph=child)
    resources = node.get("resources")
    for group in ("required", "recommended"):
        listed = resources.get(group) if isinstance(resources, dict) else None
        for j, reference in enumerate(listed if isinstance(listed, list) else []):
            _add(index, parsed, f"{at}/resources/{group}/{j}", "resource", reference)


def _test_refs(index: ProviderIndex, parsed: Parsed) -> None:
    value = parsed.value
    gid = value.get("graph")
    _add(index, parsed, "/graph", "graph", gid)
    if not isinstance(gid, str):
        return
    _add(index, parsed, "/entry", "entry", value.get("entry"), graph=gid)
    expect = value.get("expect")
    if isinstance(expect, dict):
        primary = expect.get("primaryNode")
        if isinstance(primary, str):
            graph = index.node_graph(primary, gid)
            _add(index, parsed, "/expect/primaryNode", "node", primary, graph=graph)
        _add(index, parsed, "/expect/primaryReasonCode", "code", expect.get("primaryReasonCode"))
        record = expect.get("recordNode")
        span = parsed.span("/expect/recordNode")
        if isinstance(record, str) and span is not None:
            _state_key_refs(index, parsed, span, record)
        listed = expect.get("requiredResources")
        for j, reference in enumerate(listed if isinstance(listed, list) else []):
            _add(index, parsed, f"/expect/requiredResources/{j}", "resource", reference)
    state = value.get("state")
    outcomes = state.get("outcomes") if isinstance(state, dict) else None
    for key in outcomes if isinstance(outcomes, dict) else {}:
        span = parsed.key_span("/state/outcomes", key)
        if span is not None:
            _state_key_refs(index, parsed, span, key)


def _state_key_refs(index: ProviderIndex, parsed: Parsed, span: Span, key: str) -> None:
    """``graph/node`` segments of a state key, each node id placed in the written key."""
    token = inner(span, parsed.lines, key)
    offset = token.start
    for segment in key.split(">"):
        graph, slash, node = segment.partition("/")
        if slash and graph and node:
            start = offset + len(graph) + 1
            where = Span(token.path, token.line, start, start + len(node))
            index.refs.append(Ref(where, "node", node, graph))
            at = Span(token.path, token.line, offset, offset + len(graph))
            index.refs.append(Ref(at, "graph", graph))
        offset += len(segment) + 1


def _skill_refs(index: ProviderIndex, parsed: Parsed) -> None:
    metadata = parsed.value.get("metadata")
    if not isinstance(metadata, dict):
        return
    gid = metadata.get("agent-graph.graph")
    _add(index, parsed, "/metadata/agent-graph.graph", "graph", gid)
    if isinstance(gid, str):
        entry = metadata.get("agent-graph.entry")
        _add(index, parsed, "/metadata/agent-graph.entry", "entry", entry, graph=gid)
