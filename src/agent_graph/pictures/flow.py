"""The picture of a Flow (``FLOW.md``) and the Flows it runs, with a Run's visits overlaid.

Each Flow of the closure is drawn once: the entry Flow at the top level, every child
Flow as a cluster that the nodes running it link to (``runs``). Forks are hexagons
with an edge to each branch; a join node says which fork it joins. With a Run, each
node shows how often it ran, the result it last returned, and whether it is the
current or failed node; nodes the Run never reached are drawn as ``not run``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..ir import flow_records as fr
from .model import Cluster, Edge, Ids, Node, Picture, Shape, shorten

KIND_LABELS: Final[dict[int, str]] = {
    fr.AGENT_NEW: "new Agent",
    fr.AGENT_REUSE: "same Agent",
    fr.COMMAND: "command",
    fr.CALL: "runs Flow",
}


@dataclass(frozen=True, slots=True)
class Visit:
    """What a Run says about one node: ``count`` runs, the ``last`` result, and its
    ``state``: ``current`` (running or next), ``failed`` or ``visited``."""

    count: int
    last: str | None
    state: str
    error: str | None = None  # the failed visit's error category (``agent_execution`` …)


@dataclass(frozen=True, slots=True)
class RunOverlay:
    """A Run's visits by (Flow id, node ref); ``status`` says how the Run stands."""

    run_id: str
    status: str
    visits: Mapping[tuple[str, str], Visit]
    finished: bool = False


class _Builder:
    def __init__(self, program: fr.FlowIR, run: RunOverlay | None) -> None:
        self.program = program
        self.run = run
        self.ids = Ids()
        self.picture = Picture(title="", overlay=run is not None)
        self.starts: dict[int, str] = {}  # flow index -> id of its start node
        self.pending_calls: list[tuple[str, int]] = []  # (caller node id, child flow index)

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
                self.pending_calls.append((node_id, node.call.flow))
            for route in node.routes:
                if route.node >= 0:  # NONE (-1) in both: to finish
                    target = node_ids[route.node]
                elif route.fork >= 0:
                    target = fork_ids[route.fork]
                else:
                    target = finish.id
                fired = self._last(flow, node) == route.result
                self.picture.edges.append(Edge(node_id, target, route.result, "flow", fired))
        self.picture.edges.insert(0, Edge(start.id, node_ids[flow.start], None, "flow", True))
        if self.run is not None:
            start.status = "visited"
            finish.status = "visited" if self._finished(flow) else "unreached"

    def _last(self, flow: fr.Flow, node: fr.Node) -> str | None:
        if self.run is None:
            return None
        visit = self.run.visits.get((flow.id, node.ref))
        return visit.last if visit is not None else None

    def _finished(self, flow: fr.Flow) -> bool:
        assert self.run is not None
        return self.run.finished and flow.id == self.program.flows[self.program.root].id

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
            if visit is None:
                drawn.status = "unreached"
                drawn.lines.append("not run")
            else:
                drawn.status = {"current": "current", "failed": "failed"}.get(
                    visit.state, "visited"
                )
                runs = "1 run" if visit.count == 1 else f"{visit.count} runs"
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
        cluster = Cluster(builder.ids.new("c"), f"Flow {flow.id}")
        picture.clusters.append(cluster)
        builder.flow(index, cluster)
    for caller, child in builder.pending_calls:
        picture.edges.append(Edge(caller, builder.starts[child], "runs", "call"))
    return picture


def run_overlay(program: fr.FlowIR, document: Mapping[str, object]) -> RunOverlay:
    """The visits of a Run record (``agent-graph.flow-run.v1``, read and checked by the
    Flow runtime) of ``program``'s entry Flow: per node, how many visits, the result of
    the last completed one, and whether it is the cursor's node (``current``) or its last
    visit failed. Visits of child Flows live in their own Run records and are not shown.
    """
    root = program.flows[program.root]
    status = str(document.get("status") or "unknown")
    cursor = document.get("cursor")
    at = cursor.get("node") if isinstance(cursor, dict) and cursor.get("at") == "node" else None
    counts: dict[str, int] = {}
    last: dict[str, str] = {}
    failed: dict[str, str | None] = {}
    visits = document.get("visits")
    for visit in visits if isinstance(visits, list) else []:
        if not isinstance(visit, dict) or not isinstance(visit.get("node"), str):
            continue
        ref = visit["node"]
        counts[ref] = counts.get(ref, 0) + 1
        result = visit.get("result")
        if isinstance(result, dict) and isinstance(result.get("result"), str):
            last[ref] = result["result"]
        if visit.get("status") == "failed":
            error = visit.get("error")
            category = error.get("category") if isinstance(error, dict) else None
            failed[ref] = category if isinstance(category, str) else None
        elif visit.get("status") in ("running", "completed"):
            failed.pop(ref, None)
    active = status in ("running", "interrupted")
    out: dict[tuple[str, str], Visit] = {}
    for node in root.nodes:
        ref = node.ref
        if ref not in counts and not (active and ref == at):
            continue
        state = "visited"
        if ref in failed:
            state = "failed"
        elif active and ref == at:
            state = "current"
        out[(root.id, ref)] = Visit(counts.get(ref, 0), last.get(ref), state, failed.get(ref))
    run_id = str(document.get("runId") or "?")
    return RunOverlay(run_id, status, out, finished=status == "completed")
