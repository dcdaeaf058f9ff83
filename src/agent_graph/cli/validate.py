"""``agc validate`` and ``agc inspect provider|skill``."""

from __future__ import annotations

from typing import Any

import click

from .context import load, options
from .options import provider_options
from .render import emit, warnings_lines


def _counts_line(inspection: dict[str, Any]) -> str:
    c = inspection["counts"]
    return (
        f"{c['graphs']} graph(s), {c['actions']} action(s), {c['resources']} resource(s), "
        f"{c['codes']} code(s)"
    )


def _with_warnings(document: dict[str, Any], warnings: list[Any]) -> dict[str, Any]:
    if warnings:
        document["diagnostics"] = [w.to_dict() for w in warnings]
    return document


@click.command("validate")
@provider_options
@click.pass_context
def validate_command(ctx: click.Context, /, **local: Any) -> None:
    """Check schemas, references, graph structure and safety rules of a Provider."""
    from ..compiler.provider.inspect import inspect_provider

    opts = options(ctx, **local)
    provider = load(opts, need="provider").provider
    inspection = inspect_provider(provider)
    lines = [f"Valid provider {provider.id}@{provider.version}", _counts_line(inspection)]
    lines += warnings_lines(provider.warnings, [provider.root])
    emit(opts.fmt, _with_warnings({"state": "valid", **inspection}, provider.warnings), lines)


@click.group("inspect", invoke_without_command=True)
@click.pass_context
def inspect_group(ctx: click.Context) -> None:
    """Summarise a Provider or a Skill binding without executing anything."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


@inspect_group.command("provider")
@provider_options
@click.pass_context
def inspect_provider_command(ctx: click.Context, /, **local: Any) -> None:
    """Graphs, entrypoints, node counts, actions, resources and codes of a Provider."""
    from ..compiler.provider.inspect import inspect_provider

    opts = options(ctx, **local)
    provider = load(opts, need="provider").provider
    inspection = inspect_provider(provider)
    lines = [f"{provider.id}@{provider.version}", _counts_line(inspection)]
    lines += [
        f"- {g['id']} [{', '.join(g['entrypoints'])}] {len(g['nodes'])} node(s)"
        for g in inspection["graphs"]
    ]
    emit(opts.fmt, inspection, lines)


@inspect_group.command("skill")
@click.argument("skill_path", metavar="SKILL.md")
@provider_options
@click.pass_context
def inspect_skill_command(ctx: click.Context, /, skill_path: str, **local: Any) -> None:
    """Resolve a Skill's binding and summarise the Provider it selects."""
    from ..compiler.provider.inspect import inspect_provider
    from ..compiler.provider.skills import read_registry, resolve_skill_binding

    opts = options(ctx, **local)
    registry = read_registry(opts.registry) if opts.registry else None
    resolved = resolve_skill_binding(skill_path, registry)
    binding = resolved.to_dict()
    provider = resolved.provider
    emit(
        opts.fmt,
        {"binding": binding, "provider": inspect_provider(provider)},
        [
            f"Locator: {binding['locator']}",
            f"Provider: {provider.id}@{provider.version}",
            f"Graph: {binding['graph']}#{binding['entry']}",
        ],
    )
