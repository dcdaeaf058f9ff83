"""What ``agc explain --reach`` looks for, and which nodes can lead to it.

A :class:`Target` is a node of the Graph evaluated, or of a Graph it calls (named by its
state key); :class:`Relevance` says which nodes of which frames can matter to reaching it,
so the search makes no move anywhere else.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import codes
from ..errors import AgentGraphError
from ..ir import records as r

if TYPE_CHECKING:
    from ..vm import Program
    from ..vm.trace import FrameTrace


@dataclass(frozen=True, slots=True)
class Target:
    """The node looked for: ``key`` is its state key (``graph/node``, or through subgraph
    calls ``graph/sub>child/node``), ``prefix`` its frame's key prefix."""

    root: str  # the Graph evaluated
    graph: str  # the Graph the node is in (root, or one it calls)
    node: r.Node
    index: int
    key: str
    prefix: str

    @property
    def kind(self) -> str:
        return r.NODE_KINDS[self.node.kind]


# -- naming the target ------------------------------------------------------------------


def target_of(program: Program, graph_id: str, node: str) -> Target:
    """The node ``node`` names in ``graph_id``: a node id, or a state key through
    subgraph calls; ``explain-node-missing`` with the nearest name otherwise."""
    graph = program.graph(graph_id)
    for index, candidate in enumerate(graph.nodes):
        if candidate.id == node:
            return Target(
                graph_id, graph_id, candidate, index, f"{graph_id}/{node}", graph_id + "/"
            )
    found = _by_key(program, graph, node)
    if found is not None:
        return found
    known = [n.id for n in graph.nodes] + list(_keys(program, graph))
    near = difflib.get_close_matches(node, known, n=1)
    hint = f"; did you mean {near[0]}?" if near else ""
    raise AgentGraphError(
        codes.EXPLAIN_NODE_MISSING,
        f"No node {node} in graph {graph_id} or a graph it calls{hint}",
    )


def _by_key(program: Program, graph: r.Graph, key: str) -> Target | None:
    segments = key.split(">")
    current = graph
    prefix = ""
    for depth, segment in enumerate(segments):
        head = current.id + "/"
        if not segment.startswith(head):
            return None
        wanted = segment[len(head) :]
        index = next((i for i, n in enumerate(current.nodes) if n.id == wanted), -1)
        if index < 0:
            return None
        node = current.nodes[index]
        if depth == len(segments) - 1:
            return Target(graph.id, current.id, node, index, key, prefix + head)
        if node.kind != r.SUBGRAPH or node.subgraph == r.NONE:
            return None
        prefix += segment + ">"
        current = program.ir.graphs[node.subgraph]
    return None


def _keys(program: Program, graph: r.Graph, limit: int = 2000) -> Iterator[str]:
    """State keys below ``graph``'s subgraph nodes (for a did-you-mean), shallow first."""
    todo: list[tuple[r.Graph, str, tuple[str, ...]]] = [(graph, "", (graph.id,))]
    count = 0
    while todo and count < limit:
        current, prefix, stack = todo.pop(0)
        for node in current.nodes:
            count += 1
            yield f"{prefix}{current.id}/{node.id}"
            if node.kind == r.SUBGRAPH and node.subgraph != r.NONE:
                child = program.ir.graphs[node.subgraph]
                if child.id not in stack:
                    todo.append((child, f"{prefix}{current.id}/{node.id}>", (*stack, child.id)))


class Relevance:
    """Which nodes can matter: those with a path of edges (repeat edges too) to the goal
    in its Graph, to the subgraph node that calls the goal's Graph in each Graph above,
    and every node of a frame called from one of those (its outcome is the caller's).
    A move anywhere else can only end a frame sooner, never route to the goal; the routes
    ranked before the goal are settled separately (:func:`_ahead_of`)."""

    def __init__(self, program: Program, target: Target) -> None:
        graphs = program.ir.graphs
        graph = program.graph(target.root)
        self.segments: list[str] = []  # the call path to the goal's frame
        chain: list[tuple[r.Graph, int]] = []
        current = graph
        if target.key.count(">"):
            for segment in target.key.split(">")[:-1]:
                wanted = segment[len(current.id) + 1 :]
                index = next(i for i, n in enumerate(current.nodes) if n.id == wanted)
                chain.append((current, index))
                self.segments.append(segment)
                current = graphs[current.nodes[index].subgraph]
        chain.append((current, target.index))
        self.levels = [(g, _leading_to(g, i)) for g, i in chain]
        if target.node.kind == r.SUBGRAPH and target.node.subgraph != r.NONE:
            # the primary route is to be inside the goal's frame: all of it can matter
            child = graphs[target.node.subgraph]
            self.segments.append(target.key.rsplit(">", 1)[-1])
            self.levels.append((child, set(range(len(child.nodes)))))
        self.ids = [{n.id: i for i, n in enumerate(g.nodes)} for g, _ in self.levels]

    def leads(self, frame: FrameTrace, index: int) -> bool:
        path = frame.call_path
        for depth, segment in enumerate(path):
            if depth < len(self.segments) and segment == self.segments[depth]:
                continue
            if depth >= len(self.levels):
                return False
            graph, leading = self.levels[depth]
            return self.ids[depth].get(segment[len(graph.id) + 1 :], -1) in leading
        return len(path) < len(self.levels) and index in self.levels[len(path)][1]


def _leading_to(graph: r.Graph, goal: int) -> set[int]:
    """``goal`` and the nodes with a path of edges of any kind to it."""
    into: dict[int, list[int]] = {}
    for edge in graph.edges:
        into.setdefault(edge.target, []).append(edge.source)
    found = {goal}
    todo = [goal]
    while todo:
        for source in into.get(todo.pop(), ()):
            if source not in found:
                found.add(source)
                todo.append(source)
    return found
