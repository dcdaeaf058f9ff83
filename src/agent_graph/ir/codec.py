"""The Program's compiled form: the generic codec (:mod:`.wire`) over the IR records.

Everything about the bytes is derived: the layout from the records' markers, the
decoders and the per-field bounds and code checks generated from them. What is left
here is what markers cannot say, the rules that relate fields to each other, kept as
plain code so each reads as the rule it enforces: a node's kind agrees with the data
it carries (and carries no other kind's), a gate lists exactly its authored members,
a call names an entry of the graph it calls, adjacency lists are exactly the edges
that touch a node, an Action's runner has what it runs with and nothing of another
runner's, a resource has what its protocol needs (a content file and digest, or a
read materializer of the right runner and, for host-action, its host input), catalog
entries are what the catalog schema allows, ids the VM looks things up by are
distinct, digests are digests, no path leaves the Provider root. They run after the
bounds checks, so they may index freely.

The rule behind them: whatever the VM, a Route or the dump would otherwise have to
``assert`` (or would get wrong) about compiled data is refused here, on load, with
``ir-corrupt``. Every rule holds for all IR the compiler writes.

``MAGIC`` and ``FORMAT_VERSION`` are the header. The version is a promise about the
layout: a change to the records' fields is a change to the bytes and needs a new
version, so a reader of older IR says "recompile" instead of "damaged".
"""

from __future__ import annotations

import _thread  # threading's lock without loading threading (cold start)
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from ..canonical import is_digest, is_identifier
from ..collector import collector_paused
from ..frozen import replace
from . import records as r
from .decoders import _string
from .schema import Table, describe
from .wire import RecordSet, Span, corrupt, digest_of, unpack_deferring
from .wire import decode as _decode
from .wire import encode as _encode

__all__ = [
    "BY_NAME",
    "FORMAT_VERSION",
    "LAYOUT",
    "MAGIC",
    "PROGRAM",
    "LazyGraphs",
    "check_bounds",
    "corrupt",
    "decode",
    "digest_of",
    "encode",
    "graph_ids",
    "graph_summaries",
]

MAGIC = "agent-graph.ir"
FORMAT_VERSION = 1

#: Per runner, the field it runs with (_RUNNERS) and the runner fields it may carry.
_RUNNERS = {"command": "command", "script": "entry", "agent": "skill", "host": "handler"}
_RUNNER_FIELDS = ("command", "entry", "runtime", "handler", "skill")
_OWN_FIELDS = {
    "command": ("command",),
    "script": ("entry", "runtime"),
    "agent": ("skill",),
    "host": ("handler",),
}
_RUNTIMES = ("node", "bun", "python", "shell")
_STATIC = (r.FILE, r.MARKDOWN, r.LEGACY_FILE)
_CATALOG_KINDS = ("route-reason", "diagnostic")
_SEVERITIES = (None, "info", "warning", "error")
_CATALOG_MEMBERS = ("code", "kind", "summary", "severity")


def _contained(path: str | None) -> bool:
    """A Provider-relative path that cannot leave the installed root."""
    if path is None:
        return True
    if not path or path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        return False
    return ".." not in path.replace("\\", "/").split("/")


def _distinct(ids: list[str], what: str) -> None:
    if len(set(ids)) != len(ids):
        twice = next(i for n, i in enumerate(ids) if i in ids[:n])
        raise corrupt(f"two {what} share the id {twice}")


def _check_file(ref: r.FileRef, where: str, *, skill: bool) -> None:
    """A Route exposes the file as a location with this digest; only a Skill may carry the
    error the compiler found in it (raised when a Route exposes it)."""
    if not is_digest(ref.digest):
        raise corrupt(f"{where}: file {ref.id} has no digest")
    if ref.error is not None and not (skill and is_identifier(ref.error[0])):
        raise corrupt(f"{where}: file {ref.id} carries an error it cannot have")


def _check_action(action: r.Action) -> None:
    """The runner has what it runs with and nothing of another runner's (a command plan is
    built from exactly these fields)."""
    where = f"action {action.id}"
    required = _RUNNERS.get(action.runner)
    if required is None or getattr(action, required) is None:
        raise corrupt(f"{where}: runner {action.runner!r} without its {required or 'kind'}")
    own = _OWN_FIELDS[action.runner]
    stray = [f for f in _RUNNER_FIELDS if f not in own and getattr(action, f) is not None]
    if action.args and action.runner != "script":
        stray.append("args")
    if stray:
        raise corrupt(f"{where}: runner {action.runner} with {', '.join(stray)}")
    if action.runner == "command" and not action.command:
        raise corrupt(f"{where}: empty command")
    if action.runner == "script" and action.runtime not in _RUNTIMES:
        raise corrupt(f"{where}: unknown script runtime {action.runtime!r}")
    if action.effect not in ("read", "write", "external") or action.cwd not in (
        "workspace",
        "provider",
    ):
        raise corrupt(f"{where}: unknown effect or cwd")
    refs = [ref for ref in (action.skill, action.input_schema, action.output_schema) if ref]
    if not all(_contained(p) for p in [action.entry, *(ref.path for ref in refs)]):
        raise corrupt(f"{where}: a path leaves the Provider root")
    for ref in refs:
        _check_file(ref, where, skill=ref is action.skill)


def _resource_problem(resource: r.Resource, actions: tuple[r.Action, ...]) -> str | None:
    """What is wrong with ``resource``'s protocol-specific data, or None.

    Static protocols (file, markdown, legacy file) have a content file and its digest and
    nothing to materialize; dynamic ones (graph-action, legacy view, host-action) have a
    read materializer of the runner their protocol needs, host-action ones also the host
    input of that materializer, and no content.
    """
    protocol, legacy = resource.protocol, resource.protocol in (r.LEGACY_FILE, r.LEGACY_VIEW)
    if legacy and (protocol == r.LEGACY_VIEW) != (resource.kind == "context-view"):
        return "legacy protocol does not match its kind"
    if protocol in _STATIC:
        if resource.content is None or not is_digest(resource.digest):
            return "static resource without its content file and digest"
        if resource.materializer != r.NONE or resource.host is not None:
            return "static resource with something to materialize"
        if protocol == r.MARKDOWN and resource.content != resource.path:
            return "markdown resource whose content is another file"
        return None
    if resource.content is not None or resource.digest is not None:
        return "dynamic resource with a content file"
    if resource.materializer == r.NONE:
        return "dynamic resource without its materializer"
    action = actions[resource.materializer]
    if action.effect != "read":
        return f"materializer {action.id} is not read-only"
    if protocol != r.HOST_ACTION:
        if resource.host is not None:
            return "host input on a resource that is not host-action"
        if action.runner not in ("command", "script"):
            return f"materializer {action.id} is neither a command nor a script"
        return None
    host = resource.host
    if host is None:
        return "host-action resource without its host input"
    if action.runner != "host" or action.input_schema is None or action.output_schema is None:
        return f"materializer {action.id} is not a host Action with both schemas"
    if host.handler != action.handler:
        return f"host handler {host.handler} is not its materializer's {action.handler}"
    return None


def _catalog_problem(entry: r.CatalogEntry, resources: tuple[r.Resource, ...]) -> str | None:
    """What the catalog schema would refuse in ``entry``, or a ``raw`` that is not it."""
    if entry.kind not in _CATALOG_KINDS or entry.severity not in _SEVERITIES:
        return "unknown kind or severity"
    if entry.kind == "route-reason" and entry.severity is not None:
        return "a route reason with a severity"
    if entry.document != r.NONE and resources[entry.document].protocol not in _STATIC:
        return "its document is not a static resource"
    raw, fields = entry.raw, (entry.code, entry.kind, entry.summary, entry.severity)
    if not isinstance(raw, dict) or tuple(map(raw.get, _CATALOG_MEMBERS)) != fields:
        return "authored entry does not match it"
    return None


def _check_facts(checks: tuple[r.FactCheck, ...] | None) -> str | None:
    """A check compares with a scalar (the graph schema's ``equals``) only when it is an
    ``equals`` check, and has a path."""
    for check in checks or ():
        if not check.path:
            return "fact check without a path"
        value = check.value
        if check.kind != r.EQUALS:
            if value is not None:
                return "exists/absent fact check with a value"
        elif value is not None and type(value) not in (bool, int, float, str):
            return "equals fact check with a value that is not a scalar"
    return None


def _check_adjacency(graph: r.Graph) -> None:
    """incoming/outgoing/repeats must be exactly the edges that touch each node, in
    declaration order, and repeat_edges exactly the repeat edges."""
    incoming: list[list[int]] = [[] for _ in graph.nodes]
    outgoing: list[list[int]] = [[] for _ in graph.nodes]
    repeats: list[list[int]] = [[] for _ in graph.nodes]
    repeat_edges = []
    for index, edge in enumerate(graph.edges):
        if edge.kind == r.REPEAT:
            repeats[edge.source].append(index)
            repeat_edges.append(index)
        else:
            outgoing[edge.source].append(index)
            incoming[edge.target].append(index)
    for node, ins, outs, reps in zip(graph.nodes, incoming, outgoing, repeats, strict=True):
        if list(node.incoming) != ins or list(node.outgoing) != outs or list(node.repeats) != reps:
            raise corrupt(f"graph {graph.id} node {node.id}: adjacency does not match edges")
    if list(graph.repeat_edges) != repeat_edges:
        raise corrupt(f"graph {graph.id}: repeat edge table does not match edges")


#: A called graph by index: its id and its entry names (all a call's check reads of it).
Callees = Callable[[int], tuple[str, frozenset[str]]]


def _callees(graphs: Sequence[r.Graph]) -> Callees:
    table = [(g.id, frozenset(name for name, _ in g.entrypoints)) for g in graphs]
    return table.__getitem__


def _check_node(node: r.Node, callees: Callees) -> str | None:
    """What is wrong with ``node``'s kind-specific data, or None: each kind carries its own
    data and no other kind's (action and gate nodes: a reason code and resource lists)."""
    gate = node.gate
    if gate is not None:
        authored = {"id", "prompt"}
        if gate.authority is not None:
            authored.add("authority")
        if gate.delegatable is not None:
            authored.add("delegatable")
        if sorted(gate.fields) != sorted(authored):
            return "gate member list does not match the gate"
    kind = node.kind
    if (kind == r.ACTION) != (node.action != r.NONE):
        return "action reference does not match its kind"
    if (kind == r.GATE) != (gate is not None):
        return "gate data does not match its kind"
    if kind == r.SUBGRAPH:
        if node.subgraph == r.NONE or node.entry is None:
            return "subgraph call does not match its kind"
        callee, entries = callees(node.subgraph)
        if node.entry not in entries:
            return f"calls the missing entry {node.entry} of graph {callee}"
    elif node.subgraph != r.NONE or node.entry is not None:
        return "subgraph call does not match its kind"
    if kind == r.TERMINAL:
        if node.terminal_outcome not in r.OUTCOMES:
            return "terminal outcome does not match its kind"
    elif node.terminal_outcome is not None:
        return "terminal outcome does not match its kind"
    routed = kind in (r.ACTION, r.GATE)  # the kinds a Route can stop at
    if routed != (node.reason_code is not None):
        return "reason code does not match its kind"
    if routed != (node.resources is not None):
        return "resource lists do not match their kind"
    if not routed and node.satisfied_by is not None:
        return "satisfiedBy on a node that is not an action or gate"
    return _check_facts(node.requires) or _check_facts(node.satisfied_by)


def _check_graph(graph: r.Graph, callees: Callees) -> None:
    """The per-graph part of :func:`verify` (a lazy decode runs it on first use)."""
    if not _contained(graph.path):
        raise corrupt(f"graph {graph.id}: its path leaves the Provider root")
    if not is_digest(graph.digest):
        raise corrupt(f"graph {graph.id}: no digest")
    _distinct([node.id for node in graph.nodes], f"nodes of graph {graph.id}")
    _distinct([name for name, _ in graph.entrypoints], f"entries of graph {graph.id}")
    for node in graph.nodes:
        problem = _check_node(node, callees)
        if problem is not None:
            raise corrupt(f"graph {graph.id} node {node.id}: {problem}")
    _check_adjacency(graph)


def verify(program: r.ProviderIR) -> None:
    """The Program rules that are not per-field bounds (those are generated)."""
    _verify_shared(program, [graph.id for graph in program.graphs])
    callees = _callees(program.graphs)
    for graph in program.graphs:
        _check_graph(graph, callees)


def _verify_shared(program: r.ProviderIR, graph_ids: list[str]) -> None:
    """Every rule of :func:`verify` that is not about one graph (a lazy decode runs these
    on load, before any graph is decoded)."""
    if not is_digest(program.provider_digest):
        raise corrupt("the Provider has no digest")
    _distinct(graph_ids, "graphs")
    _distinct([action.id for action in program.actions], "actions")
    _distinct([resource.id for resource in program.resources], "resources")
    for action in program.actions:
        _check_action(action)
    for resource in program.resources:
        if not (_contained(resource.path) and _contained(resource.content)):
            raise corrupt(f"resource {resource.id}: a path leaves the Provider root")
        problem = _resource_problem(resource, program.actions)
        if problem is not None:
            raise corrupt(f"resource {resource.id}: {problem}")
    if program.catalog is not None:
        _distinct([entry.code for entry in program.catalog], "catalog entries")
        for entry in program.catalog:
            problem = _catalog_problem(entry, program.resources)
            if problem is not None:
                raise corrupt(f"catalog entry {entry.code}: {problem}")


PROGRAM: RecordSet[r.ProviderIR] = RecordSet(
    magic=MAGIC,
    version=FORMAT_VERSION,
    root=r.ProviderIR,
    records=r.PROGRAM_RECORDS,
    verify=verify,
    rebuild="recompile the Provider",
)

#: Per record type, its layout codes in field order (see :data:`.schema.CODES`).
LAYOUT: dict[type, tuple[str, ...]] = PROGRAM.layout
BY_NAME: dict[str, type] = PROGRAM.by_name


def encode(program: r.ProviderIR) -> bytes:
    return _encode(PROGRAM, program)


def decode(data: bytes, *, expected_digest: str | None = None, lazy: bool = False) -> r.ProviderIR:
    """Decode and verify IR bytes (``expected_digest`` pins the whole bytes, as a bundle does).

    ``lazy``: check on load everything that is not one graph (the header and both
    digests, the string table, the Program's own fields, actions, resources, catalog,
    each graph's record shape and id, graph ids distinct) and decode, check and verify
    each graph when it is first used (:class:`LazyGraphs`, raising ``ir-corrupt`` then).
    Eager by default: a caller that decodes to inspect or re-encode gets every error now.
    """
    if not lazy:
        return _decode(PROGRAM, data, expected_digest=expected_digest)
    with collector_paused():  # as wire.decode: many small objects, no cycles
        return _decode_lazy(data, expected_digest)


def _decode_lazy(data: bytes, expected_digest: str | None) -> r.ProviderIR:
    # each graph's nodes and edges stay unread until the graph is first used
    strings, tree = unpack_deferring(
        PROGRAM, data, expected_digest, _PROGRAM_FIELDS[_GRAPHS_AT], _GRAPH_BODY
    )
    if type(tree) is not list or len(tree) != len(_PROGRAM_FIELDS):
        raise corrupt("malformed Program record")
    raw = tree[_GRAPHS_AT]
    if type(raw) is not list:
        raise corrupt("Program.graphs: expected a list")
    # the Program without its graphs goes through the generated decoder and checks,
    # which then see no graph; the graphs are decoded one by one as they are used
    rest = [*tree[:_GRAPHS_AT], [], *tree[_GRAPHS_AT + 1 :]]
    shell: r.ProviderIR = PROGRAM.decoders()[r.ProviderIR](rest, strings, len(strings))
    PROGRAM.check_part(r.ProviderIR, shell, {})
    graphs = LazyGraphs(raw, strings, shell)
    _verify_shared(shell, list(graphs.ids))
    return replace(shell, graphs=graphs)


_PROGRAM_FIELDS = describe(r.ProviderIR)
_GRAPHS_AT = [f.name for f in _PROGRAM_FIELDS].index("graphs")
_GRAPH_AT = {f.name: i for i, f in enumerate(describe(r.Graph))}
#: The fields of a graph a lazy decode leaves unread until the graph is used.
_GRAPH_BODY: frozenset[str] = frozenset(("nodes", "edges"))


class LazyGraphs(Sequence[r.Graph]):
    """A Program's graphs, each decoded, bounds-checked and verified on first use.

    Built by a lazy :func:`decode` after every check that is not about one graph; a
    graph's own checks (the generated decoder and bounds checks, then the per-graph
    rules of :func:`verify`) run when it is first materialised and raise ``ir-corrupt``
    then, so nothing the VM reads of a graph is unchecked, and a damaged graph leaves
    the others usable. It behaves as the tuple an eager decode gives (indexing,
    slicing, iteration, ``len``, equality with that tuple, hashing, encoding).

    A graph's check of its subgraph calls reads only the called graphs' entry names
    (from their undecoded records), never materialises them: materialising never
    recurses, whatever the depth of the call chain. Materialising takes a lock, so
    threads sharing a Program decode each graph once.
    """

    __slots__ = ("_done", "_entries", "_lock", "_raw", "_sizes", "_strings", "ids")

    def __init__(self, raw: list[Any], strings: list[str], shell: r.ProviderIR) -> None:
        width, at, count = len(_GRAPH_AT), _GRAPH_AT["id"], len(strings)
        ids = []
        for item in raw:  # needed to look graphs up by id: checked now
            if type(item) is not list or len(item) != width:
                raise corrupt("malformed Graph record")
            ids.append(_string(item[at], strings, count, "Graph.id"))
        self.ids: tuple[str, ...] = tuple(ids)
        self._raw, self._strings = raw, strings
        # the sizes of the Program's tables a graph indexes into (its own are its own)
        self._sizes = {
            Table("ProviderIR", f.name): len(raw)
            if f.name == "graphs"
            else len(getattr(shell, f.name) or ())
            for f in _PROGRAM_FIELDS
            if f.wire.kind == "records"
        }
        self._done: list[r.Graph | None] = [None] * len(raw)
        self._entries: dict[int, tuple[str, frozenset[str]]] = {}
        self._lock = _thread.allocate_lock()

    def __len__(self) -> int:
        return len(self._done)

    @overload
    def __getitem__(self, index: int) -> r.Graph: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[r.Graph, ...]: ...

    def __getitem__(self, index: int | slice) -> r.Graph | tuple[r.Graph, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self._done))[index])
        graph = self._done[index]  # the hot path: one list read once decoded
        return graph if graph is not None else self._materialise(index)

    def __iter__(self) -> Iterator[r.Graph]:
        for index in range(len(self._done)):
            yield self[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LazyGraphs, tuple)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"LazyGraphs({len(self)} graphs, {self.materialised()} decoded)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))  # a copy or a pickle is the eager tuple

    def materialised(self) -> int:
        """How many graphs have been decoded so far."""
        return sum(graph is not None for graph in self._done)

    def summaries(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """Each graph's (id, path, dependencies), read from its undecoded record (type and
        string checks only), for cross-checks against a bundle manifest."""
        strings, count = self._strings, len(self._strings)
        path_at, deps_at = _GRAPH_AT["path"], _GRAPH_AT["dependencies"]
        out = []
        for graph_id, item in zip(self.ids, self._raw, strict=True):
            deps = item[deps_at]
            if type(deps) is not list:
                raise corrupt("Graph.dependencies: expected a list")
            path = _string(item[path_at], strings, count, "Graph.path")
            names = tuple(_string(d, strings, count, "Graph.dependencies") for d in deps)
            out.append((graph_id, path, names))
        return out

    def _materialise(self, index: int) -> r.Graph:
        index = range(len(self._done))[index]  # negative indexes as a tuple takes them
        with self._lock:
            graph = self._done[index]
            if graph is None:  # not decoded by another thread while this one waited
                with collector_paused():
                    graph = self._decode(index)
                self._done[index] = graph
        return graph

    def _decode(self, index: int) -> r.Graph:
        item = [part.read() if type(part) is Span else part for part in self._raw[index]]
        graph: r.Graph = PROGRAM.decoders()[r.Graph](item, self._strings, len(self._strings))
        PROGRAM.check_part(r.Graph, graph, self._sizes)
        _check_graph(graph, self._callee)
        return graph

    def _callee(self, index: int) -> tuple[str, frozenset[str]]:
        """A called graph's id and entry names (``index`` is bounds-checked already)."""
        found = self._entries.get(index)
        if found is None:
            done = self._done[index]
            if done is not None:
                names = frozenset(name for name, _ in done.entrypoints)
            else:  # read the names only: the called graph is checked when it is used
                pairs, count = self._raw[index][_GRAPH_AT["entrypoints"]], len(self._strings)
                if type(pairs) is not list or any(
                    type(p) is not list or len(p) != 2 for p in pairs
                ):
                    raise corrupt(f"graph {self.ids[index]}: malformed entrypoints")
                names = frozenset(
                    _string(p[0], self._strings, count, "Graph.entrypoints") for p in pairs
                )
            found = self._entries[index] = (self.ids[index], names)
        return found


def graph_ids(graphs: Sequence[r.Graph]) -> tuple[str, ...]:
    """The graphs' ids in order, without decoding lazy ones."""
    return graphs.ids if isinstance(graphs, LazyGraphs) else tuple(g.id for g in graphs)


def graph_summaries(graphs: Sequence[r.Graph]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Each graph's (id, path, dependencies), without decoding lazy ones."""
    if isinstance(graphs, LazyGraphs):
        return graphs.summaries()
    return [(g.id, g.path, g.dependencies) for g in graphs]


def check_bounds(program: r.ProviderIR) -> None:
    """Every index must point into its table, every kind code must be known, and the
    Program's cross-field rules must hold (raises ``ir-corrupt``)."""
    PROGRAM.check(program)
