"""The host's entry points: start, resume, inspect a Run (``agent_graph.flow.run`` …).

``run`` and ``resume`` hold the Run's lock for as long as they drive it and return a
:class:`RunSummary`; every refusal is an :class:`~agent_graph.errors.AgentGraphError`
raised before the record is touched, so a refused resume leaves the Run as resumable
as it was.
"""

from __future__ import annotations

import json
import math
import os
import shlex
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import codes
from ...errors import AgentGraphError
from ...ir import flow_records as r
from ...ir.flow_program import FlowProgram
from ..agents.protocol import AgentAdapter
from ..agents.script import ScriptAdapter
from . import hints
from .answers import answers_used
from .binding import BINDINGS
from .commands import timed_out
from .interrupt import Stop, signals_stop
from .program_files import fingerprint_on_disk
from .record import Record, new_document, new_run_id, read
from .resume import check_children, interrupted_commands
from .runner import Runner, Settings, check_kinds
from .state import At, EventType, RunDoc, RunStatus, Visit
from .store import RunFile

EventCallback = Callable[[dict[str, Any], int], None]
AgentArg = AgentAdapter | str | None


@dataclass(frozen=True, slots=True)
class RunSummary:
    """How an invocation left the Run: ``state`` completed, failed or interrupted;
    ``result``: the content of the last completed work-node visit, or None."""

    state: str
    run_id: str
    flow: str
    result: Any
    error: dict[str, Any] | None
    path: Path
    #: An interrupted Run's commands that were stopped mid-way (``c → a`` in a child Run):
    #: its resume needs --rerun-interrupted or --fail-interrupted.
    interrupted: tuple[str, ...] = ()
    #: The Run's command visits killed by the command timeout, in visit order.
    timed_out: tuple[str, ...] = ()
    #: What a new Run of the same Flow would be given (a failed Run's hint starts one).
    entry: str = ""
    task: Any = None
    cwd: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {"state": self.state, "runId": self.run_id, "flow": self.flow, "result": self.result}
        if self.error is not None:
            out["error"] = self.error
        if self.interrupted:
            out["interruptedCommands"] = list(self.interrupted)
        if self.timed_out:
            out["timedOutCommands"] = list(self.timed_out)
        return out


def _adapter(agent: AgentArg) -> AgentAdapter | None:
    if isinstance(agent, str):
        from ..agents.spec import adapter_from_spec

        return adapter_from_spec(agent)
    return agent


def needs_agent(program: FlowProgram) -> bool:
    """Whether the Flow or a Flow it runs has an Agent step (a Run of it needs an adapter)."""
    return any(n.kind in (r.AGENT_NEW, r.AGENT_REUSE) for f in program.flows for n in f.nodes)


def _check_options(max_parallel: int | None, max_visits: int | None, timeout: float | None) -> None:
    for name, value in (("max_parallel", max_parallel), ("max_visits", max_visits)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise AgentGraphError(
                codes.RUN_OPTION_INVALID, f"`{name}` must be a positive integer: {value!r}"
            )
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise AgentGraphError(
            codes.RUN_OPTION_INVALID, f"the command timeout must be positive: {timeout!r}"
        )


def _check_json(task: Any) -> None:
    try:
        json.dumps(task, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as error:
        raise AgentGraphError(
            codes.RUN_TASK_INVALID, f"The task is not JSON data: {error}"
        ) from None


def _settings(
    adapter: AgentAdapter | None,
    stop: Stop | None,
    on_event: EventCallback | None,
    **limits: Any,
) -> Settings:
    return Settings(agent=adapter, stop=stop or Stop(), on_event=on_event, **limits)


def start(
    program: FlowProgram,
    task: Any,
    *,
    state: str | os.PathLike[str],
    agent: AgentArg = None,
    cwd: str | os.PathLike[str] | None = None,
    agent_ref: str | None = None,
    max_parallel: int | None = None,
    max_visits: int | None = None,
    command_timeout: float | None = None,
    on_event: EventCallback | None = None,
    stop: Stop | None = None,
    handle_signals: bool = False,
) -> RunSummary:
    """Start a Run of a compiled ``program`` with ``task``, recorded in the new file ``state``.

    ``program`` must know where its packages are (``base``: compiled here, or decoded with
    ``base=``); its bytes are kept beside the record by digest, so a resume runs exactly
    them. ``agent``: an adapter, or an ``--agent`` spec string; ``agent_ref``: an existing
    Agent the Run starts bound to (B.27); ``cwd``: the business project (default: this
    process's working directory), recorded for resume (C.6).
    """
    _check_options(max_parallel, max_visits, command_timeout)
    _check_json(task)
    check_kinds(program)
    flow = program.root
    root = program.package_root(flow)
    if root is None:
        raise AgentGraphError(
            codes.FLOW_PROGRAM_UNPLACED,
            f"The program of Flow {flow.id} does not say where its packages are: decode it "
            "with FlowProgram.from_bytes(data, base=<directory holding the package>)",
        )
    file = RunFile(state)
    more = hints.options(agent, max_parallel, max_visits, command_timeout)
    _check_new(file, more)
    where = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
    if not os.path.isdir(where):
        raise AgentGraphError(
            codes.RUN_CWD_MISSING, f"The working directory does not exist: {where}"
        )
    adapter = _adapter(agent)
    if adapter is None and needs_agent(program):
        raise AgentGraphError(codes.AGENT_REQUIRED, _agent_hint(program))
    if agent_ref is not None and BINDINGS.holder(agent_ref) is not None:
        raise AgentGraphError(
            codes.AGENT_BOUND,
            f"Agent {agent_ref} is bound to the active Run {BINDINGS.holder(agent_ref)}",
        )
    document = new_document(
        run_id=new_run_id(),
        flow=flow.id,
        entry_path=str((root / "FLOW.md").resolve()),
        package_root=str(root.resolve()),
        fingerprint=program.fingerprint,
        fingerprint_version=program.record.fingerprint_version,
        package_fingerprint=flow.fingerprint,
        task=task,
        cwd=where,
        binding=agent_ref,
        parent=None,
        first_node=flow.nodes[flow.start].ref,
        program=program.digest,
    )
    settings = _settings(
        adapter, stop, on_event, max_parallel=max_parallel, max_visits=max_visits,
        command_timeout=command_timeout,
    )  # fmt: skip
    record = Record(document, file, on_event, 0)
    record.event(EventType.RUN_STARTED, task=task, cwd=where, agent=agent_ref)
    with file.lock():
        file.keep_program(program.to_bytes(), program.digest)  # before a record names it
        record.create()
        with signals_stop(settings.stop) if handle_signals else nullcontext():
            Runner(program, flow, record, settings).drive()
    return _summary(record)


#: Compiles the Flow at an entry path: how a resume gets a program none was kept for.
Compile = Callable[[Path], FlowProgram]


def resume(
    state: str | os.PathLike[str],
    *,
    agent: AgentArg = None,
    rerun_interrupted: bool = False,
    fail_interrupted: bool = False,
    max_parallel: int | None = None,
    max_visits: int | None = None,
    command_timeout: float | None = None,
    on_event: EventCallback | None = None,
    stop: Stop | None = None,
    handle_signals: bool = False,
    compile: Compile | None = None,
) -> RunSummary:
    """Go on with the Run recorded in ``state`` (B.52–B.58); refusals change nothing.

    The Run goes on with the program kept when it started, while its files are unchanged;
    ``compile`` is used only for a Run that has none (one started before programs were
    kept); without it such a Run is refused (``flow-program-missing``). A command that
    was interrupted (here or in a child Run) is the host's choice: ``rerun_interrupted``
    runs it again, ``fail_interrupted`` fails its Run (``command_interrupted``); with
    neither the resume is refused (``command-interrupted``) and the Run stays resumable.
    """
    _check_options(max_parallel, max_visits, command_timeout)
    if rerun_interrupted and fail_interrupted:
        raise AgentGraphError(
            codes.RUN_OPTION_INVALID,
            "rerun_interrupted and fail_interrupted are two answers to one question: give one",
        )
    file = RunFile(state)
    file.read()  # a missing or damaged record is refused before a lock file is made
    adapter = _adapter(agent)  # a bad --agent, too: nothing is written for it
    more = hints.options(agent, max_parallel, max_visits, command_timeout)
    with file.lock():
        document = read(file)  # again, under the lock: the version we will drive
        program = _resumable(file, document, compile, more)
        if not (rerun_interrupted or fail_interrupted):
            check_interrupted(file, document, more)
        if adapter is None and needs_agent(program):
            raise AgentGraphError(codes.AGENT_REQUIRED, _agent_hint(program))
        if isinstance(adapter, ScriptAdapter):  # go on from the first answer not yet used
            adapter.continue_after(answers_used(file, document))
        settings = _settings(
            adapter, stop, on_event, max_parallel=max_parallel, max_visits=max_visits,
            command_timeout=command_timeout, rerun_interrupted=rerun_interrupted,
        )  # fmt: skip
        record = Record(document, file, on_event, 0)
        runner = Runner(program, program.root, record, settings)
        with signals_stop(settings.stop) if handle_signals else nullcontext():
            runner.recover()
            runner.drive()
    return _summary(record)


def check_interrupted(file: RunFile, document: RunDoc, more: Sequence[str] = ()) -> None:
    """``command-interrupted``, changing nothing, for a plain resume (``agc flow resume``, or
    a host such as the MCP server before it starts a driver) that would have to decide about
    a command that may have had effects: only the person knows whether running it again is
    safe. ``more``: the options the printed commands repeat (``--agent`` …)."""
    found = interrupted_commands(file, document)
    if not found:
        return
    where = ", ".join(found)
    again, failed = (hints.resume_words(file.path, flag, *more) for flag in (RERUN_FLAG, FAIL_FLAG))
    raise AgentGraphError(
        codes.COMMAND_INTERRUPTED,
        f"Run {document.run_id}: the command {where} was interrupted and may have had "
        f"effects; nothing was changed.\nRun it again: {again}\n"
        f"Or fail it (command_interrupted): {failed}",
    )


RERUN_FLAG, FAIL_FLAG = hints.RERUN_FLAG, hints.FAIL_FLAG


def _check_new(file: RunFile, more: Sequence[str]) -> None:
    """``run-target-exists`` with a hint that fits what is there: a Run that can go on
    is resumed, anything else is left alone for a new ``--state``."""
    if not file.exists():
        file.check_new()
        return
    try:
        document: RunDoc | None = read(file)
    except AgentGraphError:
        document = None  # not a record (or a damaged one): never written over either way
    fresh = hints.fresh_state(file.path)
    if document is not None and document.parent is None and not document.status.ended:
        advice = f"resume it: {hints.resume_words(file.path, *more)}"
    else:
        advice = f"choose another --state (such as {shlex.quote(str(fresh))})"
    raise AgentGraphError(
        codes.RUN_TARGET_EXISTS,
        f"{file.path} exists; a new Run never replaces a file: {advice}",
    )


def _kept(file: RunFile, document: RunDoc, entry: Path) -> FlowProgram | None:
    """The program the Run started with, placed where its packages are now; None if none
    was kept (or its file is unreadable or damaged: the sources then decide)."""
    digest = document.program
    data = file.kept_program(digest) if digest is not None else None
    if digest is None or data is None:
        return None
    try:
        return FlowProgram.from_bytes(data, expected_digest=digest, base=entry.parent.parent)
    except AgentGraphError:
        return None


def _compiled(entry: Path, compile: Compile | None, document: RunDoc) -> FlowProgram:
    if compile is None:
        raise AgentGraphError(
            codes.FLOW_PROGRAM_MISSING,
            f"Run {document.run_id} has no kept program to resume with: resume it through "
            "agent_graph.flow.resume (or agc flow resume), which compiles its Flow",
        )
    try:
        return compile(entry)
    except AgentGraphError as error:
        raise AgentGraphError(
            codes.RUN_FINGERPRINT_MISMATCH,
            f"The Flow at {entry} changed since the Run started and no longer compiles "
            f"({error.code}: {error.message})",
            error.diagnostics,
        ) from None


def _resumable(
    file: RunFile, document: RunDoc, compile: Compile | None, more: Sequence[str] = ()
) -> FlowProgram:
    parent = document.parent
    if parent is not None:
        words = hints.resume_words(file.sibling(parent.state).path, *more)
        raise AgentGraphError(
            codes.RUN_CHILD_DIRECT_RESUME,
            f"Run {document.run_id} is a child of Run {parent.run_id} and resumes only "
            f"with it: {words}",
        )
    if document.status.ended:
        again = hints.new_run_hint(
            document.entry_path,
            hints.task_word(document.raw.get("task")),
            file.path,
            document.cwd,
            more,
        )
        raise AgentGraphError(
            codes.RUN_NOT_RESUMABLE,
            f"Run {document.run_id} has {document.status}; nothing to resume ({again})",
        )
    entry = Path(document.entry_path)
    if not entry.is_file():
        raise AgentGraphError(
            codes.RUN_ENTRY_MISSING, f"The Run's Flow is gone: {entry} does not exist"
        )
    program = _kept(file, document, entry)
    now: str | None
    if program is None:
        program = _compiled(entry, compile, document)
        now = program.fingerprint
    else:
        now, gone = fingerprint_on_disk(program)
        if now is None:
            raise AgentGraphError(
                codes.RUN_FINGERPRINT_MISMATCH,
                f"A Flow that {document.flow} runs is gone since Run {document.run_id} "
                f"started: {gone} has no FLOW.md; a Run resumes only on the files it started "
                "with",
            )
    here = program.package_root(program.root)  # a kept program's entry, placed by entryPath
    holds = program.root.id if here == entry.parent else entry.parent.name
    if holds != document.flow:
        raise AgentGraphError(
            codes.RUN_FLOW_MISMATCH,
            f"{entry} now holds Flow {holds}, not the Run's {document.flow}",
        )
    if (
        now != document.fingerprint
        or program.record.fingerprint_version != document.fingerprint_version
    ):
        raise AgentGraphError(
            codes.RUN_FINGERPRINT_MISMATCH,
            f"The files of {document.flow} or of a Flow it runs changed since Run "
            f"{document.run_id} started (fingerprint {document.fingerprint}, now "
            f"{now}); a Run resumes only on the files it started with",
        )
    if os.path.exists(document.cwd) and not os.path.isdir(document.cwd):
        raise AgentGraphError(
            codes.RUN_CWD_INVALID,
            f"The Run's working directory {document.cwd} is no longer a directory",
        )
    if not os.path.isdir(document.cwd):
        raise AgentGraphError(
            codes.RUN_CWD_MISSING, f"The Run's working directory no longer exists: {document.cwd}"
        )
    _check_refs(program.root, document)
    check_children(file, document)
    return program


def _check_refs(flow: r.Flow, document: RunDoc) -> None:
    """The record's nodes are the Flow's (the fingerprint matched, so only a record
    written for another Flow can fail this)."""
    refs = {n.ref for n in flow.nodes}
    cursor = document.cursor
    named = [v.node for v in document.visits]
    if cursor is not None and cursor.at == At.NODE:
        named.append(cursor.node)
    if any(ref not in refs for ref in named):
        raise AgentGraphError(
            codes.RUN_FLOW_MISMATCH, f"The record names nodes {document.flow} lacks"
        )


def _agent_hint(program: FlowProgram) -> str:
    return (
        f"Flow {program.root.id} has Agent steps: give an adapter with --agent SPEC "
        "(script:FILE, command:[argv…], claude, codex)"
    )


def _summary(record: Record) -> RunSummary:
    doc = record.doc
    state = RunStatus.INTERRUPTED if doc.status == RunStatus.RUNNING else doc.status
    return RunSummary(
        state=state.value,
        run_id=record.run_id,
        flow=record.flow,
        result=doc.conclusion,
        error=doc.error if state == RunStatus.FAILED else None,
        path=record.file.path,
        interrupted=_stopped(record) if state == RunStatus.INTERRUPTED else (),
        timed_out=tuple(v.node for v in doc.visits if _timed_out(v)),
        entry=doc.entry_path,
        task=doc.raw.get("task"),
        cwd=doc.cwd,
    )


def _timed_out(visit: Visit) -> bool:
    result = visit.result
    return isinstance(result, dict) and timed_out(result.get("content"))


def _stopped(record: Record) -> tuple[str, ...]:
    try:
        return tuple(interrupted_commands(record.file, record.doc))
    except AgentGraphError:
        return ()  # a damaged child record: the resume says so; the summary stays


def status(state: str | os.PathLike[str]) -> dict[str, Any]:
    """Where the Run stands: ``{"state","runId","flow","current"?,…}``."""
    file = RunFile(state)
    doc = read(file)
    out: dict[str, Any] = {"state": doc.status.value, "runId": doc.run_id, "flow": doc.flow}
    cursor = doc.cursor
    if cursor is not None:
        if cursor.at == At.NODE:
            current = {"node": cursor.node}
            if cursor.visit_id is not None:
                current["visit"] = cursor.visit_id
        else:
            current_round = doc.current_round()
            current = {"fork": current_round.fork, "round": current_round.id}
        out["current"] = current
    out["visits"] = doc.visit_count
    out["result"] = doc.conclusion
    if doc.error is not None:
        out["error"] = doc.error
    out["agent"] = doc.agent_binding
    out["cwd"] = doc.cwd
    out["entryPath"] = doc.entry_path
    if doc.parent is not None:
        out["parent"] = doc.raw["parent"]  # as recorded, member for member
    out["children"] = [_child_status(file, v) for v in doc.visits if v.child is not None]
    out["startedAt"], out["updatedAt"] = doc.started_at, doc.updated_at
    return out


def _child_status(file: RunFile, visit: Visit) -> dict[str, Any]:
    """A child Run of ``visit``: its id, Flow, record (beside the parent's) and state
    (``not-started`` when its record was never written, ``unreadable`` when damaged)."""
    link = visit.child
    assert link is not None
    child = file.sibling(link.state)
    try:
        state = read(child).status.value if child.exists() else "not-started"
    except AgentGraphError:
        state = "unreadable"
    return {"runId": link.run_id, "flow": link.flow, "record": str(child.path), "state": state}


def events(state: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The Run's event log, in ``seq`` order (its child Runs' events are in their own)."""
    return [event.raw for event in read(RunFile(state)).events]
