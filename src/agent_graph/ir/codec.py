"""Canonical msgpack encoding of the IR, and a decoder that trusts nothing.

Layout: ``[MAGIC, FORMAT_VERSION, sha256(body), body]`` where ``body`` is the msgpack
of ``[strings, program]``. Records are positional arrays in field order; identifier
strings are interned in ``strings`` and stored as indexes; JSON values (fact check
values, host inputs, raw catalog entries) are stored as themselves.

Decoding checks the magic, the version, the body digest, every field's type and
every index bound, so damaged or truncated bytes raise ``ir-corrupt`` instead of an
IndexError or a wrong answer. The Program digest is the SHA-256 of the whole bytes.
"""

from __future__ import annotations

import functools
import gc
import hashlib
from dataclasses import fields
from typing import Any

import msgpack

from ..errors import AgentGraphError
from . import records as r

MAGIC = "agent-graph.ir"
FORMAT_VERSION = 1

# Field codes: s str, s? optional str, i int, b bool, b? optional bool, j JSON value,
# I tuple of ints, S tuple of str, P (str, int) pairs, E optional (str, str),
# R:X record, R?:X optional record, L:X tuple of records.
_LAYOUT_TEXT: dict[type, str] = {
    r.FactCheck: "S i j",
    r.ResourceLists: "I I",
    r.Delegated: "b i R?:ResourceLists",
    r.Gate: "s s s? b? i i R?:Delegated S",
    r.Node: "s i s? s? i b L?:FactCheck L?:FactCheck s? i R?:Gate i s? R?:ResourceLists I I I",
    r.Edge: "i i i i",
    r.Graph: "s s s P L:Node L:Edge I S",
    r.FileRef: "s s s s s E",
    r.Action: "s s s s s? s? s? S s? R?:FileRef R?:FileRef R?:FileRef",
    r.HostInput: "s s s j",
    r.Resource: "s s s i s s? s? i R?:HostInput",
    r.CatalogEntry: "s s s s? i j",
    r.Program: "s s s L:Graph L:Action L:Resource L?:CatalogEntry",
}
LAYOUT: dict[type, tuple[str, ...]] = {
    cls: tuple(text.split()) for cls, text in _LAYOUT_TEXT.items()
}
BY_NAME: dict[str, type] = {cls.__name__: cls for cls in LAYOUT}
_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {
    cls: tuple(zip(layout, (f.name for f in fields(cls)), strict=True))
    for cls, layout in LAYOUT.items()
}


def corrupt(message: str) -> AgentGraphError:
    return AgentGraphError("ir-corrupt", f"Compiled IR is damaged: {message}")


# -- encoding ---------------------------------------------------------------------------


class _Encoder:
    def __init__(self) -> None:
        self.strings: list[str] = []
        self.index: dict[str, int] = {}

    def intern(self, text: str) -> int:
        found = self.index.get(text)
        if found is None:
            found = self.index[text] = len(self.strings)
            self.strings.append(text)
        return found

    def record(self, value: Any) -> list[Any]:
        field = self.field
        return [field(code, getattr(value, name)) for code, name in _FIELDS[type(value)]]

    def field(self, code: str, value: Any) -> Any:
        if value is None:
            return None
        if code in ("s", "s?"):
            return self.intern(value)
        if code in ("i", "b", "b?", "j", "I"):
            return list(value) if code == "I" else value
        if code == "S":
            return [self.intern(v) for v in value]
        if code == "P":
            return [[self.intern(name), index] for name, index in value]
        if code == "E":
            return [self.intern(value[0]), self.intern(value[1])]
        if code.startswith(("L:", "L?:")):
            return [self.record(item) for item in value]
        return self.record(value)  # R:/R?:


def encode(program: r.Program) -> bytes:
    encoder = _Encoder()
    tree = encoder.record(program)
    body = msgpack.packb([encoder.strings, tree], use_bin_type=True)
    return bytes(
        msgpack.packb(
            [MAGIC, FORMAT_VERSION, hashlib.sha256(body).digest(), body], use_bin_type=True
        )
    )


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- decoding ---------------------------------------------------------------------------


@functools.cache
def _decoders() -> dict[type, Any]:
    from .decoders import build

    return build(LAYOUT)


def decode(data: bytes, *, expected_digest: str | None = None) -> r.Program:
    """Decode and verify IR bytes (``expected_digest`` pins the whole bytes, as a bundle does)."""
    # Decoding allocates many small objects and no reference cycles; pausing the cyclic
    # collector for it cuts a cold load of a large Program by about a third.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _decode(data, expected_digest)
    finally:
        if paused:
            gc.enable()


def _decode(data: bytes, expected_digest: str | None) -> r.Program:
    if expected_digest is not None and digest_of(data) != expected_digest:
        raise corrupt(f"digest {digest_of(data)} does not match the expected {expected_digest}")
    try:
        outer = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True)
    except Exception as exc:  # msgpack raises several unrelated types
        raise corrupt(f"not a msgpack document ({type(exc).__name__})") from None
    if not isinstance(outer, list) or len(outer) != 4 or outer[0] != MAGIC:
        raise corrupt("missing the agent-graph.ir header")
    if type(outer[1]) is not int or outer[1] != FORMAT_VERSION:
        raise AgentGraphError(
            "ir-version-unsupported",
            f"Compiled IR format {outer[1]!r} is not supported "
            f"(this build reads {FORMAT_VERSION}); "
            "recompile the Provider",
        )
    body = outer[3]
    if not isinstance(body, bytes) or not isinstance(outer[2], bytes):
        raise corrupt("malformed header")
    if hashlib.sha256(body).digest() != outer[2]:
        raise corrupt("body digest mismatch")
    try:
        strings, tree = msgpack.unpackb(body, raw=False, strict_map_key=True, use_list=True)
    except Exception as exc:
        raise corrupt(f"body is not msgpack ({type(exc).__name__})") from None
    if not isinstance(strings, list):
        raise corrupt("missing string table")
    if not all(type(text) is str for text in strings):
        raise corrupt("string table holds a non-string")
    program: r.Program = _decoders()[r.Program](tree, strings, len(strings))
    check_bounds(program)
    return program


_RUNNERS = {"command": "command", "script": "entry", "agent": "skill", "host": "handler"}
_RUNTIMES = ("node", "bun", "python", "shell")


def _contained(path: str | None) -> bool:
    """A Provider-relative path that cannot leave the installed root."""
    if path is None:
        return True
    if not path or path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        return False
    return ".." not in path.replace("\\", "/").split("/")


def _check_action(action: r.Action) -> None:
    where = f"action {action.id}"
    required = _RUNNERS.get(action.runner)
    if required is None or getattr(action, required) is None:
        raise corrupt(f"{where}: runner {action.runner!r} without its {required or 'kind'}")
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


def _check_adjacency(graph: r.Graph) -> None:
    """incoming/outgoing/repeats must be exactly the edges that touch each node."""
    edges = graph.edges
    seen_in = seen_out = seen_repeat = 0
    for index, node in enumerate(graph.nodes):
        for lst, end, repeat in ((node.incoming, "target", False), (node.outgoing, "source", False),
                                 (node.repeats, "source", True)):  # fmt: skip
            if list(lst) != sorted(set(lst)):
                raise corrupt(f"graph {graph.id} node {node.id}: edge lists out of order")
            for e in lst:
                edge = edges[e]
                if getattr(edge, end) != index or (edge.kind == r.REPEAT) != repeat:
                    raise corrupt(
                        f"graph {graph.id} node {node.id}: adjacency does not match edges"
                    )
        seen_in += len(node.incoming)
        seen_out += len(node.outgoing)
        seen_repeat += len(node.repeats)
    repeats = sum(1 for edge in edges if edge.kind == r.REPEAT)
    if seen_in != len(edges) - repeats or seen_out != seen_in or seen_repeat != repeats:
        raise corrupt(f"graph {graph.id}: adjacency misses edges")
    if list(graph.repeat_edges) != [i for i, edge in enumerate(edges) if edge.kind == r.REPEAT]:
        raise corrupt(f"graph {graph.id}: repeat edge table does not match edges")


def check_bounds(program: r.Program) -> None:
    """Every index must point into its table, every kind code must be known."""
    n_actions, n_resources, n_graphs = (
        len(program.actions),
        len(program.resources),
        len(program.graphs),
    )

    def within(index: int, size: int, where: str, optional: bool = True) -> None:
        if not (0 <= index < size or (optional and index == r.NONE)):
            raise corrupt(f"{where}: index {index} out of range")

    for action in program.actions:
        _check_action(action)
    for resource in program.resources:
        if not (_contained(resource.path) and _contained(resource.content)):
            raise corrupt(f"resource {resource.id}: a path leaves the Provider root")
        within(resource.materializer, n_actions, f"resource {resource.id} materializer")
        within(resource.protocol, len(r.PROTOCOLS), f"resource {resource.id} protocol", False)
    for entry in program.catalog or ():
        within(entry.document, n_resources, f"catalog {entry.code} document")

    def lists(value: r.ResourceLists | None, where: str) -> None:
        for index in (value.required + value.recommended) if value else ():
            within(index, n_resources, where, False)

    for graph in program.graphs:
        n_nodes, n_edges = len(graph.nodes), len(graph.edges)
        for _, index in graph.entrypoints:
            within(index, n_nodes, f"graph {graph.id} entrypoint", False)
        for edge in graph.edges:
            within(edge.source, n_nodes, f"graph {graph.id} edge source", False)
            within(edge.target, n_nodes, f"graph {graph.id} edge target", False)
            within(edge.kind, len(r.EDGE_KINDS), f"graph {graph.id} edge kind", False)
            if not 0 < edge.mask < 1 << len(r.OUTCOMES):
                raise corrupt(f"graph {graph.id}: edge outcome mask {edge.mask}")
        for index in graph.repeat_edges:
            within(index, n_edges, f"graph {graph.id} repeat edge", False)
        if not _contained(graph.path):
            raise corrupt(f"graph {graph.id}: its path leaves the Provider root")
        for node in graph.nodes:
            where = f"graph {graph.id} node {node.id}"
            within(node.kind, len(r.NODE_KINDS), f"{where} kind", False)
            within(node.action, n_actions, f"{where} action")
            within(node.subgraph, n_graphs, f"{where} subgraph")
            for index in node.incoming + node.outgoing + node.repeats:
                within(index, n_edges, f"{where} edge", False)
            for check in (node.requires or ()) + (node.satisfied_by or ()):
                within(check.kind, 3, f"{where} fact check", False)
            lists(node.resources, f"{where} resources")
            if node.gate is not None:
                authored = {"id", "prompt"} | {
                    name
                    for name, value in (("authority", node.gate.authority),
                                        ("delegatable", node.gate.delegatable))
                    if value is not None
                }  # fmt: skip
                if sorted(node.gate.fields) != sorted(authored):
                    raise corrupt(f"{where}: gate member list does not match the gate")
                within(node.gate.inspection, n_actions, f"{where} inspection")
                within(node.gate.resolution, n_actions, f"{where} resolution")
                if node.gate.delegated is not None:
                    within(node.gate.delegated.resolution, n_actions, f"{where} delegated")
                    lists(node.gate.delegated.resources, f"{where} delegated resources")
            if (node.kind == r.ACTION) != (node.action != r.NONE):
                raise corrupt(f"{where}: action reference does not match its kind")
            if (node.kind == r.GATE) != (node.gate is not None):
                raise corrupt(f"{where}: gate data does not match its kind")
            if (node.kind == r.SUBGRAPH) != (node.subgraph != r.NONE and node.entry is not None):
                raise corrupt(f"{where}: subgraph call does not match its kind")
            if (node.kind == r.TERMINAL) != (node.terminal_outcome in r.OUTCOMES):
                raise corrupt(f"{where}: terminal outcome does not match its kind")
        _check_adjacency(graph)
