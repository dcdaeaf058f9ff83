"""The Program's compiled form: the generic codec (:mod:`.wire`) over the IR records.

Everything about the bytes is derived: the layout from the records' markers, the
decoders and the per-field bounds and code checks generated from them. What is left
here is what markers cannot say, the rules that relate fields to each other, kept as
plain code so each reads as the rule it enforces: a node's kind agrees with the data
it carries, a gate lists exactly its authored members, adjacency lists are exactly
the edges that touch a node, an Action's runner has what it runs with, no path leaves
the Provider root. They run after the bounds checks, so they may index freely.

``MAGIC`` and ``FORMAT_VERSION`` are the header. The version is a promise about the
layout: a change to the records' fields is a change to the bytes and needs a new
version, so a reader of older IR says "recompile" instead of "damaged".
"""

from __future__ import annotations

from . import records as r
from .wire import RecordSet, corrupt, digest_of
from .wire import decode as _decode
from .wire import encode as _encode

__all__ = [
    "BY_NAME",
    "FORMAT_VERSION",
    "LAYOUT",
    "MAGIC",
    "PROGRAM",
    "check_bounds",
    "corrupt",
    "decode",
    "digest_of",
    "encode",
]

MAGIC = "agent-graph.ir"
FORMAT_VERSION = 1

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


def _check_node(node: r.Node) -> str | None:
    """What is wrong with ``node``'s kind-specific data, or None."""
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
    if (kind == r.SUBGRAPH) != (node.subgraph != r.NONE and node.entry is not None):
        return "subgraph call does not match its kind"
    if (kind == r.TERMINAL) != (node.terminal_outcome in r.OUTCOMES):
        return "terminal outcome does not match its kind"
    return None


def verify(program: r.Program) -> None:
    """The Program rules that are not per-field bounds (those are generated)."""
    for action in program.actions:
        _check_action(action)
    for resource in program.resources:
        if not (_contained(resource.path) and _contained(resource.content)):
            raise corrupt(f"resource {resource.id}: a path leaves the Provider root")
    for graph in program.graphs:
        if not _contained(graph.path):
            raise corrupt(f"graph {graph.id}: its path leaves the Provider root")
        for node in graph.nodes:
            problem = _check_node(node)
            if problem is not None:
                raise corrupt(f"graph {graph.id} node {node.id}: {problem}")
        _check_adjacency(graph)


PROGRAM: RecordSet[r.Program] = RecordSet(
    magic=MAGIC,
    version=FORMAT_VERSION,
    root=r.Program,
    records=r.PROGRAM_RECORDS,
    verify=verify,
    rebuild="recompile the Provider",
)

#: Per record type, its layout codes in field order (see :data:`.schema.CODES`).
LAYOUT: dict[type, tuple[str, ...]] = PROGRAM.layout
BY_NAME: dict[str, type] = PROGRAM.by_name


def encode(program: r.Program) -> bytes:
    return _encode(PROGRAM, program)


def decode(data: bytes, *, expected_digest: str | None = None) -> r.Program:
    """Decode and verify IR bytes (``expected_digest`` pins the whole bytes, as a bundle does)."""
    return _decode(PROGRAM, data, expected_digest=expected_digest)


def check_bounds(program: r.Program) -> None:
    """Every index must point into its table, every kind code must be known, and the
    Program's cross-field rules must hold (raises ``ir-corrupt``)."""
    PROGRAM.check(program)
