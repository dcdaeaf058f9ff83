"""``agc ir build|dump``: compiled IR bytes, and the IR printed one record per line."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import click

from .context import compile_context, load_context, options
from .options import provider_options
from .render import emit


@click.group("ir", invoke_without_command=True)
@click.pass_context
def ir_group(ctx: click.Context) -> None:
    """Build compiled IR, or print it readably."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _refuse_foreign(path: Path) -> None:
    """Never replace a file that is not compiled IR (a mistyped ``-o provider.yaml``)."""
    from ..errors import AgentGraphError
    from ..ir.codec import MAGIC

    if not os.path.lexists(path):
        return
    if not path.is_file():  # a FIFO, a device, a directory: never opened, never replaced
        raise AgentGraphError(
            "ir-target-exists", f"Refusing to replace {path}: it is not a compiled IR file"
        )
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            head = os.read(fd, 64)
        finally:
            os.close(fd)
    except OSError as error:
        raise AgentGraphError("file-write-failed", f"Cannot write {path}: {error}") from None
    if MAGIC.encode() not in head:
        raise AgentGraphError(
            "ir-target-exists", f"Refusing to replace {path}: it is not a compiled IR file"
        )


@ir_group.command("build")
@click.option("-o", "--output", required=True, metavar="FILE", help="Where to write the IR.")
@provider_options
@click.pass_context
def ir_build_command(ctx: click.Context, /, output: str, **local: Any) -> None:
    """Compile the Provider and write its IR bytes; prints their SHA-256 digest."""
    from ..errors import AgentGraphError

    opts = options(ctx, **local)
    program = compile_context(load_context(opts))
    target = Path(os.path.abspath(output))
    _refuse_foreign(target)
    data = program.to_bytes()
    try:
        _write_atomic(target, data)
    except OSError as error:
        raise AgentGraphError("file-write-failed", f"Cannot write {target}: {error}") from None
    emit(
        opts.fmt,
        {"state": "built", "path": str(target), "digest": program.digest, "bytes": len(data)},
        [f"Wrote {target} ({len(data)} bytes)", f"Digest: {program.digest}"],
    )


def _read_ir(path: Path) -> bytes:
    from ..documents.files import read_bytes
    from ..errors import AgentGraphError

    if not os.path.lexists(path):
        raise AgentGraphError("file-missing", f"Compiled IR file does not exist: {path}")
    return read_bytes(path, display=str(path))


@ir_group.command("dump")
@click.argument("ir_file", required=False, metavar="[FILE.agir]")
@click.option(
    "--root",
    default=None,
    metavar="DIR",
    help="Where the Provider's files are installed (default: the IR file's folder).",
)
@provider_options
@click.pass_context
def ir_dump_command(
    ctx: click.Context, /, ir_file: str | None, root: str | None, **local: Any
) -> None:
    """Print the IR one record per line (compiled from the Provider, or read from FILE)."""
    from ..ir.dump import dump, to_json
    from ..vm import load_program

    opts = options(ctx, **local)
    if ir_file is None:
        program = compile_context(load_context(opts))
    else:
        path = Path(os.path.abspath(ir_file))
        data = _read_ir(path)
        program = load_program(data, root if root is not None else path.parent)
    text = dump(program.ir)
    emit(
        opts.fmt,
        {"digest": program.digest, "bytes": len(program.to_bytes()), **to_json(program.ir)},
        text.rstrip("\n").split("\n"),
    )
