"""``agc evaluate`` and ``agc route`` (reference §8.1–8.3).

Human output starts with the reference's lines, in its order, and adds what a person
needs to act: the hint, the step's label, the command or handler with its working
directory, every resource with its read state, the gate question and who may answer
it, and how to record the outcome afterwards. The commands it prints run as printed
from the same working directory: ``Resolve it: agc route …`` repeats the state options
literally (``--entry``, ``--state``, ``--facts``, ``--outcomes``, ``--authority``, quoted
with shlex) and the Provider options as absolute paths (no graph argument under
``--skill``); with a Run, ``Record it: agc run record …`` names the step's state key.

An Entry the Graph lacks is an error of the command in human output (``entry-missing``,
exit 1, as ``run start`` has it); ``--format json`` keeps the reference's Evaluation
document with statusCode ``error`` (exit 0). ``route`` refuses it as the reference does
(``route-unavailable``), saying why, as it does for a complete or blocked Graph.

``--authority`` is variadic as in the reference (commander's ``<id...>``): it takes
every following word up to the next option, so ``evaluate --authority a b report``
reads three authorities and no graph; it may also be repeated
(``--authority a --authority b``). Put the graph before ``--authority``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from .. import codes
from .context import load, options, select
from .evaluation_report import (
    diagnostic_lines,
    input_of,
    provider_words_of,
    record_hint,
    report_evaluation,
    warn_unknown_outcomes,
)
from .options import evaluation_options, provider_options
from .render import report_safely  # light: cli.run is not imported


@click.command("evaluate")
@click.argument("graph", required=False)
@evaluation_options
@provider_options
@click.pass_context
def evaluate_command(ctx: click.Context, /, graph: str | None, **local: Any) -> None:
    """Which steps are legal now (never runs anything)."""
    opts = options(ctx, **local)
    loaded = load(opts)
    binding, program = loaded.binding, loaded.runnable
    report_evaluation(opts, binding, program, graph, local)


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


def route_lines(doc: dict[str, Any], run: Sequence[str] | None = None) -> list[str]:
    """Human lines for an ``agent-graph.route.v1`` document.

    The reference's lines (Next, Reason, Command/Host handler and Working directory,
    Required, Recommended, Gate, After action) keep their order; the others are
    interleaved where a reader needs them. ``run`` holds the options that name the
    Run (``--state`` and the Provider's), for the ``agc run record`` command.
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
    command = None if run is None else ["agc", "run", "record", record, "completed", *run]
    lines += record_hint(record, command)
    return lines + diagnostic_lines(doc["diagnostics"])


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
    loaded = load(opts)
    binding, program = loaded.binding, loaded.runnable
    state_path = local.get("state_path")
    bound = binding is not None
    if len(targets) > (1 if bound else 2):
        raise AgentGraphError(codes.ROUTE_ARGUMENTS_INVALID, "Too many route arguments")
    # with a binding the only target is the route id; else <graph> [route-id]
    padded = (None, *targets) if bound else (*targets,)
    graph_argument = padded[0] if padded else None
    route_id = padded[1] if len(padded) > 1 else None
    selected, entry = select(
        binding,
        graph_argument,
        local.pop("entry"),
        program.graph_ids,
        human=opts.fmt == "human",
    )
    data = input_of(program, local, local.pop("receipts"))
    warn_unknown_outcomes(opts.fmt, program, selected, data)
    state = data.routing_state()
    if route_id is None:
        evaluation = program.evaluate(selected, entry, state)
        if evaluation.primary is None:
            raise AgentGraphError(codes.ROUTE_UNAVAILABLE, _unavailable(evaluation.to_dict()))
        route_id = evaluation.primary.route_id
    route = program.route(selected, entry, route_id, state, local.pop("revision"))
    doc = route.to_dict()
    run = None if state_path is None else ["--state", state_path, *provider_words_of(opts)]
    report_safely(opts.fmt, doc, route_lines(doc, run))


def _unavailable(doc: dict[str, Any]) -> str:
    """Why there is no route: the reference's message, then the Evaluation's state."""
    message = f"Graph {doc['graph']} has no available route"
    if doc["statusCode"] == "complete":
        return f"{message}: it is complete, with outcome {doc['outcome']}"
    found = [d for d in doc["diagnostics"] if d["severity"] == "error"] or doc["diagnostics"]
    why = f" ({found[0]['code']}: {found[0]['message']})" if found else ""
    if doc["statusCode"] == "error":
        return f"{message}: its evaluation is an error{why}"
    return f"{message}: it is {doc['statusCode']}{why}"
