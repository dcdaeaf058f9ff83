"""Why each node of an evaluation has its status, in words a Provider author reads.

:func:`explain` turns an evaluation's trace (:mod:`agent_graph.vm.trace`) into the
``agent-graph.explain.v1`` document: every node of every evaluated frame, ordered from
the entry (reached nodes in the order evaluation reached them, a subgraph node followed
by its frame's nodes, then the frame's unreached nodes in declaration order), each with
its status and at least one reason. Each reason has a stable ``code`` (catalogued in
``docs/error-codes.md``), a ``message`` and the data it is made of (``edge``, ``fact``,
``rank`` …). Everything comes from the trace and the evaluation; nothing is re-evaluated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from .. import codes
from ..ir import records as r
from .provider import outcome_names

if TYPE_CHECKING:
    from ..vm import Candidate, Evaluation
    from ..vm.trace import Check, FrameTrace, NodeTrace, Step, Trace

EXPLAIN_SCHEMA: Final = "agent-graph.explain.v1"
UNREACHED: Final = "unreached"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def check_text(check: Check) -> str:
    """``release.approved equals true`` / ``report.digest exists``."""
    if check.kind == "equals":
        return f"`{check.path}` equals `{_json(check.expected)}`"
    return f"`{check.path}` {'exists' if check.kind == 'exists' else 'is absent'}"


def actual_text(check: Check) -> str:
    if check.missing:
        return "the fact is missing"
    return f"it is `{_json(check.actual)}`"


def check_data(check: Check) -> dict[str, Any]:
    out: dict[str, Any] = {"path": check.path, "check": check.kind}
    if check.kind == "equals":
        out["expected"] = check.expected
    if check.missing:
        out["missing"] = True
    else:
        out["actual"] = check.actual
    out["passed"] = check.passed
    return out


def _reason(code: str, message: str, **data: Any) -> dict[str, Any]:
    return {"code": code, "message": message, **data}


def _edge_data(graph: r.Graph, e: int) -> dict[str, Any]:
    edge = graph.edges[e]
    return {
        "from": graph.nodes[edge.source].id,
        "to": graph.nodes[edge.target].id,
        "kind": r.EDGE_KINDS[edge.kind],
        "outcomes": outcome_names(edge.mask),
    }


def _edge_text(graph: r.Graph, e: int) -> str:
    data = _edge_data(graph, e)
    kind = "" if data["kind"] in ("flow", "repeat") else f"{data['kind']} "  # callers say repeat
    return f"{kind}edge `{data['from']} → {data['to']}` on {', '.join(data['outcomes'])}"


class _Explainer:
    def __init__(self, evaluation: Evaluation, trace: Trace) -> None:
        self.evaluation = evaluation
        self.trace = trace
        self.rank = {c.state_key: i for i, c in enumerate(evaluation.candidates)}

    # -- reached nodes -------------------------------------------------------------------

    def reached(self, frame: FrameTrace, seen: NodeTrace) -> list[dict[str, Any]]:
        graph, node = frame.graph, frame.graph.nodes[seen.index]
        reasons: list[dict[str, Any]] = []
        how = seen.reach
        if how.kind == "entry":
            reasons.append(
                _reason(
                    codes.EXPLAIN_ENTRY,
                    f"`{node.id}` is where entry `{frame.entry}` of graph `{graph.id}` starts",
                    entry=frame.entry,
                )
            )
        elif how.kind == "repeat":
            e = how.edges[0]
            source = graph.nodes[graph.edges[e].source].id
            reasons.append(
                _reason(
                    codes.EXPLAIN_REPEAT_REACHED,
                    f"reached by the repeat {_edge_text(graph, e)}: `{source}` was "
                    f"{how.source_outcomes[0]}",
                    edge=_edge_data(graph, e),
                )
            )
        else:
            join = "any" if node.join_any else "all"
            for e, outcome in zip(how.edges, how.source_outcomes, strict=True):
                source = graph.nodes[graph.edges[e].source].id
                reasons.append(
                    _reason(
                        codes.EXPLAIN_EDGE,
                        f"reached over {_edge_text(graph, e)}: `{source}` is {outcome}"
                        + (f" (join {join})" if len(node.incoming) > 1 else ""),
                        edge=_edge_data(graph, e),
                        join=join,
                    )
                )
        for step in seen.steps:
            reasons += self.step(frame, node, step)
        reasons += self.offer(frame, node, seen)
        return reasons

    def step(self, frame: FrameTrace, node: r.Node, step: Step) -> list[dict[str, Any]]:
        key = frame.prefix + node.id
        graph = frame.graph
        kind = step.kind
        checks = self.trace.checks(step)  # the values each check saw
        if kind == "requires-failed":
            failed = [c for c in checks if not c.passed]
            return [
                _reason(
                    codes.EXPLAIN_REQUIRES_FAILED,
                    f"`{node.id}` is blocked: requiresFacts {check_text(c)}, but {actual_text(c)}",
                    fact=check_data(c),
                )
                for c in failed
            ]
        if kind == "requires-met":
            texts = "; ".join(f"{check_text(c)} ({actual_text(c)})" for c in checks)
            return [
                _reason(
                    codes.EXPLAIN_REQUIRES_MET,
                    f"requiresFacts hold: {texts}",
                    facts=[check_data(c) for c in checks],
                )
            ]
        if kind == "satisfied":
            texts = "; ".join(f"{check_text(c)} ({actual_text(c)})" for c in checks)
            return [
                _reason(
                    codes.EXPLAIN_SATISFIED,
                    f"completed because satisfiedBy holds: {texts}; a recorded outcome "
                    "does not matter then",
                    facts=[check_data(c) for c in checks],
                )
            ]
        if kind == "unverified":
            failed = [c for c in checks if not c.passed]
            return [
                _reason(
                    codes.EXPLAIN_UNVERIFIED,
                    f"recorded completed under `{key}`, but satisfiedBy {check_text(c)} "
                    f"fails ({actual_text(c)}): the record is not proof, so it is unverified",
                    fact=check_data(c),
                    stateKey=key,
                )
                for c in failed
            ]
        if kind == "recorded":
            return [
                _reason(
                    codes.EXPLAIN_RECORDED,
                    f"recorded outcome {step.outcome} under `{key}`",
                    stateKey=key,
                    recorded=step.outcome,
                )
            ]
        if kind == "terminal":
            return [
                _reason(
                    codes.EXPLAIN_TERMINAL,
                    f"terminal: its terminalOutcome is {step.outcome}",
                    outcome=step.outcome,
                )
            ]
        if kind == "no-record":
            extra = ""
            failed = [c for c in checks if not c.passed]
            if failed:
                extra = "; satisfiedBy " + "; ".join(
                    f"{check_text(c)} is not met ({actual_text(c)})" for c in failed
                )
            return [
                _reason(
                    codes.EXPLAIN_NO_RECORD,
                    f"no outcome is recorded under `{key}`{extra}",
                    stateKey=key,
                    facts=[check_data(c) for c in checks],
                )
            ]
        if kind == "subgraph":
            child = self.trace.frames[step.child]
            status = child.status + (f" ({child.outcome})" if child.outcome else "")
            return [
                _reason(
                    codes.EXPLAIN_SUBGRAPH,
                    f"calls `{child.graph.id}#{child.entry}`; that frame is {status}, so "
                    f"this node is {step.outcome}",
                    frame=child.key,
                    frameStatus=child.status,
                )
            ]
        if kind == "repeat-reset":
            assert step.edge is not None
            source = graph.nodes[graph.edges[step.edge].source].id
            return [
                _reason(
                    codes.EXPLAIN_REPEAT_RESET,
                    f"reset to pending by the repeat {_edge_text(graph, step.edge)} "
                    f"(`{source}` is {step.source_outcome}); it was {step.previous}",
                    edge=_edge_data(graph, step.edge),
                    previous=step.previous,
                )
            ]
        raise AssertionError(kind)  # every step kind of the trace is worded above

    def offer(self, frame: FrameTrace, node: r.Node, seen: NodeTrace) -> list[dict[str, Any]]:
        """Whether a pending action or gate is offered, and where it ranks."""
        if node.kind not in (r.ACTION, r.GATE) or seen.outcome != "pending":
            return []
        key = frame.prefix + node.id
        rank = self.rank.get(key)
        if rank is not None:
            return [self.ranked(rank)]
        settled = next(
            (f for f in self.trace.lineage(frame.id) if f.status in ("complete", "error")), None
        )
        if settled is not None:
            why = (
                f"graph `{settled.graph.id}` reached a terminal and is complete"
                if settled.status == "complete"
                else f"graph `{settled.graph.id}` ended in an error"
            )
            return [
                _reason(
                    codes.EXPLAIN_NOT_OFFERED,
                    f"pending, but not offered: {why}",
                    frame=settled.key,
                    frameStatus=settled.status,
                )
            ]
        return []  # pragma: no cover - a pending action of an open frame is a candidate

    def ranked(self, rank: int) -> dict[str, Any]:
        candidates = self.evaluation.candidates
        mine = candidates[rank]
        total = len(candidates)
        where = f"{mine.availability}, priority {mine.node.priority}"
        if rank == 0:
            message = f"offered as the primary route (#1 of {total}): {where}"
            if total > 1:
                message += f"; ranks before `{candidates[1].node.id}` ({_why(mine, candidates[1])})"
        else:
            before = candidates[rank - 1]
            listed = "an alternative route" if rank <= 3 else "a candidate beyond the 3 listed"
            message = (
                f"offered as {listed} (#{rank + 1} of {total}): {where}; after "
                f"`{before.node.id}` ({_why(before, mine)})"
            )
        return _reason(
            codes.EXPLAIN_CANDIDATE,
            message,
            rank=rank + 1,
            routeId=mine.route_id,
            availability=mine.availability,
            priority=mine.node.priority,
        )

    # -- unreached nodes -----------------------------------------------------------------

    def unreached(self, frame: FrameTrace, index: int) -> list[dict[str, Any]]:
        graph, node = frame.graph, frame.graph.nodes[index]
        if not node.incoming:
            repeats = [e for e in graph.repeat_edges if graph.edges[e].target == index]
            why = f"no edge leads here and it is not where entry `{frame.entry}` starts"
            if repeats:
                why = "only a repeat edge leads here, and it has not fired"
            starts = [name for name, start in graph.entrypoints if start == index]
            if starts:
                why += f" (it starts entry {', '.join(f'`{n}`' for n in starts)})"
            return [_reason(codes.EXPLAIN_UNREACHED, f"not reached: {why}")]
        parts = []
        edges = []
        for e in node.incoming:
            source_index = graph.edges[e].source
            source = graph.nodes[source_index].id
            outcome = frame.outcome_of(source_index)
            if frame.edge_fired(e):
                state = f"matches (`{source}` is {outcome})"
            elif outcome is None:
                state = f"`{source}` is not reached"
            else:
                state = f"`{source}` is {outcome}"
            parts.append(f"{_edge_text(graph, e)}: {state}")
            edges.append({**_edge_data(graph, e), "matches": frame.edge_fired(e)})
        need = "one incoming edge to match" if node.join_any else "every incoming edge to match"
        join = "any" if node.join_any else "all"
        rule = f"join {join} needs {need}; " if len(parts) > 1 else "its one incoming "
        return [
            _reason(
                codes.EXPLAIN_JOIN_UNMET,
                f"not reached: {rule}" + "; ".join(parts),
                join=join,
                edges=edges,
            )
        ]

    # -- the document --------------------------------------------------------------------

    def entries(self, frame_id: int) -> Iterator[dict[str, Any]]:
        frame = self.trace.frames[frame_id]
        for index in frame.order:
            yield self.entry(frame, index, self.reached(frame, frame.nodes[index]))
            child = frame.children.get(index)
            if child is not None:
                yield from self.entries(child)
        for index in range(len(frame.graph.nodes)):
            if index not in frame.nodes:
                yield self.entry(frame, index, self.unreached(frame, index))

    def entry(self, frame: FrameTrace, index: int, reasons: list[dict[str, Any]]) -> dict[str, Any]:
        node = frame.graph.nodes[index]
        key = frame.prefix + node.id
        seen = frame.nodes.get(index)
        status = seen.outcome if seen is not None and seen.outcome is not None else UNREACHED
        rank = self.rank.get(key)
        return {
            "graph": frame.graph.id,
            "node": node.id,
            "stateKey": key,
            "callPath": list(frame.call_path),
            "status": status,
            "candidate": rank is not None,
            "primary": rank == 0,
            "reasons": reasons,
        }


def _why(first: Candidate, second: Candidate) -> str:
    """Why ``first`` ranks before ``second`` (reference §2.8's sort key, in order)."""
    if first.availability != second.availability:
        return f"{first.availability} before {second.availability}"
    if first.node.priority != second.node.priority:
        return f"higher priority {first.node.priority} > {second.node.priority}"
    return f"same priority; route id {first.route_id} sorts first"


def explain(evaluation: Evaluation, trace: Trace, node: str | None = None) -> dict[str, Any]:
    """The ``agent-graph.explain.v1`` document (one node's entries when ``node`` is a node
    id or a state key; the caller checks that it names one)."""
    explainer = _Explainer(evaluation, trace)
    nodes = list(explainer.entries(0)) if trace.frames and trace.frames[0].error is None else []
    if node is not None:
        nodes = [n for n in nodes if node in (n["node"], n["stateKey"])]
    doc: dict[str, Any] = {
        "schema": EXPLAIN_SCHEMA,
        "provider": evaluation.provider,
        "graph": evaluation.graph,
        "entry": evaluation.entry,
        "revision": evaluation.revision,
        "statusCode": evaluation.status_code,
    }
    if evaluation.outcome:
        doc["outcome"] = evaluation.outcome
    doc["nodes"] = nodes
    return doc


def explain_lines(doc: dict[str, Any]) -> list[str]:
    """Human lines: the state, then each node's status line and its reasons, indented."""
    lines = [f"State: {doc['statusCode']}"]
    if doc.get("outcome"):
        lines.append(f"Outcome: {doc['outcome']}")
    lines.append(f"Revision: {doc['revision']} ({doc['graph']}#{doc['entry']})")
    for entry in doc["nodes"]:
        mark = ""
        if entry["primary"]:
            mark = " (next: the primary route)"
        elif entry["candidate"]:
            mark = " (a candidate)"
        lines.append(f"{entry['stateKey']} is {entry['status']}{mark}")
        lines += [f"  - {reason['message']}" for reason in entry["reasons"]]
    return lines
