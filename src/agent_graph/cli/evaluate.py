"""``agc evaluate`` and ``agc route`` (reference §8.1–8.3).

Human output starts with the reference's lines, in its order, and adds what a person
needs to act: the hint, the step's label, the command or handler with its working
directory, every resource with its read state, the gate question and who may answer
it, and how to record the outcome afterwards.

``--authority`` is variadic as in the reference (commander's ``<id...>``): it takes
every following word up to the next option, so ``evaluate --authority a b report``
reads three authorities and no graph; it may also be repeated
(``--authority a --authority b``). Put the graph before ``--authority``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from .context import load_program, options, select
from .options import evaluation_options, provider_options
from .render import emit

if TYPE_CHECKING:
    from ..vm import Program
    from .state_input import EvaluationInput


def _input(program: Program, local: dict[str, Any], receipts: str | None = None) -> EvaluationInput:
    from .state_input import evaluation_input

    return evaluation_input(
        state=local.pop("state_path"),
        facts=local.pop("facts"),
        outcomes=local.pop("outcomes"),
        authorities=local.pop("authorities") or (),
        receipts=receipts,
        provider_id=program.provider_id,
    )


# -- evaluate -----------------------------------------------------------------------------


def _diagnostic_lines(diagnostics: Sequence[dict[str, Any]]) -> list[str]:
    return [f"{d['severity'].upper()} {d['code']}: {d['message']}" for d in diagnostics]


def _record_hint(key: str) -> str:
    example = json.dumps({key: "completed"}, ensure_ascii=False, separators=(",", ":"))
    return f"  (e.g. --outcomes '{example}', or partial, failed, unverified, skipped …)"


def evaluation_lines(doc: dict[str, Any], run: str | None = None) -> list[str]:
    """Human lines for an ``agent-graph.evaluation.v1`` document.

    The reference's lines (State, Next, Reason, Route, diagnostics) keep their order;
    the others are interleaved where a reader needs them.
    """
    lines = [f"State: {doc['statusCode']}"]
    if doc.get("outcome"):
        lines.append(f"Outcome: {doc['outcome']}")
    primary = doc.get("primaryRoute")
    if primary is not None:
        lines.append(f"Next: {primary['node']} ({primary['availability']})")
        where = f" (in graph {primary['graph']})" if primary["graph"] != doc["graph"] else ""
        if primary["label"] != primary["node"] or where:
            lines.append(f"Step: {primary['label']}{where}")
        lines.append(f"Reason: {primary['reasonCode']}")
        if primary.get("hint"):
            lines.append(f"Hint: {primary['hint']}")
        lines.append(f"Route: {primary['routeId']}")
    lines.append(f"Revision: {doc['revision']} ({doc['graph']}#{doc['entry']})")
    if primary is not None:
        if primary["availability"] == "requires-user":
            lines.append("This step waits for a user's decision: ask them before going on.")
        lines += [
            f"Also possible: {alt['node']} ({alt['availability']}) {alt['routeId']}"
            for alt in doc["alternativeRoutes"]
        ]
        state = f" --state {run}" if run else ""
        lines.append(
            f"Resolve it: agc route {doc['graph']} {primary['routeId']} "
            f"--revision {doc['revision']}{state} (with the same state options)"
        )
    elif doc["statusCode"] == "blocked":
        lines.append("Nothing can run now: supply the missing facts or record outcomes.")
    return lines + _diagnostic_lines(doc["diagnostics"])


@click.command("evaluate")
@click.argument("graph", required=False)
@evaluation_options
@provider_options
@click.pass_context
def evaluate_command(ctx: click.Context, /, graph: str | None, **local: Any) -> None:
    """Which steps are legal now (never runs anything)."""
    opts = options(ctx, **local)
    binding, program = load_program(opts)
    selected, entry = select(binding, graph, local.pop("entry"))
    data = _input(program, local)
    evaluation = program.evaluate(selected, entry, data.routing_state())
    doc = evaluation.to_dict()
    emit(opts.fmt, doc, evaluation_lines(doc, str(data.run.path) if data.run else None))


# -- route --------------------------------------------------------------------------------


def _location_text(location: dict[str, Any]) -> str:
    if "filePath" in location:
        return str(location["filePath"])
    materialize = location.get("materialize") or {}
    if "handler" in materialize:
        return f"materialize {location['id']} (host handler {materialize['handler']})"
    return f"materialize {location['id']}"


def _plan_lines(plan: Sequence[dict[str, Any]], indent: str = "") -> list[str]:
    lines = []
    for item in plan:
        step = (
            f"Command: {item['command']}"
            if "command" in item
            else f"Host handler: {item['handler']}"
        )
        lines += [f"{indent}{step}", f"{indent}Working directory: {item['workingDirectory']}"]
    return lines


def _action_lines(
    action: dict[str, Any], indent: str = "", skip: frozenset[str] | set[str] = frozenset()
) -> list[str]:
    lines = [f"{indent}Action: {action['id']} ({action['runner']}, effect {action['effect']})"]
    for key, label in (
        ("skill", "Skill"),
        ("inputSchema", "Input schema"),
        ("outputSchema", "Output schema"),
    ):
        location = action.get(key)
        if location is not None and location["id"] not in skip:
            lines.append(
                f"{indent}{label} [{location.get('readState', '-')}]: {_location_text(location)}"
            )
    return lines


def _gate_lines(gate: dict[str, Any]) -> list[str]:
    who = f"authority {gate['authority']}" if gate.get("authority") else "no authority"
    if gate["resolution"] == "session-authority":
        lines = [f"Resolution: session-authority ({who} is held by this session)"]
    else:
        lines = [f"Resolution: user ({who}): ask the user; do not resolve it yourself"]
    for key, label in (("inspectionAction", "Inspection"), ("resolutionAction", "Resolution")):
        step = gate.get(key)
        if step is not None:
            lines.append(f"{label} action:")
            lines += _action_lines(step["action"], "  ")
            lines += _plan_lines(step["commandPlan"], "  ")
    return lines


def route_lines(doc: dict[str, Any]) -> list[str]:
    """Human lines for an ``agent-graph.route.v1`` document.

    The reference's lines (Next, Reason, Command/Host handler and Working directory,
    Required, Recommended, Gate, After action) keep their order; the others are
    interleaved where a reader needs them.
    """
    resources = doc["resources"]
    listed = {r["id"] for r in (*resources["required"], *resources["recommended"])}
    gate = doc.get("gate")
    record = doc["afterAction"].get("recordNode") or doc["node"]
    lines = [f"Next: {doc['node']} ({doc['availability']})"]
    if doc["callPath"]:
        lines.append(f"Graph: {doc['graph']} (called through {' > '.join(doc['callPath'])})")
    lines.append(f"Reason: {doc['reasonCode']}")
    if doc.get("hint"):
        lines.append(f"Hint: {doc['hint']}")
    lines.append(f"Route: {doc['routeId']} at revision {doc['revision']}")
    action = doc.get("action")
    if action is not None:
        lines += _action_lines(action, skip=listed)
        if action["runner"] == "agent":
            lines.append("The agent does this step itself, following its Skill.")
    lines += _plan_lines(doc["commandPlan"])
    lines += [
        f"Required [{r.get('readState', '-')}]: {_location_text(r)}" for r in resources["required"]
    ]
    lines += [
        f"Recommended [{r.get('readState', '-')}]: {_location_text(r)}"
        for r in resources["recommended"]
    ]
    unread = [
        r["id"]
        for r in (*resources["required"], *resources["recommended"])
        if r.get("readState") == "read-required"
    ]
    if unread:
        lines.append(f"Read before acting: {', '.join(unread)}")
    if gate is not None:
        lines.append(f"Gate: {gate['prompt']}")
        lines += _gate_lines(gate)
    lines.append(f"After action: record {record}, then evaluate again")
    lines.append(_record_hint(record))
    return lines + _diagnostic_lines(doc["diagnostics"])


@click.command("route")
@click.argument("targets", nargs=-1, metavar="[GRAPH] [ROUTE-ID]")
@evaluation_options
@click.option(
    "--revision",
    default=None,
    metavar="DIGEST",
    help="Refuse unless the state still has this revision (from evaluate).",
)
@click.option(
    "--resource-receipts",
    "receipts",
    default=None,
    metavar="JSON|@FILE",
    help="agent-graph.resource-read-receipts.v1 set of resources already read.",
)
@provider_options
@click.pass_context
def route_command(ctx: click.Context, /, targets: tuple[str, ...], **local: Any) -> None:
    """Resolve a route into what to run, read and record: <graph> [route-id]."""
    from ..errors import AgentGraphError

    opts = options(ctx, **local)
    binding, program = load_program(opts)
    bound = binding is not None
    if len(targets) > (1 if bound else 2):
        raise AgentGraphError("route-arguments-invalid", "Too many route arguments")
    # with a binding the only target is the route id; else <graph> [route-id]
    padded = (None, *targets) if bound else (*targets,)
    graph_argument = padded[0] if padded else None
    route_id = padded[1] if len(padded) > 1 else None
    selected, entry = select(binding, graph_argument, local.pop("entry"))
    data = _input(program, local, local.pop("receipts"))
    state = data.routing_state()
    if route_id is None:
        primary = program.evaluate(selected, entry, state).primary
        if primary is None:
            raise AgentGraphError("route-unavailable", f"Graph {selected} has no available route")
        route_id = primary.route_id
    route = program.route(selected, entry, route_id, state, local.pop("revision"))
    doc = route.to_dict()
    emit(opts.fmt, doc, route_lines(doc))
