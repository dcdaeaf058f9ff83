"""Per-graph evaluation plans: what a frame reads of a graph, laid out once per Program.

A frame reads the same few fields of every node it decides, and the IR's records
answer an attribute read through a descriptor (about 19 ns against 7 ns for a tuple
index on CPython 3.11) and an edge's mask and target only through the edge record. A
plan holds each node's fields as one plain tuple (read by the ``N_*`` positions
below), its outgoing edges as ``(flag, mask, target, count)`` (``flag``: where a frame
keeps whether the edge matches; ``count``: where it counts the target's matching incoming
edges) and, for a subgraph node, the call-path segment and state-key suffix its child
frames start from, so that no frame builds them again.

Speed only. With plans, the frame arrays copied from their blanks and call paths
shared rather than copied per frame (then as ``(parent, segment)`` links, now as the
evaluator's stack of segments), the frames of 100 nested subgraph calls (the "99 done"
case of ``benchmarks/compare.py nested``) take 0.37 ms instead of 0.48 ms and the
evaluation 0.53 ms instead of 0.65 ms; 50 calls ("half done") 0.21 ms instead of 0.27 ms
(least of 400 runs, in process, 2-core machine, load average about 1).
"""

from __future__ import annotations

from typing import Any, Final

from ..ir import records as r

#: Positions in a node's plan tuple.
N_KIND: Final = 0
N_ID: Final = 1
N_REQUIRES: Final = 2
#: ``satisfiedBy``, None for a terminal (whose checks evaluation ignores)
N_SATISFIED: Final = 3
#: the outcome of a node with no record and no satisfied check: a terminal's own
#: outcome, else pending
N_DEFAULT: Final = 4
#: ((flag, mask, target, count), ...) of the outgoing non-repeat edges, ``flag`` the
#: edge's place in a frame's flags (the node count plus the edge's index), ``count`` the
#: place of the target's count in a frame's outcomes (the node count plus its index)
N_OUT: Final = 5
N_REPEATS: Final = 6  # ((edge, mask), ...) of the outgoing repeat edges
N_JOIN_ANY: Final = 7
N_INCOMING: Final = 8  # how many non-repeat edges come in
N_NODE: Final = 9  # the node record
N_SUBGRAPH: Final = 10  # the called graph's index (subgraph nodes), else NONE
N_ENTRY: Final = 11  # the called entry, "" when none
N_SEGMENT: Final = 12  # "<graph>/<node>": the call-path segment of its child frames
N_SUFFIX: Final = 13  # "<node>><child graph>/": its child's state-key prefix, after ours
#: outcome -> (((flag, target, count), ...) of the outgoing non-repeat edges it matches,
#: (edge, ...) of the outgoing repeat edges it arms), for the outcomes that match any
N_MATCHES: Final = 14
#: where a frame's outcomes list keeps the result of the node's child frame (twice the
#: node count plus its index)
N_CHILD: Final = 15

#: One node's plan (the fields above, in that order).
NodePlan = tuple[Any, ...]


class GraphPlan:
    """One graph as its frames read it."""

    __slots__ = (
        "blank",
        "entries",
        "graph",
        "id",
        "keys",
        "nodes",
        "prefix",
        "slot",
        "zeros",
    )

    def __init__(self, graph: r.Graph, graph_ids: tuple[str, ...], slot: int) -> None:
        # ids, not the called graphs: a lazily decoded IR decodes a graph only when a
        # frame of it starts
        self.graph = graph
        self.id = graph.id
        #: the index of the first graph with this id: where an evaluation marks the id's
        #: graphs as having a frame on its stack (recursion is by id)
        self.slot = slot
        n = len(graph.nodes)
        # a frame's arrays start as copies of these (copying costs half of making them):
        # its nodes' outcomes, their counts of matching incoming edges and their child
        # frames' results, one list. Speed only: one copy instead of three lists and the
        # children dict took 100 nested calls half done from 0.157 to 0.151 ms (least of
        # 4 x 5 rounds in alternating processes)
        self.blank: list[Any] = [None] * n + [0] * n + [None] * n
        # which nodes it reached, then which edges match: one array to copy, not two
        # (speed only; figures at ``_Frame.start``)
        self.zeros = bytearray(n + len(graph.edges))
        # the first entry of a name wins, as a scan of ``entrypoints`` finds it
        entries: dict[str, int] = {}
        for name, node_index in graph.entrypoints:
            entries.setdefault(name, node_index)
        self.entries = entries
        self.nodes = tuple(
            _node_plan(graph_ids, graph, index, node) for index, node in enumerate(graph.nodes)
        )
        #: a frame's state-key prefix -> its key table: each node's state key, or for a
        #: subgraph node its child frame's prefix, by node index (:meth:`Plans.key` fills
        #: it): each evaluation finds the same string, its hash computed, where joining it
        #: would copy and hash the whole call path again. Short prefixes only (the long
        #: ones go through ``Evaluator._long_recorded``). Speed only: 100 nested subgraph
        #: calls (``benchmarks/compare.py nested``) half done 0.141 ms instead of 0.146 ms,
        #: all done 0.384 instead of 0.413 ms, 99 done 0.322 instead of 0.336 ms (least of
        #: 200 x 20 in process, interleaved, load average 4), kept by (prefix, node index);
        #: a table per prefix, one lookup per frame instead of a (prefix, index) tuple
        #: hashed per node, with the call path kept as ``Evaluator.segments``, took half
        #: done from 0.165 to 0.157 ms, all done 0.440 -> 0.415, 99 done 0.353 -> 0.338
        #: (least of 4 x 5 rounds in alternating processes).
        self.keys: dict[str, list[str | None]] = {}
        #: the root frame's prefix, made once
        self.prefix = self.id + "/"


def _node_plan(graph_ids: tuple[str, ...], graph: r.Graph, index: int, node: r.Node) -> NodePlan:
    edges = graph.edges
    n = len(graph.nodes)  # edge e's match flag is at n + e
    kind = node.kind
    segment = suffix = ""
    if kind == r.SUBGRAPH:
        segment = graph.id + "/" + node.id
        suffix = node.id + ">" + graph_ids[node.subgraph] + "/"
    terminal = kind == r.TERMINAL
    matches: dict[str, tuple[tuple[tuple[int, int, int], ...], tuple[int, ...]]] = {}
    for outcome, bit in r.OUTCOME_BIT.items():
        out = tuple(
            (n + e, edges[e].target, n + edges[e].target)
            for e in node.outgoing
            if edges[e].mask & bit
        )
        repeats = tuple(e for e in node.repeats if edges[e].mask & bit)
        if out or repeats:
            matches[outcome] = (out, repeats)
    return (
        kind,
        node.id,
        node.requires,
        None if terminal else node.satisfied_by,
        (node.terminal_outcome or "pending") if terminal else "pending",
        tuple((n + e, edges[e].mask, edges[e].target, n + edges[e].target) for e in node.outgoing),
        tuple((e, edges[e].mask) for e in node.repeats),
        node.join_any,
        len(node.incoming),
        node,
        node.subgraph,
        node.entry or "",
        segment,
        suffix,
        matches,
        2 * n + index,
    )


#: Characters of state keys and prefixes :attr:`Plans.keys` keeps at most (a Program's
#: call paths past it are joined afresh in each evaluation).
KEY_CHARACTERS: Final = 1 << 22


class Plans:
    """A Program's plans, made as frames first use each graph (two threads may both
    make one; they make the same plan)."""

    __slots__ = ("first", "graph_ids", "graphs", "key_characters", "made")

    def __init__(self, graphs: Any, graph_ids: tuple[str, ...]) -> None:
        self.graphs = graphs
        self.graph_ids = graph_ids
        self.made: list[GraphPlan | None] = [None] * len(graph_ids)
        self.first: dict[str, int] = {}  # each id's first index
        for index, graph_id in enumerate(graph_ids):
            self.first.setdefault(graph_id, index)
        self.key_characters = 0  # in the keys of all its plans

    def table(self, plan: GraphPlan, prefix: str) -> list[str | None]:
        """A frame's key table for ``prefix`` (nothing in it yet), kept in the plan's
        ``keys`` while the plans hold fewer than :data:`KEY_CHARACTERS` characters (a
        table counts one a node)."""
        table: list[str | None] = [None] * len(plan.nodes)
        if self.key_characters < KEY_CHARACTERS:
            plan.keys[prefix] = table
            self.key_characters += len(table)
        return table

    def key(self, table: list[str | None], prefix: str, index: int, tail: str) -> str:
        """``prefix + tail``, kept at ``index`` of ``table`` while the plans hold fewer than
        :data:`KEY_CHARACTERS` characters."""
        key = prefix + tail
        if self.key_characters < KEY_CHARACTERS:
            table[index] = key
            self.key_characters += len(key)
        return key

    def of(self, index: int) -> GraphPlan:
        plan = self.made[index]
        if plan is None:
            graph_ids = self.graph_ids
            plan = GraphPlan(self.graphs[index], graph_ids, self.first[graph_ids[index]])
            self.made[index] = plan
        return plan
