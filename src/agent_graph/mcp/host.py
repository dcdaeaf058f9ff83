"""The host behind the tools: Providers, Runs, observers and Gates, without the SDK.

Every tool is a synchronous method taking the checked arguments and returning the
result object (``next`` first), or raising :class:`~agent_graph.errors.AgentGraphError`,
which :mod:`.results` turns into a tool error. The SDK adapter runs them on a worker
thread, so a Run lock held by a terminal's ``agc run …`` delays one call, not the server.

Runs are named by handle: ``DIR/graph/<handle>.json`` under ``--runs DIR`` (the files
``agc run`` reads and writes, under the same locks), else kept in memory for the life of
the process. The server never runs a Route's command plan: the agent runs it through its
client, under the client's own permission prompts.
"""

from __future__ import annotations

import os
import re
import shlex
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .. import codes
from ..errors import AgentGraphError
from ..runs import FileRunStore, MemoryRunStore, Run, evaluation_input
from ..runs.document import OUTCOME_RECORDED, recorded, with_fact_paths
from . import gates
from . import next as next_
from .config import Handler, HostConfig, load_config
from .delegation import Delegations
from .flows import (
    STOP_WAIT_S,
    CallerAgent,
    Consent,
    ConsentAsk,
    Drive,
    FlowHost,
    commands_of,
    has_agent_steps,
    task_text,
)
from .handlers import handler_of, run_handler
from .observers import look, report
from .providers import ProviderSet, Served
from .resources import static_files
from .run_resources import ReadLedger
from .tools import BY_NAME, HANDLE_PATTERN, Tool, check_arguments, select_tools

if TYPE_CHECKING:
    from ..flow.agents.protocol import AgentAdapter
    from ..flow.runtime.state import RunDoc
    from ..ir.flow_program import FlowProgram
    from ..ir.records import Gate as GateSpec
    from ..runs import RunStore
    from ..runs.store import RunRef
    from ..vm import Evaluation, Program, RoutingState

#: How long a call waits for a Run another process holds before ``run-locked``: well
#: under the 60 s clients allow a tool call.
LOCK_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True, slots=True)
class ServeOptions:
    manifests: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    registry: str | None = None
    runs: str | None = None
    workspaces: tuple[str, ...] = ()
    config: str | None = None
    tools: str = "core"
    read_only: bool = False
    flows: tuple[str, ...] = ()

    def words(self) -> list[str]:
        """The options as ``agc mcp serve`` takes them (for client snippets and hints)."""
        out: list[str] = []
        for manifest in self.manifests:
            out += ["-m", manifest]
        for skill in self.skills:
            out += ["--skill", skill]
        if self.registry:
            out += ["--registry", self.registry]
        for flows in self.flows:
            out += ["--flows", flows]
        if self.runs:
            out += ["--runs", self.runs]
        for workspace in self.workspaces:
            out += ["--workspace", workspace]
        if self.config:
            out += ["--config", self.config]
        if self.tools != ("flows" if self.flows else "core"):
            out += ["--tools", self.tools]
        if self.read_only:
            out.append("--read-only")
        return out


@dataclass(frozen=True, slots=True)
class Client:
    """Who called, as far as the connection says (recorded with what the user decided),
    and where this call's progress goes (``progress(done, total, message)``; the adapter
    turns it into ``notifications/progress`` when the caller asked for them)."""

    name: str | None = None
    version: str | None = None
    protocol: str | None = None
    elicitation: bool = False
    #: the connection this call came on, when one outlives the call (a handshake
    #: session): what the user delegates is held for it (:mod:`.delegation`)
    connection: str | None = None
    progress: Callable[[float, float | None, str], None] | None = field(
        default=None, compare=False, repr=False
    )

    def provenance(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name:
            out["client"] = f"{self.name} {self.version or ''}".strip()
        if self.protocol:
            out["protocol"] = self.protocol
        return out


@dataclass(slots=True)
class _Ledger:
    """The recordNodes this process routed, per (handle, revision): ``run_record`` takes
    only what a route offered at the revision the agent acted on."""

    routed: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def remember(self, handle: str, route: Mapping[str, Any]) -> None:
        node = route["afterAction"].get("recordNode")
        if node:
            with self.lock:
                self.routed.setdefault((handle, route["revision"]), set()).add(node)

    def offered(self, handle: str, revision: str) -> set[str] | None:
        with self.lock:
            found = self.routed.get((handle, revision))
            return None if found is None else set(found)


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
        commands = commands_of(program)
        if not commands or (program.fingerprint in fh.trusted and not fresh):
            return None
        return ConsentAsk(program.root.id, program.fingerprint, tuple(commands), fresh)

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
        if not commands_of(program):
            return None
        if program.fingerprint in fh.trusted and not fresh:
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
        out["events"] = [_compact(e) for e in events[-20:]]
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
        words += ["--state", os.fspath(file), "--cwd", cwd]
        if has_agent_steps(program):
            words += ["--agent", self.config.agents.get(agent, "claude")]
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
        if not rerun:  # the user chooses: rerunInterrupted, or fail it in a terminal
            from ..flow.runtime.api import check_interrupted
            from ..flow.runtime.store import RunFile

            check_interrupted(RunFile(file), doc)
        words = ["agc", "flow", "resume", "--state", os.fspath(file)]
        if rerun:
            words.append("--rerun-interrupted")
        # the adapter it started with, while this process runs; the caller after a restart
        agent = fh.agents.get(handle, "caller")
        if has_agent_steps(program):
            words += ["--agent", self.config.agents.get(agent, "claude")]
        refused = self._refused(handle, program, consent, shlex.join(words), fresh=rerun)
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


class Host(FlowTools):
    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        self.config = load_config(options.config)
        self.roots = [os.path.abspath(w) for w in (options.workspaces or (".",))]
        # Flow Runs are files only: a driver holds their lock, the CLI reads them
        self.flows = (
            FlowHost(options.flows, options.runs, self.config.trusted_flows)
            if options.flows and options.runs
            else None
        )
        tools = select_tools(options.tools, read_only=options.read_only)
        if self.flows is None:
            tools = tuple(t for t in tools if t.profile != "flows")
        self.tools: tuple[Tool, ...] = tools
        self.providers = ProviderSet.load(
            list(options.manifests), list(options.skills), options.registry
        )
        self.store: RunStore = (
            FileRunStore(lock_timeout=LOCK_TIMEOUT_S) if options.runs else MemoryRunStore()
        )
        self._ledger = _Ledger()
        self._cache: str | None = None
        self.delegations = Delegations()
        self.reads = ReadLedger()
        self._memory_handles: set[str] = set()

    # -- dispatch ------------------------------------------------------------------------

    def tool(self, name: str) -> Tool | None:
        found = BY_NAME.get(name)
        return found if found is not None and found in self.tools else None

    def call(
        self, name: str, arguments: Any, client: Client, consent: Consent | None = None
    ) -> dict[str, Any]:
        """Run a tool other than ``gate_resolve`` (which asks the user: :meth:`gate_begin`);
        ``consent``: the user's answer to :meth:`consent_begin`'s question, if one was put."""
        tool = self.tool(name)
        if tool is None:
            raise AgentGraphError(codes.ARGUMENTS_INVALID, f"This server offers no tool {name}")
        args = check_arguments(tool, arguments)
        method = getattr(self, f"_{name}")
        result: dict[str, Any]
        if name in ("flow_start", "flow_control"):
            result = method(args, client, consent)
        else:
            result = method(args, client)
        return result

    def shutdown(self, *, kill: bool = False) -> None:
        """Stop the Flow drivers: their Runs are recorded interrupted, resumable later
        (``kill``: the server is exiting, end the commands it started too)."""
        if self.flows is not None:
            self.flows.shutdown(kill=kill)

    # -- Runs ------------------------------------------------------------------------------

    def _ref(self, handle: str) -> RunRef:
        if self.options.runs is None:
            return handle
        return Path(self.options.runs) / "graph" / f"{handle}.json"

    def _load(self, handle: str) -> tuple[RunRef, Run]:
        ref = self._ref(handle)
        if not self.store.exists(ref):
            raise AgentGraphError(
                codes.RUN_MISSING,
                f"There is no Run {handle}: start one with run_start (handles are kept "
                + ("in the runs directory)" if self.options.runs else "for this process only)"),
            )
        return ref, self.store.load(ref)

    def _state(
        self,
        run: Run,
        program: Program,
        handle: str,
        client: Client,
        receipts: Mapping[str, Any] | None = None,
    ) -> RoutingState:
        """The Run as this caller evaluates it: the file, plus the authorities the user
        delegated to the caller's connection (never written to the file)."""
        held = self.delegations.held(client.connection, handle)
        return evaluation_input(
            run, provider=program.provider_id, authorities=held, receipts=receipts
        )

    def _served(self, run: Run) -> tuple[Served, Program]:
        served = self.providers.get(run.provider)
        assert served.program is not None
        return served, served.program

    def provider_words(self, served: Served) -> list[str]:
        words = [served.option, served.label]  # -m MANIFEST or --skill SKILL.md
        if self.options.registry:
            words += ["--registry", self.options.registry]
        return words

    def _run_ref(self, handle: str, run: Run, served: Served) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run": handle,
            "id": run.id,
            "provider": run.provider,
            "graph": run.graph,
            "entry": run.entry,
            "sequence": run.events[-1]["sequence"] if run.events else 0,
        }
        if self.options.runs is not None:
            file = os.fspath(self._ref(handle))
            out["file"] = file
            words = ["agc", "run", "status", "--state", file, *self.provider_words(served)]
            out["cli"] = shlex.join(words)
        return out

    def _observe(
        self, handle: str, ref: RunRef, run: Run, client: Client
    ) -> tuple[Run, list[dict[str, Any]]]:
        """Run the declared observers and write what changed, one event per observer."""
        if self.options.read_only or not self.config.observers:
            return run, []
        workspace = run.workspace or self.roots[0]
        env = {"AGENT_GRAPH_WORKSPACE": workspace, "AGENT_GRAPH_RUN": handle}
        observed = []
        total = len(self.config.observers)
        for done, seen in enumerate(look(self.config, workspace, env), start=1):
            if client.progress is not None:
                client.progress(done, total, f"observer {seen.observer.id}: {seen.status}")
            changed: list[str] = []
            if seen.status == "ok" and seen.updates:
                source: dict[str, Any] = {"kind": "observer", "id": seen.observer.id}
                if self.config.digest:
                    source["config"] = self.config.digest
                if seen.digest:
                    source["output"] = seen.digest

                def change(
                    doc: dict[str, Any],
                    at: str,
                    updates: Mapping[tuple[str, ...], Any] = seen.updates,
                    source: Mapping[str, Any] = source,
                ) -> dict[str, Any] | None:
                    return with_fact_paths(doc, updates, at, source)

                run, written = self.store.update(ref, change)
                if written:
                    changed = list(run.events[-1]["detail"]["paths"])
            observed.append(report(seen, changed))
        return run, observed

    def _unverified(self, evaluation: Evaluation) -> list[dict[str, Any]]:
        """Every step recorded ``completed`` whose satisfiedBy the Facts do not confirm,
        with the Facts missing and the observers that could supply them."""
        trace = evaluation.trace
        if trace is None:
            return []
        out = []
        for frame in trace.frames:
            for index, node in frame.nodes.items():
                for step in node.steps:
                    if step.kind != "unverified":
                        continue
                    missing = []
                    for check in trace.checks(step):
                        if check.passed:
                            continue
                        path = tuple(check.path.split("."))
                        item: dict[str, Any] = {"path": check.path, "check": check.kind}
                        if check.kind == "equals":
                            item["expected"] = check.expected
                        item["observers"] = [o.id for o in self.config.observers_for(path)]
                        missing.append(item)
                    key = f"{frame.prefix}{frame.graph.nodes[index].id}"
                    out.append({"stateKey": key, "missing": missing})
        return out

    def _step(
        self,
        handle: str,
        run: Run,
        served: Served,
        program: Program,
        observed: list[dict[str, Any]],
        client: Client,
        *,
        want_route: bool = True,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        state = self._state(run, program, handle, client)
        evaluation = program.evaluate(run.graph, run.entry, state, trace=True)
        doc = evaluation.to_dict()
        route = None
        if want_route and evaluation.primary is not None:
            primary = evaluation.primary.route_id
            route = program.route(run.graph, run.entry, primary, state, evaluation.revision)
        route_doc = route.to_dict() if route is not None else None
        if route_doc is not None:
            self._ledger.remember(handle, route_doc)
        unverified = self._unverified(evaluation)
        reference = self._run_ref(handle, run, served)
        out: dict[str, Any] = {
            "next": next_.step(handle, reference["sequence"], doc, route_doc, unverified)
        }
        out.update(extra or {})
        out["run"] = reference
        out["observed"] = observed
        if unverified:
            out["unverified"] = unverified
        out["evaluation"] = doc
        if route_doc is not None:
            out["route"] = route_doc
        return out

    # -- selection -------------------------------------------------------------------------

    def _select(self, args: Mapping[str, Any]) -> tuple[Served, str, str]:
        skill_name = args.get("skill")
        if skill_name is not None:
            served, skill = self.providers.skill(skill_name)
            for member, bound in (("graph", skill.graph), ("entry", skill.entry)):
                given = args.get(member)
                if given is not None and given != bound:
                    code = (
                        codes.SKILL_GRAPH_CONFLICT
                        if member == "graph"
                        else codes.SKILL_ENTRY_CONFLICT
                    )
                    raise AgentGraphError(
                        code, f"Skill {skill.name} selects {member} {bound}, not {given}"
                    )
            if args.get("provider") not in (None, served.id):
                raise AgentGraphError(
                    codes.SKILL_GRAPH_CONFLICT,
                    f"Skill {skill.name} binds Provider {served.id}, not {args['provider']}",
                )
            return served, skill.graph, skill.entry
        provider = args.get("provider")
        served = self.providers.get(provider) if provider else self.providers.only()
        program = served.program
        assert program is not None
        graph = args.get("graph")
        if graph is None:
            if len(served.skills) == 1:
                return served, served.skills[0].graph, args.get("entry", served.skills[0].entry)
            graphs = [g.id for g in program.ir.graphs]
            if len(graphs) != 1:
                raise AgentGraphError(
                    codes.GRAPH_SELECTION_MISSING,
                    f"Provider {served.id} has several Graphs: name one of {', '.join(graphs)}",
                )
            graph = graphs[0]
        entry = args.get("entry", "default")
        entrypoints = [name for name, _ in program.graph(graph).entrypoints]
        if entry not in entrypoints:
            raise AgentGraphError(
                codes.ENTRY_MISSING,
                f"Graph {graph} has no entry {entry}; it has {', '.join(entrypoints)}",
            )
        return served, graph, entry

    def _workspace(self, given: str | None) -> str:
        if given is None:
            return self.roots[0]
        if os.path.isabs(given):
            raise AgentGraphError(
                codes.ABSOLUTE_PATH_FORBIDDEN, f"workspace must be a relative path, not {given}"
            )
        for root in self.roots:
            target = os.path.realpath(os.path.join(root, given))
            if os.path.commonpath([os.path.realpath(root), target]) == os.path.realpath(root):
                if not os.path.isdir(target):
                    raise AgentGraphError(
                        codes.PATH_OUTSIDE_ROOTS, f"workspace {given} is not a directory"
                    )
                return target
        raise AgentGraphError(
            codes.PATH_OUTSIDE_ROOTS, f"workspace {given} leads out of the server's workspace"
        )

    # -- tools -----------------------------------------------------------------------------

    def _providers_list(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        runs: dict[str, Any] = {"store": "file" if self.options.runs else "memory"}
        if self.options.runs:
            runs["directory"] = os.path.join(self.options.runs, "graph")
        return {
            "next": next_.start(),
            "providers": self.providers.describe(),
            "runs": runs,
            "tools": [t.name for t in self.tools],
            "readOnly": self.options.read_only,
            "flows": bool(self.flows),
        }

    def _graph_evaluate(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        from ..vm import RoutingState

        served, graph, entry = self._select(args)
        assert served.program is not None
        state = RoutingState(
            facts=args.get("facts", {}),
            outcomes=args.get("outcomes", {}),
            authorities=tuple(args.get("authorities", ())),
        )
        doc = served.program.evaluate(graph, entry, state).to_dict()
        say = (
            "Hypothetical: nothing was recorded; to act, work on a Run (run_start, then "
            "run_status), whose Facts only the host's observers and the user's answers set."
        )
        return {"next": {"say": say, "waitsFor": "agent"}, "hypothetical": True, "evaluation": doc}

    def _run_start(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        handle = args["run"]
        served, graph, entry = self._select(args)
        assert served.program is not None
        workspace = self._workspace(args.get("workspace"))
        ref = self._ref(handle)
        if self.store.exists(ref):
            raise AgentGraphError(
                codes.RUN_TARGET_EXISTS, f"Run {handle} exists: continue it with run_status"
            )
        run = self.store.start(
            ref, provider=served.program.provider_id, graph=graph, entry=entry, workspace=workspace
        )
        if self.options.runs is None:
            self._memory_handles.add(handle)
        run, observed = self._observe(handle, ref, run, client)
        return self._step(handle, run, served, served.program, observed, client)

    def _run_status(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        handle = args["run"]
        ref, run = self._load(handle)
        served, program = self._served(run)
        observed: list[dict[str, Any]] = []
        if args.get("observe", True):
            run, observed = self._observe(handle, ref, run, client)
        return self._step(
            handle, run, served, program, observed, client, want_route=args.get("route", True)
        )

    def _graph_route(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        handle = args["run"]
        _, run = self._load(handle)
        served, program = self._served(run)
        # receipts for what the agent says it still holds, of what this server served
        receipts = self.reads.receipts(program.provider_id, args.get("inContext", ()))
        state = self._state(run, program, handle, client, receipts)
        evaluation = program.evaluate(run.graph, run.entry, state)
        route_id = args.get("routeId")
        if route_id is None:
            if evaluation.primary is None:
                doc = evaluation.to_dict()
                raise AgentGraphError(
                    codes.ROUTE_UNAVAILABLE,
                    f"Run {handle} has no available route: it is {doc['statusCode']}",
                )
            route_id = evaluation.primary.route_id
        route = program.route(run.graph, run.entry, route_id, state, args.get("revision"))
        doc = route.to_dict()
        self._ledger.remember(handle, doc)
        reference = self._run_ref(handle, run, served)
        resources = []
        for kind in ("required", "recommended"):
            for location in doc["resources"][kind]:
                item = {"id": location["id"], "required": kind == "required"}
                for member in ("kind", "mediaType", "digest", "readState"):
                    if member in location:
                        item[member] = location[member]
                resources.append(item)
        step = next_.route_step(handle, reference["sequence"], doc)
        return {"next": step, "run": reference, "route": doc, "resources": resources}

    def _run_record(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        from ..runs.keys import check_graph_state_key

        handle = args["run"]
        key, outcome, revision, sequence = (
            args["recordNode"],
            args["outcome"],
            args["revision"],
            args["sequence"],
        )
        ref, run = self._load(handle)
        served, program = self._served(run)
        check_graph_state_key(program, run.graph, key)
        gate = _gate_of(program, key)
        delegated = gate is not None and gate.authority in self.delegations.held(
            client.connection, handle
        )
        if gate is not None and not (
            outcome == "completed" and (delegated or gates.approved_since(run, gate.id, key))
        ):
            raise AgentGraphError(
                codes.RUN_RECORD_CONFLICT,
                f"{key} is a Gate: only the user decides it, through gate_resolve (after "
                "the user approved or delegated it, you may report completed once its "
                "resolution ran)",
            )
        offered = self._ledger.offered(handle, revision)
        if offered is not None and key not in offered:
            raise AgentGraphError(
                codes.RUN_RECORD_CONFLICT,
                f"{key} is not the afterAction.recordNode of a route offered at revision "
                f"{revision} (offered: {', '.join(sorted(offered))})",
            )
        detail: dict[str, Any] = {"reportedBy": "agent", "via": "mcp", "revision": revision}
        detail.update(client.provenance())
        if "note" in args:
            detail["note"] = args["note"]

        def change(doc: dict[str, Any], at: str) -> dict[str, Any]:
            last = doc["events"][-1]["sequence"] if doc["events"] else 0
            if sequence > last:
                raise AgentGraphError(
                    codes.RUN_RECORD_CONFLICT,
                    f"sequence {sequence} is ahead of Run {handle} (its last event is {last})",
                )
            later = [
                e["sequence"]
                for e in doc["events"]
                if e["sequence"] > sequence
                and e["type"] == OUTCOME_RECORDED
                and e.get("node") == key
            ]
            if later:
                raise AgentGraphError(
                    codes.RUN_RECORD_CONFLICT,
                    f"{key} received another Outcome (event {later[-1]}) after sequence "
                    f"{sequence}: someone else acted on this step",
                )
            return recorded(doc, key, outcome, at, detail)

        run, _ = self.store.update(ref, change)
        recorded_ = {"stateKey": key, "outcome": outcome, "sequence": run.events[-1]["sequence"]}
        run, observed = self._observe(handle, ref, run, client)
        extra = {"recorded": recorded_}
        return self._step(handle, run, served, program, observed, client, extra=extra)

    def _resource_read(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        from ..documents.files import read_bytes
        from ..materialize.locate import find_resource

        _, run = self._load(args["run"])
        _, program = self._served(run)
        wanted = args["id"]
        location = next((s for s in static_files(program) if s[0] == wanted), None)
        revision = None
        if location is None:
            resource = find_resource(program, wanted)  # resource-missing when it is none
            state = self._state(run, program, args["run"], client)
            location, revision = self._materialized(program, run, resource.id, state)
        rid, media, rel, digest = location
        target = Path(rel) if os.path.isabs(rel) else program.root / rel
        text = read_bytes(target, rel).decode("utf-8", "replace")
        self.reads.served(program.provider_id, rid, digest, revision)
        info = {"id": rid, "mediaType": media, "digest": digest}
        if revision is not None:
            info["revision"] = revision
        say = "Follow this resource for the step it belongs to, then report with run_record."
        return {"next": {"say": say, "waitsFor": "agent"}, "resource": info, "text": text}

    def _materialized(
        self, program: Program, run: Run, rid: str, state: RoutingState, at: str | None = None
    ) -> tuple[tuple[str, str, str, str | None], str]:
        """The view ``rid`` materialized for the Run's current revision, and that revision
        (``at``: only for that one, else ``route-revision-stale``)."""
        import tempfile

        from ..materialize import materialize

        if self._cache is None:
            self._cache = tempfile.mkdtemp(prefix="agc-mcp-views-")
        revision = program.evaluate(run.graph, run.entry, state).revision
        if at is not None and at != revision:
            raise AgentGraphError(
                codes.ROUTE_REVISION_STALE,
                f"The Run moved on (revision {revision}); the view of {at} is not served: "
                "take the new route's view",
            )
        done = materialize(
            program,
            rid,
            cache=self._cache,
            revision=revision,
            workspace=run.workspace or self.roots[0],
        )
        return (done.id, done.media_type, done.file_path, done.digest), revision

    # -- resources -------------------------------------------------------------------------

    def run_handles(self) -> list[str]:
        """The handles of the Graph Runs this server can read."""
        if self.options.runs is None:
            return sorted(self._memory_handles)
        directory = Path(self.options.runs) / "graph"
        found = directory.iterdir() if directory.is_dir() else iter(())
        return sorted(
            name.removesuffix(".json")
            for name in (p.name for p in found)
            if name.endswith(".json") and re.fullmatch(HANDLE_PATTERN, name.removesuffix(".json"))
        )

    def read_resource(self, uri: str, client: Client) -> tuple[str, str]:
        """``(text, media type)`` of any resource this server lists or links."""
        from . import run_resources as rr
        from .resources import read_with_origin

        if self.flows is not None:
            found = self.flows.read(uri)
            if found is not None:
                return found
        parsed = rr.parse(uri)
        if parsed is None:
            text, media, origin = read_with_origin(self.providers, uri)
            if origin is not None:
                self.reads.served(*origin, None)
            return text, media
        handle, rest = parsed
        _, run = self._load(handle)
        _, program = self._served(run)
        state = self._state(run, program, handle, client)
        if rest[0] != "views":
            return rr.document(rest[0], run, program, state), rr.MEMBERS[rest[0]]
        return self._view_text(program, run, state, rest[2], rest[1])

    def _view_text(
        self, program: Program, run: Run, state: RoutingState, rid: str, revision: str
    ) -> tuple[str, str]:
        from ..documents.files import read_bytes
        from ..ir import records as r
        from ..materialize.locate import find_resource

        resource = find_resource(program, rid)
        if resource.protocol not in (r.GRAPH_ACTION, r.LEGACY_VIEW):
            raise AgentGraphError(
                codes.RESOURCE_MISSING, f"Resource {rid} is not a context view this server serves"
            )
        (found, media, path, digest), at = self._materialized(program, run, rid, state, revision)
        text = read_bytes(Path(path), path).decode("utf-8", "replace")
        self.reads.served(program.provider_id, found, digest, at)
        return text, media

    # -- Gates -----------------------------------------------------------------------------

    def fallback(self, handle: str, served: Served, gate_id: str) -> str:
        """The terminal command the *user* can run to decide instead."""
        if self.options.runs is None:
            return (
                "this server keeps Runs in memory: the user can restart it with --runs DIR "
                "and decide in a terminal with agc run decide"
            )
        words = ["agc", "run", "decide", "--state", os.fspath(self._ref(handle))]
        words += [*self.provider_words(served), "--gate", gate_id]
        if self.options.config:
            words += ["--config", self.options.config]
        return shlex.join(words)

    def gate_begin(self, arguments: Any, client: Client) -> gates.Ask | dict[str, Any]:
        """What to ask the user, or the result when they cannot be asked here."""
        tool = self.tool("gate_resolve")
        if tool is None:
            raise AgentGraphError(
                codes.ARGUMENTS_INVALID, "This server offers no tool gate_resolve"
            )
        args = check_arguments(tool, arguments)
        handle = args["run"]
        _, run = self._load(handle)
        served, program = self._served(run)
        held = self.delegations.held(client.connection, handle)
        route = gates.waiting_route(program, run, args["routeId"], args["revision"], held)
        ask = gates.ask_for(
            handle, program.provider_id, route, handle, can_delegate=client.connection is not None
        )
        policy = self.config.gate(ask.gate["id"])
        if policy.via == "cli":
            why = "the host's config lets only a terminal decide this Gate"
        elif not client.elicitation:
            why = "this client cannot show the user a form (no elicitation)"
        else:
            return ask
        return self._undecided(handle, run, served, program, ask, "unavailable", why, client)

    def gate_finish(
        self,
        arguments: Any,
        ask: gates.Ask,
        action: str,
        content: Mapping[str, Any] | None,
        client: Client,
    ) -> dict[str, Any]:
        """Apply the user's answer to ``ask`` (see :mod:`.gates`)."""
        handle = ask.run
        ref, run = self._load(handle)
        served, program = self._served(run)
        decision, why = gates.check_answer(ask, action, content)
        if decision == "delegated" and client.connection is not None:
            return self._delegated(handle, ref, run, served, program, ask, client)
        if decision not in ("approved", "rejected"):
            return self._undecided(handle, run, served, program, ask, decision, why, client)
        how: dict[str, Any] = {"via": "elicitation-form", **client.provenance()}
        if self.config.digest:
            how["config"] = self.config.digest
        policy = self.config.gate(ask.gate["id"])
        held = self.delegations.held(client.connection, handle)
        run, recorded_ = gates.apply(self.store, ref, program, ask, decision, policy, how, held)
        extra: dict[str, Any] = {"decision": decision, "gate": dict(ask.gate)}
        resolution = ask.gate.get("resolutionAction")
        applies = decision == "approved" and resolution is not None and not recorded_.get("facts")
        handler = handler_of(resolution, self.config.handlers) if resolution and applies else None
        if handler is not None:
            run, handled = self._handle(handle, ref, run, ask, handler)
            extra["handled"] = handled
        run, observed = self._observe(handle, ref, run, client)
        extra["recorded"] = recorded_
        out = self._step(handle, run, served, program, observed, client, extra=extra)
        if handler is not None and extra["handled"]["status"] != "ok":
            out["next"] = {
                "say": f"The user approved Gate {ask.gate['id']}, but the host's handler "
                f"{handler.id} that applies it did not succeed ({extra['handled']['status']}): "
                "tell the user; do not apply it yourself.",
                "waitsFor": "user",
                "tool": "run_status",
                "arguments": {"run": handle},
            }
        elif applies and handler is None:
            assert resolution is not None
            out["next"] = _resolve_next(handle, ask, resolution, out)
        return out

    def _handle(
        self, handle: str, ref: RunRef, run: Run, ask: gates.Ask, handler: Handler
    ) -> tuple[Run, dict[str, Any]]:
        """Run the configured handler that applies the approved Gate; when it succeeds the
        host (not the agent) records the Gate completed, the handler and its output named."""
        workspace = run.workspace or self.roots[0]
        env = {"AGENT_GRAPH_WORKSPACE": workspace, "AGENT_GRAPH_RUN": handle}
        request = {
            "run": handle,
            "gate": ask.gate["id"],
            "decision": "approved",
            "revision": ask.revision,
        }
        handled = run_handler(handler, workspace, env, request)
        if handled.status != "ok":
            return run, handled.to_dict()
        detail: dict[str, Any] = {"reportedBy": "host", "handler": handler.id}
        if self.config.digest:
            detail["config"] = self.config.digest
        if handled.digest:
            detail["output"] = handled.digest

        def change(doc: dict[str, Any], at: str) -> dict[str, Any]:
            return recorded(doc, ask.record_node, "completed", at, detail)

        run, _ = self.store.update(ref, change)
        out = handled.to_dict()
        out["recorded"] = {"stateKey": ask.record_node, "outcome": "completed"}
        return run, out

    def _delegated(
        self,
        handle: str,
        ref: RunRef,
        run: Run,
        served: Served,
        program: Program,
        ask: gates.Ask,
        client: Client,
    ) -> dict[str, Any]:
        """The user delegated the Gate's authority to this connection: held here, nothing
        written; the route is now the Gate's delegated one, which the agent follows."""
        assert client.connection is not None
        # the same check a decision gets under the lock: the form was for this revision
        current = program.evaluate(run.graph, run.entry, self._state(run, program, handle, client))
        if current.revision != ask.revision:
            raise AgentGraphError(
                codes.ROUTE_REVISION_STALE,
                f"The Run moved on since the user was asked (revision {current.revision}, "
                f"the form showed {ask.revision}); nothing was delegated",
            )
        authority = ask.gate["authority"]
        self.delegations.grant(client.connection, handle, authority)
        run, observed = self._observe(handle, ref, run, client)
        extra = {
            "decision": "delegated",
            "gate": dict(ask.gate),
            "delegated": {"authority": authority, "heldFor": "this connection"},
        }
        return self._step(handle, run, served, program, observed, client, extra=extra)

    def gate_resume(
        self,
        arguments: Any,
        state: str,
        action: str,
        content: Mapping[str, Any] | None,
        client: Client,
    ) -> dict[str, Any]:
        """The 2026-07-28 retry: the Gate is re-resolved at the revision the form showed,
        and the sealed state must be the question this server asked for it."""
        found = self.gate_begin(arguments, client)
        if not isinstance(found, gates.Ask):
            return found
        if not found.matches(state):
            raise AgentGraphError(
                codes.ROUTE_REVISION_STALE,
                "The answer is for another question than the one this Gate asks now; "
                "nothing was recorded",
            )
        return self.gate_finish(arguments, found, action, content, client)

    def _undecided(
        self,
        handle: str,
        run: Run,
        served: Served,
        program: Program,
        ask: gates.Ask,
        decision: str,
        why: str,
        client: Client,
    ) -> dict[str, Any]:
        fallback = self.fallback(handle, served, ask.gate["id"])
        say = (
            f"Nothing changed: {why}. Do not decide it yourself; the user can decide in a "
            f"terminal: {fallback}, then call run_status."
        )
        out = self._step(handle, run, served, program, [], client, want_route=False)
        out["next"] = {
            "say": say,
            "waitsFor": "user",
            "tool": "run_status",
            "arguments": {"run": handle},
        }
        out["decision"] = decision
        out["gate"] = dict(ask.gate)
        out["fallback"] = fallback
        return out


def _resolve_next(
    handle: str, ask: gates.Ask, resolution: Mapping[str, Any], result: Mapping[str, Any]
) -> dict[str, Any]:
    """After an approval the Gate's resolution Action applies it; the agent runs it."""
    action = resolution["action"]
    plan = resolution["commandPlan"][0] if resolution["commandPlan"] else {}
    how = plan.get("command") or f"host handler {plan.get('handler', action['id'])}"
    say = (
        f"The user approved Gate {ask.gate['id']}; its resolution Action {action['id']} "
        f"applies the decision ({how}): carry it out with your own tools (this server runs "
        "no resolution), then report the Gate completed with run_record."
    )
    arguments = {
        "run": handle,
        "recordNode": ask.record_node,
        "outcome": "completed",
        "revision": result["evaluation"]["revision"],
        "sequence": result["run"]["sequence"],
    }
    return {"say": say, "waitsFor": "agent", "tool": "run_record", "arguments": arguments}


def _gate_of(program: Program, key: str) -> GateSpec | None:
    """The Gate of the node state key ``key`` names (maybe under a call path)."""
    last = key.rsplit(">", 1)[-1]
    for graph in program.ir.graphs:
        for node in graph.nodes:
            if node.gate is not None and last == f"{graph.id}/{node.id}":
                return node.gate
    return None


def _compact(event: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("seq", "type", "flow", "node", "visit", "result", "strategy", "agent", "to")
    return {k: event[k] for k in keep if k in event}
