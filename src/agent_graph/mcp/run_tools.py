"""The Graph Run tools: Providers, Runs, observers, evaluation and routes.

Every tool is a synchronous method taking the checked arguments and returning the
result object (``next`` first), or raising :class:`~agent_graph.errors.AgentGraphError`,
which :mod:`.results` turns into a tool error. Runs are named by handle:
``DIR/graph/<handle>.json`` under ``--runs DIR`` (the files ``agc run`` reads and writes,
under the same locks), else kept in memory for the life of the process.
"""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .. import codes
from ..errors import AgentGraphError
from ..runs import FileRunStore, MemoryRunStore, Run, evaluation_input
from ..runs.document import OUTCOME_RECORDED, recorded, with_fact_paths
from . import gates
from . import next as next_
from .config import load_config
from .delegation import Delegations
from .flow_tools import FlowTools
from .flows import (
    Consent,
    FlowHost,
)
from .observers import look, report
from .providers import ProviderSet, Served
from .run_resources import ReadLedger
from .serve_options import Client, ServeOptions
from .tools import BY_NAME, Tool, check_arguments, select_tools

if TYPE_CHECKING:
    from ..runs import RunStore
    from ..runs.store import RunRef
    from ..vm import Evaluation, Program, RoutingState


#: How long a call waits for a Run another process holds before ``run-locked``: well
#: under the 60 s clients allow a tool call.
LOCK_TIMEOUT_S: Final = 10.0


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


class RunTools(FlowTools):
    """The server's state and the Graph Run tools: Runs, observers, evaluation, routes."""

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
        gate = gates.gate_of(program, key)
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
