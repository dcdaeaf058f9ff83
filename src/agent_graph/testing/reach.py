"""``agc explain --reach NODE``: the smallest state that makes NODE the primary route.

The search plays the Graph forward. From a state (empty, or the one given) it evaluates
with the VM's trace and takes as its moves what a host could record next: for each pending
node that can lead to NODE, each outcome its outgoing edges and repeat edges name; for each
route ranked before NODE's, those and one outcome no edge takes, which only settles it and
gets it out of the way; the facts of a ``satisfiedBy`` (the only way to a ``completed``
that is not ``unverified``) or of a failing ``requiresFacts``, or an ``exists: false``
path of a passing ``satisfiedBy`` set (which makes that step pending again); a
delegatable Gate's authority (:class:`Relevance` says which nodes can lead to NODE).
Terminals are never given an outcome: hosts record the steps they run.
States only grow, each move costing what it adds (one per outcome, fact or authority),
and they are taken cheapest first (ties in the order the moves were made, so the answer
is the same on every run): the first state whose evaluation has NODE as its primary route
is a smallest one among those the moves can build. The search stops after ``limit``
evaluations; the state it proposes is evaluated once more, without the trace, before it
is returned.

What counts as reaching a node depends on its kind: an action or a Gate is the primary
route; a subgraph node has the primary route inside its frame; a terminal is reached and
its frame is complete. When no state does it, :attr:`ReachAnswer.reason` says what stood
in the way in the states seen (never reached, its ``requiresFacts``, an outcome that never
left it pending, a better-ranked route).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final, Literal

from ..ir import records as r
from .reach_facts import Values, against, check_text, fact_values, leaves, with_facts
from .reach_target import Relevance, Target, target_of

if TYPE_CHECKING:
    from ..vm import Candidate, Evaluation, Program
    from ..vm.trace import FrameTrace

#: Evaluations one search may make (``agc explain --max-states``).
DEFAULT_LIMIT: Final = 5000
_PENDING: Final = "pending"
_COMPLETED: Final = "completed"
_CAN_BE_ROUTE = (r.ACTION, r.GATE)
_ASIDE: Final = ("skipped", "failed", "partial", "blocked")

ReachStatus = Literal["reached", "unreachable", "bound"]


@dataclass(frozen=True, slots=True)
class State:
    """A routing state the search builds: facts, outcomes by state key, authorities."""

    facts: Mapping[str, Any] = field(default_factory=dict)
    outcomes: Mapping[str, str] = field(default_factory=dict)
    authorities: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "facts": dict(self.facts),
            "outcomes": dict(sorted(self.outcomes.items())),
            "authorities": sorted(self.authorities),
        }

    def text(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def with_facts(self, facts: Mapping[str, Any]) -> State:
        return State(facts, self.outcomes, self.authorities)


@dataclass(frozen=True, slots=True)
class Move:
    """One step of the path: ``key`` of the node it is for, and what it adds."""

    key: str
    kind: Literal["outcome", "facts", "authority"]
    outcome: str | None = None
    facts: tuple[tuple[str, Any], ...] = ()  # dotted path -> value
    authority: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": self.key, "adds": self.kind}
        if self.outcome is not None:
            out["recorded"] = self.outcome
        if self.facts:
            out["facts"] = dict(self.facts)
        if self.authority is not None:
            out["authority"] = self.authority
        return out


@dataclass(frozen=True, slots=True)
class ReachAnswer:
    """The answer for one Target and entry."""

    target: Target
    entry: str
    status: ReachStatus
    explored: int
    limit: int
    state: State | None = None  # reached: the state found
    path: tuple[Move, ...] = ()
    evaluation: Evaluation | None = None
    outcomes: Mapping[str, str | None] = field(default_factory=dict)  # key -> final outcome
    reason: str | None = None  # unreachable / bound: why
    start_size: int = 0  # what the start state already held

    @property
    def reached(self) -> bool:
        return self.status == "reached"

    @property
    def size(self) -> int:
        return 0 if self.state is None else _cost_of(self.state)


def _cost_of(state: State) -> int:
    return len(leaves(state.facts)) + len(state.outcomes) + len(state.authorities)


# -- the goal ---------------------------------------------------------------------------


def _met(target: Target, evaluation: Evaluation) -> bool:
    primary = evaluation.primary
    kind = target.node.kind
    if kind in _CAN_BE_ROUTE:
        return primary is not None and primary.state_key == target.key
    if kind == r.SUBGRAPH:
        return primary is not None and primary.state_key.startswith(target.key + ">")
    frame = _frame(evaluation, target.prefix)  # a terminal
    if frame is None or frame.status != "complete":
        return False
    return target.index in frame.nodes and frame.outcome_of(target.index) == frame.outcome


def _frame(evaluation: Evaluation, prefix: str) -> FrameTrace | None:
    assert evaluation.trace is not None
    return next((f for f in evaluation.trace.frames if f.prefix == prefix), None)


# -- the moves --------------------------------------------------------------------------


def _outcomes_named(graph: r.Graph, node: r.Node) -> list[str]:
    """The outcomes the node's outgoing edges (and repeat edges) take, in bit order."""
    mask = 0
    for e in (*node.outgoing, *node.repeats):
        mask |= graph.edges[e].mask
    named = [name for name in r.OUTCOMES if mask & r.OUTCOME_BIT[name] and name != _PENDING]
    return named or [_COMPLETED]


def _moves(
    state: State, evaluation: Evaluation, goal: Target, relevance: Relevance, values: Values
) -> Iterator[tuple[State, Move]]:
    from ..vm.facts import all_match

    trace = evaluation.trace
    assert trace is not None
    ahead = _ahead_of(goal, evaluation)
    for frame in trace.frames:
        if frame.error is not None:
            continue
        graph = frame.graph
        for index in frame.order:
            node = graph.nodes[index]
            key = frame.prefix + node.id
            if key not in ahead and not relevance.leads(frame, index):
                continue
            outcome = frame.outcome_of(index)
            if node.requires is not None and not all_match(state.facts, node.requires):
                for facts, added in with_facts(state.facts, node.requires, values):
                    yield state.with_facts(facts), Move(key, "facts", facts=added)
                continue
            if node.kind not in _CAN_BE_ROUTE:
                continue
            if outcome == _COMPLETED and node.satisfied_by is not None:
                # proven by its facts: an absent path set makes it a step again
                for facts, added in against(state.facts, node.satisfied_by):
                    yield state.with_facts(facts), Move(key, "facts", facts=added)
            if outcome != _PENDING:
                continue
            if key != goal.key:
                yield from _pending_moves(state, graph, node, key, values, aside=key in ahead)
            else:  # the goal itself: its authority may rank it first
                yield from _authority(state, node, key)


def _ahead_of(goal: Target, evaluation: Evaluation) -> set[str]:
    """The routes ranked before the goal's, when it is a route already: the ones to settle."""
    inside = goal.key + ">"
    ahead: set[str] = set()
    for candidate in evaluation.candidates:
        key = candidate.state_key
        if key == goal.key or key.startswith(inside):
            return ahead
        ahead.add(key)
    return set()


def _pending_moves(
    state: State, graph: r.Graph, node: r.Node, key: str, values: Values, *, aside: bool
) -> Iterator[tuple[State, Move]]:
    recordable = key not in state.outcomes
    named = _outcomes_named(graph, node)
    # a route ranked before the goal may also be settled with an outcome no edge takes,
    # which only gets it out of the way
    settle = next((o for o in _ASIDE if o not in named), None) if aside else None
    for outcome in (*named, settle) if settle is not None else named:
        if outcome == _COMPLETED and node.satisfied_by is not None:
            for facts, added in with_facts(state.facts, node.satisfied_by, values):
                yield state.with_facts(facts), Move(key, "facts", facts=added)
            continue
        recorded = _COMPLETED if outcome == "unverified" else outcome
        if not recordable or (outcome == "unverified" and node.satisfied_by is None):
            continue
        outcomes = {**state.outcomes, key: recorded}
        yield State(state.facts, outcomes, state.authorities), Move(key, "outcome", recorded)
    yield from _authority(state, node, key)


def _authority(state: State, node: r.Node, key: str) -> Iterator[tuple[State, Move]]:
    """A delegatable Gate's authority, which makes it a step the session takes now."""
    gate = node.gate
    if (
        gate is not None
        and gate.delegatable is True
        and gate.authority is not None
        and gate.authority not in state.authorities
    ):
        authorities = (*state.authorities, gate.authority)
        yield (
            State(state.facts, state.outcomes, authorities),
            Move(key, "authority", authority=gate.authority),
        )


# -- the search -------------------------------------------------------------------------


def reach(
    program: Program,
    graph_id: str,
    node: str,
    entry: str | None = None,
    start: State | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
) -> ReachAnswer:
    """The smallest state (added to ``start``) that makes ``node`` the primary route of
    ``graph_id``, searched from ``entry`` or, without one, from each entry of the Graph
    in authored order (the smallest answer wins; the first on a tie)."""
    target = target_of(program, graph_id, node)
    graph = program.graph(graph_id)
    entries = [entry] if entry is not None else [name for name, _ in graph.entrypoints]
    answers = [_search(program, target, name, start or State(), limit) for name in entries]
    reached = [a for a in answers if a.reached]
    if reached:
        return min(reached, key=lambda a: a.size)  # min keeps the first of equals
    bound = [a for a in answers if a.status == "bound"]
    if bound:
        return bound[0]
    return replace(answers[0], reason="; ".join(str(a.reason) for a in answers))


def _search(program: Program, target: Target, entry: str, start: State, limit: int) -> ReachAnswer:
    base = _cost_of(start)
    blocker = _Blocker(target)
    relevance = Relevance(program, target)
    values = fact_values(program)
    heap: list[tuple[int, int, State, tuple[Move, ...]]] = [(base, 0, start, ())]
    seen: set[str] = set()
    serial = 0
    explored = 0
    while heap:
        _, _, state, path = heapq.heappop(heap)
        text = state.text()
        if text in seen:
            continue
        seen.add(text)
        if explored >= limit:
            reason = _bound_reason(limit)
            return ReachAnswer(
                target, entry, "bound", explored, limit, reason=reason, start_size=base
            )
        explored += 1
        evaluation = program.evaluate(target.root, entry, state.to_dict(), trace=True)
        if _met(target, evaluation):
            found = _verified(program, target, entry, state, path, evaluation, explored, limit)
            return replace(found, start_size=base)
        blocker.see(evaluation)
        for after, move in _moves(state, evaluation, target, relevance, values):
            serial += 1
            heapq.heappush(heap, (_cost_of(after), serial, after, (*path, move)))
    reason = blocker.reason(entry)
    return ReachAnswer(
        target, entry, "unreachable", explored, limit, reason=reason, start_size=base
    )


def _bound_reason(limit: int) -> str:
    return (
        f"the search bound was hit: {limit} states evaluated without reaching it "
        "(raise it with --max-states)"
    )


def _verified(
    program: Program,
    target: Target,
    entry: str,
    state: State,
    path: tuple[Move, ...],
    traced: Evaluation,
    explored: int,
    limit: int,
) -> ReachAnswer:
    plain = program.evaluate(target.root, entry, state.to_dict())
    if plain != traced or not _met(target, traced):  # pragma: no cover - the VM's own word
        raise AssertionError(f"the state found for {target.key} does not evaluate the same")
    outcomes: dict[str, str | None] = {}
    trace = traced.trace
    assert trace is not None
    for frame in trace.frames:
        for index in frame.order:
            outcomes[frame.prefix + frame.graph.nodes[index].id] = frame.outcome_of(index)
    return ReachAnswer(target, entry, "reached", explored, limit, state, path, plain, outcomes)


class _Blocker:
    """What kept the target from being reached, from the closest state seen."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.level = -1
        self.text = ""

    def see(self, evaluation: Evaluation) -> None:
        level, text = self._judge(evaluation)
        if level > self.level:
            self.level, self.text = level, text

    def _judge(self, evaluation: Evaluation) -> tuple[int, str]:
        target = self.target
        frame = _frame(evaluation, target.prefix)
        if frame is None:
            return 0, f"the frame of {target.key} is never evaluated"
        index = target.index
        seen = frame.nodes.get(index)
        graph = frame.graph
        if seen is None:
            return 1, f"it is never reached: {_join_text(graph, target.node, frame)}"
        outcome = frame.outcome_of(index)
        if outcome == "blocked" and target.node.requires is not None:
            checks = " and ".join(check_text(c) for c in target.node.requires)
            return 2, f"its requiresFacts ({checks}) cannot all hold"
        if target.node.kind not in _CAN_BE_ROUTE:
            return 2, f"it is reached but its frame never completes with it ({outcome})"
        if outcome != _PENDING:
            return 2, f"it is reached but never pending: its outcome is always {outcome}"
        if not any(c.state_key == target.key for c in evaluation.candidates):
            return 3, (
                "it is pending but never offered: its frame, or one around it, reaches a "
                "terminal or an error first"
            )
        primary: Candidate | None = evaluation.primary
        other = primary.state_key if primary is not None else "nothing"
        return 3, f"it is a route but never the primary one: {other} ranks first"

    def reason(self, entry: str) -> str:
        if self.level < 0:  # pragma: no cover - the start state is always seen
            return "no state was evaluated"
        return f"from entry {entry}, {self.text}"


def _join_text(graph: r.Graph, node: r.Node, frame: FrameTrace) -> str:
    if not node.incoming:
        return "no edge leads to it and it is not this entry's start"
    parts = []
    for e in node.incoming:
        edge = graph.edges[e]
        source = graph.nodes[edge.source].id
        wanted = "/".join(n for n in r.OUTCOMES if edge.mask & r.OUTCOME_BIT[n])
        got = frame.outcome_of(edge.source) if edge.source in frame.nodes else "unreached"
        parts.append(f"{source} → {node.id} on {wanted} ({source} is {got})")
    how = "any of" if node.join_any else "all of"
    return f"its join needs {how}: " + "; ".join(parts)
