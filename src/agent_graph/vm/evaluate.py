"""Evaluation: the reference's round-based fixpoint, in time linear in nodes + edges.

The reference repeats three passes until nothing changes: an outcome pass over
reached nodes without an outcome, a repeat pass over every repeat edge (declaration
order, seeing its own updates), and a join pass over every unreached node
(declaration order, no cascade within the pass). Rescanning everything each round is
quadratic on a chain. Here each pass only looks at what changed:

* the outcome pass takes the nodes the previous join pass reached (in that order);
* each edge's "matches" bit and each node's count of matching incoming edges are
  updated when a source's outcome is set or reset, and only nodes whose count moved
  are re-checked by the join pass (in declaration order);
* a repeat edge is queued when its source gets an outcome it lists; the repeat pass
  drains the queue in index order, and an edge armed behind the scan position waits
  for the next pass, exactly as the reference's in-place scan would see it.

Every round therefore does the reference's work restricted to the changed part, and
the result (reached order, outcomes, diagnostics) is the same.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final

from .. import codes
from ..canonical import (
    canonical_string_parts,
    digest_canonical,
    digest_canonical_texts,
    json_string,
)
from ..collector import collector_paused
from ..errors import Diagnostic
from ..frozen import field, record
from ..ir import records as r
from ..ir.codec import graph_ids
from .facts import all_match
from .kinds import Availability, GateResolution, Outcome, StatusCode
from .plans import (
    N_CHILD,
    N_DEFAULT,
    N_ENTRY,
    N_ID,
    N_INCOMING,
    N_JOIN_ANY,
    N_KIND,
    N_MATCHES,
    N_NODE,
    N_OUT,
    N_REPEATS,
    N_REQUIRES,
    N_SATISFIED,
    N_SEGMENT,
    N_SUBGRAPH,
    N_SUFFIX,
    GraphPlan,
    Plans,
)
from .state import Normalized

MAX_ALTERNATIVE_ROUTES = 3


#: What a suspended frame asks for: (graph index, entry, the call-path segment its child
#: adds, the child's state-key prefix).
ChildRequest = tuple[int, str, str, str]
PENDING: Final = "pending"
_AVAILABILITY_RANK: Final[dict[Availability, int]] = {
    "immediate": 0,
    "requires-user": 1,
    "blocked": 2,
}
_OUTCOME_BIT: Final = r.OUTCOME_BIT
_SUBGRAPH: Final = r.SUBGRAPH
_TERMINAL: Final = r.TERMINAL
#: A subgraph node's outcome from its child's status, when the child did not complete
#: with an outcome.
_CHILD_OUTCOME: Final[dict[StatusCode, Outcome]] = {
    "error": "failed",
    "waiting-user": "waiting-user",
}
_FRAME_STATUS: Final[dict[Availability, StatusCode]] = {
    "immediate": "actionable",
    "requires-user": "waiting-user",
    "blocked": "blocked",
}


@record  # one per legal step of every evaluation: cheaper to create than a dataclass
class Candidate:
    """A legal next step: the route id, where it is, and how it may be taken."""

    route_id: str
    graph: r.Graph
    node: r.Node
    call_path: tuple[str, ...]
    state_key: str
    status_code: StatusCode
    reason_code: str
    hint: str | None
    availability: Availability
    gate_resolution: GateResolution | None

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "routeId": self.route_id,
            "graph": self.graph.id,
            "node": self.node.id,
            "statusCode": self.status_code,
            "reasonCode": self.reason_code,
        }
        if self.hint:
            out["hint"] = self.hint
        out["availability"] = self.availability
        out["label"] = self.node.description if self.node.description is not None else self.node.id
        return out


@record
class FrameResult:
    status: StatusCode
    outcome: Outcome | None = None
    candidates: list[Candidate] = field(default_factory=list)
    #: an empty tuple, not a list, when there are none (most frames: made only when needed)
    diagnostics: Sequence[Diagnostic] = field(default_factory=list)


#: ``FrameResult(status, outcome, candidates, diagnostics)`` from all four fields: the C
#: call the record's ``__new__`` ends with, without that Python frame (one per frame).
#: Speed only: with :meth:`_Frame.resume`'s shortcut, 100 nested calls half done take
#: 0.138-0.145 ms instead of 0.153 ms (least of 200 x 20 in process, interleaved).
_frame_result: Final[Callable[[type[FrameResult], tuple[Any, ...]], FrameResult]] = tuple.__new__  # type: ignore[assignment]


def frame_key(graph_id: str, call_path: tuple[str, ...]) -> str:
    return graph_id if not call_path else ">".join(call_path) + ">" + graph_id


def node_state_key(graph_id: str, node_id: str, call_path: tuple[str, ...] = ()) -> str:
    """The key a host records a node's outcome under (``release/inspect``, ``a/s>b/x``)."""
    return f"{frame_key(graph_id, call_path)}/{node_id}"


# The two digests of every evaluation are of objects with fixed members, so their
# canonical text is written in canonical member order (localeCompare of the names)
# rather than sorted per call; tests/vm/test_vm_digests.py holds them to digest_value.


def route_id(revision: str, graph: str, node: str, call_path: tuple[str, ...]) -> str:
    """``digest_value({"revision", "graph", "node", "callPath"})``, first 20 hex digits."""
    path = ",".join(map(json_string, call_path)) if call_path else ""
    text = (
        f'{{"callPath":[{path}],"graph":{json_string(graph)},"node":{json_string(node)},'
        f'"revision":{json_string(revision)}}}'
    )
    return "route:" + digest_canonical(text)[len("sha256:") : len("sha256:") + 20]


def compute_revision(
    program: r.ProviderIR, graph: r.Graph | None, graph_id: str, entry: str, state: Normalized
) -> str:
    """``digest_value`` of provider, graphId, entry, facts, outcomes and authorities."""
    provider = graph.digest if graph is not None else program.provider_digest
    authorities = ",".join(map(json_string, state.authorities)) if state.authorities else ""
    entry_text, graph_text = json_string(entry), json_string(graph_id)
    head = f'{{"authorities":[{authorities}],"entry":{entry_text},"facts":{state.facts_text},'
    tail = f',"provider":{json_string(provider)}}}'
    outcomes_parts = canonical_string_parts(state.outcomes, _OUTCOME_TEXT)
    if sum(map(len, outcomes_parts)) < _LONG_OUTCOMES:
        outcomes = "".join(outcomes_parts)
        return digest_canonical(f'{head}"graphId":{graph_text},"outcomes":{outcomes}{tail}')
    # A deep call path's keys run to megabytes: hashed member by member, never copied
    # into one text (two fresh multi-megabyte buffers cost more than hashing them).
    return digest_canonical_texts(
        f'{head}"graphId":{graph_text},"outcomes":', *outcomes_parts, tail
    )


#: The JSON text of each outcome string (a normalised state's outcomes hold nothing else).
_OUTCOME_TEXT: Final = {outcome: json_string(outcome) for outcome in r.OUTCOMES}

#: Outcome texts this long are hashed part by part; a shorter one is joined first, which
#: hashes faster than hundreds of small updates (100 nested calls, 45 KB of keys: 0.026 ms
#: joined, 0.037 ms by parts).
_LONG_OUTCOMES = 1 << 20


#: State-key prefixes this long are looked up through :func:`_keys_by_length_and_node`
#: (below it, hashing the key costs less than indexing every key of the state).
_LONG_PREFIX = 1024


def _keys_by_length_and_node(
    outcomes: Mapping[str, Outcome],
) -> dict[tuple[int, str], list[tuple[str, Outcome]]]:
    """Recorded outcomes by (key length, text after the key's last ``/``): finding one
    then costs comparing its ends, not hashing a new key as long as the call path."""
    index: dict[tuple[int, str], list[tuple[str, Outcome]]] = {}
    for key, outcome in outcomes.items():
        index.setdefault((len(key), key[key.rfind("/") + 1 :]), []).append((key, outcome))
    return index


def catalog_hints(program: r.ProviderIR) -> dict[str, str]:
    """Reason code -> its catalog summary (the hint a candidate carries)."""
    return {e.code: e.summary for e in program.catalog or () if e.summary}


class Evaluator:
    """One evaluation: the state, the revision and the frames it evaluates."""

    #: The class of its frames: :mod:`.trace` substitutes a recording subclass, so an
    #: evaluation without a trace runs exactly the plain frames (chosen once per frame).
    frame_type: ClassVar[type[_Frame]]

    def __init__(
        self,
        program: r.ProviderIR,
        root: Path,
        state: Normalized,
        revision: str,
        hints: dict[str, str] | None = None,
        plans: Plans | None = None,
    ) -> None:
        self.program = program
        self.root = root
        self.state = state
        self.facts = state.facts
        self.outcomes = state.outcomes
        self.revision = revision
        self.hints = catalog_hints(program) if hints is None else hints
        self.authorities = frozenset(state.authorities)
        self.graphs = program.graphs
        # a Program passes the plans it keeps; anybody else's evaluation makes its own
        if plans is None:
            plans = Plans(program.graphs, graph_ids(program.graphs))
        self.plans = plans
        self._long_keys: dict[tuple[int, str], list[tuple[str, Outcome]]] | None = None
        #: the call path of the frame on top of the driver's stack (the one running): a
        #: frame's path is a copy of it, made only for a frame with candidates. Speed only:
        #: for the deepest of 51 frames, walking a chain of (parent, segment) links took
        #: 0.92 us, copying this list 0.11 us (figures of the whole at ``GraphPlan.keys``)
        self.segments: list[str] = []

    def graph_path(self, graph: r.Graph) -> str:
        return str(self.root / graph.path)

    def recorded(self, prefix: str, node_id: str) -> Outcome | None:
        """``state.outcomes.get(prefix + node_id)``; for a long prefix (a deep call
        path) without building and hashing the key, which made depth cost depth²."""
        if len(prefix) < _LONG_PREFIX:
            return self.outcomes.get(prefix + node_id)
        return self._long_recorded(prefix, node_id)

    def _long_recorded(self, prefix: str, node_id: str) -> Outcome | None:
        index = self._long_keys
        if index is None:
            index = self._long_keys = _keys_by_length_and_node(self.outcomes)
        # a key as long as prefix + node_id is that key when it starts with one and ends
        # with the other; node ids may hold "/", so the bucket is their last segment
        wanted = (len(prefix) + len(node_id), node_id[node_id.rfind("/") + 1 :])
        for key, outcome in index.get(wanted, ()):
            if key.startswith(prefix) and key.endswith(node_id):
                return outcome
        return None

    def candidate(
        self, graph: r.Graph, node: r.Node, call_path: tuple[str, ...], key: str
    ) -> Candidate:
        status: StatusCode = "actionable"
        availability: Availability = "immediate"
        resolution: GateResolution | None = None
        gate = node.gate
        if gate is not None:
            delegated = (
                gate.delegatable is True
                and gate.authority is not None
                and gate.authority in self.authorities
            )
            if delegated:
                resolution = "session-authority"
            else:
                status, availability, resolution = "waiting-user", "requires-user", "user"
        reason = node.reason_code or ""
        return Candidate(
            route_id(self.revision, graph.id, node.id, call_path),
            graph,
            node,
            call_path,
            key,
            status,
            reason,
            self.hints.get(reason),
            availability,
            resolution,
        )

    def frame(self, graph_index: int, entry: str) -> FrameResult:
        """Evaluate the root frame and the child frames it calls, without recursing in Python.

        A frame stops at each subgraph node with a request for its child frame; the
        driver runs the child and resumes the parent with the result, so the depth of
        subgraph nesting is bounded by memory, not by the interpreter's stack. The graphs
        being evaluated are kept in a list and a set (recursion is a set lookup, not a
        scan of the stack), so each frame costs the same at any depth.
        """
        plan = self.plans.of(graph_index)
        early = self._refused(plan.graph, entry, [], set())
        if early is not None:
            return early
        # an entry _refused accepted
        root = _new_frame(self.frame_type)
        out = root.start(self, plan, plan.prefix, plan.entries[entry], entry)
        if isinstance(out, FrameResult):  # no subgraph call: the common case, kept short
            return out
        return self._calls(root, out)

    def _calls(self, root: _Frame, request: ChildRequest) -> FrameResult:
        """Drive a root frame that has asked for its first child frame."""
        # Frames allocate many small objects and no cycles that outlive the call; the
        # cyclic collector would rescan the waiting frames of a deep call chain again
        # and again (a fifth of the time at depth 1,000).
        with collector_paused():
            return self._drive(root, request)

    def _drive(self, root: _Frame, request: ChildRequest) -> FrameResult:
        made, plans, segments = self.plans.made, self.plans, self.segments
        frames = [root]
        # the graphs of ``frames``, by GraphPlan.slot (one per graph id). Speed only: a
        # byte per graph instead of a set of ids, with a frame's diagnostics list made by
        # its first one, took 100 nested calls half done from 0.148 to 0.146 ms (medians
        # of 10 alternating processes; all done 0.408 -> 0.402, 99 done 0.323 -> 0.319)
        active = bytearray(len(made))
        active[root.plan.slot] = 1
        frame_type = self.frame_type
        while True:
            index, wanted, segment, prefix = request
            plan = made[index] or plans.of(index)
            slot = plan.slot
            start = -1 if active[slot] else plan.entries.get(wanted, -1)
            if start >= 0:
                frame = _new_frame(frame_type)
                frames.append(frame)
                active[slot] = 1
                segments.append(segment)
                out = frame.start(self, plan, prefix, start, wanted)
            else:
                active_ids = [f.plan.id for f in frames]
                refused = self._refused(plan.graph, wanted, active_ids, set(active_ids))
                assert refused is not None
                out = frames[-1].resume(refused)
            while isinstance(out, FrameResult):  # a frame finished: its parent resumes
                active[frames.pop().plan.slot] = 0
                if not frames:
                    return out
                segments.pop()
                out = frames[-1].resume(out)
            request = out

    @staticmethod
    def _refused(
        graph: r.Graph, entry: str, active_ids: list[str], active: set[str]
    ) -> FrameResult | None:
        """The error result of a frame that cannot start (recursion, unknown entry)."""
        if graph.id in active:
            message = f"Runtime graph recursion detected: {' -> '.join((*active_ids, graph.id))}"
            return FrameResult("error", diagnostics=[Diagnostic(codes.GRAPH_RECURSION, message)])
        for name, _ in graph.entrypoints:
            if name == entry:
                return None
        message = f"Graph {graph.id} has no entry {entry}"
        return FrameResult("error", diagnostics=[Diagnostic(codes.ENTRY_MISSING, message)])


class _Frame:
    """The fixpoint of one frame (one graph, one entry, one call path).

    It reads its graph through the graph's plan (:mod:`.plans`): node fields by
    position, edges as (flag, mask, target) triples, a subgraph node's key suffix made
    once per Program. Speed only (figures in :mod:`.plans`): 0.37 ms instead of 0.48 ms
    in the frames of 100 nested subgraph calls.

    :mod:`.trace` records through the ``on_*`` hooks, which run only when the class says
    :attr:`tracing`: the plain frame's passes test one flag per event instead of calling
    an overridable method for each outcome, reach and child request.
    """

    __slots__ = (
        "diagnostics",
        "dirty",
        "entry",
        "ev",
        "keys",
        "need",
        "outcome",
        "plan",
        "position",
        "prefix",
        "reached",
        "reached_flag",
        "repeat_queue",
    )

    #: Whether the ``on_*`` hooks are called (:class:`~agent_graph.vm.trace.TracedFrame`).
    tracing: ClassVar[bool] = False

    def start(
        self,
        ev: Evaluator,
        plan: GraphPlan,
        prefix: str,
        start: int,
        entry: str,
    ) -> ChildRequest | FrameResult:
        """Set up a frame (made by :func:`_new_frame`) that has reached ``start``, the node
        ``entry`` names, and run it to its first child request (a tuple) or its result.

        Speed only, in place of ``__init__`` and a call of :meth:`advance`: CPython 3.11
        calls a class with an ``__init__`` through C, a method from Python inline. 100 nested
        subgraph calls (``benchmarks/compare.py nested``) take 0.96-0.97 of the time with
        ``__init__`` (half done, all done, 99 done); the one flags array of nodes and edges
        and the repeat queue made on demand take 0.97 of it without them (least of 30 x 30
        in process, interleaved, load average about 4).
        """
        self.ev = ev
        self.plan = plan
        self.prefix = prefix  # frame_key(graph.id, call path) + "/", built by the parent
        # its nodes' state keys; a long prefix is not even looked up (hashing a new one,
        # a deep call path, per frame would cost depth squared): its frames find their
        # outcomes through Evaluator._long_recorded and never read the table
        self.keys = (
            (plan.keys.get(prefix) or ev.plans.table(plan, prefix))
            if len(prefix) < _LONG_PREFIX
            else _NO_KEYS
        )
        self.entry = entry
        # its nodes' outcomes, then their counts of matching incoming edges, then the
        # results of the child frames its subgraph nodes called: one list to copy, not
        # three and a dict (speed only; figures at ``GraphPlan.blank``)
        self.outcome = plan.blank.copy()
        # which nodes are reached, then (from the node count on) which edges match
        self.reached_flag = reached_flag = plan.zeros.copy()
        reached_flag[start] = 1  # the entry is reached
        # unreached nodes whose count of matching incoming edges moved (a node once per
        # move: the join pass skips the ones it has reached)
        self.dirty: list[int] = []
        # repeat edges armed for the coming repeat pass, made by the first one armed (most
        # frames arm none; speed only, figures above)
        self.repeat_queue: list[int] | None = None
        # made by the first one (speed only: figures at _drive's ``active``)
        self.diagnostics: list[Diagnostic] | None = None
        # the nodes being decided in this pass, and where a subgraph call stopped it; the
        # first pass decides the entry alone, so it shares the list of reached nodes (the
        # join pass extends that only after the outcome pass is over)
        self.need = self.reached = [start]
        self.position = 0
        return self.advance()

    # -- the trace's hooks (called only when ``tracing``) ---------------------------------

    def on_reach(self, index: int, edge: int | None) -> None:
        """``index`` was just reached, by the join pass or by repeat ``edge``."""

    def on_outcome(self, index: int, outcome: Outcome, edge: int | None) -> None:
        """``index`` is about to get ``outcome``: decided, or reset by repeat ``edge``."""

    def on_request(self, index: int) -> None:
        """Subgraph node ``index`` is about to ask for its child frame."""

    # -----------------------------------------------------------------------------------

    def set_outcome(self, index: int, outcome: Outcome, edge: int | None = None) -> None:
        """Record ``index``'s outcome and move the match bits and counts of its edges.

        The repeat pass's way; the outcome pass does the same inline (see :meth:`advance`).
        """
        if self.tracing:
            self.on_outcome(index, outcome, edge)
        self.outcome[index] = outcome
        node = self.plan.nodes[index]
        bit = _OUTCOME_BIT.get(outcome, 0)
        edge_match = self.reached_flag  # an edge's flag is after the nodes'
        counts = self.outcome  # a node's count is after the outcomes
        for e, mask, target, count in node[N_OUT]:
            if mask & bit:
                if edge_match[e]:
                    continue
                edge_match[e] = 1
                counts[count] += 1
            elif edge_match[e]:
                edge_match[e] = 0
                counts[count] -= 1
            else:
                continue
            if not self.reached_flag[target]:
                self.dirty.append(target)
        for e, mask in node[N_REPEATS]:
            if mask & bit:
                queue = self.repeat_queue
                if queue is None:
                    queue = self.repeat_queue = []
                heapq.heappush(queue, e)

    def reach(self, index: int, edge: int | None = None) -> None:
        self.reached_flag[index] = 1
        self.reached.append(index)
        if self.tracing:
            self.on_reach(index, edge)

    def blocked(self, node: r.Node) -> bool:
        """``requiresFacts`` fail: the node is ``blocked`` (with a diagnostic)."""
        if node.requires is None or all_match(self.ev.facts, node.requires):
            return False
        graph = self.plan.graph
        if self.diagnostics is None:
            self.diagnostics = []
        self.diagnostics.append(
            Diagnostic(
                codes.REQUIRED_FACT_MISSING,
                f"Node {graph.id}/{node.id} requires facts that are not satisfied",
                path=self.ev.graph_path(graph),
            )
        )
        return True

    def repeat_pass(self) -> None:
        edges, outcome = self.plan.graph.edges, self.outcome
        queue, self.repeat_queue = self.repeat_queue or [], None
        heapq.heapify(queue)
        deferred: list[int] = []
        position = -1
        while queue:
            e = heapq.heappop(queue)
            if e == position:
                continue  # armed twice
            position = e
            edge = edges[e]
            source_outcome = outcome[edge.source]
            if source_outcome is None or not edge.mask & r.OUTCOME_BIT.get(source_outcome, 0):
                continue  # disarmed by a reset earlier in this pass
            target = edge.target
            if not self.reached_flag[target]:
                self.reach(target, e)
            if outcome[target] != PENDING:
                self.set_outcome(target, PENDING, e)
                # the reference's in-place scan sees edges armed by this reset only when they
                # come later in declaration order; the others wait for the next pass
                armed_now: list[int] = self.repeat_queue or []  # armed by set_outcome
                for armed in armed_now:
                    if armed > position:
                        heapq.heappush(queue, armed)
                    else:
                        deferred.append(armed)
                self.repeat_queue = None
        self.repeat_queue = deferred or None

    def resume(self, child: FrameResult) -> ChildRequest | FrameResult:
        """Go on with the result of the child frame the last request asked for."""
        status = child.status  # the subgraph node's outcome: the child's, or its state
        if status == "complete" and child.outcome:
            outcome: Outcome = child.outcome
        else:
            outcome = _CHILD_OUTCOME.get(status, PENDING)
        need, position = self.need, self.position
        index = need[position]
        if (
            position + 1 == len(need)
            and not self.dirty
            and not self.repeat_queue
            and outcome not in self.plan.nodes[index][N_MATCHES]
        ):
            # the pass is over and the outcome moves no edge: the fixpoint, without
            # advance's set-up (figures at _frame_result)
            outcomes = self.outcome
            outcomes[self.plan.nodes[index][N_CHILD]] = child
            if self.tracing:
                self.on_outcome(index, outcome, None)
            outcomes[index] = outcome
            return self.finish()
        return self.advance(child, outcome)

    def advance(
        self, child: FrameResult | None = None, child_outcome: Outcome = PENDING
    ) -> ChildRequest | FrameResult:
        """Run the fixpoint to the next child request or to the frame's result; ``child``:
        the result of the child frame the last request asked for, and the outcome it gives
        the subgraph node.

        The fixpoint: decide the nodes reached in the last pass (``need``), run the repeat
        edges they armed, reach the nodes whose joins now hold; ``need`` and ``position``
        say where a subgraph call stopped it.

        Speed only: the outcome pass moves the match bits and counts inline, reading the
        edges each outcome matches from the plan (a node it decides has no outcome yet, so
        none of its edges matched), and reaches and asks for child frames inline too
        (the trace hooks in instead of overriding those steps). 100 nested subgraph calls,
        half done (``benchmarks/compare.py nested``): 0.153 ms instead of 0.165 ms per
        evaluation, 99 done 0.33-0.36 instead of 0.35-0.36 ms (least of 200 x 20, in
        process, interleaved).
        """
        plan, ev = self.plan, self.ev
        nodes = plan.nodes
        need, position = self.need, self.position
        prefix, recorded_outcomes = self.prefix, ev.outcomes
        short = len(prefix) < _LONG_PREFIX  # Evaluator.recorded, inlined
        plans, keys = ev.plans, self.keys  # Plans.key where the key is not kept yet
        outcomes = self.outcome  # and after them the counts, then the child results
        counts_at = len(nodes)
        reached_flag, dirty, tracing = self.reached_flag, self.dirty, self.tracing
        edge_match = reached_flag  # an edge's flag is after the nodes'
        outcome: Outcome
        while True:
            while position < len(need):
                index = need[position]
                node = nodes[index]
                if child is not None:  # the subgraph node the last request was for
                    outcomes[node[N_CHILD]] = child
                    outcome = child_outcome
                    child = None
                elif node[N_REQUIRES] is not None and self.blocked(node[N_NODE]):
                    outcome = "blocked"
                elif node[N_KIND] == _SUBGRAPH:
                    self.position = position
                    if tracing:
                        self.on_request(index)
                    # the short part was joined by the plan: the prefix (the whole call
                    # path) is copied once
                    return (
                        node[N_SUBGRAPH],
                        node[N_ENTRY],
                        node[N_SEGMENT],
                        (keys[index] or plans.key(keys, prefix, index, node[N_SUFFIX]))
                        if short
                        else prefix + node[N_SUFFIX],
                    )
                else:
                    recorded = (
                        recorded_outcomes.get(
                            keys[index] or plans.key(keys, prefix, index, node[N_ID])
                        )
                        if short
                        else ev._long_recorded(prefix, node[N_ID])
                    )
                    satisfied = node[N_SATISFIED]
                    if satisfied is not None and all_match(ev.facts, satisfied):
                        outcome = "completed"
                    elif satisfied is not None and recorded == "completed":
                        outcome = "unverified"
                    else:
                        outcome = recorded if recorded is not None else node[N_DEFAULT]
                # set_outcome, inlined: the node had no outcome, so none of its edges
                # matched, and only those its outcome matches move
                if tracing:
                    self.on_outcome(index, outcome, None)
                outcomes[index] = outcome
                matches = node[N_MATCHES].get(outcome)
                if matches is not None:
                    out, repeats = matches
                    for e, target, count in out:
                        edge_match[e] = 1
                        outcomes[count] += 1
                        if not reached_flag[target]:
                            dirty.append(target)
                    if repeats:
                        queue = self.repeat_queue
                        if queue is None:
                            queue = self.repeat_queue = []
                        for e in repeats:
                            heapq.heappush(queue, e)
                position += 1
            if self.repeat_queue:
                self.repeat_pass()
            if not dirty and not self.repeat_queue:
                return self.finish()  # nothing newly reachable: the fixpoint
            eligible = []
            for index in dirty:
                if reached_flag[index]:
                    continue  # reached before, or listed twice
                node = nodes[index]
                count = outcomes[counts_at + index]
                if (count > 0) if node[N_JOIN_ANY] else (count == node[N_INCOMING]):
                    reached_flag[index] = 1  # reach, inlined (in order, just below)
                    eligible.append(index)
            dirty.clear()
            if len(eligible) > 1:
                eligible.sort()
            self.reached += eligible
            if tracing:
                for index in eligible:
                    self.on_reach(index, None)
            need = self.need = eligible
            position = 0
            if not (need or self.repeat_queue):
                return self.finish()

    def finish(self) -> FrameResult:
        nodes, outcomes = self.plan.nodes, self.outcome
        diagnostics = self.diagnostics  # None while there are none
        # the first child's list is taken over, not copied: its result is read only here.
        # Speed only (with need sharing reached in start()): 100 nested subgraph calls half
        # done 0.96-0.98 of the time (least of 30 x 30 in process, interleaved)
        candidates: list[Candidate] | None = None
        # the child whose candidates are all of ``candidates``, while nothing was added
        only: FrameResult | None = None
        call_path: tuple[str, ...] | None = None  # made for the first candidate
        terminal: Outcome | None = None  # the terminals' outcome ...
        conflicting: set[Outcome] | None = None  # ... or all of them, when they differ
        for index in self.reached:
            node = nodes[index]
            kind = node[N_KIND]
            if kind == _SUBGRAPH:
                child = outcomes[node[N_CHILD]]
                if child is not None and child.status != "complete":
                    if candidates is None:
                        candidates, only = child.candidates, child
                    else:
                        candidates.extend(child.candidates)
                        only = None
                    if child.diagnostics:
                        if diagnostics is None:
                            diagnostics = []
                        diagnostics.extend(child.diagnostics)
            elif kind == _TERMINAL:
                outcome = outcomes[index]
                if outcome is None or outcome == terminal:
                    continue
                if terminal is None:
                    terminal = outcome
                else:
                    conflicting = (conflicting or {terminal}) | {outcome}
            elif outcomes[index] == PENDING:
                if call_path is None:
                    call_path = tuple(self.ev.segments)  # finish runs on top
                key = self.prefix + node[N_ID]
                if candidates is None:
                    candidates = []
                candidates.append(self.ev.candidate(self.plan.graph, node[N_NODE], call_path, key))
                only = None
        if conflicting is not None:
            graph = self.plan.graph
            ordered = sorted(conflicting)
            if diagnostics is None:
                diagnostics = []
            diagnostics.append(
                Diagnostic(
                    codes.TERMINAL_OUTCOME_AMBIGUOUS,
                    f"Graph {graph.id} reached terminals with conflicting outcomes: "
                    + ", ".join(ordered),
                    path=self.ev.graph_path(graph),
                    detail={"outcomes": ordered},
                )
            )
            return FrameResult("error", diagnostics=diagnostics)
        if terminal is not None:
            return _frame_result(FrameResult, ("complete", terminal, [], diagnostics or ()))
        if only is not None and candidates and diagnostics is None:
            # the result would be a copy of the one child's: its status (which its first
            # candidate gave it), no outcome, its candidates (ranked already) and no
            # diagnostics. Speed only: 100 nested calls half done 0.147 -> 0.137 ms, 99 done
            # 0.322 -> 0.299 (medians of 10 alternating processes)
            return only
        if candidates is not None and len(candidates) > 1:
            candidates.sort(
                key=lambda c: (_AVAILABILITY_RANK[c.availability], -c.node.priority, c.route_id)
            )
        if candidates:
            # ranked by availability first: the best one says what the frame is
            status = _FRAME_STATUS[candidates[0].availability]
            return _frame_result(FrameResult, (status, None, candidates, diagnostics or ()))
        if diagnostics is None:
            diagnostics = [
                Diagnostic(
                    codes.NO_ROUTE,
                    f"Graph {self.plan.id} cannot reach a terminal or actionable node "
                    f"from entry {self.entry}",
                )
            ]
        return FrameResult("blocked", diagnostics=diagnostics)


Evaluator.frame_type = _Frame
_NO_KEYS: Final[list[str | None]] = []  # the key table of a frame with a long prefix
#: A frame with nothing set yet: :meth:`_Frame.start` sets it up.
_new_frame: Final[Callable[[type[_Frame]], _Frame]] = object.__new__


# -- outcome keys that name nothing ------------------------------------------------------

OUTCOME_KEY_UNKNOWN: Final = codes.OUTCOME_KEY_UNKNOWN
#: Known keys gathered for a "did you mean" (a deep call tree is not walked further).
_MAX_SUGGESTION_KEYS: Final = 10_000


def outcome_key_warnings(
    program: r.ProviderIR, graph_id: str, keys: Iterable[str]
) -> list[Diagnostic]:
    """A ``outcome-key-unknown`` warning for each key that names no node of ``graph_id``.

    Evaluation ignores such a key (it only moves the revision), so ``{"draft": …}``
    for ``report/draft`` is silently no outcome at all. A key names a node when it is
    ``<graph>/<node>`` for a node of the evaluated graph, or
    ``<graph>/<sub>><child>/<node>`` … down a chain of subgraph nodes (any entry of
    the called graph). The warning carries ``detail.key`` and, for a near key,
    ``detail.hint``/``detail.suggestion``.

    Kept out of :class:`~agent_graph.vm.Evaluation` on purpose: its ``diagnostics``
    are the reference's, and the reference does not warn here.
    """
    index = next((i for i, g in enumerate(program.graphs) if g.id == graph_id), None)
    if index is None:
        return []
    by_id: dict[int, dict[str, r.Node]] = {}

    def nodes_of(graph_index: int) -> dict[str, r.Node]:
        found = by_id.get(graph_index)
        if found is None:
            found = by_id[graph_index] = {n.id: n for n in program.graphs[graph_index].nodes}
        return found

    def known(key: str) -> bool:
        current = index
        segments = key.split(">")
        for depth, segment in enumerate(segments):
            prefix = program.graphs[current].id + "/"
            node = (
                nodes_of(current).get(segment[len(prefix) :])
                if segment.startswith(prefix)
                else None
            )
            if node is None:
                return False
            if depth < len(segments) - 1:
                if node.kind != r.SUBGRAPH or node.subgraph == r.NONE:
                    return False
                current = node.subgraph
        return True

    out: list[Diagnostic] = []
    candidates: list[str] | None = None
    for key in keys:
        if known(key):
            continue
        if candidates is None:
            candidates = _known_keys(program, index)
        message = (
            f"Outcome key {key!r} names no node of graph {graph_id} or of a graph it calls; "
            "it is ignored"
        )
        detail: dict[str, Any] = {"key": key}
        suggestion = _near_key(key, candidates)
        if suggestion is not None:
            detail["hint"] = f"did you mean {suggestion}?"
            detail["suggestion"] = suggestion
            message += f"; did you mean {suggestion}?"
        out.append(Diagnostic(OUTCOME_KEY_UNKNOWN, message, "warning", detail=detail))
    return out


def _known_keys(program: r.ProviderIR, root: int) -> list[str]:
    """State keys of the graph at ``root`` and the graphs it calls, shallow ones first."""
    keys: list[str] = []
    pending: deque[tuple[int, tuple[str, ...], tuple[int, ...]]] = deque([(root, (), (root,))])
    while pending and len(keys) < _MAX_SUGGESTION_KEYS:
        graph_index, call_path, stack = pending.popleft()
        graph = program.graphs[graph_index]
        for node in graph.nodes:
            keys.append(node_state_key(graph.id, node.id, call_path))
            child = node.subgraph
            if node.kind == r.SUBGRAPH and child != r.NONE and child not in stack:
                pending.append((child, (*call_path, f"{graph.id}/{node.id}"), (*stack, child)))
    return keys


def _near_key(key: str, candidates: list[str]) -> str | None:
    """A known key ending in ``/<key>`` (a bare node id), else the closest known key."""
    tail = "/" + key.rsplit(">", 1)[-1].rsplit("/", 1)[-1]
    ending = [c for c in candidates if c.endswith(tail) and ">" not in c]
    ending = ending or [c for c in candidates if c.endswith(tail)]
    if len(ending) == 1:
        return ending[0]
    import difflib  # only for a state key that names nothing: not worth loading up front

    found = difflib.get_close_matches(key, ending or candidates, n=1)
    return found[0] if found else None
