"""``agc run start|status|record|facts|authority|decide|checkpoint|resume|events`` (reference §8.3).

A Run file is the host's memory between routes (``agent_graph.runs``). Every
command that changes it is a locked, atomic read-modify-write, so concurrent
``agc run record`` processes never lose an event. ``start`` and ``status`` load the
Provider (``-m``/``--skill``); ``record`` and ``resume`` load the Run's Provider when
they can tell which it is (``-m``/``--skill`` given, or ``./provider.yaml`` when it is
the Run's); the others only touch the Run file.

Human output starts with the reference's lines and adds the command to run next,
complete: it runs as printed from the same working directory (the Provider options
repeated with absolute paths). When ``record``/``resume`` cannot tell the Provider,
the hint says what is missing instead of printing a command that would fail.
Every value is checked before the Run is written (text that is not Unicode, such
as ``"\\ud800"``, is refused there) and output is printed only after, in a form
that cannot fail: a command never reports failure for a write it made.
Beyond the reference: ``start`` refuses a Graph or Entry the Provider lacks,
``record`` refuses a key that is not a state key of the Run's Graph (by its form
always, against the Graph's nodes when the Provider is known), ``status``
(like ``evaluate``/``route --state``) refuses a Run of another Provider, and in
human output an Entry the Provider lacks is an error (``entry-missing``, exit 1);
``--format json`` keeps the reference's Evaluation document (statusCode ``error``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import click

from .. import codes
from ..selection import DEFAULT_MANIFEST
from .context import Options, load, options, select
from .options import (
    VariadicOption,
    authority_option,
    provider_options,
    provider_words,
    shell_command,
    state_option,
)
from .render import refuse_missing_entry, report_safely

if TYPE_CHECKING:
    from ..runs import FileRunStore, Run
    from ..selection import Loaded
    from ..vm import Program

#: The Provider ``agc`` loads when neither ``-m`` nor ``--skill`` is given.


def _store() -> FileRunStore:
    from ..runs import FileRunStore

    return FileRunStore()


def _absolute(path: str) -> str:
    return os.path.abspath(path)


def _given_provider(opts: Options) -> list[str]:
    """The Provider options the user gave, to repeat in a printed command (absolute)."""
    return provider_words(opts.manifest, opts.skill, opts.registry)


# -- which Provider a Run belongs to ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunProvider:
    """The Run's Provider as far as a command that only needs the Run file can tell.

    ``program`` is None when it cannot be told; ``missing`` then says why, for the hint.
    """

    provider_id: str
    program: Program | None
    missing: str | None


def run_provider(opts: Options, run: Run) -> RunProvider:
    """The Provider named by ``-m``/``--skill``, else ``./provider.yaml`` if it is the Run's.

    A Provider the user named must load and be the Run's (``run-provider-mismatch``
    otherwise); the default ``./provider.yaml`` is only used when it loads and has the
    Run's provider id, since nothing asked for it.
    """
    from ..errors import AgentGraphError
    from ..runs import ensure_provider

    if opts.skill or opts.manifest:
        program = load(opts).runnable
        ensure_provider(run, program.provider_id)
        return RunProvider(run.provider, program, None)
    if not os.path.isfile(DEFAULT_MANIFEST):
        return RunProvider(run.provider, None, f"there is no ./{DEFAULT_MANIFEST} here")
    try:
        program = load(replace(opts, registry=None)).runnable  # ./provider.yaml alone
    except AgentGraphError as error:
        return RunProvider(run.provider, None, f"./{DEFAULT_MANIFEST} does not load: {error.code}")
    if program.provider_id != run.provider:
        found = f"./{DEFAULT_MANIFEST} is Provider {program.provider_id}"
        return RunProvider(run.provider, None, found)
    return RunProvider(run.provider, program, None)


def check_graph_state_key(program: Program, run: Run, key: str) -> None:
    """``state-key-invalid`` unless ``key`` is a state key of the Run's Graph in ``program``."""
    from ..runs.keys import check_graph_state_key as check

    check(program, run.graph, key)


def _status_hint(path: str, opts: Options, known: RunProvider | None = None) -> str:
    """``Next: agc run status …``, complete, or what is missing when the Provider is unknown."""
    if known is not None and known.program is None:
        return (
            f"Next: evaluate the run with agc run status --state {shell_command([path])}, "
            f"adding -m MANIFEST or --skill SKILL.md for Provider {known.provider_id} "
            f"({known.missing})"
        )
    command = ["agc", "run", "status", "--state", path, *_given_provider(opts)]
    return f"Next: {shell_command(command)}"


def _refuse_unknown_provider(opts: Options, state: str) -> None:
    """With no Provider option and no ``./provider.yaml``, the Run says whose it is.

    Read first, so a Flow record or a damaged file is named as such; then the refusal
    names the Run's Provider and the option to add, instead of ``agc init``, which would
    start an unrelated Provider here.
    """
    if opts.manifest or opts.skill or opts.registry or os.path.isfile(DEFAULT_MANIFEST):
        return
    from ..errors import AgentGraphError, Diagnostic
    from ..runs import read_run

    run = read_run(state)
    command = shell_command(["agc", "run", "status", "--state", _absolute(state)])
    message = (
        f"Run {run.id} is of Provider {run.provider} and there is no ./{DEFAULT_MANIFEST} "
        f"here; add that Provider's manifest: {command} -m MANIFEST"
    )
    diagnostic = Diagnostic(codes.FILE_MISSING, message, path=DEFAULT_MANIFEST)
    raise AgentGraphError(codes.FILE_MISSING, message, [diagnostic])


def _check_selection(context: Loaded, graph: str, entry: str) -> None:
    """A Run of a Graph or Entry the Provider lacks could never route (the reference allows it)."""
    from ..errors import AgentGraphError

    provider = context.provider
    loaded = provider.graphs.get(graph)
    if loaded is None:
        raise AgentGraphError(codes.GRAPH_MISSING, f"Provider {provider.id} has no graph {graph}")
    entrypoints = loaded.definition.get("entrypoints") or {}
    if entry not in entrypoints:
        raise AgentGraphError(codes.ENTRY_MISSING, f"Graph {graph} has no entry {entry}")


class WorkflowGroup(click.Group):
    """A group whose ``--help`` lists its commands in the order they were added."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


@click.group("run", cls=WorkflowGroup, invoke_without_command=True)
@click.pass_context
def run_group(ctx: click.Context) -> None:
    """Keep a Run: host-owned Facts, Outcomes, authorities and an event log.

    \b
    The loop: start a Run, ask status (evaluate), route the step, let it happen,
    set the observed facts, record the outcome, ask status again.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


@run_group.command("start")
@click.argument("graph", required=False)
@state_option("Where to create the Run file (never replaces an existing file).")
@click.option("--entry", default=None, metavar="NAME", help="Graph entrypoint (default: default).")
@click.option(
    "--workspace",
    default=".",
    show_default=True,
    metavar="DIR",
    help="Directory routed Actions run in (stored absolute).",
)
@click.option("--facts", default=None, metavar="JSON|@FILE", help="Initial Facts (an object).")
@authority_option
@provider_options
@click.pass_context
def run_start_command(
    ctx: click.Context,
    /,
    graph: str | None,
    state: str,
    entry: str | None,
    workspace: str,
    facts: str | None,
    authorities: tuple[str, ...],
    **local: Any,
) -> None:
    """Create a Run of GRAPH (or of the --skill binding's Graph) with a run.started event."""
    from .state_input import json_argument, object_value

    opts = options(ctx, **local)
    context = load(opts, need="provider")
    graphs = list(context.provider.graphs)
    selected, selected_entry = select(
        context.binding, graph, entry, graphs, human=opts.fmt == "human"
    )
    _check_selection(context, selected, selected_entry)
    initial = object_value(json_argument(facts), "facts") if facts is not None else {}
    run = _store().start(
        state,
        provider=context.provider.id,
        graph=selected,
        entry=selected_entry,
        workspace=workspace,
        facts=initial,
        authorities=authorities,
    )
    path = _absolute(state)
    lines = [f"Started run {run.id}", f"State: {path}", _status_hint(path, opts)]
    report_safely(opts.fmt, run.document, lines)


def _route_words(
    run: Run, doc: dict[str, Any], path: str, opts: Options, context: Loaded
) -> list[str]:
    """``agc route …`` for the Run's primary route, complete (``route`` ignores the Run's
    Graph and Entry, so they are named; the Skill binding only when it selects them)."""
    primary = doc["primaryRoute"]
    at = [primary["routeId"], "--revision", doc["revision"]]
    binding = context.binding
    if binding is not None and (binding.binding.graph, binding.binding.entry) == (
        run.graph,
        run.entry,
    ):
        return ["agc", "route", *at, "--state", path, *_given_provider(opts)]
    words = ["agc", "route", run.graph, *at]
    if run.entry != "default":
        words += ["--entry", run.entry]
    words += ["--state", path]
    if binding is not None:  # the binding selects another Graph or Entry: name its manifest
        return [*words, "-m", str(context.provider.manifest_path)]
    return [*words, *provider_words(opts.manifest, None, opts.registry)]


def _status_lines(
    run: Run, path: str, doc: dict[str, Any], route: list[str], opts: Options
) -> list[str]:
    lines = [f"Run: {run.id}", f"State: {doc['statusCode']}"]
    primary = doc.get("primaryRoute")
    if primary is not None:
        lines += [
            f"Next: {primary['node']}",
            f"Reason: {primary['reasonCode']}",
            f"Route: {primary['routeId']}",
            f"Availability: {primary['availability']}",
        ]
        if primary.get("hint"):
            lines.append(f"Hint: {primary['hint']}")
        lines.append(f"Resolve it: {shell_command(route)}")
    elif doc.get("outcome"):
        lines.append(f"Outcome: {doc['outcome']}")
    elif doc["statusCode"] == "blocked":
        lines.append(
            "Nothing can run now: supply the missing facts (agc run facts) "
            "or record outcomes (agc run record); to see why, node by node:"
        )
        entry = [] if run.entry == "default" else ["--entry", run.entry]
        explain = ["agc", "explain", run.graph, *entry, "--state", path, *_given_provider(opts)]
        lines.append(f"Next: {shell_command(explain)}")
    lines += [f"{d['severity'].upper()} {d['code']}: {d['message']}" for d in doc["diagnostics"]]
    return lines


@run_group.command("status")
@state_option()
@provider_options
@click.pass_context
def run_status_command(ctx: click.Context, /, state: str, **local: Any) -> None:
    """Evaluate the Run's Graph and entry against the Provider, with the Run's state."""
    from ..runs import evaluation_input, read_run

    opts = options(ctx, **local)
    _refuse_unknown_provider(opts, state)
    context = load(opts, need="both")
    run = read_run(state, context.provider.id)  # whose Run, before how it is written
    evaluation = context.runnable.evaluate(run.graph, run.entry, evaluation_input(run))
    doc = evaluation.to_dict()
    if opts.fmt == "human":
        entries = [name for name, _ in context.runnable.graph(run.graph).entrypoints]
        refuse_missing_entry(doc, entries)
    path = _absolute(state)
    document = {
        "run": {"id": run.id, "state": path, "updatedAt": run.updated_at},
        "evaluation": doc,
    }
    route = _route_words(run, doc, path, opts, context) if doc.get("primaryRoute") else []
    report_safely(opts.fmt, document, _status_lines(run, path, doc, route, opts))


@run_group.command("record")
@click.argument("node", metavar="STATE-KEY")
@click.argument("outcome", metavar="OUTCOME")
@state_option()
@click.option(
    "--detail", default=None, metavar="JSON|@FILE", help="Any JSON detail kept with the outcome."
)
@provider_options
@click.pass_context
def run_record_command(
    ctx: click.Context, /, node: str, outcome: str, state: str, detail: str | None, **local: Any
) -> None:
    """Record OUTCOME for STATE-KEY: the route's afterAction.recordNode, exactly.

    \b
    OUTCOME is one of: completed, partial, failed, unverified, skipped, pending,
    blocked, waiting-user.

    \b
    STATE-KEY is checked against the Run's Graph (its nodes, and its children's
    under their call paths) when the Run's Provider is known: the -m or --skill
    given (which must be the Run's Provider), else ./provider.yaml when it loads
    and is the Run's Provider. Otherwise only its form is checked: it must start
    with the Run's Graph id and a slash (report/...), so a typo in the node id is
    recorded; the output then says so.
    """
    from ..runs import NO_DETAIL, read_run
    from ..runs.document import check_outcome, check_state_key
    from .state_input import json_argument

    opts = options(ctx, **local)
    check_outcome(outcome)
    value = json_argument(detail) if detail is not None else NO_DETAIL
    current = read_run(state)
    check_state_key(current.document, node)  # its form first: the reference's key rule
    known = run_provider(opts, current)
    if known.program is not None:
        check_graph_state_key(known.program, current, node)
    run = _store().record(state, node, outcome, value)
    lines = [
        f"Recorded {node}: {outcome}",
        "Evaluate the run again; recorded outcomes are not assumed to prove facts.",
    ]
    if known.program is None:
        lines.append(
            f"Checked only that the key starts with {run.graph}/: give -m or --skill "
            f"to check it against Graph {run.graph}'s nodes."
        )
    lines.append(_status_hint(_absolute(state), opts, known))
    report_safely(opts.fmt, run.document, lines)


@run_group.command("facts")
@state_option()
@click.option(
    "--set", "facts", required=True, metavar="JSON|@FILE", help="Facts to merge (an object)."
)
@click.option(
    "--replace", is_flag=True, default=False, help="Replace all Facts instead of merging."
)
@provider_options
@click.pass_context
def run_facts_command(
    ctx: click.Context, /, state: str, facts: str, replace: bool, **local: Any
) -> None:
    """Merge Facts into the Run (top-level members replace old ones), or --replace them."""
    from .state_input import json_argument, object_value

    opts = options(ctx, **local)
    run = _store().set_facts(state, object_value(json_argument(facts), "facts"), replace=replace)
    report_safely(opts.fmt, run.document, [f"Updated facts for run {run.id}"])


@run_group.command("authority")
@state_option()
@click.option(
    "--set",
    "authorities",
    cls=VariadicOption,
    multiple=True,
    metavar="ID...",
    help="The session authorities (replaces them; none clears them).",
)
@provider_options
@click.pass_context
def run_authority_command(
    ctx: click.Context, /, state: str, authorities: tuple[str, ...], **local: Any
) -> None:
    """Replace the Run's session authorities; without --set, clear them."""
    opts = options(ctx, **local)
    run = _store().set_authorities(state, authorities)
    listed = ", ".join(run.authorities) or "<none>"
    report_safely(opts.fmt, run.document, [f"Authorities: {listed}"])


def _is_terminal() -> bool:
    import sys

    return sys.stdin.isatty()


@run_group.command("decide")
@state_option()
@click.option(
    "--gate", "gate_id", default=None, metavar="ID", help="The Gate to decide (default: any)."
)
@click.option(
    "--config",
    default=None,
    metavar="FILE",
    help="agent-graph.mcp-config.v1 whose gates policy applies (as agc mcp serve's).",
)
@provider_options
@click.pass_context
def run_decide_command(
    ctx: click.Context, /, state: str, gate_id: str | None, config: str | None, **local: Any
) -> None:
    """Decide the Gate the Run waits on, as its user: asks on a terminal, refuses without one.

    \b
    This is the way to decide a Gate when the MCP client cannot show the user a form
    (docs/mcp.md): the same question, policy and record as agc mcp serve's gate_resolve,
    written with via cli-tty. An agent must not run it for the user.
    """
    from ..errors import AgentGraphError
    from ..mcp import gates
    from ..mcp.config import load_config
    from ..runs import evaluation_input, read_run

    opts = options(ctx, **local)
    if not _is_terminal():
        raise AgentGraphError(
            codes.TTY_REQUIRED,
            "agc run decide asks its user on a terminal and there is none: run it yourself "
            "in a terminal (a Gate is the user's decision, not a script's or an agent's)",
        )
    policy_file = load_config(config)
    program = load(opts).runnable
    run = read_run(state, program.provider_id)
    routing = evaluation_input(run)
    evaluation = program.evaluate(run.graph, run.entry, routing)
    route = None
    for candidate in evaluation.candidates:
        found = program.route(
            run.graph, run.entry, candidate.route_id, routing, evaluation.revision
        ).to_dict()
        gate = found.get("gate")
        if (
            found["statusCode"] == "waiting-user"
            and gate is not None
            and (gate_id is None or gate["id"] == gate_id)
        ):
            route = found
            break
    if route is None:
        which = f"Gate {gate_id}" if gate_id else "a Gate"
        raise AgentGraphError(codes.GATE_NOT_WAITING, f"Run {run.id} is not waiting on {which}")
    path = _absolute(state)
    ask = gates.ask_for(path, program.provider_id, route, path)
    click.echo(ask.message.replace("the agent cannot answer this for you", "you decide"))
    answer: dict[str, Any] = {
        "decision": click.prompt("Decision", type=click.Choice(list(gates.DECISIONS)))
    }
    if "confirm" in ask.schema["properties"]:
        answer["confirm"] = click.prompt(f"Type {ask.gate['id']} to confirm")
    decision, why = gates.check_answer(ask, "accept", answer)
    if decision not in ("approved", "rejected"):
        raise AgentGraphError(codes.GATE_CONFIRMATION_MISMATCH, f"Nothing recorded: {why}")
    how: dict[str, Any] = {"via": "cli-tty"}
    if policy_file.digest:
        how["config"] = policy_file.digest
    policy = policy_file.gate(ask.gate["id"])
    done, recorded_ = gates.apply(_store(), state, program, ask, decision, policy, how)
    lines = [f"Gate {ask.gate['id']}: {decision}", _status_hint(path, opts)]
    report_safely(opts.fmt, {"run": done.id, "recorded": recorded_}, lines)


@run_group.command("checkpoint")
@state_option()
@click.option(
    "--to", "target", required=True, metavar="PATH", help="The checkpoint file to create."
)
@provider_options
@click.pass_context
def run_checkpoint_command(ctx: click.Context, /, state: str, target: str, **local: Any) -> None:
    """Copy the Run, without its authorities, to a new file (run.checkpointed in both)."""
    opts = options(ctx, **local)
    _store().checkpoint(state, target)
    document = {"run": _absolute(state), "checkpoint": _absolute(target)}
    report_safely(opts.fmt, document, [f"Checkpoint: {document['checkpoint']}"])


@run_group.command("resume")
@click.argument("checkpoint", metavar="CHECKPOINT")
@state_option("The new Run file to create (never replaces an existing file).")
@provider_options
@click.pass_context
def run_resume_command(ctx: click.Context, /, checkpoint: str, state: str, **local: Any) -> None:
    """Continue from CHECKPOINT in a new Run file: same id, authorities cleared.

    The Provider (-m or --skill, which must be the checkpoint's Provider, else
    ./provider.yaml when it is) only serves the printed next command.
    """
    from ..runs import read_run

    opts = options(ctx, **local)
    known = run_provider(opts, read_run(checkpoint))  # before anything is written
    run = _store().resume(checkpoint, state)
    path = _absolute(state)
    lines = [f"Resumed run {run.id} at {path}", _status_hint(path, opts, known)]
    report_safely(opts.fmt, run.document, lines)


@run_group.command("events")
@state_option()
@provider_options
@click.pass_context
def run_events_command(ctx: click.Context, /, state: str, **local: Any) -> None:
    """The Run's event log, oldest first: sequence, time, type, state key and outcome."""
    from ..runs import read_run

    opts = options(ctx, **local)
    run = read_run(state)
    lines = []
    for event in run.events:
        node = f" {event['node']}" if event.get("node") else ""
        outcome = f" {event['outcome']}" if event.get("outcome") else ""
        lines.append(f"{event['sequence']} {event['at']} {event['type']}{node}{outcome}")
    report_safely(opts.fmt, {"run": run.id, "events": run.events}, lines)
