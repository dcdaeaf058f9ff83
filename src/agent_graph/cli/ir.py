"""``agc ir build|dump``: compiled IR bytes, and the IR printed one record per line."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import click

from .. import codes
from .context import load, options
from .options import provider_options
from .render import emit


@click.group("ir", invoke_without_command=True)
@click.pass_context
def ir_group(ctx: click.Context) -> None:
    """Build compiled IR, or print it readably."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


def _refuse_foreign(path: Path) -> None:
    """Never replace a file that is not compiled IR (a mistyped ``-o provider.yaml``)."""
    from ..errors import AgentGraphError
    from ..ir.codec import MAGIC

    if not os.path.lexists(path):
        return
    if not path.is_file():  # a FIFO, a device, a directory: never opened, never replaced
        raise AgentGraphError(
            codes.IR_TARGET_EXISTS, f"Refusing to replace {path}: it is not a compiled IR file"
        )
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            head = os.read(fd, 64)
        finally:
            os.close(fd)
    except OSError as error:
        raise AgentGraphError(codes.FILE_WRITE_FAILED, f"Cannot write {path}: {error}") from None
    if MAGIC.encode() not in head:
        raise AgentGraphError(
            codes.IR_TARGET_EXISTS, f"Refusing to replace {path}: it is not a compiled IR file"
        )


@ir_group.command("build")
@click.option("-o", "--output", required=True, metavar="FILE", help="Where to write the IR.")
@provider_options
@click.pass_context
def ir_build_command(ctx: click.Context, /, output: str, **local: Any) -> None:
    """Compile the Provider and write its IR bytes; prints their SHA-256 digest."""
    from ..errors import AgentGraphError

    opts = options(ctx, **local)
    program = load(opts, need="both").runnable
    target = Path(os.path.abspath(output))
    _refuse_foreign(target)
    data = program.to_bytes()
    try:
        from ..documents.files import write_atomic

        write_atomic(target, data)
    except OSError as error:
        raise AgentGraphError(codes.FILE_WRITE_FAILED, f"Cannot write {target}: {error}") from None
    emit(
        opts.fmt,
        {"state": "built", "path": str(target), "digest": program.digest, "bytes": len(data)},
        [f"Wrote {target} ({len(data)} bytes)", f"Digest: {program.digest}"],
    )


# The first line of a YAML document: a directive or marker, a list item, or a mapping key.
_YAML_START = re.compile(r"(?:---|%|- |[^\s:#][^\n:]*:(?:\s|$))")


def _text_kind(data: bytes) -> str | None:
    """``JSON``/``YAML`` when ``data`` is evidently such text rather than msgpack IR."""
    from ..ir.codec import MAGIC

    head = data[:4096]
    if MAGIC.encode() in head[:64] or b"\0" in head:
        return None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 3:  # not just a character cut off at the end
            return None
        text = head[: error.start].decode("utf-8")
    text = text.removeprefix("\ufeff").lstrip()
    if not text or any(ord(c) < 0x20 and c not in "\t\r\n" for c in text):
        return None
    if text[0] in "{[":
        return "JSON"
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return "YAML" if _YAML_START.match(line) else None
    return None


def _read_ir(path: Path, given: str) -> bytes:
    """The bytes of a compiled IR file; a YAML or JSON file is pointed at ``-m``."""
    import shlex

    from ..documents.files import read_bytes
    from ..errors import AgentGraphError

    if not os.path.lexists(path):
        raise AgentGraphError(codes.FILE_MISSING, f"Compiled IR file does not exist: {path}")
    data = read_bytes(path, display=str(path))
    kind = _text_kind(data)
    if kind is not None:
        raise AgentGraphError(
            codes.IR_CORRUPT,
            f"{path} is a {kind} document, not compiled IR; to dump the IR of the Provider "
            f"it defines, pass it with -m: agc ir dump -m {shlex.quote(given)}",
        )
    return data


def _is_flow_ir(data: bytes) -> bool:
    """Whether ``data`` carries the Flow IR header (a kept ``.agfir`` beside a Flow Run);
    anything else is read, and refused if need be, as Provider IR."""
    from ..ir.flow_program import MAGIC

    # the header is a msgpack array whose first member is the magic string
    return data[1 : 2 + len(MAGIC)].endswith(MAGIC.encode("ascii"))


@ir_group.command("dump")
@click.argument("ir_file", required=False, metavar="[FILE.agir|FILE.agfir]")
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
    """Print the IR one record per line (compiled from the Provider, or read from FILE).

    FILE is compiled IR: a Provider's (written by agc ir build) or a Flow's (kept beside
    its Runs in .agc-flow-programs/); for a Provider manifest use -m.
    """
    from ..ir.dump import dump, dump_flow, flow_to_json, to_json
    from ..vm import load_program

    opts = options(ctx, **local)
    if ir_file is None:
        program = load(opts, need="both").runnable
    else:
        path = Path(os.path.abspath(ir_file))
        data = _read_ir(path, ir_file)
        if _is_flow_ir(data):
            from ..ir.flow_program import FlowProgram

            flow = FlowProgram.from_bytes(data)
            text = dump_flow(flow.record)
            document = {"digest": flow.digest, "bytes": len(data), **flow_to_json(flow.record)}
            emit(opts.fmt, document, text.rstrip("\n").split("\n"))
            return
        if root is not None and not os.path.isdir(root):
            from ..errors import AgentGraphError

            raise AgentGraphError(codes.OPTION_INVALID, f"--root is not a directory: {root}")
        program = load_program(data, root if root is not None else path.parent)
    # two digests, each named: the IR's own (its bytes) and the Provider's (its sources)
    text = f"ir irDigest={program.digest} bytes={len(program.to_bytes())}\n" + dump(program.ir)
    emit(
        opts.fmt,
        {"digest": program.digest, "bytes": len(program.to_bytes()), **to_json(program.ir)},
        text.rstrip("\n").split("\n"),
    )
