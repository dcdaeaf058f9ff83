"""``agc import skill|scripts|workflow``: existing Skills, scripts and workflows as graphs."""

from __future__ import annotations

from typing import Any

import click

from .context import options
from .options import provider_options, shell_command
from .render import emit


@click.group("import", invoke_without_command=True)
@click.pass_context
def import_group(ctx: click.Context) -> None:
    """Convert an existing Skill, script set or workflow into Provider sources."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


_INTO = click.option(
    "--into",
    "into",
    required=True,
    metavar="DIR",
    help="Existing Provider root (has provider.yaml).",
)


def _report(ctx: click.Context, local: dict[str, Any], result: Any, what: str) -> None:
    opts = options(ctx, **local)
    lines = [
        f"Imported {what} into {result.graph}",
        *(f"  wrote {rel}" for rel in result.written),
        "Review IMPORT_REPORT.md before relying on generated semantics.",
        f"Next: {shell_command(['agc', 'validate', '-m', str(result.graph.parent.parent)])}",
    ]
    emit(opts.fmt, result.to_dict(), lines)


@import_group.command("skill")
# not named `skill`: that is the global --skill option's name, which click would let the
# argument overwrite (and warn about, which the test suite treats as an error)
@click.argument("skill_file", metavar="SKILL.md")
@_INTO
@click.option("--graph", "graph", default=None, metavar="ID", help="Generated graph id.")
@provider_options
@click.pass_context
def import_skill_command(
    ctx: click.Context, /, skill_file: str, into: str, graph: str | None, **local: Any
) -> None:
    """Copy a Skill into the Provider, bind it and route it through a one-step graph."""
    from ..authoring.importers import import_skill

    options(ctx, **local)  # reject a bad --format before anything is written
    _report(ctx, local, import_skill(skill_file, into, graph), "Skill")


@import_group.command("scripts")
@click.argument("scripts", nargs=-1, required=True, metavar="SCRIPT...")
@_INTO
@click.option(
    "--graph",
    "graph",
    default="imported-scripts",
    show_default=True,
    metavar="ID",
    help="Generated graph id.",
)
@provider_options
@click.pass_context
def import_scripts_command(
    ctx: click.Context, /, scripts: tuple[str, ...], into: str, graph: str, **local: Any
) -> None:
    """Copy scripts (in execution order) into the Provider as a sequential graph."""
    from ..authoring.importers import import_scripts

    options(ctx, **local)
    _report(ctx, local, import_scripts(list(scripts), into, graph), "scripts")


@import_group.command("workflow")
@click.argument("workflow", metavar="FILE")
@_INTO
@click.option("--graph", "graph", default=None, metavar="ID", help="Generated graph id.")
@provider_options
@click.pass_context
def import_workflow_command(
    ctx: click.Context, /, workflow: str, into: str, graph: str | None, **local: Any
) -> None:
    """Turn a legacy YAML or JSON workflow (steps with dependsOn) into a graph."""
    from ..authoring.import_workflow import import_workflow

    options(ctx, **local)
    _report(ctx, local, import_workflow(workflow, into, graph), "workflow")
