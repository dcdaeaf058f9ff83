"""``agc``: the command-line front end (thin: options -> library call -> render).

Exit codes: 0 success, 1 invalid input or any other error (an
``agent-graph.error.v1`` envelope with ``--format json``), 2 usage errors (unknown
command or option, bad option value) — also as an envelope under ``--format json``.
``--format`` without a value (or with an empty one) is a usage error too: one line on
stderr (``ERROR usage-invalid`` / ``ERROR format-invalid``), exit 2.
Heavy modules (yaml, jsonschema) are imported inside commands so ``--help`` and
``--version`` stay fast.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from ..errors import AgentGraphError
from ..protocol import PROTOCOL_VERSION, __version__
from .options import FORMAT_MISSING, format_from_argv, manifest_bases, provider_options
from .render import FORMATS, emit_error

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.version_option(
    __version__,
    "-V",
    "--version",
    message=f"agc %(version)s (Agent Graph protocol {PROTOCOL_VERSION})",
)
@provider_options
@click.pass_context
def cli(
    ctx: click.Context,
    manifest: str | None,
    skill: str | None,
    registry: str | None,
    fmt: str | None,
) -> None:
    """Compile, check and evaluate Agent Graph Providers.

    \b
    Exit codes: 0 success; 1 invalid Provider or other error; 2 usage error.
    With --format json, output is one JSON document on stdout and every failure
    is one agent-graph.error.v1 document on stderr.
    """
    ctx.obj = {"manifest": manifest, "skill": skill, "registry": registry, "fmt": fmt}
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


def commands() -> list[click.Command]:
    """Every subcommand, in the order ``--help`` lists them (sorted by click)."""
    from .build import build_command
    from .evaluate import evaluate_command, route_command
    from .ir import ir_group
    from .run import run_group
    from .testcmd import test_command
    from .validate import inspect_group, validate_command

    return [
        build_command,
        evaluate_command,
        inspect_group,
        ir_group,
        route_command,
        run_group,
        test_command,
        validate_command,
    ]


def first_sentence(text: str) -> str:
    """The first sentence of a help text (its first paragraph's words up to a final ``.``)."""
    words = text.split("\n\n", 1)[0].split()
    if words and words[0] == "\b":
        words = words[1:]
    for index, word in enumerate(words):
        if word.endswith("."):
            return " ".join(words[: index + 1])
    return " ".join(words)


def _full_short_help(command: click.Command) -> None:
    """List a command by its whole first sentence: click would cut it to fit with '...'."""
    if command.short_help is None and command.help:
        command.short_help = first_sentence(command.help)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _full_short_help(sub)


def _register() -> None:
    for command in commands():
        _full_short_help(command)
        cli.add_command(command)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    fmt = format_from_argv(args)
    _register()
    try:
        result = cli.main(args=args, prog_name="agc", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        return 1
    except click.ClickException as exc:
        if isinstance(exc, click.BadOptionUsage) and exc.option_name == "--format":
            # no usable --format value: one line (an envelope when json was asked for before)
            error = AgentGraphError("usage-invalid", FORMAT_MISSING)
            emit_error("json" if fmt == "json" else "human", error)
            return 2
        if fmt == "json":
            emit_error("json", AgentGraphError("usage-invalid", exc.format_message()))
        else:
            exc.show()
        return exc.exit_code
    except AgentGraphError as exc:
        emit_error(fmt if fmt in FORMATS else "human", exc, manifest_bases(args))
        return 2 if exc.code == "format-invalid" else 1
    except KeyboardInterrupt:
        return 130
    except RecursionError:  # a last guard: deep input must never print a traceback
        emit_error(
            fmt if fmt in FORMATS else "human",
            AgentGraphError("unexpected-error", "input nests too deeply"),
        )
        return 1
    except Exception as exc:
        emit_error(
            fmt if fmt in FORMATS else "human",
            AgentGraphError("unexpected-error", f"{type(exc).__name__}: {exc}"),
        )
        return 1
    return result if isinstance(result, int) else 0


def run() -> None:
    sys.exit(main())
