"""What a Run and its child Runs say about each node of a Flow picture.

The caller (``agc flow graph --state``) reads the Run record and the child records it
names through the Flow runtime's reader and hands the documents here; this module only
summarises them, per (Flow id, node ref): how many visits, the last result, whether the
node is the cursor's (``current``) or its last visit failed. A child Flow can run more
than once (a retry loop starts a new child Run each time) but is drawn once, so its
Runs are merged: counts add up, the last result and state come from the latest Run
that visited the node. A child record that could not be read makes its Flow, and the
Flows that Flow runs, ``uncertain``: their unvisited nodes are ``unknown``, not ``not run``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..ir import flow_records as fr


@dataclass(frozen=True, slots=True)
class Visit:
    """What the Runs say about one node: ``count`` runs, the ``last`` result, and its
    ``state``: ``current`` (running or next), ``failed`` or ``visited``."""

    count: int
    last: str | None
    state: str
    error: str | None = None  # the failed visit's error category (``agent_execution`` …)


@dataclass(frozen=True, slots=True)
class ChildRun:
    """A child Run record as the caller read it: ``document``, or ``None`` when it is
    missing or damaged (``problem`` says why; the caller has warned about it)."""

    flow: str
    run_id: str
    document: Mapping[str, object] | None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class FlowRuns:
    """The child Runs of one Flow: how many, how many could not be read, whether one
    completed, and the last one (its id, and its state: ``unknown`` if unreadable)."""

    count: int
    unreadable: int
    completed: bool
    last_run: str
    last_state: str

    @property
    def read(self) -> int:
        return self.count - self.unreadable


@dataclass(frozen=True, slots=True)
class RunOverlay:
    """A Run's visits by (Flow id, node ref), its child Flows' included; ``status`` says
    how the entry Run stands, ``children`` how each child Flow's Runs ended."""

    run_id: str
    status: str
    visits: Mapping[tuple[str, str], Visit]
    finished: bool = False
    children: Mapping[str, FlowRuns] = field(default_factory=dict)
    #: Flows whose visits may be missing: a Run of theirs, or of a Flow that runs them,
    #: could not be read
    uncertain: frozenset[str] = frozenset()


def _status(document: Mapping[str, object]) -> str:
    return str(document.get("status") or "unknown")


def _visits(flow: fr.Flow, document: Mapping[str, object]) -> dict[str, Visit]:
    """The visits one Run record holds, per node ref of ``flow``."""
    status = _status(document)
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
    out: dict[str, Visit] = {}
    for node in flow.nodes:
        ref = node.ref
        if ref not in counts and not (active and ref == at):
            continue
        state = "visited"
        if ref in failed:
            state = "failed"
        elif active and ref == at:
            state = "current"
        out[ref] = Visit(counts.get(ref, 0), last.get(ref), state, failed.get(ref))
    return out


def _merge(earlier: Visit | None, later: Visit) -> Visit:
    if earlier is None:
        return later
    return Visit(
        earlier.count + later.count,
        later.last if later.last is not None else earlier.last,
        later.state,
        later.error,
    )


def run_overlay(
    program: fr.FlowIR, document: Mapping[str, object], children: Sequence[ChildRun] = ()
) -> RunOverlay:
    """The overlay of a Run record (``agent-graph.flow-run.v1``, read and checked by the
    Flow runtime) of ``program``'s entry Flow and of its child Run records, in the order
    they ran. A child Run of a Flow outside ``program`` is ignored."""
    root = program.flows[program.root]
    flows = {flow.id: flow for flow in program.flows}
    visits = {(root.id, ref): v for ref, v in _visits(root, document).items()}
    runs: dict[str, FlowRuns] = {}
    for child in children:
        flow = flows.get(child.flow)
        if flow is None or flow.id == root.id:
            continue
        seen = runs.get(flow.id, FlowRuns(0, 0, False, "", ""))
        state = "unknown" if child.document is None else _status(child.document)
        runs[flow.id] = FlowRuns(
            seen.count + 1,
            seen.unreadable + (child.document is None),
            seen.completed or state == "completed",
            child.run_id,
            state,
        )
        if child.document is None:
            continue
        for ref, visit in _visits(flow, child.document).items():
            visits[(flow.id, ref)] = _merge(visits.get((flow.id, ref)), visit)
    status = _status(document)
    run_id = str(document.get("runId") or "?")
    uncertain = _below(program, {flow_id for flow_id, r in runs.items() if r.unreadable})
    return RunOverlay(run_id, status, visits, status == "completed", runs, uncertain)


def _below(program: fr.FlowIR, flow_ids: set[str]) -> frozenset[str]:
    """``flow_ids`` and every Flow they run, directly or not."""
    found = set(flow_ids)
    todo = [flow for flow in program.flows if flow.id in flow_ids]
    while todo:
        for index in todo.pop().children:
            child = program.flows[index]
            if child.id not in found:
                found.add(child.id)
                todo.append(child)
    return frozenset(found)
