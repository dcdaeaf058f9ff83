"""``agc resource locate`` and ``agc resource materialize`` (reference §3.5, §7, §8.3).

``locate`` prints where to read a Resource: the file path of a static one; for a
context view the ``agc resource materialize`` command that produces it (with the
Route's revision and a cache directory of the host's choosing in place of the
placeholders); for a host-action Resource its handler, input and output schemas and
input digest (the host runs the handler, agc does not). ``materialize`` runs a context
view's read-only materializer once and prints the cached file and its digest.

Numeric options must be positive safe integers, read as JavaScript's ``Number()``
reads them (``1e3`` is 1000) → ``option-invalid`` "Expected a positive integer,
received: <v>" (exit 1, as the reference).
"""

from __future__ import annotations

import math
import re
from typing import Any

import click

from .. import codes
from .context import load, options
from .options import provider_options, provider_words, shell_command
from .render import report_safely

_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_RADIX = re.compile(r"0([xXoObB])([0-9a-fA-F]+)")
_BASES = {"x": 16, "o": 8, "b": 2}
MAX_SAFE_INTEGER = 2**53 - 1


def js_number_of(text: str) -> float:
    """JavaScript's ``Number(text)`` (NaN when it is not a number)."""
    value = text.strip(" \t\n\r\v\f\u00a0\ufeff")
    if value == "":
        return 0.0
    if _DECIMAL.fullmatch(value):
        return float(value)
    radix = _RADIX.fullmatch(value)
    if radix is not None:
        try:
            return float(int(radix.group(2), _BASES[radix.group(1).lower()]))
        except ValueError:
            return math.nan
    if value in ("Infinity", "+Infinity"):
        return math.inf
    if value == "-Infinity":
        return -math.inf
    return math.nan


def positive_integer(ctx: click.Context, param: click.Parameter, value: Any) -> int:
    from ..errors import AgentGraphError

    if isinstance(value, int) and not isinstance(value, bool):
        return value  # the default
    number = js_number_of(str(value))
    if not (math.isfinite(number) and number.is_integer() and 0 < number <= MAX_SAFE_INTEGER):
        raise AgentGraphError(
            codes.OPTION_INVALID, f"Expected a positive integer, received: {value}"
        )
    return int(number)


@click.group("resource")
def resource_group() -> None:
    """Locate Resources, or explicitly materialize a context view."""


def _materialize_words(ident: str, local_words: list[str]) -> str:
    command = shell_command(["agc", "resource", "materialize", ident])
    tail = shell_command(local_words)
    return f"{command} --revision <rev> --cache <dir>" + (f" {tail}" if tail else "")


@resource_group.command("locate")
@click.argument("resource", metavar="ID-OR-PATH")
@provider_options
@click.pass_context
def locate_command(ctx: click.Context, /, resource: str, **local: Any) -> None:
    """Where to read a Resource (by id, or by its Provider-relative descriptor path)."""
    from ..materialize import locate
    from ..vm.locations import FileLocation, GraphActionLocation

    opts = options(ctx, **local)
    program = load(opts).runnable
    location = locate(program, resource)
    if isinstance(location, FileLocation):
        lines = [location.file_path]
    elif isinstance(location, GraphActionLocation):
        words = provider_words(opts.manifest, opts.skill, opts.registry)
        lines = [
            f"Dynamic resource {location.id}; run {_materialize_words(location.id, words)}",
        ]
    else:
        lines = [
            f"Host-action resource {location.id}; the host runs its handler (agc does not)",
            f"Handler: {location.handler}",
            f"Input schema: {location.input_schema}",
            f"Output schema: {location.output_schema}",
            f"Input digest: {location.input_digest}",
        ]
    report_safely(opts.fmt, location.to_dict(), lines)


@resource_group.command("materialize")
@click.argument("resource", metavar="ID-OR-PATH")
@click.option("--cache", required=True, metavar="DIR", help="Host-selected cache directory.")
@click.option(
    "--revision",
    required=True,
    metavar="REV",
    help="Revision of the Route that selected this context view.",
)
@click.option(
    "--workspace",
    default=".",
    metavar="DIR",
    help="Workspace visible to the read-only materializer (default: .).",
)
@click.option("--input", "input_text", default=None, metavar="JSON|@FILE", help="Input JSON.")
@click.option(
    "--timeout-ms",
    default="30000",
    type=click.STRING,
    callback=positive_integer,
    metavar="N",
    help="Maximum runtime in milliseconds (default: 30000).",
)
@click.option(
    "--max-output-bytes",
    default="10485760",
    type=click.STRING,
    callback=positive_integer,
    metavar="N",
    help="Maximum stdout bytes (default: 10485760).",
)
@click.option(
    "--max-error-bytes",
    default="1048576",
    type=click.STRING,
    callback=positive_integer,
    metavar="N",
    help="Maximum stderr bytes (default: 1048576).",
)
@provider_options
@click.pass_context
def materialize_command(
    ctx: click.Context,
    /,
    resource: str,
    cache: str,
    revision: str,
    workspace: str,
    input_text: str | None,
    timeout_ms: int,
    max_output_bytes: int,
    max_error_bytes: int,
    **local: Any,
) -> None:
    """Run a context view's read-only materializer once and cache its output."""
    from ..materialize import materialize
    from .state_input import json_argument

    opts = options(ctx, **local)
    value = json_argument(input_text) if input_text else None
    program = load(opts).runnable
    done = materialize(
        program,
        resource,
        cache=cache,
        revision=revision,
        workspace=workspace,
        input=value,
        timeout_ms=timeout_ms,
        max_output_bytes=max_output_bytes,
        max_error_bytes=max_error_bytes,
    )
    lines = [f"Materialized {done.id}: {done.file_path}", f"Digest: {done.digest}"]
    report_safely(opts.fmt, done.to_dict(), lines)
