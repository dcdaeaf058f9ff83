"""``agc init [DIR] --id ID [--editor vscode]``: start a Provider (reference §9.2, 0.3.1).

Output is the reference's (JSON ``{"state": "created", "manifest": …}``, human "Created
Agent Graph provider: …") plus the files written and the next commands, each complete
and runnable as printed from the same working directory (``-m DIR/provider.yaml`` when
DIR is not the working directory).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from .context import options
from .options import provider_options, shell_command
from .render import emit


def next_commands(directory: str) -> list[str]:
    """``agc validate`` and ``agc test`` for a Provider created in ``directory``."""
    if Path(directory) == Path("."):
        return ["agc validate", "agc test"]
    if not os.path.isabs(directory) and directory.startswith("-"):
        directory = f"./{directory}"  # so it is never read as an option
    manifest = os.path.join(directory, "provider.yaml")
    tests = os.path.join(directory, "tests")
    return [
        shell_command(["agc", "validate", "-m", manifest]),
        shell_command(["agc", "test", tests, "-m", manifest]),
    ]


@click.command("init")
@click.argument("directory", required=False, default=".", metavar="[DIR]")
@click.option("--id", "provider_id", required=True, metavar="ID", help="Provider id (slugged).")
@click.option(
    "--editor",
    type=click.Choice(["vscode"]),
    default=None,
    help="Also write .vscode/settings.json mapping each Provider file type to its JSON "
    "Schema in .agent-graph/schemas (docs/editors.md).",
)
@provider_options
@click.pass_context
def init_command(
    ctx: click.Context, /, directory: str, provider_id: str, editor: str | None, **local: Any
) -> None:
    """Create a Provider for protocol 0.3.1 in DIR (default: the working directory).

    \b
    The id is derived from ID as the reference derives it ("My Provider!" gives
    my-provider); ID itself becomes the Provider's name. Nothing is replaced: when
    any file init writes exists, nothing is written (provider-target-exists).
    The new Provider validates with no warning and its graph test passes.
    """
    from ..authoring.scaffold import init_provider

    opts = options(ctx, **local)
    result = init_provider(directory, provider_id, editor_name=editor)
    commands = next_commands(directory)
    document: dict[str, Any] = {
        "state": "created",
        "manifest": str(result.manifest),
        "id": result.provider_id,
        "root": str(result.root),
        "files": list(result.files),
        "next": commands,
    }
    lines = [
        f"Created Agent Graph provider: {result.manifest}",
        f"Provider {result.provider_id}: {len(result.files)} file(s) in {result.root}",
    ]
    if result.editor is not None:
        document["editor"] = result.editor
        lines.append(
            "Editor: .vscode/settings.json maps each file type to its schema in "
            f".agent-graph/schemas (open {result.root} as the workspace folder)"
        )
    lines += [f"Next: {command}" for command in commands]
    emit(opts.fmt, document, lines)
