"""The Gate tool: ask the user (:mod:`.gates`), apply the answer, delegate, run handlers."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import codes
from ..errors import AgentGraphError
from ..runs import Run
from ..runs.document import recorded
from . import gates
from .config import Handler
from .handlers import handler_of, run_handler
from .providers import Served
from .run_tools import RunTools
from .serve_options import Client
from .tools import check_arguments

if TYPE_CHECKING:
    from ..runs.store import RunRef
    from ..vm import Program


class GateTools(RunTools):
    """``gate_resolve`` in its steps (the SDK adapter asks the user between them)."""

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
