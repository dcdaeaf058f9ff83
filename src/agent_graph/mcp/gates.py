"""How a Gate is decided: only by the user, bound to the exact state they were shown.

The agent can only ask (``gate_resolve``). The server re-resolves the route at the
revision the agent names, shows the user a form (MCP form elicitation; ``agc run decide``
asks the same on a terminal) and applies the answer in one locked write, re-checking
under the lock that the Run still has that revision: a decision never lands on a state
the user did not see.

The form is never empty and never pre-filled: ``decision`` is required and has no
default, so a client that accepts empty forms on its own cannot approve anything, and a
Gate that is not delegatable also asks the user to type its id. An approval records the
Facts the host's policy names (``gates.<id>.onApprove.facts`` in the config), by default
the ``equals`` checks of the Gate's own ``satisfiedBy`` (``report.approved = true``);
``exists`` checks are never invented, and a Gate with a resolution Action gets no Facts
by default (the Action applies the decision; the agent then reports the Gate's Outcome).
A rejection records the Gate's Outcome ``failed``. The Run holds what the user decided,
with a ``gate.decided`` event saying how, through which client and under which config.
No authority is ever written: a delegatable Gate asked on a connection also offers
``delegate``, which grants its authority to that connection in memory only
(:mod:`.delegation`) and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .. import codes
from ..canonical import digest_bytes
from ..errors import AgentGraphError
from ..runs import Run, evaluation_input
from ..runs.document import GATE_DECIDED, recorded, with_event, with_fact_paths

if TYPE_CHECKING:
    from ..ir.records import Gate as GateSpec
    from ..runs import RunStore
    from ..runs.store import RunRef
    from ..vm import Program
    from .config import GatePolicy

DECISIONS: Final = ("approve", "reject")
DELEGATE: Final = "delegate"


def approved_since(run: Run, gate_id: str, key: str) -> bool:
    """Whether the user approved Gate ``gate_id`` after ``key``'s latest Outcome: the one
    case in which the agent may report the Gate's Outcome (its resolution Action ran)."""
    for event in reversed(run.events):
        if event["type"] == GATE_DECIDED and event.get("detail", {}).get("gate") == gate_id:
            return bool(event["detail"].get("decision") == "approved")
        if event.get("node") == key:
            return False
    return False


@dataclass(frozen=True, slots=True)
class Ask:
    """The question put to the user, and what it is bound to."""

    run: str
    route_id: str
    revision: str
    gate: Mapping[str, Any]
    graph: str  # the Gate node's own Graph (a called one inside a subgraph)
    node: str
    record_node: str
    message: str
    schema: Mapping[str, Any]

    @property
    def digest(self) -> str:
        text = json.dumps([self.message, self.schema], sort_keys=True, ensure_ascii=False)
        return digest_bytes(text.encode())

    def state(self) -> str:
        """The plaintext of the 2026-07-28 ``requestState`` (the SDK seals it)."""
        bound = {
            "run": self.run,
            "routeId": self.route_id,
            "revision": self.revision,
            "gate": self.gate["id"],
            "form": self.digest,
        }
        return json.dumps(bound, sort_keys=True)

    def matches(self, state: str) -> bool:
        return state == self.state()


def waiting_route(
    program: Program, run: Run, route_id: str, revision: str, authorities: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The Gate route ``route_id`` at ``revision``: ``route-revision-stale`` /
    ``route-stale`` when the Run moved on, ``gate-not-waiting`` when it is no Gate
    (``authorities``: the ones delegated to the asking connection)."""
    state = evaluation_input(run, provider=program.provider_id, authorities=authorities)
    route = program.route(run.graph, run.entry, route_id, state, revision).to_dict()
    gate = route.get("gate")
    if route["statusCode"] != "waiting-user" or gate is None:
        raise AgentGraphError(
            codes.GATE_NOT_WAITING,
            f"Route {route_id} ({route['node']}) is not a Gate waiting for the user",
        )
    return route


def ask_for(
    handle: str,
    provider: str,
    route: Mapping[str, Any],
    run_label: str,
    *,
    can_delegate: bool = False,
) -> Ask:
    """The form; ``can_delegate``: the caller has a connection that could hold the
    Gate's authority, so a delegatable Gate also offers ``delegate``."""
    gate = route["gate"]
    authority = gate.get("authority")
    choices = list(DECISIONS)
    if can_delegate and authority and gate.get("delegatable") is True:
        choices.append(DELEGATE)
    lines = [f"[{provider} · {route['graph']} · {route['node']}] {gate['prompt']}"]
    if authority:
        lines.append(f"Authority: {authority}")
    lines.append(f"Run {run_label}, revision {route['revision'][:19]}…")
    lines.append("Choose approve or reject; the agent cannot answer this for you.")
    if DELEGATE in choices:
        lines.append(
            f"delegate: let this client connection resolve {authority} Gates of this Run "
            "itself until it disconnects (kept in the server's memory, never in the Run)."
        )
    properties: dict[str, Any] = {
        "decision": {
            "type": "string",
            "title": "Decision",
            "description": f"{' or '.join(choices)}: {gate['prompt']}",
            "enum": choices,
        }
    }
    required = ["decision"]
    if gate.get("delegatable") is False:
        properties["confirm"] = {
            "type": "string",
            "title": f"Type {gate['id']} to confirm",
            "minLength": 1,
        }
        required.append("confirm")
    schema = {"type": "object", "properties": properties, "required": required}
    record = route["afterAction"].get("recordNode") or f"{route['graph']}/{route['node']}"
    return Ask(
        handle,
        route["routeId"],
        route["revision"],
        gate,
        route["graph"],
        route["node"],
        record,
        "\n".join(lines),
        schema,
    )


def check_answer(ask: Ask, action: str, content: Mapping[str, Any] | None) -> tuple[str, str]:
    """``(decision, why)``: ``approved``/``rejected``/``delegated`` for a complete answer,
    ``declined`` / ``cancelled`` as the user said, ``invalid`` for an accept that decides
    nothing or chooses what the form did not offer."""
    if action == "decline":
        return "declined", "the user declined to decide"
    if action == "cancel":
        return "cancelled", "the request was dismissed without a decision"
    if action != "accept":
        return "unavailable", "the client could not show the user the form"
    given = dict(content or {})
    choice = given.get("decision")
    if choice not in ask.schema["properties"]["decision"]["enum"]:
        return "invalid", "the form came back without a decision (approve or reject)"
    if "confirm" in ask.schema["properties"] and given.get("confirm") != ask.gate["id"]:
        return "invalid", f"the confirmation was not the Gate id {ask.gate['id']}, typed exactly"
    decided = {"approve": "approved", "reject": "rejected", DELEGATE: "delegated"}[str(choice)]
    return decided, f"the user chose {choice}"


def approval_facts(program: Program, ask: Ask, policy: GatePolicy) -> dict[tuple[str, ...], Any]:
    """What an approval records: the policy's Facts, else the Gate's ``equals`` checks,
    except for a Gate whose resolution Action applies the decision: its effect is the
    Action's to produce, never this host's to invent."""
    if policy.on_approve is not None:
        return dict(policy.on_approve)
    if ask.gate.get("resolutionAction") is not None:
        return {}
    from ..vm.trace import evaluated_checks

    node = next(n for n in program.graph(ask.graph).nodes if n.id == ask.node)
    checks = evaluated_checks({}, node.satisfied_by or ())
    return {tuple(c.path.split(".")): c.expected for c in checks if c.kind == "equals"}


def apply(
    store: RunStore,
    ref: RunRef,
    program: Program,
    ask: Ask,
    decision: str,
    policy: GatePolicy,
    how: Mapping[str, Any],
    authorities: tuple[str, ...] = (),
) -> tuple[Run, dict[str, Any]]:
    """Write an approved or rejected decision in one locked commit; ``recorded`` says what.

    ``how`` is the provenance (``via``, ``client``, ``protocol``, ``config``). Refused with
    ``route-revision-stale`` when the stored Run no longer has the revision shown.
    """
    facts = approval_facts(program, ask, policy) if decision == "approved" else {}
    recorded_: dict[str, Any] = {"decision": decision}

    def change(document: dict[str, Any], at: str) -> dict[str, Any]:
        run = Run(document)
        state = evaluation_input(run, provider=program.provider_id, authorities=authorities)
        current = program.evaluate(run.graph, run.entry, state).revision
        if current != ask.revision:
            raise AgentGraphError(
                codes.ROUTE_REVISION_STALE,
                f"The Run moved on since the user was asked (revision {current}, the form "
                f"showed {ask.revision}); nothing was recorded",
            )
        detail = {
            "gate": ask.gate["id"],
            "decision": decision,
            "routeId": ask.route_id,
            "revision": ask.revision,
            "form": ask.digest,
            **how,
        }
        out = with_event(document, at, GATE_DECIDED, detail)
        source = {"kind": "user", "gate": ask.gate["id"], **how}
        if decision == "approved":
            changed = with_fact_paths(out, facts, at, source)
            recorded_["facts"] = sorted(".".join(p) for p in facts)
            return changed if changed is not None else out
        detail_failed = {"by": "user", "gate": ask.gate["id"], **how}
        recorded_["outcome"] = "failed"
        recorded_["stateKey"] = ask.record_node
        return recorded(out, ask.record_node, "failed", at, detail_failed)

    run, _ = store.update(ref, change)
    recorded_["sequence"] = run.events[-1]["sequence"]
    return run, recorded_


def gate_of(program: Program, key: str) -> GateSpec | None:
    """The Gate of the node state key ``key`` names (maybe under a call path)."""
    last = key.rsplit(">", 1)[-1]
    for graph in program.ir.graphs:
        for node in graph.nodes:
            if node.gate is not None and last == f"{graph.id}/{node.id}":
                return node.gate
    return None
