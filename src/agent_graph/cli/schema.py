"""``agc schema list|path|extract``: the JSON Schemas the package ships.

The names are the reference CLI's, except that 0.3 split its ``resource-location``
into one envelope per location kind (``resource-location.file``, ``.graph-action``,
``.host-action``), as it split ``resource`` descriptors (the 0.2 ``resource`` stays,
for legacy descriptors); the 0.3 additions (``host-action-result``, ``inspect``,
``materialization`` …) are listed too. ``extract`` writes atomically and never replaces
a different file unless ``--force`` is given (an identical one is left as it is);
``extract --all DIR`` writes every schema so, all or none, plus the editor-only
``resource-descriptor`` schema (:mod:`agent_graph.authoring.editor`, docs/editors.md).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
from pathlib import Path
from typing import Any

import click

from .. import codes
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
    raise AgentGraphError(codes.SCHEMA_TYPE_UNKNOWN, message)


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
        raise AgentGraphError(codes.FILE_MISSING, f"packaged schema does not exist: {path}")
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
            codes.SCHEMA_TARGET_EXISTS, f"Refusing to replace {target}: it is not a regular file"
        )
    return read_bytes(target, str(target))


def _write_checked(target: Path, data: bytes, existing: bytes | None) -> None:
    """Write ``data`` atomically, keeping the mode of the file it replaces."""
    from ..documents.files import write_atomic

    mode = target.stat().st_mode & 0o777 if existing is not None else 0o644
    try:
        write_atomic(target, data, mode=mode)
    except OSError as error:
        raise AgentGraphError(codes.FILE_WRITE_FAILED, f"Cannot write {target}: {error}") from None


def _refuse_other(target: Path) -> AgentGraphError:
    return AgentGraphError(
        codes.SCHEMA_TARGET_EXISTS,
        f"Refusing to replace {target}: it holds other content (pass --force to replace it)",
    )


def _extract_all(directory: str, force: bool) -> list[tuple[str, Path]]:
    """Every packaged schema, plus the editor's resource dispatch schema, into ``directory``.

    All targets are checked before anything is written; a failure part-way puts back
    what was there before, so the folder holds the old set or the new one.
    """
    from ..authoring import editor

    root = Path(os.path.abspath(directory))
    if os.path.lexists(root) and not root.is_dir():
        raise AgentGraphError(
            codes.SCHEMA_TARGET_EXISTS, f"Refusing to write schemas into {root}: it is not a folder"
        )
    files = editor.schema_files(list(_names()))
    plan = []
    for file_name, data in files.items():
        target = root / file_name
        existing = _existing(target)
        if existing is not None and existing != data and not force:
            raise _refuse_other(target)
        plan.append((file_name, target, data, existing))
    done: list[tuple[Path, bytes | None]] = []
    try:
        for _, target, data, existing in plan:
            if existing != data:
                _write_checked(target, data, existing)
                done.append((target, existing))
    except BaseException:
        for target, previous in reversed(done):
            if previous is None:
                target.unlink(missing_ok=True)
            else:
                with contextlib.suppress(AgentGraphError):
                    _write_checked(target, previous, previous)
        raise
    return [(file_name.removesuffix(".schema.json"), target) for file_name, target, _, _ in plan]


@schema_group.command("extract")
@click.argument("name", metavar="NAME|DIR", required=False)
@click.option("--output", default=None, metavar="FILE", help="Destination JSON file.")
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Write every packaged schema (and the editor's resource-descriptor schema) "
    "into the folder DIR (or --output DIR).",
)
@click.option("--force", is_flag=True, help="Replace an existing file with other content.")
@provider_options
@click.pass_context
def schema_extract_command(
    ctx: click.Context,
    /,
    name: str | None,
    output: str | None,
    every: bool,
    force: bool,
    **local: Any,
) -> None:
    """Write one packaged schema to a file of your choice (atomically), or --all of them.

    \b
    agc schema extract NAME --output FILE
    agc schema extract --all DIR
    An existing file with the same content is left as it is; one with other content
    is replaced only with --force (schema-target-exists).
    """
    opts = options(ctx, **local)
    if every:
        if (name is None) == (output is None):
            raise click.UsageError("--all takes the folder to write: DIR or --output DIR", ctx)
        written = _extract_all(name or output or "", force)
        emit(
            opts.fmt,
            {
                "directory": str(Path(os.path.abspath(name or output or ""))),
                "schemas": [{"name": n, "path": str(p)} for n, p in written],
            },
            [str(p) for _, p in written],
        )
        return
    if name is None or output is None:
        raise click.UsageError("give NAME and --output FILE (or --all DIR)", ctx)
    data = _schema_bytes(_checked(name))
    target = Path(os.path.abspath(output))
    existing = _existing(target)
    if existing is not None and existing != data and not force:
        raise _refuse_other(target)
    if existing != data:
        _write_checked(target, data, existing)
    emit(opts.fmt, {"name": name, "path": str(target)}, [str(target)])
