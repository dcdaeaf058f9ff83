"""The picture of a Provider graph, with an evaluation trace overlaid when there is one.

Without a trace every subgraph call is drawn as a cluster holding the called graph
(statically, each call once per call path). With a trace, every frame the evaluation
evaluated is a cluster titled with its status (a call it did not reach is its node
alone, so the picture shows where the state is; ``expand`` draws those graphs too), each
node carries its outcome (or ``not reached``) and the ranked candidates are marked: the
primary route's node with a thick border and ``next``, the alternatives with their rank.
Statuses, rank and fired edges all come from the trace (:mod:`agent_graph.vm.trace`):
nothing is re-evaluated.

Expansion is bounded (:data:`MAX_EXPANDED_NODES` nodes of called graphs that were not
evaluated), so a graph calling one child from thousands of nodes stays drawable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ..ir import records as r
from .model import Cluster, Edge, EdgeStyle, Ids, Node, Picture, Shape, shorten

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..vm import Evaluation
    from ..vm.trace import FrameTrace, Trace

#: Nodes of called graphs drawn without a frame of the evaluation behind them.
MAX_EXPANDED_NODES: Final = 2_000
_SHAPE: Final[dict[int, Shape]] = {
    r.ACTION: "action",
    r.GATE: "gate",
    r.SUBGRAPH: "subgraph",
    r.TERMINAL: "terminal",
}
#: A frame's status drawn as the look of a node status.
FRAME_LOOK: Final[dict[str, str]] = {
    "actionable": "pending",
    "waiting-user": "waiting-user",
    "blocked": "blocked",
    "error": "failed",
}


def outcome_names(mask: int) -> list[str]:
    return [name for name, bit in r.OUTCOME_BIT.items() if mask & bit]


def edge_label(edge: r.Edge) -> str | None:
    """What an edge says besides its arrow: its kind (unless flow) and its outcomes
    (unless the default ``[completed]``); a repeat edge always names its outcomes."""
    outcomes = ", ".join(outcome_names(edge.mask))
    kind = r.EDGE_KINDS[edge.kind]
    if edge.kind == r.REPEAT:
        return f"repeat on {outcomes}"
    parts = [] if kind == "flow" else [kind]
    if edge.mask != r.OUTCOME_BIT["completed"]:
        parts.append(outcomes)
    return " · ".join(parts) or None


def node_lines(node: r.Node, graphs: Sequence[r.Graph]) -> list[str]:
    lines = [node.id]
    if node.kind == r.SUBGRAPH:
        called = graphs[node.subgraph].id if node.subgraph != r.NONE else "?"
        lines.append(f"calls {called}#{node.entry or 'default'}")
    elif node.kind == r.TERMINAL:
        lines.append(f"terminal: {node.terminal_outcome or 'pending'}")
    elif node.kind == r.GATE:
        who = node.gate.authority if node.gate is not None else None
        lines.append(f"gate · {who}" if who else "gate")
    if node.description and node.kind != r.SUBGRAPH:
        lines.append(shorten(node.description, 40))
    return lines


@dataclass(slots=True)
class _Ranks:
    """Where each candidate's state key ranks in the evaluation (0: primary)."""

    by_key: dict[str, tuple[int, str]]  # state key -> (rank, availability)

    @classmethod
    def of(cls, evaluation: Evaluation | None) -> _Ranks:
        if evaluation is None:
            return cls({})
        ranks: dict[str, tuple[int, str]] = {
            c.state_key: (i, c.availability) for i, c in enumerate(evaluation.candidates)
        }
        return cls(ranks)

    def mark(self, node: Node, key: str) -> None:
        found = self.by_key.get(key)
        if found is None:
            return
        rank, availability = found
        # a user's gate says so: the agent must ask, not act
        who = "" if availability == "immediate" else f", {availability}"
        if rank == 0:
            node.emphasis, text = "primary", f"▶ next (primary route{who})"
        elif rank <= 3:
            node.emphasis, text = "alternative", f"alternative #{rank}{who}"
        else:
            node.emphasis, text = "candidate", f"candidate #{rank + 1} (not listed{who})"
        node.lines.append(text)


class _Builder:
    def __init__(
        self, program: r.ProviderIR, evaluation: Evaluation | None, expand: bool = False
    ) -> None:
        self.program = program
        self.expand = expand  # with a trace: also draw the graphs of calls not evaluated
        self.ids = Ids()
        self.picture = Picture(title="")
        self.ranks = _Ranks.of(evaluation)
        self.budget = MAX_EXPANDED_NODES

    # -- one graph's nodes and edges --------------------------------------------------

    def graph_nodes(
        self,
        graph: r.Graph,
        cluster: Cluster | None,
        frame: FrameTrace | None,
        overlay: bool,
        prefix: str,
    ) -> list[str]:
        ids = []
        for index, node in enumerate(graph.nodes):
            drawn = Node(
                self.ids.new("n"), node_lines(node, self.program.graphs), _SHAPE[node.kind]
            )
            if overlay:
                outcome = frame.outcome_of(index) if frame is not None else None
                drawn.status = outcome if outcome is not None else "unreached"
                text: str = outcome if outcome is not None else "not reached"
                if node.kind == r.TERMINAL and outcome is not None:
                    text = f"reached: {outcome}"  # its second line already names its outcome
                drawn.lines.append(text)
                self.ranks.mark(drawn, prefix + node.id)
            self.picture.add(drawn, cluster)
            ids.append(drawn.id)
        return ids

    def graph_edges(
        self, graph: r.Graph, ids: list[str], frame: FrameTrace | None, overlay: bool
    ) -> None:
        for e, edge in enumerate(graph.edges):
            fired = overlay and frame is not None and frame.edge_fired(e)
            self.picture.edges.append(
                Edge(ids[edge.source], ids[edge.target], edge_label(edge), _style(edge), fired)
            )

    # -- static drawing ---------------------------------------------------------------

    def static(
        self,
        graph_index: int,
        entry: str | None,
        cluster: Cluster | None,
        call_path: tuple[str, ...],
        stack: tuple[int, ...],
        overlay: bool,
    ) -> list[str]:
        graph = self.program.graphs[graph_index]
        prefix = _frame_key(graph.id, call_path) + "/"
        ids = self.graph_nodes(graph, cluster, None, overlay, prefix)
        self.graph_edges(graph, ids, None, overlay)
        for index, node in enumerate(graph.nodes):
            if node.kind != r.SUBGRAPH or node.subgraph == r.NONE:
                continue
            child = self.program.graphs[node.subgraph]
            if node.subgraph in stack or len(child.nodes) > self.budget:
                continue  # recursion (the compiler refuses it) or past the drawing budget
            self.budget -= len(child.nodes)
            inner = Cluster(self.ids.new("c"), _cluster_title(child, node))
            if overlay:
                inner.title += " · not evaluated"
                inner.status = "unreached"
            (cluster.clusters if cluster is not None else self.picture.clusters).append(inner)
            path = (*call_path, f"{graph.id}/{node.id}")
            child_ids = self.static(
                node.subgraph, node.entry, inner, path, (*stack, node.subgraph), overlay
            )
            self.link(ids[index], child, node.entry, child_ids)
        return ids

    def link(self, caller: str, child: r.Graph, entry: str | None, child_ids: list[str]) -> None:
        start = dict(child.entrypoints).get(entry or "default")
        if start is not None:
            self.picture.edges.append(Edge(caller, child_ids[start], "calls", "call", False))

    # -- drawing a trace --------------------------------------------------------------

    def traced(self, trace: Trace, frame_id: int, cluster: Cluster | None) -> None:
        frame = trace.frames[frame_id]
        graph = frame.graph
        if cluster is not None:
            cluster.status = _frame_status(frame)
            cluster.title += f" · {_frame_text(frame)}"
        ids = self.graph_nodes(graph, cluster, frame, True, frame.prefix)
        self.graph_edges(graph, ids, frame, True)
        for index, node in enumerate(graph.nodes):
            if node.kind != r.SUBGRAPH or node.subgraph == r.NONE:
                continue
            child_graph = self.program.graphs[node.subgraph]
            inner = Cluster(self.ids.new("c"), _cluster_title(child_graph, node))
            (cluster.clusters if cluster is not None else self.picture.clusters).append(inner)
            child = frame.children.get(index)
            if child is not None:
                self.traced(trace, child, inner)
                child_ids = self._frame_ids(inner)
            else:
                if not self.expand or len(child_graph.nodes) > self.budget:
                    # a call the evaluation did not reach: the node says what it calls
                    (cluster.clusters if cluster is not None else self.picture.clusters).pop()
                    continue
                self.budget -= len(child_graph.nodes)
                inner.title += " · not evaluated"
                inner.status = "unreached"
                path = (*frame.call_path, f"{graph.id}/{node.id}")
                stack = tuple(f.graph_index for f in trace.ancestors(frame_id))
                child_ids = self.static(node.subgraph, node.entry, inner, path, stack, True)
            self.link(ids[index], child_graph, node.entry, child_ids)

    @staticmethod
    def _frame_ids(cluster: Cluster) -> list[str]:
        return cluster.nodes


def _style(edge: r.Edge) -> EdgeStyle:
    """Repeat edges loop back; consumes/requires/gatedBy record intent (dashed)."""
    if edge.kind == r.REPEAT:
        return "repeat"
    return "flow" if r.EDGE_KINDS[edge.kind] == "flow" else "intent"


def _cluster_title(child: r.Graph, caller: r.Node) -> str:
    return f"{child.id}#{caller.entry or 'default'} (called by {caller.id})"


def _frame_key(graph_id: str, call_path: tuple[str, ...]) -> str:
    return graph_id if not call_path else ">".join(call_path) + ">" + graph_id


def _frame_status(frame: FrameTrace) -> str:
    if frame.status == "complete":
        return frame.outcome or "completed"
    return FRAME_LOOK.get(frame.status, "pending")


def _frame_text(frame: FrameTrace) -> str:
    if frame.status == "complete":
        return f"complete ({frame.outcome})"
    return frame.status


def provider_picture(
    program: r.ProviderIR,
    graph_id: str,
    entry: str,
    *,
    evaluation: Evaluation | None = None,
    trace: Trace | None = None,
    expand: bool = False,
) -> Picture:
    """The picture of graph ``graph_id`` from ``entry``; overlaid when ``trace`` is given
    (``evaluation`` is the evaluation that trace belongs to, for the candidates' ranks).
    With a trace, calls the evaluation did not reach are drawn as their node alone, unless
    ``expand`` (then as a cluster of the called graph, ``not evaluated``)."""
    builder = _Builder(program, evaluation, expand)
    index = next(i for i, g in enumerate(program.graphs) if g.id == graph_id)
    picture = builder.picture
    picture.title = f"{program.provider_id} · graph {graph_id}#{entry}"
    if trace is None or not trace.frames or trace.frames[0].error is not None:
        builder.static(index, entry, None, (), (index,), False)
        return picture
    picture.overlay = True
    root = trace.frames[0]
    picture.title += f" · {_frame_text(root)}"
    if evaluation is not None:
        picture.notes.append(f"revision {evaluation.revision}")
    builder.traced(trace, 0, None)
    return picture
