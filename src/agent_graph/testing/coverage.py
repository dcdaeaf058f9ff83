"""``agc test --coverage``: what a Provider's graph tests leave out, from the VM's trace.

Every case that could run is evaluated once more with the trace (nothing else changes),
and each frame of each evaluation counts for the Graph it is of, wherever it was called
from. Four things are counted, over every Graph of the Provider:

* **routes**: each action and Gate node, covered when some case has it as the primary
  route (terminals and subgraph nodes are never routes);
* **edges**: each edge, covered when it fired in some frame: the source's outcome was
  one the edge lists when evaluation ended, or, for a repeat edge, it reset or reached
  its target;
* **outcomes**: for each node, each outcome its outgoing edges (repeat edges included)
  list, covered when some case gives the node that outcome (recorded, derived from
  facts or from a child frame; before a repeat reset too);
* **gates**: each Gate, covered when some case's primary route waits at it for a user.

The percentage is covered over total, all four together.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..ir import records as r

if TYPE_CHECKING:
    from ..vm import Program
    from ..vm.trace import FrameTrace
    from .runner import CaseResult

KINDS: Final = ("routes", "edges", "outcomes", "gates")
_ROUTES = (r.ACTION, r.GATE)


@dataclass(slots=True)
class _Seen:
    primary: set[tuple[str, str]] = field(default_factory=set)  # (graph, node)
    edges: set[tuple[str, int]] = field(default_factory=set)  # (graph, edge index)
    outcomes: set[tuple[str, str, str]] = field(default_factory=set)  # (graph, node, outcome)
    waited: set[tuple[str, str]] = field(default_factory=set)


def _count_frame(frame: FrameTrace, seen: _Seen) -> None:
    graph = frame.graph
    if frame.error is not None:
        return
    for e, edge in enumerate(graph.edges):
        if frame.edge_fired(e) or (edge.kind == r.REPEAT and _repeat_used(frame, e)):
            seen.edges.add((graph.id, e))
    for index, node_trace in frame.nodes.items():
        node = graph.nodes[index]
        for step in node_trace.steps:
            seen.outcomes.add((graph.id, node.id, step.outcome))
        if node_trace.outcome is not None:
            seen.outcomes.add((graph.id, node.id, node_trace.outcome))


def _repeat_used(frame: FrameTrace, e: int) -> bool:
    for node_trace in frame.nodes.values():
        if node_trace.reach.kind == "repeat" and e in node_trace.reach.edges:
            return True
        if any(step.kind == "repeat-reset" and step.edge == e for step in node_trace.steps):
            return True
    return False


def covered_by(program: Program, results: Iterable[CaseResult]) -> _Seen:
    """What the cases that ran exercise (an errored case counts for nothing)."""
    seen = _Seen()
    for result in results:
        if result.errored:
            continue
        case = result.case
        evaluation = program.evaluate(case.graph, case.entry, dict(case.state), trace=True)
        assert evaluation.trace is not None
        for frame in evaluation.trace.frames:
            _count_frame(frame, seen)
        primary = evaluation.primary
        if primary is not None:
            seen.primary.add((primary.graph.id, primary.node.id))
            if primary.node.kind == r.GATE and primary.gate_resolution == "user":
                seen.waited.add((primary.graph.id, primary.node.id))
    return seen


def _outcomes_listed(graph: r.Graph, node: r.Node) -> list[str]:
    mask = 0
    for e in (*node.outgoing, *node.repeats):
        mask |= graph.edges[e].mask
    return [name for name in r.OUTCOMES if mask & r.OUTCOME_BIT[name]]


def _edge(graph: r.Graph, e: int) -> dict[str, Any]:
    edge = graph.edges[e]
    return {
        "graph": graph.id,
        "from": graph.nodes[edge.source].id,
        "to": graph.nodes[edge.target].id,
        "kind": r.EDGE_KINDS[edge.kind],
        "outcomes": [n for n in r.OUTCOMES if edge.mask & r.OUTCOME_BIT[n]],
    }


def coverage(program: Program, results: Iterable[CaseResult]) -> dict[str, Any]:
    """The ``coverage`` member of ``agc test --coverage --format json``: what no case
    covers (``neverPrimary``, ``edgesNeverFired``, ``outcomesNeverSeen`` by node,
    ``gatesNeverWaited``), the counts of each kind and the percentage."""
    results = list(results)
    seen = covered_by(program, results)
    missing: dict[str, Any] = {
        "neverPrimary": [],
        "edgesNeverFired": [],
        "outcomesNeverSeen": {},
        "gatesNeverWaited": [],
    }
    counts = {kind: [0, 0] for kind in KINDS}  # covered, total

    def count(kind: str, hit: bool) -> bool:
        counts[kind][1] += 1
        counts[kind][0] += hit
        return hit

    for graph_id in program.graph_ids:
        graph = program.graph(graph_id)
        for node in graph.nodes:
            key = f"{graph.id}/{node.id}"
            if node.kind in _ROUTES and not count("routes", (graph.id, node.id) in seen.primary):
                missing["neverPrimary"].append(key)
            if node.kind == r.GATE and not count("gates", (graph.id, node.id) in seen.waited):
                missing["gatesNeverWaited"].append(key)
            lacking = [
                outcome
                for outcome in _outcomes_listed(graph, node)
                if not count("outcomes", (graph.id, node.id, outcome) in seen.outcomes)
            ]
            if lacking:
                missing["outcomesNeverSeen"][key] = lacking
        for e in range(len(graph.edges)):
            if not count("edges", (graph.id, e) in seen.edges):
                missing["edgesNeverFired"].append(_edge(graph, e))
    covered = sum(c for c, _ in counts.values())
    total = sum(t for _, t in counts.values())
    return {
        "percent": percent(covered, total),
        "covered": covered,
        "total": total,
        "cases": sum(1 for result in results if not result.errored),
        "counts": {kind: {"covered": c, "total": t} for kind, (c, t) in counts.items()},
        **missing,
    }


def percent(covered: int, total: int) -> float:
    """Covered over total in percent, to two places; nothing to cover is 100."""
    return 100.0 if total == 0 else round(100.0 * covered / total, 2)


def coverage_lines(doc: dict[str, Any]) -> list[str]:
    """The human table, then each thing no case covers."""
    lines = [
        f"Coverage: {doc['percent']:.2f}% ({doc['covered']}/{doc['total']}) "
        f"over {doc['cases']} graph test(s)",
        f"  {'kind':<10} {'covered':>7} {'total':>5} {'percent':>8}",
    ]
    for kind, count in doc["counts"].items():
        share = percent(count["covered"], count["total"])
        lines.append(f"  {kind:<10} {count['covered']:>7} {count['total']:>5} {share:>7.2f}%")
    if doc["neverPrimary"]:
        lines.append("Never the primary route: " + ", ".join(doc["neverPrimary"]))
    for edge in doc["edgesNeverFired"]:
        kind = "" if edge["kind"] == "flow" else f" ({edge['kind']})"
        on = ", ".join(edge["outcomes"])
        lines.append(
            f"Edge never fired: {edge['graph']}: {edge['from']} → {edge['to']} on {on}{kind}"
        )
    for key, outcomes in doc["outcomesNeverSeen"].items():
        lines.append(f"Outcome never seen: {key}: {', '.join(outcomes)}")
    if doc["gatesNeverWaited"]:
        lines.append("Gate no test waits at: " + ", ".join(doc["gatesNeverWaited"]))
    return lines
