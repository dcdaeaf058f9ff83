"""Flow Runs for MCP clients: consent, background drivers and Agent steps the caller answers.

A Flow's command nodes run arbitrary argv, and an agent that can write files could author
a Flow and start it here, around its client's shell-permission prompts. So nothing that
(re)starts a driver on a Flow with commands runs until the *user* consented to that exact
closure fingerprint: a form listing every distinct command (``run once`` or ``trust``), or
a ``trustedFlows`` entry in the host's config. Any byte of the Flow or of a child Flow
changes the fingerprint, so a changed Flow asks again.

A driver is a thread running the ordinary runtime (``agent_graph.flow.runtime``), which
holds the Run's lock and writes the CLI's own record under ``--runs DIR/flow/``. Agent
steps go to :class:`CallerAgent`, which parks the driver until the calling agent answers
with ``flow_answer``. What survives the process is the record itself: its cursor stands
on the Agent visit, which the runtime's resume rules retry (``retry-agent``), so after a
restart ``flow_control resume`` asks the same step again. Tool calls wait at most
:data:`MAX_WAIT_S` (under Codex's 60 s default tool timeout) and report progress.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, unquote

from .. import codes
from ..errors import AgentGraphError
from ..flow.agents.protocol import AgentAnswer, AgentFailure, AgentRequest
from ..flow.runtime.interrupt import Stop
from .resources import SCHEME
from .tools import HANDLE_PATTERN

if TYPE_CHECKING:
    from ..flow.runtime.state import RunDoc
    from ..ir.flow_program import FlowProgram

FLOW_URI: Final = f"{SCHEME}flows/"
RUN_URI: Final = f"{SCHEME}flow-runs/"
JSON_TYPE: Final = "application/json"
MAX_WAIT_S: Final = 45.0
#: How long ``stop`` and shutdown wait for a driver to record the interruption.
STOP_WAIT_S: Final = 5.0
CONSENT_CHOICES: Final = ("run-once", "trust", "refuse")
EVENTS_SHOWN: Final = 20


def commands_of(program: FlowProgram) -> list[str]:
    """Every distinct command of the Flow and its child Flows, as the user would type it
    (``{outcome}`` stands where a previous step's result is substituted)."""
    seen: list[str] = []
    for flow in program.flows:
        for node in flow.nodes:
            if node.command is None:
                continue
            words = ["{outcome}".join(node.command.command)]
            words += ["{outcome}".join(arg.parts) for arg in node.command.args]
            line = shlex.join(words)
            if line not in seen:
                seen.append(line)
    return seen


@dataclass(slots=True)
class Pending:
    """The Agent step a driver is parked on: ``visit`` is the visit id of the Run that asks."""

    request: AgentRequest
    visit: str
    answer: AgentAnswer | None = None


class CallerAgent:
    """The adapter that parks a driver until the MCP caller answers (``flow_answer``).

    The runtime validates the result name (one re-prompt, then ``outcome_validation``);
    a stop request wakes the parked driver, whose step the runtime then records as
    interrupted, so the Run can be resumed later and the step asked again.
    """

    def __init__(self, drive: Drive) -> None:
        self._drive = drive

    def ask(self, request: AgentRequest) -> AgentAnswer:
        drive = self._drive
        with drive.cond:
            visit = drive.visits.get((request.run_id, request.node), "")
            pending = Pending(request, visit)
            drive.pending = pending
            drive.cond.notify_all()
            while pending.answer is None:
                if drive.stop.requested:
                    drive.pending = None
                    raise AgentFailure("the server stopped the Run while it waited for an answer")
                drive.cond.wait(0.25)
            drive.pending = None
            return pending.answer

    def release(self, agent: str) -> None:
        """The caller's context is not ours to end."""


@dataclass(slots=True)
class Drive:
    """One driver thread and what the tools see of it."""

    handle: str
    cond: threading.Condition = field(default_factory=threading.Condition)
    stop: Stop = field(default_factory=Stop)
    pending: Pending | None = None
    #: (run id, node) -> the visit id last started there (child Runs included)
    visits: dict[tuple[str, str], str] = field(default_factory=dict)
    seen: int = 0
    #: events the runtime wrote; the record exists once there is one
    events: int = 0
    done: bool = False
    error: AgentGraphError | None = None
    thread: threading.Thread | None = None
    #: one line per finished step, the progress notifications' messages
    messages: list[str] = field(default_factory=list)

    def on_event(self, event: dict[str, Any], depth: int) -> None:
        with self.cond:
            self.events += 1
            if event["type"] == "visit-started":
                self.visits[(event["runId"], event["node"])] = event["visit"]
            if event["type"] == "visited":
                self.seen += 1
                self.messages.append(
                    f"{event['flow']}: {event.get('node')} → {event.get('result')}"
                )
            self.cond.notify_all()

    def start(self, work: Callable[[], Any]) -> None:
        def main() -> None:
            try:
                with self.stop.owning():  # this Run's commands: flow_control stop kills them
                    work()
            except AgentGraphError as error:
                self.error = error
            except Exception as error:  # a bug must end the wait, not hang it
                self.error = AgentGraphError(
                    codes.FLOW_DRIVER_FAILED, f"The Flow driver failed: {type(error).__name__}"
                )
            finally:
                with self.cond:
                    self.done = True
                    self.cond.notify_all()

        self.thread = threading.Thread(target=main, name=f"agc-flow-{self.handle}", daemon=True)
        self.thread.start()

    def wait(
        self,
        seconds: float,
        progress: Callable[[float, float | None, str], None] | None,
        reported: int | None = None,
    ) -> None:
        """Until an Agent step waits, the driver ends, or ``seconds`` pass; each step done
        since ``reported`` (default: now) is a progress notification."""
        deadline = time.monotonic() + min(seconds, MAX_WAIT_S)
        if reported is None:
            reported = self.seen
        with self.cond:
            # even waitSeconds 0 waits for the record's first event: a view needs it
            self.cond.wait_for(lambda: self.done or self.events > 0, MAX_WAIT_S)
            while True:
                while progress is not None and reported < self.seen:
                    message = self.messages[reported]
                    reported += 1
                    self.cond.release()
                    try:
                        progress(reported, None, message)
                    finally:
                        self.cond.acquire()
                if self.done or (self.pending is not None and self.pending.answer is None):
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self.cond.wait(min(left, 0.5))

    def answer(self, visit: str, result: str, content: Any) -> None:
        with self.cond:
            pending = self.pending
            if pending is None or pending.answer is not None or pending.visit != visit:
                waiting = "no step" if pending is None else f"visit {pending.visit}"
                raise AgentGraphError(
                    codes.FLOW_ANSWER_STALE,
                    f"Flow Run {self.handle} is not waiting on visit {visit} (it waits on "
                    f"{waiting}): call flow_status",
                )
            request = pending.request
            agent = (
                f"mcp-caller:{self.handle}:{uuid.uuid4().hex[:8]}"
                if request.marker == "new"
                else request.agent
            )
            pending.answer = AgentAnswer(result, content, agent)
            self.cond.notify_all()


@dataclass(frozen=True, slots=True)
class ConsentAsk:
    """The question put to the user before a driver runs a Flow's commands."""

    flow: str
    fingerprint: str
    commands: tuple[str, ...]
    fresh: bool  # rerunning an interrupted command: asked even when trusted in memory

    @property
    def message(self) -> str:
        listed = "\n".join(f"  {c}" for c in self.commands)
        again = " again, rerunning the command that was interrupted" if self.fresh else ""
        return (
            f"Run Flow {self.flow}{again}? It runs these commands on this machine:\n{listed}\n"
            f"Fingerprint {self.fingerprint}. run-once: this Run only; trust: this exact "
            "Flow for as long as the server runs; refuse: nothing runs."
        )

    @property
    def schema(self) -> dict[str, Any]:
        # no default: a client that accepts an empty form does not consent
        return {
            "type": "object",
            "required": ["decision"],
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Run these commands?",
                    "enum": list(CONSENT_CHOICES),
                }
            },
        }

    def state(self) -> str:
        return f"flow-consent:{self.fingerprint}:{int(self.fresh)}"


@dataclass(frozen=True, slots=True)
class Consent:
    """What the user answered (``granted``, ``declined``, ``cancelled``, ``invalid``)."""

    decision: str
    trust: bool = False
    #: the fingerprint the user saw; a Flow changed since then is not consented
    fingerprint: str | None = None


def check_consent(ask: ConsentAsk, action: str, content: Mapping[str, Any] | None) -> Consent:
    if action == "decline":
        return Consent("declined")
    if action == "cancel":
        return Consent("cancelled")
    if action != "accept":
        return Consent("unavailable")
    choice = (content or {}).get("decision")
    if choice not in CONSENT_CHOICES:
        return Consent("invalid")
    if choice == "refuse":
        return Consent("declined")
    return Consent("granted", trust=choice == "trust", fingerprint=ask.fingerprint)


class FlowHost:
    """The Flow tools' state: the packages under ``--flows``, trust, live drivers."""

    def __init__(self, roots: tuple[str, ...], runs: str, trusted: tuple[str, ...]) -> None:
        self.roots = roots
        self.runs = runs
        self.trusted: set[str] = set(trusted)  # config entries and this process's "trust"
        self.drives: dict[str, Drive] = {}
        #: handle -> the Agent adapter name its steps go to (caller or a config name)
        self.agents: dict[str, str] = {}
        self._lock = threading.Lock()

    # -- packages --------------------------------------------------------------------------

    def entries(self) -> list[dict[str, Any]]:
        from ..flow import discover

        out: list[dict[str, Any]] = []
        for root in self.roots:
            try:
                found = discover(root)
            except AgentGraphError as error:
                out.append({"root": root, "error": error.code, "message": error.message})
                continue
            out += [{"root": root, **entry.to_dict()} for entry in found]
        return out

    def find(self, name: str) -> tuple[str, str]:
        """(id, FLOW.md path) of the Flow ``name`` (an id, or a path under a root)."""
        for entry in self.entries():
            if "id" not in entry:
                continue
            path = entry["path"]
            relative = os.path.relpath(os.path.dirname(path), entry["root"])
            if name in (entry["id"], relative, os.path.relpath(path, entry["root"])):
                return entry["id"], path
        raise AgentGraphError(
            codes.FLOW_UNKNOWN,
            f"There is no Flow {name} under the server's --flows directories: see flow_list",
        )

    def needs_consent(self, program: FlowProgram, *, fresh: bool = False) -> bool:
        """Whether the user must agree before ``program`` runs: it runs commands and its
        fingerprint is not trusted (a rerun of interrupted commands always asks)."""
        if not commands_of(program):
            return False
        return fresh or program.fingerprint not in self.trusted

    def consent_state(self, program: FlowProgram) -> str:
        if not commands_of(program):
            return "not-needed"
        return "required" if self.needs_consent(program) else "granted"

    def describe(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        from ..flow import checked

        item = {k: entry[k] for k in ("id", "name", "description") if entry.get(k) is not None}
        item["path"] = os.path.relpath(entry["path"], entry["root"])
        found, program = checked(entry["path"])
        if program is None:
            errors = [d for d in found if d.severity == "error"]
            item["status"] = "invalid"
            item["diagnostics"] = [{"code": d.code, "message": d.message} for d in errors[:5]]
            return item
        item["status"] = "valid"
        from ..flow.runtime.api import needs_agent

        item["agentSteps"] = needs_agent(program)
        item["commands"] = commands_of(program)
        item["fingerprint"] = program.fingerprint
        item["consent"] = self.consent_state(program)
        return item

    # -- records ---------------------------------------------------------------------------

    def path(self, handle: str) -> Path:
        return Path(self.runs) / "flow" / f"{handle}.json"

    def record(self, handle: str) -> RunDoc:
        from ..flow.runtime.record import read
        from ..flow.runtime.store import RunFile

        file = RunFile(self.path(handle))
        if not file.exists():
            raise AgentGraphError(
                codes.RUN_MISSING, f"There is no Flow Run {handle}: start one with flow_start"
            )
        return read(file)

    def live(self, handle: str) -> Drive | None:
        with self._lock:
            drive = self.drives.get(handle)
        return drive if drive is not None and not drive.done else None

    def launch(self, handle: str, work: Callable[[Drive], Any]) -> Drive:
        drive = Drive(handle)
        with self._lock:
            running = self.drives.get(handle)
            if running is not None and not running.done:
                raise AgentGraphError(
                    codes.RUN_BUSY, f"Flow Run {handle} is already being driven by this server"
                )
            self.drives[handle] = drive
        drive.start(lambda: work(drive))
        return drive

    # -- resources -------------------------------------------------------------------------

    def resources(self) -> list[dict[str, Any]]:
        """The Flow packages' FLOW.md files and the Flow Runs kept under ``--runs``."""
        out: list[dict[str, Any]] = [
            {
                "uri": f"{FLOW_URI}{quote(e['id'], safe='')}",
                "name": f"Flow {e['id']}",
                "mimeType": "text/markdown",
            }
            for e in self.entries()
            if "id" in e
        ]
        directory = Path(self.runs) / "flow"
        handles = sorted(
            p.name.removesuffix(".json")
            for p in (directory.iterdir() if directory.is_dir() else ())
            if p.suffix == ".json" and "." not in p.name.removesuffix(".json")
        )
        for handle in handles:
            base = f"{RUN_URI}{quote(handle, safe='')}"
            out.append({"uri": base, "name": f"Flow Run {handle}", "mimeType": JSON_TYPE})
            out.append(
                {
                    "uri": f"{base}/events",
                    "name": f"Flow Run {handle} events",
                    "mimeType": JSON_TYPE,
                }
            )
        return out

    def read(self, uri: str) -> tuple[str, str] | None:
        """``(text, media type)`` of a Flow resource; None for a URI that is not one."""
        from ..documents.files import read_bytes
        from ..flow.runtime.api import events, status

        if uri.startswith(FLOW_URI):
            name = unquote(uri.removeprefix(FLOW_URI))
            _, path = self.find(name)
            return read_bytes(Path(path), name).decode("utf-8", "replace"), "text/markdown"
        if not uri.startswith(RUN_URI):
            return None
        handle, _, member = unquote(uri.removeprefix(RUN_URI)).partition("/")
        if member not in ("", "events") or not re.fullmatch(HANDLE_PATTERN, handle):
            raise AgentGraphError(codes.RESOURCE_MISSING, f"This server has no resource {uri}")
        self.record(handle)  # run-missing
        found = events(self.path(handle)) if member else status(self.path(handle))
        return json.dumps(found, ensure_ascii=False, indent=2), JSON_TYPE

    def shutdown(self, *, kill: bool = False) -> None:
        """Stop every driver and give each a moment to record the interruption.

        ``kill`` terminates the running commands too; the runtime can only signal every
        process group this process started (and again 2 s later), so only a server that
        is exiting may ask for it: anything else would hit other Runs and observers.
        """
        with self._lock:
            drives = [d for d in self.drives.values() if not d.done]
        for drive in drives:
            drive.stop.request(kill_children=kill)
        deadline = time.monotonic() + STOP_WAIT_S
        for drive in drives:
            if drive.thread is not None:
                drive.thread.join(max(0.0, deadline - time.monotonic()))


def task_text(task: Any) -> str:
    """The task as ``agc flow run --task`` takes it (text; JSON for anything else)."""
    return task if isinstance(task, str) else json.dumps(task, ensure_ascii=False)
