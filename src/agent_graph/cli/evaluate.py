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

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from .context import Options, load_program, options, select
from .options import evaluation_options, provider_options, provider_words, shell_command
from .render import refuse_missing_entry, report_safely  # light: cli.run is not imported

if TYPE_CHECKING:
    from ..vm import Program
    from .state_input import EvaluationInput


def _state_words(local: dict[str, Any]) -> list[str]:
    """The state options as given (``--entry``, ``--state``, ``--facts``, ``--outcomes``,
    ``--authority``), to repeat literally in a printed command: relative paths and
    ``@file`` values mean the same from the same working directory."""
    words: list[str] = []
    for name, option in (
        ("entry", "--entry"),
        ("state_path", "--state"),
        ("facts", "--facts"),
        ("outcomes", "--outcomes"),
    ):
        if local.get(name) is not None:
            words += [option, local[name]]
    for authority in local.get("authorities") or ():
        words += ["--authority", authority]  # repeated: never swallows a following word
    return words


def _provider_words(opts: Options) -> list[str]:
    return provider_words(opts.manifest, opts.skill, opts.registry)


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


def _record_hint(key: str, record: Sequence[str] | None = None) -> list[str]:
    """How to record the outcome: the ``agc run record`` command with a Run, else the
    ``--outcomes`` member to add on the next ``evaluate``/``route``."""
    if record is not None:
        return [
            f"Record it: {shell_command(record)}",
            "  (or partial, failed, unverified, skipped … instead of completed)",
        ]
    example = json.dumps({key: "completed"}, ensure_ascii=False, separators=(",", ":"))
    return [
        f"  (e.g. --outcomes {shell_command([example])}, or partial, failed, unverified, skipped …)"
    ]


def evaluation_lines(doc: dict[str, Any], resolve: Sequence[str] | None = None) -> list[str]:
    """Human lines for an ``agent-graph.evaluation.v1`` document.

    The reference's lines (State, Next, Reason, Route, diagnostics) keep their order;
    the others are interleaved where a reader needs them. ``resolve`` is the complete
    ``agc route`` command for the primary route, printed as ``Resolve it:``.
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
        if resolve is not None:
            lines.append(f"Resolve it: {shell_command(resolve)}")
    elif doc["statusCode"] == "blocked":
        lines.append("Nothing can run now: supply the missing facts or record outcomes.")
    return lines + _diagnostic_lines(doc["diagnostics"])


def _warn_unknown_outcomes(
    fmt: str, program: Program, graph: str, outcomes: dict[str, Any]
) -> None:
    """An outcome under a key that is no state key is ignored: say so (human output only,
    on stderr; the JSON documents stay the reference's)."""
    from ..ir import codec
    from ..vm.evaluate import outcome_key_warnings

    if fmt != "human" or graph not in codec.graph_ids(program.ir.graphs):
        return
    for warning in outcome_key_warnings(program.ir, graph, outcomes):
        click.echo(f"WARNING {warning.code}: {warning.message}", err=True)


@click.command("evaluate")
@click.argument("graph", required=False)
@evaluation_options
@provider_options
@click.pass_context
def evaluate_command(ctx: click.Context, /, graph: str | None, **local: Any) -> None:
    """Which steps are legal now (never runs anything)."""
    opts = options(ctx, **local)
    binding, program = load_program(opts)
    state_words = _state_words(local)
    selected, entry = select(binding, graph, local.pop("entry"))
    data = _input(program, local)
    _warn_unknown_outcomes(opts.fmt, program, selected, data.outcomes)
    evaluation = program.evaluate(selected, entry, data.routing_state())
    doc = evaluation.to_dict()
    if opts.fmt == "human":  # --format json keeps the reference's Evaluation (exit 0)
        refuse_missing_entry(doc)
    resolve = None
    primary = doc.get("primaryRoute")
    if primary is not None:  # with a binding, route takes the route id alone
        target = [primary["routeId"]] if binding is not None else [selected, primary["routeId"]]
        resolve = [
            "agc",
            "route",
            *target,
            "--revision",
            doc["revision"],
            *state_words,
            *_provider_words(opts),
        ]
    report_safely(opts.fmt, doc, evaluation_lines(doc, resolve))


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
    lines += _record_hint(record, command)
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
    state_path = local.get("state_path")
    bound = binding is not None
    if len(targets) > (1 if bound else 2):
        raise AgentGraphError("route-arguments-invalid", "Too many route arguments")
    # with a binding the only target is the route id; else <graph> [route-id]
    padded = (None, *targets) if bound else (*targets,)
    graph_argument = padded[0] if padded else None
    route_id = padded[1] if len(padded) > 1 else None
    selected, entry = select(binding, graph_argument, local.pop("entry"))
    data = _input(program, local, local.pop("receipts"))
    _warn_unknown_outcomes(opts.fmt, program, selected, data.outcomes)
    state = data.routing_state()
    if route_id is None:
        evaluation = program.evaluate(selected, entry, state)
        if evaluation.primary is None:
            raise AgentGraphError("route-unavailable", _unavailable(evaluation.to_dict()))
        route_id = evaluation.primary.route_id
    route = program.route(selected, entry, route_id, state, local.pop("revision"))
    doc = route.to_dict()
    run = None if state_path is None else ["--state", state_path, *_provider_words(opts)]
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
