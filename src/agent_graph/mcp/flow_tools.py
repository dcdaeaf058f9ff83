"""The Flow tools (``--flows`` with ``--runs``): consent, the Run view, start/answer/control.

A mixin of :class:`~.host.Host`; the Flow Runs themselves (drivers, the caller adapter,
consent questions) are :mod:`.flows`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import codes
from ..errors import AgentGraphError
from ..flow.runtime import hints
from ..flow.runtime.api import needs_agent
from .config import HostConfig
from .flows import (
    EVENTS_SHOWN,
    STOP_WAIT_S,
    CallerAgent,
    Consent,
    ConsentAsk,
    Drive,
    FlowHost,
    commands_of,
    task_text,
)
from .serve_options import Client, ServeOptions
from .tools import BY_NAME, check_arguments

if TYPE_CHECKING:
    from ..flow.agents.protocol import AgentAdapter
    from ..flow.runtime.state import RunDoc
    from ..ir.flow_program import FlowProgram


class FlowTools:
    """The Flow tools (``--flows`` with ``--runs``), mixed into :class:`Host`."""

    options: ServeOptions
    config: HostConfig
    flows: FlowHost | None

    def _workspace(self, given: str | None) -> str:
        raise NotImplementedError  # Host's

    def _flow_host(self) -> FlowHost:
        if self.flows is None:
            raise AgentGraphError(
                codes.ARGUMENTS_INVALID, "This server serves no Flows (--flows with --runs)"
            )
        return self.flows

    # -- consent ---------------------------------------------------------------------------

    def consent_begin(self, name: str, arguments: Any) -> ConsentAsk | None:
        """The question to put to the user before ``name`` may run a Flow's commands, or
        None when none is needed (or none can be asked: the tool then says so)."""
        from ..flow import compile

        if name not in ("flow_start", "flow_control") or self.flows is None:
            return None
        tool = BY_NAME[name]
        args = check_arguments(tool, arguments)
        fh = self.flows
        fresh = False
        if name == "flow_start":
            _, path = fh.find(args["flow"])
            if fh.path(args["run"]).exists():
                return None  # the call refuses it without asking anyone
            program = compile(path)
        else:
            if args["action"] != "resume" or fh.live(args["run"]) is not None:
                return None
            fresh = bool(args.get("rerunInterrupted"))
            doc = fh.record(args["run"])  # once: the question and the check read the same
            if not fresh and self._cut_short(args["run"], doc):
                return None  # the call refuses it without asking anyone
            program = self._resumed_program(args["run"], doc)
        if not fh.needs_consent(program, fresh=fresh):
            return None
        return ConsentAsk(program.root.id, program.fingerprint, tuple(commands_of(program)), fresh)

    def _cut_short(self, handle: str, doc: RunDoc) -> bool:
        """Whether the Run has a command that was interrupted (a plain resume refuses)."""
        from ..flow.runtime.resume import interrupted_commands
        from ..flow.runtime.store import RunFile

        fh = self._flow_host()
        return bool(interrupted_commands(RunFile(fh.path(handle)), doc))

    def _resumed_program(self, handle: str, doc: RunDoc) -> FlowProgram:
        from ..flow import compile

        try:
            program = compile(doc.entry_path)
        except AgentGraphError as error:
            raise AgentGraphError(
                codes.RUN_FINGERPRINT_MISMATCH,
                f"The Flow of Run {handle} no longer compiles ({error.code}): it resumes only "
                "on the files it started with",
            ) from None
        if program.fingerprint != doc.fingerprint:
            raise AgentGraphError(
                codes.RUN_FINGERPRINT_MISMATCH,
                f"The files of Flow {doc.flow} changed since Run {handle} started: it resumes "
                "only on the files it started with",
            )
        return program

    def _refused(
        self,
        handle: str,
        program: FlowProgram,
        consent: Consent | None,
        fallback: str,
        *,
        fresh: bool,
    ) -> dict[str, Any] | None:
        """None when the Flow may run now; else the result saying why nothing ran."""
        fh = self._flow_host()
        if not fh.needs_consent(program, fresh=fresh):
            return None
        if (
            consent is not None
            and consent.decision == "granted"
            and consent.fingerprint == program.fingerprint
        ):
            if consent.trust:
                fh.trusted.add(program.fingerprint)
            return None
        decision = "unavailable" if consent is None else consent.decision
        why = {
            "unavailable": "this client cannot show the user a form (no elicitation) and the "
            "host's config does not trust this Flow's fingerprint",
            "declined": "the user refused to run its commands",
            "cancelled": "the user dismissed the question",
            "invalid": "the answer chose nothing",
            "granted": "the Flow changed after the user saw its commands",
        }[decision]
        say = (
            f"Nothing ran: {why}. Do not run the Flow's commands yourself; the user can run it "
            f"in a terminal: {fallback}"
        )
        return {
            "next": {"say": say, "waitsFor": "user"},
            "run": {"run": handle, "flow": program.root.id, "file": os.fspath(fh.path(handle))},
            "state": "awaiting-consent",
            "consent": decision,
            "fingerprint": program.fingerprint,
            "commands": commands_of(program),
            "fallback": fallback,
            "events": [],
        }

    def _agent_words(self, program: FlowProgram, agent: str) -> list[str]:
        """``--agent …`` for a command a person runs in a terminal instead: the named
        adapter (its paths absolute, as every printed Flow command has them), else claude;
        nothing for a Flow without Agent steps."""
        if not needs_agent(program):
            return []
        return hints.options(self.config.agents.get(agent, "claude"))

    def _adapter(self, agent: str, drive: Drive) -> AgentAdapter:
        """The caller (answers with flow_answer) or the config's adapter of that name."""
        if agent == "caller":
            return CallerAgent(drive)
        from ..flow.agents.spec import adapter_from_spec

        return adapter_from_spec(self.config.agents[agent])

    # -- the view --------------------------------------------------------------------------

    def _flow_view(self, handle: str, since: int = 0) -> dict[str, Any]:
        fh = self._flow_host()
        doc = fh.record(handle)
        drive = fh.live(handle)
        file = os.fspath(fh.path(handle))
        run = {
            "run": handle,
            "runId": doc.run_id,
            "flow": doc.flow,
            "file": file,
            "cli": shlex.join(["agc", "flow", "status", "--state", file]),
        }
        out: dict[str, Any] = {"next": {}, "run": run}
        pending = drive.pending if drive is not None else None
        if pending is not None and pending.answer is None:
            state = "awaiting-agent"
            request = pending.request
            step: dict[str, Any] = {
                "visit": pending.visit,
                "flow": request.flow,
                "node": request.node,
                "marker": request.marker,
                "attempt": request.attempt,
                "prompt": request.prompt,
                "results": [
                    {"name": r.name, "description": r.description} for r in request.results
                ],
                "cwd": request.cwd,
            }
            if request.rejected is not None:
                step["rejected"] = request.rejected
            names = ", ".join(r.name for r in request.results)
            again = (
                f" Your answer {request.rejected!r} is not one it declares."
                if request.rejected
                else ""
            )
            out["next"] = {
                "say": f"Flow step {request.node} waits for you.{again} Do what step.prompt "
                f"asks with your own tools (in step.cwd), then answer with flow_answer: result "
                f"is one of {names}; content is what that result asks for.",
                "waitsFor": "agent",
                "tool": "flow_answer",
                "arguments": {"run": handle, "visit": pending.visit},
            }
            out["step"] = step
        elif drive is not None:
            state = "running"
            out["next"] = {
                "say": "The Flow is running its steps; wait for it with flow_status.",
                "waitsFor": "host",
                "tool": "flow_status",
                "arguments": {"run": handle, "waitSeconds": 30},
            }
        else:
            state = doc.status.value
            if state == "running":  # no driver holds it: the process that did is gone
                state = "interrupted"
            if state == "interrupted":
                out["next"] = {
                    "say": "The Flow Run stopped before it ended; resume it with flow_control.",
                    "waitsFor": "agent",
                    "tool": "flow_control",
                    "arguments": {"run": handle, "action": "resume"},
                }
            else:
                out["next"] = {"say": f"The Flow Run {state}.", "waitsFor": "nothing"}
        out["state"] = state
        if doc.conclusion is not None and state == "completed":
            out["result"] = doc.conclusion
        if doc.error is not None:
            out["error"] = doc.error
        events = [e.raw for e in doc.events if e.seq > since]
        out["events"] = [_compact(e) for e in events[-EVENTS_SHOWN:]]
        out["lastEvent"] = doc.events[-1].seq if doc.events else 0
        return out

    # -- tools -----------------------------------------------------------------------------

    def _flow_list(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        fh = self._flow_host()
        items = [fh.describe(e) if "id" in e else e for e in fh.entries()]
        say = (
            "Start one with flow_start (flow: its id, run: a new handle, task: what to do); "
            "a Flow whose consent is required asks the user first."
        )
        return {"next": {"say": say, "waitsFor": "agent", "tool": "flow_start"}, "flows": items}

    def _flow_start(
        self, args: Mapping[str, Any], client: Client, consent: Consent | None = None
    ) -> dict[str, Any]:
        from ..flow import compile
        from ..flow.runtime import start

        fh = self._flow_host()
        handle = args["run"]
        _, path = fh.find(args["flow"])
        agent = args.get("agent", "caller")
        if agent != "caller" and agent not in self.config.agents:
            named = ", ".join(["caller", *self.config.agents])
            raise AgentGraphError(
                codes.ARGUMENTS_INVALID,
                f"/agent: this server's config names no Agent adapter {agent} (it has: {named})",
            )
        file = fh.path(handle)
        if file.exists():
            raise AgentGraphError(
                codes.RUN_TARGET_EXISTS,
                f"Flow Run {handle} exists: see it with flow_status {handle}",
            )
        cwd = self._workspace(args.get("cwd"))
        program = compile(path)
        words = ["agc", "flow", "run", path, "--task", task_text(args["task"])]
        words += ["--state", os.fspath(file), "--cwd", cwd, *self._agent_words(program, agent)]
        refused = self._refused(handle, program, consent, shlex.join(words), fresh=False)
        if refused is not None:
            return refused
        file.parent.mkdir(parents=True, exist_ok=True)
        task, max_visits = args["task"], args.get("maxVisits")

        def work(drive: Drive) -> Any:
            return start(
                program, task, state=file, agent=self._adapter(agent, drive), cwd=cwd,
                max_visits=max_visits, on_event=drive.on_event, stop=drive.stop,
            )  # fmt: skip

        fh.agents[handle] = agent
        drive = fh.launch(handle, work)
        return self._flow_wait(handle, drive, args.get("waitSeconds", 20), client)

    def _flow_wait(
        self,
        handle: str,
        drive: Drive,
        seconds: float,
        client: Client,
        since: int = 0,
        reported: int | None = None,
    ) -> dict[str, Any]:
        drive.wait(seconds, client.progress, reported)
        fh = self._flow_host()
        if drive.done and drive.error is not None:
            # the runtime refuses before it writes (run-busy, fingerprint drift…): then the
            # refusal is the answer, as agc flow run/resume would print it
            if not fh.path(handle).exists():
                raise drive.error
            doc = fh.record(handle)
            if since and doc.events and doc.events[-1].seq == since:
                raise drive.error
        out = self._flow_view(handle, since)
        if drive.done and drive.error is not None:
            out["driverError"] = {"code": drive.error.code, "message": drive.error.message}
        return out

    def _flow_status(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        fh = self._flow_host()
        handle = args["run"]
        fh.record(handle)  # run-missing before any wait
        drive = fh.live(handle)
        since = args.get("sinceEvent", 0)
        seconds = args.get("waitSeconds", 0)
        if drive is not None and seconds > 0:
            return self._flow_wait(handle, drive, seconds, client, since)
        return self._flow_view(handle, since)

    def _flow_answer(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        fh = self._flow_host()
        handle = args["run"]
        fh.record(handle)
        drive = fh.live(handle)
        if drive is None:
            raise AgentGraphError(
                codes.FLOW_ANSWER_STALE,
                f"Flow Run {handle} is not waiting for an answer in this server (it may have "
                "been stopped or the server restarted): call flow_control resume, which asks "
                "the step again",
            )
        reported = drive.seen  # the step answered is reported as progress too
        drive.answer(args["visit"], args["result"], args.get("content"))
        # the answer is taken when the parked step wakes; let it go before waiting
        with drive.cond:
            while drive.pending is not None and drive.pending.answer is not None:
                drive.cond.wait(0.1)
        seconds = args.get("waitSeconds", 20)
        return self._flow_wait(handle, drive, seconds, client, reported=reported)

    def _flow_control(
        self, args: Mapping[str, Any], client: Client, consent: Consent | None = None
    ) -> dict[str, Any]:
        from ..flow import resume

        fh = self._flow_host()
        handle = args["run"]
        doc = fh.record(handle)
        drive = fh.live(handle)
        if args["action"] == "stop":
            if drive is not None:
                # kill_own, not kill_children: only the groups this Run's driver started
                # (its running command), never another Run's commands or an observer
                drive.stop.request(kill_children=False, kill_own=True)
                if drive.thread is not None:
                    drive.thread.join(STOP_WAIT_S)
            out = self._flow_view(handle)
            if out["state"] == "running":
                out["next"]["say"] = (
                    "Stop requested: the Run stops when its running parallel branches end; "
                    "see it with flow_status."
                )
            return out
        if drive is not None:
            raise AgentGraphError(
                codes.RUN_BUSY, f"Flow Run {handle} is running in this server: see flow_status"
            )
        if doc.status.ended:
            raise AgentGraphError(
                codes.RUN_NOT_RESUMABLE, f"Flow Run {handle} has {doc.status}; nothing to resume"
            )
        program = self._resumed_program(handle, doc)
        rerun = bool(args.get("rerunInterrupted"))
        file = fh.path(handle)
        # the adapter it started with, while this process runs; the caller after a restart
        agent = fh.agents.get(handle, "caller")
        more = self._agent_words(program, agent)
        if not rerun:  # the user chooses: rerunInterrupted, or fail it in a terminal
            from ..flow.runtime.api import check_interrupted
            from ..flow.runtime.store import RunFile

            check_interrupted(RunFile(file), doc, more)
        fallback = hints.resume_words(file, *([hints.RERUN_FLAG] if rerun else []), *more)
        refused = self._refused(handle, program, consent, fallback, fresh=rerun)
        if refused is not None:
            return refused
        since = doc.events[-1].seq if doc.events else 0

        def work(drive: Drive) -> Any:
            return resume(
                file, agent=self._adapter(agent, drive), rerun_interrupted=rerun,
                on_event=drive.on_event, stop=drive.stop,
            )  # fmt: skip

        drive = fh.launch(handle, work)
        return self._flow_wait(handle, drive, args.get("waitSeconds", 20), client, since)


def _compact(event: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("seq", "type", "flow", "node", "visit", "result", "strategy", "agent", "to")
    return {k: event[k] for k in keep if k in event}
