"""``agc flow check|list``: Flow packages (``FLOW.md``), checked and discovered.

``run``, ``resume``, ``status`` and ``events`` (Flow Runs) live in :mod:`.flow_run`
and are registered on the group at the end of this module.

``check`` prints ``{"state":"valid","flow","nodes","children","diagnostics"}`` for a
valid Flow (``nodes``: its work nodes and forks; ``children``: the distinct Flow ids it
runs directly; ``diagnostics``: its warnings) and the ``agent-graph.error.v1`` envelope
of every error otherwise, first error's code on top. ``list`` finds packages under a
root (``.flows`` when it exists, else the working directory).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from ..errors import Diagnostic
from .context import options
from .options import format_option
from .render import emit, warnings_lines


@click.group("flow", invoke_without_command=True)
@click.pass_context
def flow_group(ctx: click.Context) -> None:
    """Check, list and run Flow packages (FLOW.md files)."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


@flow_group.command("check")
@click.argument("entry", metavar="DIR|FLOW.md")
@click.option(
    "--lenient",
    is_flag=True,
    help=(
        "Accept nodes that cannot reach finish (C.11), unknown command members (C.26) and a "
        "child whose first Agent step reuses an Agent (flow-child-reuse-first)."
    ),
)
@format_option
@click.pass_context
def check_command(ctx: click.Context, /, entry: str, lenient: bool, **local: Any) -> None:
    """Check a Flow package and every Flow it runs: structure, actions, resources."""
    from .flow_check import check_flow

    code = check_flow(entry, lenient, options(ctx, **local).fmt)
    if code:
        ctx.exit(code)


def _register_graph() -> None:
    from .flow_graph import flow_graph_command  # its own module: pictures are not checks

    flow_group.add_command(flow_graph_command)


_register_graph()


@flow_group.command("list")
@click.argument("root", required=False, metavar="[ROOT]")
@format_option
@click.pass_context
def list_command(ctx: click.Context, /, root: str | None, **local: Any) -> None:
    """List the Flow packages under ROOT (default: .flows, else the working directory).

    Without ROOT every package found is listed and each id that several share is one
    warning (a checkout's test fixtures share ids); a ROOT given is a discovery root,
    where a shared id is the error flow-id-duplicate."""
    from ..compiler.flow.discover import survey
    from ..flow import discover

    fmt = options(ctx, **local).fmt
    warnings: list[Diagnostic] = []
    if root is None:
        root = ".flows" if Path(".flows").is_dir() else os.curdir
        surveyed = survey(root)
        found = list(surveyed.entries)
        warnings = [*surveyed.duplicate_diagnostics("warning"), *surveyed.problems]
    else:
        found = discover(root)
    lines = [f"{f.id}  {f.path}  {f.description or ''}".rstrip() for f in found]
    if not found:
        lines = [f"No Flow packages under {root}"]
    lines += warnings_lines(warnings, [])
    document: dict[str, Any] = {"flows": [f.to_dict() for f in found]}
    if warnings:
        document["diagnostics"] = [w.to_dict() for w in warnings]
    emit(fmt, document, lines)


def _register_runs() -> None:
    from .flow_run import COMMANDS

    for command in COMMANDS:
        flow_group.add_command(command)


_register_runs()
