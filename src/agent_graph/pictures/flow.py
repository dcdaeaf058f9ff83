"""The picture of a Flow (``FLOW.md``) and the Flows it runs, with a Run's visits overlaid.

Each Flow of the closure is drawn once: the entry Flow at the top level, every child
Flow as a cluster that the nodes running it link to (``runs``). Forks are hexagons
with an edge to each branch; a join node says which fork it joins. With a Run, each
node shows how often it ran, the result it last returned, and whether it is the
current or failed node, child Flows' nodes from their child Runs (:mod:`.flow_overlay`);
nodes no Run reached are drawn as ``not run``, and as ``unknown`` in a child Flow whose
record could not be read.
"""

from __future__ import annotations

from typing import Final

from ..ir import flow_records as fr
from .flow_overlay import RunOverlay
from .model import Cluster, Edge, Ids, Node, Picture, Shape, shorten

KIND_LABELS: Final[dict[int, str]] = {
    fr.AGENT_NEW: "new Agent",
    fr.AGENT_REUSE: "same Agent",
    fr.COMMAND: "command",
    fr.CALL: "runs Flow",
}


class _Builder:
    def __init__(self, program: fr.FlowIR, run: RunOverlay | None) -> None:
        self.program = program
        self.run = run
        self.ids = Ids()
        self.picture = Picture(title="", overlay=run is not None)
        self.starts: dict[int, str] = {}  # flow index -> id of its start node
        # (caller node id, child flow index, whether the caller ran)
        self.pending_calls: list[tuple[str, int, bool]] = []

    def flow(self, index: int, cluster: Cluster | None) -> None:
        flow = self.program.flows[index]
        start = self.picture.add(Node(self.ids.new("s"), ["start"], "start"), cluster)
        finish = self.picture.add(Node(self.ids.new("f"), ["finish"], "finish"), cluster)
        self.starts[index] = start.id
        node_ids = [self.ids.new("n") for _ in flow.nodes]
        fork_ids = [self.ids.new("k") for _ in flow.forks]
        for fork, fork_id in zip(flow.forks, fork_ids, strict=True):
            self.picture.add(Node(fork_id, [fork.ref, "parallel"], "fork"), cluster)
            for branch in fork.branches:
                self.picture.edges.append(Edge(fork_id, node_ids[branch], None, "branch"))
        for node, node_id in zip(flow.nodes, node_ids, strict=True):
            self.picture.add(self.node(flow, node, node_id), cluster)
            if node.kind == fr.CALL and node.call is not None:
                ran = self.run is not None and (flow.id, node.ref) in self.run.visits
                self.pending_calls.append((node_id, node.call.flow, ran))
            for route in node.routes:
                if route.node >= 0:  # NONE (-1) in both: to finish
                    target = node_ids[route.node]
                elif route.fork >= 0:
                    target = fork_ids[route.fork]
                else:
                    target = finish.id
                fired = self._last(flow, node) == route.result
                self.picture.edges.append(Edge(node_id, target, route.result, "flow", fired))
        entered = self._entered(flow)
        self.picture.edges.insert(0, Edge(start.id, node_ids[flow.start], None, "flow", entered))
        if self.run is not None:
            start.status = "visited" if entered else "unreached"
            if not entered and self._unknown(flow):
                start.status = "unknown"
            finish.status = "visited" if self._finished(flow) else "unreached"

    def _last(self, flow: fr.Flow, node: fr.Node) -> str | None:
        if self.run is None:
            return None
        visit = self.run.visits.get((flow.id, node.ref))
        return visit.last if visit is not None else None

    def _is_root(self, flow: fr.Flow) -> bool:
        return flow.id == self.program.flows[self.program.root].id

    def _entered(self, flow: fr.Flow) -> bool:
        """A Run of ``flow`` is on record (without a Run: drawn as the path taken first)."""
        if self.run is None or self._is_root(flow):
            return True
        runs = self.run.children.get(flow.id)
        return runs is not None and runs.read > 0

    def _finished(self, flow: fr.Flow) -> bool:
        assert self.run is not None
        if self._is_root(flow):
            return self.run.finished
        runs = self.run.children.get(flow.id)
        return runs is not None and runs.completed

    def _unknown(self, flow: fr.Flow) -> bool:
        return self.run is not None and flow.id in self.run.uncertain

    def node(self, flow: fr.Flow, node: fr.Node, node_id: str) -> Node:
        kind = KIND_LABELS[node.kind]
        if node.kind == fr.CALL and node.call is not None:
            kind = f"runs {self.program.flows[node.call.flow].id}"
        lines = [shorten(node.name, 40), f"{node.ref} · {kind}"]
        if node.join_of >= 0:
            lines.append(f"joins {flow.forks[node.join_of].ref}")
        shape: Shape = "call" if node.kind == fr.CALL else "action"
        drawn = Node(node_id, lines, shape)
        if self.run is not None:
            visit = self.run.visits.get((flow.id, node.ref))
            if visit is None and self._unknown(flow):
                drawn.status = "unknown"
                drawn.lines.append("? unknown (child Run record unreadable)")
            elif visit is None:
                drawn.status = "unreached"
                drawn.lines.append("not run")
            else:
                drawn.status = {"current": "current", "failed": "failed"}.get(
                    visit.state, "visited"
                )
                runs = "1 run" if visit.count == 1 else f"{visit.count} runs"
                if self._unknown(flow):
                    runs += " + unknown"  # more may be in the records that were unreadable
                last = f" · last: {visit.last}" if visit.last else ""
                drawn.lines.append(f"{runs}{last}")
                if visit.state in ("current", "failed"):
                    why = f" ({visit.error})" if visit.error else ""
                    drawn.lines.append(f"▶ {visit.state}{why}")
                    drawn.emphasis = "primary"
        return drawn


def flow_picture(program: fr.FlowIR, run: RunOverlay | None = None) -> Picture:
    """The picture of ``program``'s entry Flow and every Flow it runs."""
    builder = _Builder(program, run)
    root = program.flows[program.root]
    picture = builder.picture
    picture.title = f"Flow {root.id}"
    if run is not None:
        picture.title += f" · Run {run.run_id}: {run.status}"
    builder.flow(program.root, None)
    for index, flow in enumerate(program.flows):
        if index == program.root:
            continue
        cluster = Cluster(builder.ids.new("c"), f"Flow {flow.id}{_runs_title(run, flow.id)}")
        if run is not None:
            cluster.status = _cluster_status(run, flow.id)
        picture.clusters.append(cluster)
        builder.flow(index, cluster)
    for caller, child, ran in builder.pending_calls:
        picture.edges.append(Edge(caller, builder.starts[child], "runs", "call", ran))
    return picture


def _runs_title(run: RunOverlay | None, flow_id: str) -> str:
    """`` · Run run-…: completed`` / `` · 3 Runs, last run-…: failed`` for a child Flow."""
    runs = run.children.get(flow_id) if run is not None else None
    if runs is None:
        return " · Runs unknown" if run is not None and flow_id in run.uncertain else ""
    which = (
        f"Run {runs.last_run}" if runs.count == 1 else f"{runs.count} Runs, last {runs.last_run}"
    )
    return f" · {which}: {runs.last_state}"


def _cluster_status(run: RunOverlay, flow_id: str) -> str:
    runs = run.children.get(flow_id)
    if flow_id in run.uncertain:
        return "unknown"
    if runs is None:
        return "unreached"
    return "failed" if runs.last_state == "failed" else "visited"
