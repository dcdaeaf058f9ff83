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

from ...errors import AgentGraphError
from ...ir import flow_records as r
from ...ir.flow_program import FlowProgram
from ..agents.protocol import AgentAdapter, AgentAnswer, AgentFailure, AgentRequest, ResultChoice
from . import render
from .binding import BINDINGS
from .commands import run_command
from .failures import CATEGORIES, Interrupted, RunFailure
from .interrupt import Stop
from .record import EventSink, Record, new_document, now, round_of
from .resume import read_child, recover

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
        binding = self.doc.get("agentBinding")
        if binding is not None:
            BINDINGS.bind(binding, self.record.run_id)
        try:
            while self.doc["status"] == "running":
                if self.settings.stop.requested:
                    self._interrupt(None)
                    break
                cursor = self.doc["cursor"]
                if cursor["at"] == "node":
                    self._node(cursor)
                else:
                    self._round(cursor)
        finally:
            binding = self.doc.get("agentBinding")
            if binding is not None:
                BINDINGS.unbind(binding, self.record.run_id)

    def _node(self, cursor: dict[str, Any]) -> None:
        node = self.flow.nodes[self.refs[cursor["node"]]]
        record = self.record
        if cursor.get("visit") is None:
            if self._limit_reached():
                self._fail(None, self._limit_failure(node.ref))
                return
            visit = record.new_visit(
                node.ref,
                r.ACTION_KINDS[node.kind],
                cursor["input"],
                cursor["from"],
                round_id=cursor.get("round"),
                retry_of=cursor.pop("retryOf", None),
            )
            if node.kind == r.CALL:
                from .record import new_run_id

                child = new_run_id()
                assert node.call is not None
                visit["childRunId"] = child
                visit["childFlow"] = self.program.flows[node.call.flow].id
                visit["childState"] = child_state_name(record, child)
                record.doc["events"][-1].update(
                    childRunId=child, childFlow=visit["childFlow"], childState=visit["childState"]
                )
            cursor["visit"] = visit["id"]
            record.commit()
        else:
            visit = record.visit(cursor["visit"])  # a 执行Flow visit resumed (B.56, B.57)
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
        record.commit()

    def _route(self, node: r.Node, visit: dict[str, Any], result: str, content: Any) -> None:
        route = next((x for x in node.routes if x.result == result), None)
        if node.join_of != -1:
            current = round_of(self.doc, self.doc["cursor"]["round"])
            current["status"], current["join"] = "joined", visit["id"]
        if route is None:  # the compiler guarantees a route per declared result
            self._end("failed", RunFailure("route_not_found", f"{node.ref}: no edge for {result}"))
            return
        if route.node != -1:
            target = self.flow.nodes[route.node].ref
            self.record.event("routed", node=node.ref, visit=visit["id"], on=result, to=target)
            self.doc["cursor"] = {"at": "node", "node": target, "input": content, "from": "route"}
        elif route.fork != -1:
            fork = self.flow.forks[route.fork]
            round_id = f"round{len(self.doc['rounds']) + 1}"
            self.doc["rounds"].append(
                {
                    "id": round_id,
                    "fork": fork.ref,
                    "input": content,
                    "branches": {self.flow.nodes[b].ref: None for b in fork.branches},
                    "status": "running",
                    "join": None,
                }
            )
            self.record.event("routed", node=node.ref, visit=visit["id"], on=result, to=fork.ref)
            branches = [self.flow.nodes[b].ref for b in fork.branches]
            self.record.event("round-started", fork=fork.ref, round=round_id, branches=branches)
            self.doc["cursor"] = {"at": "round", "round": round_id}
        else:
            self.record.event("routed", node=node.ref, visit=visit["id"], on=result, to="finish")
            self._end("completed", None)

    # -- actions -------------------------------------------------------------------------

    def _perform(self, node: r.Node, visit: dict[str, Any]) -> tuple[str, Any]:
        return PERFORMERS[node.kind](self, node, visit)  # check_kinds ran before any Run

    def _command(self, node: r.Node, visit: dict[str, Any]) -> tuple[str, Any]:
        content = run_command(
            node,
            self.root,
            visit["input"],
            self._branch_results(node),
            self.doc["cwd"],
            self.settings.command_timeout,
        )
        if self.settings.stop.requested:
            raise Interrupted
        return COMMAND_RESULT, content

    def _branch_results(self, node: r.Node) -> dict[int, Any]:
        if node.join_of == -1:
            return {}
        current = round_of(self.doc, self.doc["cursor"]["round"])
        return {
            self.refs[ref]: self.record.visit(visit_id)["result"]
            for ref, visit_id in current["branches"].items()
        }

    def _agent(self, node: r.Node, visit: dict[str, Any]) -> tuple[str, Any]:
        adapter = self.settings.agent
        if adapter is None:
            raise RunFailure("agent_execution", f"{node.ref}: no Agent adapter was given")
        binding = self.doc.get("agentBinding")
        marker = "new" if node.kind == r.AGENT_NEW else "reuse"
        if marker == "reuse" and binding is None:
            raise RunFailure(
                "agent_binding",
                f"{node.ref}: 复用Agent with no Agent bound to the Run (its first Agent step "
                "must be 新建Agent, or the host must start it with an Agent)",
            )
        request = AgentRequest(
            run_id=self.record.run_id,
            flow=self.flow.id,
            node=node.ref,
            marker="new" if marker == "new" else "reuse",
            agent=binding if marker == "reuse" else None,
            prompt=render.prompt(node, self.root, visit["input"]),
            results=tuple(ResultChoice(x.name, x.description) for x in node.results),
            cwd=self.doc["cwd"],
        )
        declared = [x.name for x in node.results]
        answer = self._ask(adapter, request)
        if answer.result not in declared:
            first = answer
            self.record.event(
                "answer-rejected", node=node.ref, visit=visit["id"], rejected=first.result,
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
                    "answer-rejected", node=node.ref, visit=visit["id"], rejected=answer.result,
                    allowed=declared, attempt=2,
                )  # fmt: skip
                raise RunFailure(
                    "outcome_validation",
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
            category = failure.category if failure.category in CATEGORIES else "agent_execution"
            raise RunFailure(category, f"{request.node}: {failure.summary}") from None
        except Exception as error:  # an adapter's bug must not leave a traceback or a hang
            if self.settings.stop.requested:
                raise Interrupted from None
            raise RunFailure(
                "agent_execution", f"{request.node}: {type(error).__name__}: {error}"
            ) from None
        if not isinstance(answer, AgentAnswer) or not isinstance(answer.result, str):
            raise RunFailure("agent_execution", f"{request.node}: the adapter gave no result name")
        if answer.agent is not None and not isinstance(answer.agent, str):
            raise RunFailure("agent_execution", f"{request.node}: the Agent reference is not text")
        try:
            json.dumps(answer.content, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
            raise RunFailure(
                "agent_execution", f"{request.node}: the answer's content is not JSON data"
            ) from None
        return answer

    def _bind(self, node: r.Node, marker: str, answer: AgentAnswer, binding: str | None) -> None:
        agent = answer.agent
        if agent is None or agent == binding:
            if marker == "new" and agent is None:
                raise RunFailure(
                    "agent_execution", f"{node.ref}: the adapter started no Agent for 新建Agent"
                )
            return
        run_id = self.record.run_id
        if not BINDINGS.bind(agent, run_id):
            raise RunFailure(
                "agent_binding",
                f"{node.ref}: Agent {agent} is bound to another active Run "
                f"({BINDINGS.holder(agent)}); an Agent serves one Run at a time",
            )
        if binding is not None:
            BINDINGS.unbind(binding, run_id)
            if marker == "new":  # C.8: the replaced Agent is released, never deleted
                self._release(binding, node.ref)
        self.doc["agentBinding"] = agent
        self.record.event("agent-bound", node=node.ref, agent=agent, previous=binding)

    def _release(self, agent: str, node: str | None) -> None:
        adapter = self.settings.agent
        if adapter is not None:
            # releasing is a courtesy to the platform; never fail a Run on it
            with suppress(Exception):
                adapter.release(agent)
        self.record.event("agent-released", agent=agent, **({"node": node} if node else {}))

    def _call(self, node: r.Node, visit: dict[str, Any]) -> tuple[str, Any]:
        call = node.call
        assert call is not None
        child_flow = self.program.flows[call.flow]
        child_file = self.record.file.sibling(visit["childState"])
        settings = self.settings
        if not child_file.exists():
            task = render.task(call, visit["input"])
            child_root = self.program.package_root(child_flow)
            assert child_root is not None
            document = new_document(
                run_id=visit["childRunId"],
                flow=child_flow.id,
                entry_path=str((child_root / "FLOW.md").resolve()),
                package_root=str(child_root.resolve()),
                fingerprint=child_flow.fingerprint,
                fingerprint_version=self.program.record.fingerprint_version,
                package_fingerprint=child_flow.fingerprint,
                task=task,
                cwd=self.doc["cwd"],
                binding=None,  # B.33, C.35: a child never starts with the parent's Agent
                parent={
                    "runId": self.record.run_id,
                    "visit": visit["id"],
                    "state": self.record.file.real.name,
                },
                first_node=child_flow.nodes[child_flow.start].ref,
            )
            child = Record(document, child_file, settings.on_event, self.record.depth + 1)
            child.event("run-started", task=task, parentRunId=self.record.run_id)
            with child_file.lock():
                child.create()
                Runner(self.program, child_flow, child, settings).drive()
        else:
            document = read_child(child_file, visit, self.record.run_id, child_flow.id)
            child = Record(document, child_file, settings.on_event, self.record.depth + 1)
            with child_file.lock():
                if child.status in ("running", "interrupted"):
                    runner = Runner(self.program, child_flow, child, settings)
                    runner.recover()
                    runner.drive()
        return self._child_result(call, child_flow, child)

    @staticmethod
    def _child_result(call: r.Call, child_flow: r.Flow, child: Record) -> tuple[str, Any]:
        document = child.doc
        if child.status == "completed":
            return CHILD_DONE, document["conclusion"]
        if child.status != "failed":
            raise Interrupted
        error = document.get("error") or {"category": "unknown", "summary": "no error recorded"}
        if call.plain:
            raise RunFailure(
                "flow_reference",
                f"child run {child.run_id} failed: {error['summary']}",
                child_run_id=child.run_id,
            )
        return CHILD_FAILED, {
            "status": "failure",
            "runId": child.run_id,
            "flowId": child_flow.id,
            "result": document["conclusion"],
            "error": {"category": error["category"], "summary": error["summary"]},
        }

    # -- rounds --------------------------------------------------------------------------

    def _round(self, cursor: dict[str, Any]) -> None:
        current = round_of(self.doc, cursor["round"])
        fork = self.flow.forks[self.forks[current["fork"]]]
        refs = [self.flow.nodes[b].ref for b in fork.branches]
        pending = [ref for ref in refs if current["branches"][ref] is None]
        limit = self.settings.max_parallel or len(refs)
        done: queue.Queue[tuple[dict[str, Any], object]] = queue.Queue()
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
                retry = current.get("retry", {}).pop(ref, None)
                visit = record.new_visit(
                    ref, "command", current["input"], "parallel", round_id=current["id"],
                    retry_of=retry,
                )  # fmt: skip
                current["branches"][ref] = visit["id"]
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
            node = self.flow.nodes[self.refs[visit["node"]]]
            if isinstance(outcome, RunFailure):
                record.end_visit(visit, "failed", outcome.to_json())
                failure = failure or outcome
            elif isinstance(outcome, dict):
                record.complete_visit(visit, COMMAND_RESULT, outcome)
                join = self.flow.nodes[fork.join].ref
                record.event("routed", node=node.ref, visit=visit["id"], on=COMMAND_RESULT, to=join)
            else:
                record.end_visit(visit, "interrupted", None)
            record.commit()
        if failure is not None:
            self._fail(None, failure)
            return
        if any(
            current["branches"][ref] is None
            or record.visit(current["branches"][ref])["status"] != "completed"
            for ref in refs
        ):
            self._interrupt(None)
            return
        current["status"] = "branches-done"
        join = self.flow.nodes[fork.join].ref
        self.doc["cursor"] = {
            "at": "node",
            "node": join,
            "input": current["input"],
            "from": "join",
            "round": current["id"],
        }
        record.commit()

    def _branch(self, node: r.Node, visit: dict[str, Any], done: queue.Queue[Any]) -> None:
        outcome: object
        try:
            outcome = run_command(
                node, self.root, visit["input"], {}, self.doc["cwd"], self.settings.command_timeout
            )
            if self.settings.stop.requested:
                outcome = Interrupted()
        except RunFailure as failure:
            outcome = failure
        except Exception as error:  # never lose a branch: the coordinator waits for each
            outcome = RunFailure("unknown", f"{node.ref}: {type(error).__name__}: {error}")
        done.put((visit, outcome))

    # -- limits and endings --------------------------------------------------------------

    def _limit_reached(self) -> bool:
        limit = self.settings.max_visits
        if limit is None:
            return False
        return sum(1 for v in self.doc["visits"] if v.get("retryOf") is None) >= limit

    def _limit_failure(self, ref: str) -> RunFailure:
        return RunFailure(
            "loop_limit",
            f"the Run made {self.settings.max_visits} visits (--max-visits) and would visit "
            f"{ref} again",
        )

    def _interrupt(self, visit: dict[str, Any] | None) -> None:
        if visit is not None and visit["status"] == "running":
            self.record.end_visit(visit, "interrupted", None)
        self.doc["status"] = "interrupted"
        self.record.event("run-interrupted")
        self.record.commit()

    def _fail(self, visit: dict[str, Any] | None, failure: RunFailure) -> None:
        if visit is not None and visit["status"] == "running":
            self.record.end_visit(visit, "failed", failure.to_json())
        self._end("failed", failure)
        self.record.commit()

    def _end(self, status: str, failure: RunFailure | None) -> None:
        """Completed or failed: release the binding (B.26, B.32, C.34), clear the cursor."""
        doc = self.doc
        doc["status"] = status
        doc["cursor"] = None
        doc["completedAt"] = now()
        if failure is not None:
            doc["error"] = failure.to_json()
            self.record.event("run-failed", error=doc["error"])
        else:
            self.record.event("run-completed")
        binding = doc.get("agentBinding")
        if binding is not None:
            BINDINGS.unbind(binding, self.record.run_id)
            self._release(binding, None)
            doc["agentBinding"] = None

    # -- resume --------------------------------------------------------------------------

    def recover(self) -> None:
        recover(self.record, self.flow, self.settings.rerun_interrupted, self._fail)


Perform = Callable[[Runner, r.Node, dict[str, Any]], tuple[str, Any]]

#: The one table of what each node kind does (``ir.flow_records.ACTION_KINDS`` names them):
#: a new kind is a row here and its handler; ``tests/test_flow_kinds.py`` holds the two equal.
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
                    "ir-corrupt",
                    f"Flow {flow.id}, node {node.ref}: kind {node.kind} has no handler in this "
                    f"runtime (kinds: {', '.join(r.ACTION_KINDS)})",
                )
