"""The coordinator: drives one Run of one Flow, commit by commit (docs/flow-runs.md, §3–§8).

The Run's position is its record's ``cursor``: the node about to be (or being) visited
with its input, or the fork round in progress. One step of :meth:`Runner.drive`:

* a node: commit the visit as ``running`` (a ``执行Flow`` visit gets its child Run's id
  and record name here, before the child exists: C.3), perform the action, then commit
  in one revision the ``visited`` event with its result, the route decision and the new
  cursor — so after a crash a visit is either not finished or finished *and* routed;
* a round: start the fork's branches (each committed as ``running`` first) on threads,
  at most ``max_parallel`` at a time, commit each branch's result as it finishes, and
  when all have, move the cursor to the join with the round's saved input.

Every commit happens on the coordinator's thread; branch threads only run their
command and hand the outcome back through a queue. Child Runs (``执行Flow``) are driven
by a nested :class:`Runner` on the same thread, with their own record file (beside the
parent's), their own lock, an empty binding, and the same adapter and stop request.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any

from ... import codes
from ...errors import AgentGraphError
from ...ir import flow_records as r
from ...ir.flow_program import FlowProgram
from ..agents.protocol import (
    AgentAdapter,
    AgentAnswer,
    AgentFailure,
    AgentRequest,
    Marker,
    ResultChoice,
)
from . import render
from .binding import BINDINGS
from .commands import run_command
from .failures import CATEGORIES, Category, Interrupted, RunFailure
from .interrupt import Stop
from .record import EventSink, Record, new_document, new_run_id, now
from .resume import read_child, recover
from .state import (
    FINISH,
    At,
    ChildLink,
    ContentStatus,
    Cursor,
    Entry,
    EventType,
    ParentLink,
    Round,
    RoundStatus,
    RunStatus,
    Visit,
    VisitStatus,
)

COMMAND_RESULT = "已执行"
CHILD_DONE, CHILD_FAILED = "已完成", "已失败"


@dataclass(frozen=True, slots=True)
class Settings:
    """What the host chose for this invocation (shared by a Run and its child Runs)."""

    agent: AgentAdapter | None
    stop: Stop
    max_parallel: int | None = None
    max_visits: int | None = None
    command_timeout: float | None = None
    rerun_interrupted: bool = False
    on_event: EventSink | None = None


def child_state_name(parent: Record, child_id: str) -> str:
    """``<parent stem>.<child run id>.json``, beside the parent's record."""
    name = parent.file.real.name
    stem = name[: -len(".json")] if name.endswith(".json") else name
    return f"{stem}.{child_id}.json"


class Runner:
    def __init__(
        self, program: FlowProgram, flow: r.Flow, record: Record, settings: Settings
    ) -> None:
        root = program.package_root(flow)
        assert root is not None, "a Run needs a program compiled from sources"
        self.program = program
        self.flow = flow
        self.root = root
        self.record = record
        self.doc = record.doc
        self.settings = settings
        self.refs = {node.ref: i for i, node in enumerate(flow.nodes)}
        self.forks = {fork.ref: i for i, fork in enumerate(flow.forks)}

    # -- the loop ------------------------------------------------------------------------

    def drive(self) -> None:
        binding = self.doc.agent_binding
        if binding is not None:
            BINDINGS.bind(binding, self.record.run_id)
        try:
            while self.doc.status == RunStatus.RUNNING:
                if self.settings.stop.requested:
                    self._interrupt(None)
                    break
                cursor = self.doc.position
                if cursor.at == At.NODE:
                    self._node(cursor)
                else:
                    self._round()
        finally:
            binding = self.doc.agent_binding
            if binding is not None:
                BINDINGS.unbind(binding, self.record.run_id)

    def _node(self, cursor: Cursor) -> None:
        node = self.flow.nodes[self.refs[cursor.node]]
        record = self.record
        if cursor.visit_id is None:
            if self._limit_reached():
                self._fail(None, self._limit_failure(node.ref))
                return
            visit = record.new_visit(
                node.ref,
                r.ACTION_KINDS[node.kind],
                cursor.input,
                cursor.entered_from,
                round_id=cursor.round_id,
                retry_of=cursor.take_retry_of(),
                child=self._child_link(node),
            )
            cursor.visit_id = visit.id
            record.commit()
        else:
            visit = record.visit(cursor.visit_id)  # a 执行Flow visit resumed (B.56, B.57)
        try:
            result, content = self._perform(node, visit)
        except Interrupted:
            self._interrupt(visit)
            return
        except RunFailure as failure:
            self._fail(visit, failure)
            return
        record.complete_visit(visit, result, content)
        self._route(node, visit, result, content)
        record.commit(sync=False)  # the next commit comes before anything runs

    def _child_link(self, node: r.Node) -> ChildLink | None:
        """A 执行Flow visit's child Run, named before it exists (C.3)."""
        if node.kind != r.CALL:
            return None
        assert node.call is not None
        child = new_run_id()
        flow_id = self.program.flows[node.call.flow].id
        return ChildLink(child, flow_id, child_state_name(self.record, child))

    def _route(self, node: r.Node, visit: Visit, result: str, content: Any) -> None:
        route = next((x for x in node.routes if x.result == result), None)
        doc = self.doc
        if node.join_of != -1:
            doc.current_round().joined(visit.id)
        if route is None:  # the compiler guarantees a route per declared result
            failure = RunFailure(Category.ROUTE_NOT_FOUND, f"{node.ref}: no edge for {result}")
            self._end(RunStatus.FAILED, failure)
            return
        routed = {"node": node.ref, "visit": visit.id, "on": result}
        if route.node != -1:
            target = self.flow.nodes[route.node].ref
            self.record.event(EventType.ROUTED, **routed, to=target)
            doc.cursor = Cursor.to_node(target, content, Entry.ROUTE)
        elif route.fork != -1:
            fork = self.flow.forks[route.fork]
            round_id = f"round{len(doc.rounds) + 1}"
            branches = [self.flow.nodes[b].ref for b in fork.branches]
            doc.add_round(Round.new(round_id, fork.ref, content, branches))
            self.record.event(EventType.ROUTED, **routed, to=fork.ref)
            self.record.event(
                EventType.ROUND_STARTED, fork=fork.ref, round=round_id, branches=branches
            )
            doc.cursor = Cursor.to_round(round_id)
        else:
            self.record.event(EventType.ROUTED, **routed, to=FINISH)
            self._end(RunStatus.COMPLETED, None)

    # -- actions -------------------------------------------------------------------------

    def _perform(self, node: r.Node, visit: Visit) -> tuple[str, Any]:
        return PERFORMERS[node.kind](self, node, visit)  # check_kinds ran before any Run

    def _command(self, node: r.Node, visit: Visit) -> tuple[str, Any]:
        content = run_command(
            node,
            self.root,
            visit.input,
            self._branch_results(node),
            self.doc.cwd,
            self.settings.command_timeout,
        )
        if self.settings.stop.requested:
            raise Interrupted
        return COMMAND_RESULT, content

    def _branch_results(self, node: r.Node) -> dict[int, Any]:
        if node.join_of == -1:
            return {}
        branches = self.doc.current_round().branches
        return {
            self.refs[ref]: self.record.visit(visit_id).result
            for ref, visit_id in branches.items()
            if visit_id is not None  # a join runs once every branch has its visit
        }

    def _agent(self, node: r.Node, visit: Visit) -> tuple[str, Any]:
        adapter = self.settings.agent
        if adapter is None:
            raise RunFailure(Category.AGENT_EXECUTION, f"{node.ref}: no Agent adapter was given")
        binding = self.doc.agent_binding
        marker: Marker = "new" if node.kind == r.AGENT_NEW else "reuse"
        if marker == "reuse" and binding is None:
            raise RunFailure(
                Category.AGENT_BINDING,
                f"{node.ref}: 复用Agent with no Agent bound to the Run (its first Agent step "
                "must be 新建Agent, or the host must start it with an Agent)",
            )
        request = AgentRequest(
            run_id=self.record.run_id,
            flow=self.flow.id,
            node=node.ref,
            marker=marker,
            agent=binding if marker == "reuse" else None,
            prompt=render.prompt(node, self.root, visit.input),
            results=tuple(ResultChoice(x.name, x.description) for x in node.results),
            cwd=self.doc.cwd,
        )
        declared = [x.name for x in node.results]
        answer = self._ask(adapter, request)
        if answer.result not in declared:
            first = answer
            self.record.event(
                EventType.ANSWER_REJECTED, node=node.ref, visit=visit.id, rejected=first.result,
                allowed=declared, attempt=1,
            )  # fmt: skip
            self.record.commit()
            # C.1: one more prompt, to the Agent that answered, naming what was refused
            again = replace(request, attempt=2, rejected=first.result)
            if first.agent is not None:
                again = replace(again, marker="reuse", agent=first.agent)
            answer = self._ask(adapter, again)
            if answer.result not in declared:
                self.record.event(
                    EventType.ANSWER_REJECTED, node=node.ref, visit=visit.id,
                    rejected=answer.result, allowed=declared, attempt=2,
                )  # fmt: skip
                raise RunFailure(
                    Category.OUTCOME_VALIDATION,
                    f"{node.ref}: the Agent submitted undeclared results {first.result!r} and "
                    f"{answer.result!r}; this node declares {', '.join(declared)}",
                )
        self._bind(node, marker, answer, binding)
        return answer.result, answer.content

    def _ask(self, adapter: AgentAdapter, request: AgentRequest) -> AgentAnswer:
        try:
            answer = adapter.ask(request)
        except AgentFailure as failure:
            if self.settings.stop.requested:
                raise Interrupted from None
            known = failure.category in CATEGORIES
            category = failure.category if known else Category.AGENT_EXECUTION
            raise RunFailure(category, f"{request.node}: {failure.summary}") from None
        except Exception as error:  # an adapter's bug must not leave a traceback or a hang
            if self.settings.stop.requested:
                raise Interrupted from None
            raise RunFailure(
                Category.AGENT_EXECUTION, f"{request.node}: {type(error).__name__}: {error}"
            ) from None
        if not isinstance(answer, AgentAnswer) or not isinstance(answer.result, str):
            raise RunFailure(
                Category.AGENT_EXECUTION, f"{request.node}: the adapter gave no result name"
            )
        if answer.agent is not None and not isinstance(answer.agent, str):
            raise RunFailure(
                Category.AGENT_EXECUTION, f"{request.node}: the Agent reference is not text"
            )
        try:
            json.dumps(answer.content, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
            raise RunFailure(
                Category.AGENT_EXECUTION, f"{request.node}: the answer's content is not JSON data"
            ) from None
        return answer

    def _bind(self, node: r.Node, marker: Marker, answer: AgentAnswer, binding: str | None) -> None:
        agent = answer.agent
        if agent is None or agent == binding:
            if marker == "new" and agent is None:
                raise RunFailure(
                    Category.AGENT_EXECUTION,
                    f"{node.ref}: the adapter started no Agent for 新建Agent",
                )
            return
        run_id = self.record.run_id
        if not BINDINGS.bind(agent, run_id):
            raise RunFailure(
                Category.AGENT_BINDING,
                f"{node.ref}: Agent {agent} is bound to another active Run "
                f"({BINDINGS.holder(agent)}); an Agent serves one Run at a time",
            )
        if binding is not None:
            BINDINGS.unbind(binding, run_id)
            if marker == "new":  # C.8: the replaced Agent is released, never deleted
                self._release(binding, node.ref)
        self.doc.agent_binding = agent
        self.record.event(EventType.AGENT_BOUND, node=node.ref, agent=agent, previous=binding)

    def _release(self, agent: str, node: str | None) -> None:
        adapter = self.settings.agent
        if adapter is not None:
            # releasing is a courtesy to the platform; never fail a Run on it
            with suppress(Exception):
                adapter.release(agent)
        self.record.event(EventType.AGENT_RELEASED, agent=agent, **({"node": node} if node else {}))

    def _call(self, node: r.Node, visit: Visit) -> tuple[str, Any]:
        call = node.call
        link = visit.child
        assert call is not None
        assert link is not None, "a 执行Flow visit names its child Run when it is committed"
        child_flow = self.program.flows[call.flow]
        child_file = self.record.file.sibling(link.state)
        settings = self.settings
        if not child_file.exists():
            task = render.task(call, visit.input)
            child_root = self.program.package_root(child_flow)
            assert child_root is not None
            document = new_document(
                run_id=link.run_id,
                flow=child_flow.id,
                entry_path=str((child_root / "FLOW.md").resolve()),
                package_root=str(child_root.resolve()),
                fingerprint=child_flow.fingerprint,
                fingerprint_version=self.program.record.fingerprint_version,
                package_fingerprint=child_flow.fingerprint,
                task=task,
                cwd=self.doc.cwd,
                binding=None,  # B.33, C.35: a child never starts with the parent's Agent
                parent=ParentLink(self.record.run_id, visit.id, self.record.file.real.name),
                first_node=child_flow.nodes[child_flow.start].ref,
            )
            child = Record(document, child_file, settings.on_event, self.record.depth + 1)
            child.event(EventType.RUN_STARTED, task=task, parentRunId=self.record.run_id)
            with child_file.lock():
                child.create()
                Runner(self.program, child_flow, child, settings).drive()
        else:
            document = read_child(child_file, visit, self.record.run_id, child_flow.id)
            child = Record(document, child_file, settings.on_event, self.record.depth + 1)
            with child_file.lock():
                if not child.status.ended:
                    runner = Runner(self.program, child_flow, child, settings)
                    runner.recover()
                    runner.drive()
        return self._child_result(call, child_flow, child)

    @staticmethod
    def _child_result(call: r.Call, child_flow: r.Flow, child: Record) -> tuple[str, Any]:
        document = child.doc
        if child.status == RunStatus.COMPLETED:
            return CHILD_DONE, document.conclusion
        if child.status != RunStatus.FAILED:
            raise Interrupted
        error = document.failure or RunFailure(Category.UNKNOWN, "no error recorded")
        if call.plain:
            raise RunFailure(
                Category.FLOW_REFERENCE,
                f"child run {child.run_id} failed: {error.summary}",
                child_run_id=child.run_id,
            )
        return CHILD_FAILED, {
            "status": ContentStatus.FAILURE.value,
            "runId": child.run_id,
            "flowId": child_flow.id,
            "result": document.conclusion,
            "error": {"category": error.category.value, "summary": error.summary},
        }

    # -- rounds --------------------------------------------------------------------------

    def _round(self) -> None:
        current = self.doc.current_round()
        fork = self.flow.forks[self.forks[current.fork]]
        refs = [self.flow.nodes[b].ref for b in fork.branches]
        branches = current.branches
        pending = [ref for ref in refs if branches[ref] is None]
        limit = self.settings.max_parallel or len(refs)
        done: queue.Queue[tuple[Visit, object]] = queue.Queue()
        active = 0
        failure: RunFailure | None = None
        record = self.record
        while True:
            while pending and active < limit and failure is None:
                if self.settings.stop.requested:
                    break
                if self._limit_reached():
                    failure = self._limit_failure(pending[0])
                    break
                ref = pending.pop(0)
                retry = current.take_retry(ref)
                visit = record.new_visit(
                    ref, r.ACTION_KINDS[r.COMMAND], current.input, Entry.PARALLEL,
                    round_id=current.id, retry_of=retry,
                )  # fmt: skip
                branches[ref] = visit.id
                record.commit()
                node = self.flow.nodes[self.refs[ref]]
                worker = threading.Thread(
                    target=self._branch, args=(node, visit, done), daemon=True
                )
                worker.start()
                active += 1
            if active == 0:
                break
            visit, outcome = done.get()
            active -= 1
            node = self.flow.nodes[self.refs[visit.node]]
            if isinstance(outcome, RunFailure):
                record.end_visit(visit, VisitStatus.FAILED, outcome.to_json())
                failure = failure or outcome
            elif isinstance(outcome, dict):
                record.complete_visit(visit, COMMAND_RESULT, outcome)
                join = self.flow.nodes[fork.join].ref
                record.event(
                    EventType.ROUTED, node=node.ref, visit=visit.id, on=COMMAND_RESULT, to=join
                )
            else:
                record.end_visit(visit, VisitStatus.INTERRUPTED, None)
            record.commit()
        if failure is not None:
            self._fail(None, failure)
            return
        if not all(self._branch_completed(branches[ref]) for ref in refs):
            self._interrupt(None)
            return
        current.status = RoundStatus.BRANCHES_DONE
        join = self.flow.nodes[fork.join].ref
        self.doc.cursor = Cursor.to_node(join, current.input, Entry.JOIN, current.id)
        record.commit()

    def _branch_completed(self, visit_id: str | None) -> bool:
        if visit_id is None:
            return False
        return self.record.visit(visit_id).status == VisitStatus.COMPLETED

    def _branch(self, node: r.Node, visit: Visit, done: queue.Queue[Any]) -> None:
        outcome: object
        try:
            with self.settings.stop.owning():  # a per-Run stop (MCP) reaches branches too
                outcome = run_command(
                    node, self.root, visit.input, {}, self.doc.cwd, self.settings.command_timeout
                )
            if self.settings.stop.requested:
                outcome = Interrupted()
        except RunFailure as failure:
            outcome = failure
        except Exception as error:  # never lose a branch: the coordinator waits for each
            outcome = RunFailure(Category.UNKNOWN, f"{node.ref}: {type(error).__name__}: {error}")
        done.put((visit, outcome))

    # -- limits and endings --------------------------------------------------------------

    def _limit_reached(self) -> bool:
        limit = self.settings.max_visits
        if limit is None:
            return False
        return sum(1 for v in self.doc.visits if v.retry_of is None) >= limit

    def _limit_failure(self, ref: str) -> RunFailure:
        return RunFailure(
            Category.LOOP_LIMIT,
            f"the Run made {self.settings.max_visits} visits (--max-visits) and would visit "
            f"{ref} again",
        )

    def _interrupt(self, visit: Visit | None) -> None:
        if visit is not None and visit.status == VisitStatus.RUNNING:
            self.record.end_visit(visit, VisitStatus.INTERRUPTED, None)
        self.doc.status = RunStatus.INTERRUPTED
        self.record.event(EventType.RUN_INTERRUPTED)
        self.record.commit()

    def _fail(self, visit: Visit | None, failure: RunFailure) -> None:
        if visit is not None and visit.status == VisitStatus.RUNNING:
            self.record.end_visit(visit, VisitStatus.FAILED, failure.to_json())
        self._end(RunStatus.FAILED, failure)
        self.record.commit()

    def _end(self, status: RunStatus, failure: RunFailure | None) -> None:
        """Completed or failed: release the binding (B.26, B.32, C.34), clear the cursor."""
        doc = self.doc
        error = failure.to_json() if failure is not None else None
        doc.end(status, error, now())
        if error is not None:
            self.record.event(EventType.RUN_FAILED, error=error)
        else:
            self.record.event(EventType.RUN_COMPLETED)
        binding = doc.agent_binding
        if binding is not None:
            BINDINGS.unbind(binding, self.record.run_id)
            self._release(binding, None)
            doc.agent_binding = None

    # -- resume --------------------------------------------------------------------------

    def recover(self) -> None:
        recover(self.record, self.flow, self.settings.rerun_interrupted, self._fail)


Perform = Callable[[Runner, r.Node, Visit], tuple[str, Any]]

#: The one table of what each node kind does (``ir.flow_records.ACTION_KINDS`` names them):
#: a new kind is a row here and its handler; ``tests/flow/test_flow_kinds.py`` holds the two equal.
PERFORMERS: dict[int, Perform] = {
    r.AGENT_NEW: Runner._agent,
    r.AGENT_REUSE: Runner._agent,
    r.COMMAND: Runner._command,
    r.CALL: Runner._call,
}


def check_kinds(program: FlowProgram) -> None:
    """``ir-corrupt`` for a node of a kind this runtime has no handler for.

    Decoding refuses such a kind already; this catches a program built by hand, before
    a record is written, rather than running the node as some other kind.
    """
    for flow in program.flows:
        for node in flow.nodes:
            if node.kind not in PERFORMERS:
                raise AgentGraphError(
                    codes.IR_CORRUPT,
                    f"Flow {flow.id}, node {node.ref}: kind {node.kind} has no handler in this "
                    f"runtime (kinds: {', '.join(r.ACTION_KINDS)})",
                )
