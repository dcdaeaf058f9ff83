"""``agc run start|status|record|facts|authority|checkpoint|resume|events`` (reference §8.3).

A Run file is the host's memory between routes (``agent_graph.runs``). Every
command that changes it is a locked, atomic read-modify-write, so concurrent
``agc run record`` processes never lose an event. ``start`` and ``status`` load the
Provider (``-m``/``--skill``); the others only touch the Run file.

Human output starts with the reference's lines and adds the command to run next.
Every value is checked before the Run is written (text that is not Unicode, such
as ``"\\ud800"``, is refused there) and output is printed only after, in a form
that cannot fail: a command never reports failure for a write it made.
Beyond the reference: ``start`` refuses a Graph or Entry the Provider lacks,
``record`` refuses a key that is not a state key of the Run's Graph, and ``status``
(like ``evaluate``/``route --state``) refuses a Run of another Provider.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from .context import Options, ProviderContext, compile_context, load_context, options, select
from .options import VariadicOption, provider_options, state_option
from .render import emit

if TYPE_CHECKING:
    from ..runs import FileRunStore


def _store() -> FileRunStore:
    from ..runs import FileRunStore

    return FileRunStore()


def _report(fmt: str, document: dict[str, Any], lines: Sequence[str]) -> None:
    """Print a command's result; text the output cannot encode is escaped, never an error.

    A Run holds Unicode text only (checked before it is written), but a path on the
    command line may hold bytes that were not UTF-8, and standard output may not be
    UTF-8: after a write has happened, the result is printed with escapes instead
    (``\\udcff``, ``\\u00fc`` in JSON) rather than reported as a failure.
    """
    try:
        emit(fmt, document, lines)
    except UnicodeEncodeError:  # nothing was written: the text is encoded before it goes out
        if fmt == "json":
            text = json.dumps(document, ensure_ascii=True, separators=(",", ":"))
        else:
            text = "\n".join(lines).encode("ascii", "backslashreplace").decode("ascii")
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def _absolute(path: str) -> str:
    return os.path.abspath(path)


def _provider_args(opts: Options) -> str:
    """The Provider options to repeat in a suggested command (absolute paths)."""
    args: list[str] = []
    if opts.skill:
        args += ["--skill", _absolute(opts.skill)]
    elif opts.manifest:
        args += ["-m", _absolute(opts.manifest)]
    if opts.registry:
        args += ["--registry", _absolute(opts.registry)]
    return "".join(f" {shlex.quote(arg)}" for arg in args)


def _status_hint(state: str, opts: Options) -> str:
    return f"Next: agc run status --state {shlex.quote(state)}{_provider_args(opts)}"


def _check_selection(context: ProviderContext, graph: str, entry: str) -> None:
    """A Run of a Graph or Entry the Provider lacks could never route (the reference allows it)."""
    from ..errors import AgentGraphError

    provider = context.provider
    loaded = provider.graphs.get(graph)
    if loaded is None:
        raise AgentGraphError("graph-missing", f"Provider {provider.id} has no graph {graph}")
    entrypoints = loaded.definition.get("entrypoints") or {}
    if entry not in entrypoints:
        raise AgentGraphError("entry-missing", f"Graph {graph} has no entry {entry}")


@click.group("run", invoke_without_command=True)
@click.pass_context
def run_group(ctx: click.Context) -> None:
    """Keep a Run: host-owned Facts, Outcomes, authorities and an event log."""
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
@click.option(
    "--authority",
    "authorities",
    cls=VariadicOption,
    multiple=True,
    metavar="ID...",
    help="Session authorities (takes the following words; repeatable).",
)
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
    context = load_context(opts)
    selected, selected_entry = select(context.binding, graph, entry)
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
    _report(opts.fmt, run.document, lines)


def _status_lines(run_id: str, path: str, doc: dict[str, Any], opts: Options) -> list[str]:
    lines = [f"Run: {run_id}", f"State: {doc['statusCode']}"]
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
        lines.append(
            f"Resolve it: agc route {primary['routeId']} --revision {doc['revision']} "
            f"--state {shlex.quote(path)}{_provider_args(opts)}"
            if opts.skill
            else f"Resolve it: agc route {doc['graph']} {primary['routeId']} "
            f"--revision {doc['revision']} --state {shlex.quote(path)}{_provider_args(opts)}"
        )
    elif doc.get("outcome"):
        lines.append(f"Outcome: {doc['outcome']}")
    elif doc["statusCode"] == "blocked":
        lines.append(
            "Nothing can run now: supply the missing facts (agc run facts) "
            "or record outcomes (agc run record)."
        )
    lines += [f"{d['severity'].upper()} {d['code']}: {d['message']}" for d in doc["diagnostics"]]
    return lines


@run_group.command("status")
@state_option()
@provider_options
@click.pass_context
def run_status_command(ctx: click.Context, /, state: str, **local: Any) -> None:
    """Evaluate the Run's Graph and entry against the Provider, with the Run's state."""
    from ..runs import ensure_provider, evaluation_input, read_run

    opts = options(ctx, **local)
    context = load_context(opts)
    run = read_run(state)
    ensure_provider(run, context.provider.id)
    evaluation = compile_context(context).evaluate(run.graph, run.entry, evaluation_input(run))
    doc = evaluation.to_dict()
    path = _absolute(state)
    document = {
        "run": {"id": run.id, "state": path, "updatedAt": run.updated_at},
        "evaluation": doc,
    }
    _report(opts.fmt, document, _status_lines(run.id, path, doc, opts))


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
    """
    from ..runs import NO_DETAIL
    from ..runs.document import check_outcome
    from .state_input import json_argument

    opts = options(ctx, **local)
    check_outcome(outcome)
    value = json_argument(detail) if detail is not None else NO_DETAIL
    run = _store().record(state, node, outcome, value)
    lines = [
        f"Recorded {node}: {outcome}",
        "Evaluate the run again; recorded outcomes are not assumed to prove facts.",
        _status_hint(_absolute(state), opts),
    ]
    _report(opts.fmt, run.document, lines)


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
    _report(opts.fmt, run.document, [f"Updated facts for run {run.id}"])


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
    _report(opts.fmt, run.document, [f"Authorities: {', '.join(run.authorities) or '<none>'}"])


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
    _report(opts.fmt, document, [f"Checkpoint: {document['checkpoint']}"])


@run_group.command("resume")
@click.argument("checkpoint", metavar="CHECKPOINT")
@state_option("The new Run file to create (never replaces an existing file).")
@provider_options
@click.pass_context
def run_resume_command(ctx: click.Context, /, checkpoint: str, state: str, **local: Any) -> None:
    """Continue from CHECKPOINT in a new Run file: same id, authorities cleared."""
    opts = options(ctx, **local)
    run = _store().resume(checkpoint, state)
    path = _absolute(state)
    lines = [f"Resumed run {run.id} at {path}", _status_hint(path, opts)]
    _report(opts.fmt, run.document, lines)


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
    _report(opts.fmt, {"run": run.id, "events": run.events}, lines)
