"""The evaluation trace: how every node of every frame got its outcome (``trace=True``).

``Program.evaluate(graph, entry, state, trace=True)`` runs the same fixpoint through
:class:`TracingEvaluator` and :class:`TracedFrame`, subclasses of the VM's own evaluator
and frame that record what the VM decides as it decides it: how a node was reached (the
entry, the incoming edges that matched, or a repeat edge), which ``requiresFacts`` /
``satisfiedBy`` checks passed or failed with the actual values, the recorded outcome
used or overridden, repeat resets, child frames, and each frame's final state. The
untraced path never touches this module: the evaluator picks its frame class once per
evaluation, so evaluation without a trace does no extra work at all.

The trace is data (``agc graph`` and ``agc explain`` word it); it does not change the
evaluation, which ``tests/vm/test_graph_trace.py`` checks for every example state and for
generated ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

from ..frozen import field, record, slotted
from ..ir import records as r
from .evaluate import ChildRequest, Evaluator, FrameResult, _Frame
from .facts import MISSING, all_match, check_matches, get_fact

if TYPE_CHECKING:
    from .kinds import Outcome, StatusCode
    from .plans import GraphPlan

ReachKind = Literal["entry", "join", "repeat"]
StepKind = Literal[
    "requires-failed",
    "requires-met",
    "satisfied",
    "unverified",
    "recorded",
    "terminal",
    "no-record",
    "subgraph",
    "repeat-reset",
]


@record
class Check:
    """One fact check as evaluated: ``path`` dotted, ``kind`` exists/absent/equals,
    ``expected`` (equals only), ``actual`` (None and ``missing`` when there is no fact)."""

    path: str
    kind: str
    expected: Any
    actual: Any
    missing: bool
    passed: bool


@record
class Reach:
    """How a node entered ``reached``: ``edges`` that matched (join) or the repeat edge,
    with each edge's source outcome at that moment."""

    kind: ReachKind
    edges: tuple[int, ...] = ()
    source_outcomes: tuple[Outcome | None, ...] = ()


_ENTRY: Final = Reach("entry")


@record
class Step:
    """One decision about a node's outcome, in the order the VM made them. ``checks``: the
    fact checks it rests on (``requiresFacts`` or ``satisfiedBy``), as compiled; their
    values are looked up only when asked (:meth:`Trace.checks`), so recording is cheap."""

    kind: StepKind
    outcome: str
    checks: tuple[r.FactCheck, ...] = ()
    child: int = -1  # subgraph: the child frame's id
    edge: int | None = None  # repeat-reset: the repeat edge
    source_outcome: str | None = None
    previous: str | None = None


@slotted
class NodeTrace:
    index: int
    reach: Reach
    steps: list[Step] = field(default_factory=list)
    outcome: Outcome | None = None  # the final outcome in its frame


@slotted
class FrameTrace:
    """One frame: ``order`` of reached node indexes, their :class:`NodeTrace`, the child
    frame of each evaluated subgraph node, the final edge matches and the frame result.
    ``error`` is the code of a frame that could not start (recursion, unknown entry)."""

    id: int
    graph: r.Graph
    graph_index: int
    entry: str
    call_path: tuple[str, ...]
    prefix: str
    parent: int | None
    error: str | None = None
    order: list[int] = field(default_factory=list)
    nodes: dict[int, NodeTrace] = field(default_factory=dict)
    children: dict[int, int] = field(default_factory=dict)
    edge_match: bytes = b""
    outcomes: list[Outcome | None] = field(default_factory=list)
    status: StatusCode = "error"
    outcome: Outcome | None = None

    @property
    def key(self) -> str:
        return self.prefix[:-1]

    def outcome_of(self, index: int) -> Outcome | None:
        return self.outcomes[index] if index < len(self.outcomes) else None

    def edge_fired(self, e: int) -> bool:
        """Non-repeat edges: the VM's final match bit; repeat edges: the source's final
        outcome is one the edge lists."""
        edge = self.graph.edges[e]
        if edge.kind == r.REPEAT:
            source = self.outcome_of(edge.source)
            return source is not None and bool(edge.mask & r.OUTCOME_BIT.get(source, 0))
        return bool(self.edge_match[e]) if e < len(self.edge_match) else False


@slotted
class Trace:
    """Every frame of one evaluation, the root first, parents before their children."""

    frames: list[FrameTrace] = field(default_factory=list)
    facts: Any = None  # the evaluated facts (read-only), for the checks' actual values

    def checks(self, step: Step) -> tuple[Check, ...]:
        """``step``'s fact checks with the values they saw."""
        return evaluated_checks(self.facts, step.checks)

    def lineage(self, frame_id: int) -> list[FrameTrace]:
        """The frame and its ancestors, innermost first."""
        out = []
        current: int | None = frame_id
        while current is not None:
            frame = self.frames[current]
            out.append(frame)
            current = frame.parent
        return out

    def ancestors(self, frame_id: int) -> list[FrameTrace]:
        return self.lineage(frame_id)


def evaluated_checks(facts: Any, checks: tuple[r.FactCheck, ...]) -> tuple[Check, ...]:
    """Every check with its actual value (the VM's own matcher decides ``passed``)."""
    out = []
    for check in checks:
        value = get_fact(facts, check.path)
        missing = value is MISSING
        out.append(
            Check(
                ".".join(check.path),
                r.FACT_KINDS[check.kind],
                check.value if check.kind == r.EQUALS else None,
                None if missing else value,
                missing,
                check_matches(facts, check),
            )
        )
    return tuple(out)


class TracingEvaluator(Evaluator):
    """:class:`Evaluator` that records a :class:`Trace` (frames are :class:`TracedFrame`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.trace = Trace(facts=self.state.facts)
        self.requester: tuple[int, int] | None = None  # (frame id, subgraph node index)

    def new_frame(
        self, graph: r.Graph, entry: str, call_path: tuple[str, ...], prefix: str
    ) -> FrameTrace:
        parent = self.requester
        self.requester = None
        caller = self.trace.frames[parent[0]] if parent is not None else None
        frame = FrameTrace(
            id=len(self.trace.frames),
            graph=graph,
            graph_index=self.program.graphs.index(graph) if parent is None else -1,
            entry=entry,
            call_path=call_path,
            prefix=prefix,
            parent=None if parent is None else parent[0],
        )
        if parent is not None and caller is not None:
            frame.graph_index = caller.graph.nodes[parent[1]].subgraph
            caller.children[parent[1]] = frame.id
        self.trace.frames.append(frame)
        return frame

    def _refused(  # type: ignore[override]
        self, graph: r.Graph, entry: str, active_ids: list[str], active: set[str]
    ) -> FrameResult | None:
        early = Evaluator._refused(graph, entry, active_ids, active)
        if early is not None:
            # a frame that cannot start still is one the evaluation asked for
            frame = self.new_frame(graph, entry, (), "")
            frame.error = early.diagnostics[0].code
            frame.status = early.status
        return early


class TracedFrame(_Frame):
    """:class:`~agent_graph.vm.evaluate._Frame` recording each decision in a FrameTrace,
    through the frame's ``on_*`` hooks."""

    ev: TracingEvaluator
    tracing = True

    def start(
        self,
        ev: Evaluator,
        plan: GraphPlan,
        prefix: str,
        start: int,
        entry: str,
    ) -> ChildRequest | FrameResult:
        assert isinstance(ev, TracingEvaluator)
        # recorded before the plain frame's start runs it
        self.record = ev.new_frame(plan.graph, entry, tuple(ev.segments), prefix)
        self.record.nodes[start] = NodeTrace(start, _ENTRY, [])  # the plain frame reached it
        return super().start(ev, plan, prefix, start, entry)

    def on_reach(self, index: int, edge: int | None) -> None:
        graph = self.plan.graph
        if edge is not None:  # (the entry is reached by start)
            how = Reach("repeat", (edge,), (self.outcome[graph.edges[edge].source],))
        else:  # the join pass: the incoming edges that match now (all of them for join: all)
            edges, outcome, flags = graph.edges, self.outcome, self.reached_flag
            n = len(graph.nodes)  # edge e's match flag is at n + e
            matched = tuple([e for e in graph.nodes[index].incoming if flags[n + e]])
            how = Reach("join", matched, tuple([outcome[edges[e].source] for e in matched]))
        self.record.nodes[index] = NodeTrace(index, how, [])

    def on_request(self, index: int) -> None:
        self.ev.requester = (self.record.id, index)

    def on_outcome(self, index: int, outcome: Outcome, edge: int | None) -> None:
        steps = self.record.nodes[index].steps
        if edge is not None:  # a reset (or a target reached by a repeat edge)
            previous = self.outcome[index]
            if previous is not None:
                # before the reset: a self-loop's source is the node being reset
                source = self.outcome[self.plan.graph.edges[edge].source]
                steps.append(
                    Step(
                        "repeat-reset", outcome, edge=edge, source_outcome=source, previous=previous
                    )
                )
            return
        steps += self.decided(index, outcome)

    def decided(self, index: int, outcome: Outcome) -> list[Step]:
        """Why the outcome pass gave ``index`` its ``outcome``: the order of the VM's own
        tests (reference §2.4, §2.5), read off the inputs it used and the outcome it chose."""
        node = self.plan.graph.nodes[index]
        facts = self.ev.state.facts
        out = []
        if node.requires is not None:
            if not all_match(facts, node.requires):
                return [Step("requires-failed", outcome, node.requires)]
            out.append(Step("requires-met", outcome, node.requires))
        if node.kind == r.SUBGRAPH:
            out.append(Step("subgraph", outcome, child=self.record.children.get(index, -1)))
            return out
        recorded = self.ev.recorded(self.prefix, node.id)
        checks = node.satisfied_by if node.kind != r.TERMINAL else None
        kind: StepKind
        if checks is not None and outcome == "completed":
            kind = "satisfied"  # a failing satisfiedBy never gives completed
        elif checks is not None and recorded == "completed":
            kind = "unverified"
        elif recorded is not None:
            kind = "recorded"
            assert recorded == outcome, "the trace reads the VM's own decision"
        elif node.kind == r.TERMINAL:
            kind = "terminal"
        else:
            kind = "no-record"
        out.append(Step(kind, outcome, checks or ()))
        return out

    def finish(self) -> FrameResult:
        result = super().finish()
        record = self.record
        record.order = list(self.reached)
        n = len(self.plan.nodes)  # the outcomes, before the counts and child results
        record.outcomes = self.outcome[:n]
        record.edge_match = bytes(self.reached_flag[n:])
        record.status = result.status
        record.outcome = result.outcome
        for index, seen in record.nodes.items():
            seen.outcome = self.outcome[index]
        return result


TracingEvaluator.frame_type = TracedFrame
