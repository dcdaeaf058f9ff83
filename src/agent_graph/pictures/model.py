"""A picture of a graph, independent of the language it is drawn in.

Builders (:mod:`.provider`, :mod:`.flow`) turn a Provider graph (with its evaluation
trace) or a Flow (with its Run) into a :class:`Picture`; writers (:mod:`.mermaid`,
:mod:`.dot`) turn a Picture into text. Keeping the two apart means the Mermaid and
Graphviz drawings always show the same nodes, edges, statuses and clusters.

Node and cluster ids are generated (``n0``, ``c0`` …), never taken from user text, so
no writer has to escape an id; only labels carry user text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from ..ir.records import OUTCOMES

#: How a node is drawn: the kinds of Provider nodes, then the parts of a Flow.
Shape = Literal[
    "action", "gate", "subgraph", "terminal", "start", "finish", "fork", "join", "call", "note"
]
#: How an edge is drawn: ordinary flow, a repeat (back) edge, an intent-only edge kind,
#: a subgraph call (parent node to the child frame's entry), a fork's branch.
EdgeStyle = Literal["flow", "repeat", "intent", "call", "branch"]

#: Overlay statuses: the eight outcomes, ``unreached`` (evaluated frame, node not
#: reached), and the Run states of Flow nodes (``unknown``: its child Run record could
#: not be read).
STATUSES: Final[tuple[str, ...]] = (*OUTCOMES, "unreached", "visited", "current", "unknown")
#: How a candidate is marked, strongest first.
EMPHASES: Final[tuple[str, ...]] = ("primary", "alternative", "candidate")


@dataclass(slots=True)
class Node:
    id: str
    lines: list[str]  # the label, one entry a line (first line: the node's name)
    shape: Shape
    status: str | None = None  # one of STATUSES, with an overlay
    emphasis: str | None = None  # one of EMPHASES, for a ranked candidate


@dataclass(slots=True)
class Edge:
    source: str
    target: str
    label: str | None
    style: EdgeStyle = "flow"
    fired: bool = False  # overlay: the edge matched (its source's outcome is one it lists)


@dataclass(slots=True)
class Cluster:
    id: str
    title: str
    status: str | None = None
    nodes: list[str] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)


@dataclass(slots=True)
class Picture:
    title: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    #: top-level node ids (the others are in clusters), in drawing order
    top: list[str] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    overlay: bool = False  # drawn with a state: statuses and candidates are meaningful
    notes: list[str] = field(default_factory=list)  # comments for the reader of the text

    def add(self, node: Node, cluster: Cluster | None = None) -> Node:
        self.nodes.append(node)
        (cluster.nodes if cluster is not None else self.top).append(node.id)
        return node


class Ids:
    """Generated ids, one sequence per prefix (``n0``, ``n1`` … ``c0`` …)."""

    __slots__ = ("_next",)

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def new(self, prefix: str) -> str:
        number = self._next.get(prefix, 0)
        self._next[prefix] = number + 1
        return f"{prefix}{number}"


def shorten(text: str, limit: int = 48) -> str:
    """One line of at most ``limit`` characters (a long description would widen the box)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
