"""Semantic checks of one graph document and the static cross-graph recursion check.

The checks, their order, codes and messages follow the reference loader (its graph
checks, then its recursion check; docs/error-codes.md, "Graphs"). Two deliberate differences:

* The reference throws at the first failure; here every failure is reported to a
  :class:`ProblemSink`, in the order the reference would have met them. When an
  edge fails one check its later checks are skipped (the reference stopped there),
  but later edges are still checked.
* The reference walks the graph with recursive functions and copies the trail at
  every step, so a long flow path overflows its stack and costs quadratic time.
  Both walks here are iterative and linear in nodes plus edges.

Two additions the reference does not make, both reported only after a problem the
reference would have thrown (so the envelope's first error is unchanged):

* A schema-invalid graph is still checked where that is sound (:func:`salvage`):
  its schema-valid nodes and edges, when the ids and kinds of every node are known.
* A node no edge path reaches from any entrypoint (every edge kind, repeat edges
  included) gets a ``node-unreachable`` warning; warnings never fail a Provider.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_graph import codes
from agent_graph.documents.sourcemap import Document, join_pointer, positioned
from agent_graph.errors import Diagnostic, Problem, ProblemSink
from agent_graph.spelling import did_you_mean

# DFS colours: a node is absent (unseen), on the current trail, or finished.
_ON_TRAIL = 1
_DONE = 2

_NODE_KINDS = frozenset({"action", "gate", "subgraph", "terminal"})
_ITEM = re.compile(r"^/(nodes|edges)/(\d+)(/.*)?$")
# top-level members whose failure leaves the nodes and edges checkable
_HARMLESS = frozenset({"/description"})


@dataclass(frozen=True, slots=True)
class Salvage:
    """What of a schema-invalid graph is still checked.

    ``nodes`` maps each schema-invalid node's index to the pointers (relative to the
    node, ``""`` for the node itself) its schema findings name; ``edges`` holds the
    schema-invalid edges' indices. ``structure`` says whether every node's id and
    kind are known, so the graph rules (duplicates, entries, edges, cycles) can run
    over the nodes and the schema-valid edges.
    """

    nodes: dict[int, frozenset[str]] = field(default_factory=dict)
    edges: frozenset[int] = frozenset()
    structure: bool = True

    def clean(self, index: int, member: str) -> bool:
        """Whether node ``index``'s ``member`` has no schema finding at or below it."""
        dirty = self.nodes.get(index)
        if dirty is None:
            return True
        prefix = f"/{member}"
        return not any(p == prefix or p.startswith(prefix + "/") for p in dirty)


def salvage(value: Any, findings: Iterable[Diagnostic]) -> Salvage | None:
    """The checkable part of a graph that failed its schema with ``findings``, or ``None``.

    ``None`` (nothing is checked) unless the graph is a mapping with a string id, an
    entrypoints mapping of strings and node and edge lists, and every finding lies in
    one node or edge (or is an unknown top-level member, or the description).
    """
    if not isinstance(value, dict):
        return None
    entrypoints, nodes, edges = value.get("entrypoints"), value.get("nodes"), value.get("edges")
    if not (
        isinstance(value.get("id"), str)
        and isinstance(entrypoints, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in entrypoints.items())
        and isinstance(nodes, list)
        and isinstance(edges, list)
    ):
        return None
    bad_nodes: dict[int, set[str]] = {}
    bad_edges: set[int] = set()
    for finding in findings:
        pointer = finding.pointer
        if pointer is None:
            return None
        item = _ITEM.match(pointer)
        if item is None:
            params = finding.detail.get("params")
            unknown_member = (  # an additionalProperties finding names the member itself
                isinstance(params, dict)
                and "additionalProperty" in params
                and pointer.count("/") == 1
                and pointer != "/"
            )
            if unknown_member or pointer in _HARMLESS:
                continue
            return None
        index = int(item.group(2))
        if item.group(1) == "nodes":
            bad_nodes.setdefault(index, set()).add(item.group(3) or "")
        else:
            bad_edges.add(index)
    found = Salvage({i: frozenset(p) for i, p in bad_nodes.items()}, frozenset(bad_edges))
    structure = all(
        index < len(nodes)
        and isinstance(nodes[index], dict)
        and isinstance(nodes[index].get("id"), str)
        and isinstance(nodes[index].get("kind"), str)
        and nodes[index]["kind"] in _NODE_KINDS
        and found.clean(index, "id")
        and found.clean(index, "kind")
        for index in bad_nodes
    )
    if not structure:
        return Salvage(found.nodes, found.edges, structure=False)
    return found


def check_graph(
    doc: Document, path: str, sink: ProblemSink, partial: Salvage | None = None
) -> None:
    """Report every semantic problem of the graph in ``doc`` to ``sink``.

    The graph is schema-valid, or ``partial`` says what of it may be checked: its
    schema-invalid edges are skipped, and nothing is checked without ``structure``.
    """
    if partial is not None and not partial.structure:
        return
    skipped = partial.edges if partial is not None else frozenset()
    graph: Mapping[str, Any] = doc.value
    gid = str(graph["id"])
    nodes: Sequence[Mapping[str, Any]] = graph["nodes"]
    edges: Sequence[Mapping[str, Any]] = graph["edges"]
    entrypoints: Mapping[str, Any] = graph["entrypoints"]

    def report(code: str, message: str, pointer: str) -> None:
        where = positioned(code, message, path=path, source=doc.source, pointer=pointer)
        sink.add(Problem(code, message, [where]))

    # The reference keeps two views of the nodes: a set of ids in first-seen order
    # (existence checks, DFS roots) and an id -> node map where a later duplicate
    # overwrites an earlier one (kind lookups). Keep both so duplicated ids
    # behave the same way here.
    first_seen: dict[str, None] = {}
    kind_by_id: dict[str, str] = {}
    for index, node in enumerate(nodes):
        node_id = node["id"]
        if node_id in first_seen:
            report(
                codes.GRAPH_NODE_DUPLICATE,
                f"Graph {gid} contains duplicate node id: {node_id}",
                f"/nodes/{index}/id",
            )
        first_seen[node_id] = None
        kind_by_id[node_id] = node["kind"]

    # With no terminal, edges to one undeclared name (not a typo of a node) are the
    # terminal the author removed or has yet to write: one error says so, not one an edge.
    awaited: list[str] = []
    if not any(node["kind"] == "terminal" for node in nodes):
        awaited = _awaited_terminals(edges, skipped, first_seen, set(entrypoints.values()))
        hint = ""
        if awaited:
            names = ", ".join(awaited)
            hint = f"; edges lead to {names}, which no node declares: add it as a terminal"
        report(
            codes.GRAPH_TERMINAL_MISSING,
            f"Graph {gid} must declare at least one terminal node" + hint,
            "/nodes",
        )

    for entry, target in entrypoints.items():
        if target not in first_seen:
            report(
                codes.GRAPH_ENTRY_MISSING,
                f"Graph {gid} entry {entry} targets missing node {target}"
                + did_you_mean(target, first_seen),
                join_pointer("/entrypoints", entry),
            )

    edge_keys: set[str] = set()
    # Successors for the cycle check: (target, edge index), in edge order.
    adjacency: dict[str, list[tuple[str, int]]] = {}
    # Successors along every edge kind, for the reachability warning.
    linked: dict[str, list[str]] = {}
    broken = False  # an edge to a missing node: the nodes behind it are not "unreachable"
    for index, edge in enumerate(edges):
        if index in skipped:
            continue
        source, target = edge["from"], edge["to"]
        kind = edge.get("kind", "flow")
        if source not in first_seen or target not in first_seen:
            missing = target if target not in first_seen else source
            broken = True
            if source in first_seen and missing in awaited:
                continue  # said once, by graph-terminal-missing
            report(
                codes.GRAPH_EDGE_NODE_MISSING,
                f"Graph {gid} edge {source} -> {target} references a missing node"
                + did_you_mean(missing, first_seen),
                f"/edges/{index}",
            )
            continue
        linked.setdefault(source, []).append(target)
        if kind != "repeat":
            adjacency.setdefault(source, []).append((target, index))
        problem = _edge_problem(gid, edge, kind, kind_by_id, edge_keys)
        if problem is not None:
            report(*problem, f"/edges/{index}")

    cycle = _first_flow_cycle(first_seen, adjacency)
    if cycle is not None:
        trail, edge_index = cycle
        report(
            codes.GRAPH_FLOW_CYCLE,
            f"Graph {gid} contains an implicit flow cycle; use a repeat edge: "
            + " -> ".join(trail),
            f"/edges/{edge_index}",
        )

    if not skipped and not broken:  # a skipped or broken edge might be the one path to a node
        starts = [target for target in entrypoints.values() if target in first_seen]
        for index in _unreachable(nodes, starts, linked):
            node_id = nodes[index]["id"]
            message = f"Graph {gid} node {node_id} cannot be reached from any entrypoint"
            sink.warn(
                positioned(
                    codes.NODE_UNREACHABLE,
                    message,
                    path=path,
                    source=doc.source,
                    pointer=f"/nodes/{index}",
                    severity="warning",
                )
            )


def _awaited_terminals(
    edges: Sequence[Mapping[str, Any]],
    skipped: Collection[int],
    known: Mapping[str, None],
    entered: Collection[Any],
) -> list[str]:
    """Undeclared edge targets (from declared nodes) that misspell no declared node and
    that no entry names."""
    found: dict[str, None] = {}
    for index, edge in enumerate(edges):
        target = edge["to"]
        if index in skipped or edge["from"] not in known or target in known or target in entered:
            continue
        if isinstance(target, str) and not did_you_mean(target, known):
            found[target] = None
    return list(found)


def _unreachable(
    nodes: Sequence[Mapping[str, Any]], starts: Sequence[str], linked: Mapping[str, list[str]]
) -> list[int]:
    """Indices of the nodes no edge path reaches from ``starts`` (none without a start)."""
    if not starts:
        return []  # every entry is missing: graph-entry-missing says so already
    seen: set[str] = set(starts)
    pending = list(seen)
    while pending:
        for target in linked.get(pending.pop(), ()):
            if target not in seen:
                seen.add(target)
                pending.append(target)
    return [index for index, node in enumerate(nodes) if node["id"] not in seen]


def _edge_problem(
    gid: str,
    edge: Mapping[str, Any],
    kind: str,
    kind_by_id: Mapping[str, str],
    edge_keys: set[str],
) -> tuple[str, str] | None:
    """The first failing check of one edge whose ends both exist: (code, message)."""
    source, target = edge["from"], edge["to"]
    arrow = f"{source} -> {target}"
    if kind_by_id[source] == "terminal":
        return (
            codes.GRAPH_TERMINAL_EDGE_INVALID,
            f"Graph {gid} terminal node cannot have outgoing edges: {arrow}",
        )
    # Same textual key as the reference, so the same pairs count as duplicates
    # (outcome order matters; an omitted kind equals flow).
    outcomes = edge.get("outcomes") or ["completed"]
    key = f"{kind}:{source}:{target}:{','.join(outcomes)}"
    if key in edge_keys:
        return codes.GRAPH_EDGE_DUPLICATE, f"Graph {gid} contains duplicate edge {arrow}"
    edge_keys.add(key)
    if kind == "repeat" and kind_by_id[target] not in ("action", "gate"):
        return (
            codes.GRAPH_REPEAT_TARGET_INVALID,
            f"Graph {gid} repeat edge must target an action or gate: {arrow}",
        )
    if kind == "gatedBy" and kind_by_id[source] != "gate":
        return (
            codes.GRAPH_GATED_BY_SOURCE_INVALID,
            f"Graph {gid} gatedBy edge must start at a gate: {arrow}",
        )
    return None


def _first_flow_cycle(
    roots: Mapping[str, None], adjacency: Mapping[str, Sequence[tuple[str, int]]]
) -> tuple[list[str], int] | None:
    """The first back edge of a DFS from each root in order, successors in edge order.

    Returns the trail from the revisited node round to itself and the back edge's
    index, or ``None`` when the flow is acyclic.
    """
    colour: dict[str, int] = {}
    for root in roots:
        if root in colour:
            continue
        found = _walk(root, colour, lambda node: adjacency.get(node, ()))
        if found is not None:
            return found
    return None


def find_recursion(order: Sequence[str], children: Mapping[str, Sequence[str]]) -> list[str] | None:
    """The trail of the first graph revisited on the current DFS trail, or ``None``.

    Graphs are walked in ``order``, each graph's children in node order; a child
    absent from ``children`` (a missing subgraph, reported elsewhere) is skipped.
    A self call gives ``[g, g]``.
    """
    colour: dict[str, int] = {}

    def successors(graph: str) -> list[tuple[str, int]]:
        return [(child, 0) for child in children.get(graph, ()) if child in children]

    for root in order:
        if root in colour:
            continue
        found = _walk(root, colour, successors)
        if found is not None:
            return found[0]
    return None


def _walk(
    root: str,
    colour: dict[str, int],
    successors: Callable[[str], Sequence[tuple[str, int]]],
) -> tuple[list[str], int] | None:
    """Iterative DFS from ``root``; stops at the first successor already on the trail.

    ``successors(node)`` yields ``(target, tag)`` pairs; the tag of the back edge is
    returned with the cycle so callers can point at it.
    """
    trail: list[str] = [root]
    cursors: list[int] = [0]
    depth: dict[str, int] = {root: 0}
    succ_lists: list[Sequence[tuple[str, int]]] = [successors(root)]
    colour[root] = _ON_TRAIL
    while trail:
        succ = succ_lists[-1]
        cursor = cursors[-1]
        if cursor == len(succ):
            done = trail.pop()
            cursors.pop()
            succ_lists.pop()
            del depth[done]
            colour[done] = _DONE
            continue
        cursors[-1] = cursor + 1
        target, tag = succ[cursor]
        state = colour.get(target)
        if state == _ON_TRAIL:
            return [*trail[depth[target] :], target], tag
        if state == _DONE:
            continue
        colour[target] = _ON_TRAIL
        depth[target] = len(trail)
        trail.append(target)
        cursors.append(0)
        succ_lists.append(successors(target))
    return None
