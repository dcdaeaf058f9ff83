"""``agc schema list|path|extract``: the JSON Schemas the package ships.

The names are the reference CLI's, except that 0.3 split its ``resource-location``
into one envelope per location kind (``resource-location.file``, ``.graph-action``,
``.host-action``), as it split ``resource`` descriptors (the 0.2 ``resource`` stays,
for legacy descriptors); the 0.3 additions (``host-action-result``, ``inspect``,
``materialization`` …) are listed too. ``extract`` writes atomically and never replaces
a different file unless ``--force`` is given (an identical one is left as it is).
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import click

from ..errors import AgentGraphError
from .context import options
from .options import provider_options
from .render import emit

#: Reference (0.2) schema names that 0.3 replaced, and what replaced them.
SPLIT_NAMES = {
    "resource-location": (
        "resource-location.file",
        "resource-location.graph-action",
        "resource-location.host-action",
    ),
}


def _names() -> tuple[str, ...]:
    from ..documents.schema import SCHEMA_NAMES

    return SCHEMA_NAMES


def _checked(name: str) -> str:
    """``name`` when it is a packaged schema, else ``schema-type-unknown`` with a hint."""
    names = _names()
    if name in names:
        return name
    message = f"Unknown schema type: {name}"
    if name in SPLIT_NAMES:
        *first, last = SPLIT_NAMES[name]
        message += f"; 0.3 split it into {', '.join(first)} and {last}"
    else:
        close = difflib.get_close_matches(name, names, n=1)
        if close:
            message += f" (did you mean {close[0]}?)"
    raise AgentGraphError("schema-type-unknown", message)


@click.group("schema", invoke_without_command=True)
@click.pass_context
def schema_group(ctx: click.Context) -> None:
    """List, locate and extract the bundled public JSON Schemas."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


@schema_group.command("list")
@provider_options
@click.pass_context
def schema_list_command(ctx: click.Context, /, **local: Any) -> None:
    """The name of every packaged schema, sorted."""
    from ..documents.schema import schema_root

    opts = options(ctx, **local)
    names = list(_names())
    emit(opts.fmt, {"root": str(schema_root()), "schemas": names}, names)


@schema_group.command("path")
@click.argument("name", metavar="NAME")
@provider_options
@click.pass_context
def schema_path_command(ctx: click.Context, /, name: str, **local: Any) -> None:
    """The absolute path of one packaged schema file."""
    from ..documents.schema import schema_path

    opts = options(ctx, **local)
    path = schema_path(_checked(name))
    if not path.is_file():
        raise AgentGraphError("file-missing", f"packaged schema does not exist: {path}")
    emit(opts.fmt, {"name": name, "path": str(path)}, [str(path)])


def _schema_bytes(name: str) -> bytes:
    """The schema as the reference writes it: two-space JSON and a final newline."""
    from ..documents.schema import schema_document

    text = json.dumps(schema_document(name), indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def _existing(target: Path) -> bytes | None:
    """The bytes at ``target`` (None when there is nothing); refuses what is not a file."""
    from ..documents.files import read_bytes

    if not os.path.lexists(target):
        return None
    if not target.is_file():
        raise AgentGraphError(
            "schema-target-exists", f"Refusing to replace {target}: it is not a regular file"
        )
    return read_bytes(target, str(target))


@schema_group.command("extract")
@click.argument("name", metavar="NAME")
@click.option("--output", required=True, metavar="FILE", help="Destination JSON file.")
@click.option("--force", is_flag=True, help="Replace an existing file with other content.")
@provider_options
@click.pass_context
def schema_extract_command(
    ctx: click.Context, /, name: str, output: str, force: bool, **local: Any
) -> None:
    """Write one packaged schema to a file of your choice (atomically)."""
    from ..documents.files import write_atomic

    opts = options(ctx, **local)
    data = _schema_bytes(_checked(name))
    target = Path(os.path.abspath(output))
    existing = _existing(target)
    if existing is not None and existing != data and not force:
        raise AgentGraphError(
            "schema-target-exists",
            f"Refusing to replace {target}: it holds other content (pass --force to replace it)",
        )
    if existing != data:
        mode = target.stat().st_mode & 0o777 if existing is not None else 0o644
        try:
            write_atomic(target, data, mode=mode)
        except OSError as error:
            raise AgentGraphError("file-write-failed", f"Cannot write {target}: {error}") from None
    emit(opts.fmt, {"name": name, "path": str(target)}, [str(target)])
