"""``agc code list|locate``: the Provider's Code Catalog (route reasons and diagnostics)."""

from __future__ import annotations

import copy
from typing import Any

import click

from .context import load, options
from .options import provider_options
from .render import emit


@click.group("code", invoke_without_command=True)
@click.pass_context
def code_group(ctx: click.Context) -> None:
    """Discover the stable reason and diagnostic codes a Provider declares."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


@code_group.command("list")
@provider_options
@click.pass_context
def code_list_command(ctx: click.Context, /, **local: Any) -> None:
    """Every Code Catalog entry in file order, as authored."""
    opts = options(ctx, **local)
    loaded = load(opts, need="both")
    program = loaded.runnable
    entries = program.codes()
    document: dict[str, Any] = {"provider": program.provider_id}
    catalog = loaded.provider.catalog
    if catalog is not None:
        document["catalog"] = str(catalog.path)
    document["codes"] = [copy.deepcopy(entry.raw) for entry in entries]
    lines = [f"{entry.code} [{entry.kind}] {entry.summary}" for entry in entries]
    emit(opts.fmt, document, lines)


@code_group.command("locate")
@click.argument("code", metavar="CODE")
@provider_options
@click.pass_context
def code_locate_command(ctx: click.Context, /, code: str, **local: Any) -> None:
    """One catalog entry with its document located (code-missing when there is none)."""
    opts = options(ctx, **local)
    program = load(opts, need="both").runnable
    location = program.locate_code(code)
    lines = [f"{location.code} [{location.kind}]", location.summary]
    if location.document is not None:
        lines.append(f"Document: {location.document.file_path}")
    emit(opts.fmt, location.to_dict(), lines)
