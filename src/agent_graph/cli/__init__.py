"""``agc``: the command-line front end (thin: options -> library call -> render).

Exit codes: 0 success, 1 invalid input or any other error (an
``agent-graph.error.v1`` envelope with ``--format json``), 2 usage errors (unknown
command or option, bad option value) — also as an envelope under ``--format json``.
Heavy modules (yaml, jsonschema) are imported inside commands so ``--help`` and
``--version`` stay fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import AgentGraphError
from ..protocol import PROTOCOL_VERSION, __version__
from .render import FORMATS, emit_error

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


def _format_from_argv(argv: Sequence[str]) -> str:
    """Peek at ``--format`` before click parses, so usage errors can honour it."""
    for index, arg in enumerate(argv):
        if arg == "--format" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--format="):
            return arg.split("=", 1)[1]
    return "human"


def _manifest_bases(argv: Sequence[str]) -> list[Path]:
    """Directories diagnostics may be relative to (for caret excerpts in error output)."""
    for index, arg in enumerate(argv):
        if arg in ("-m", "--manifest") and index + 1 < len(argv):
            return [Path(os.path.abspath(argv[index + 1])).parent]
        if arg.startswith("--manifest="):
            return [Path(os.path.abspath(arg.split("=", 1)[1])).parent]
    return []


def provider_options(func: F) -> F:
    """Global options, accepted before or after the subcommand (the reference allows both)."""
    options = [
        click.option(
            "-m",
            "--manifest",
            "manifest",
            default=None,
            metavar="PATH",
            help="Provider manifest (default: provider.yaml in the working directory).",
        ),
        click.option(
            "--skill",
            "skill",
            default=None,
            metavar="SKILL.md",
            help="Select Provider, Graph and Entry through a Skill binding.",
        ),
        click.option(
            "--registry",
            "registry",
            default=None,
            metavar="PATH",
            help="Host registry mapping provider ids to manifests (for provider: locators).",
        ),
        click.option(
            "--format",
            "fmt",
            default=None,
            metavar="human|json",
            help="Output format (default: human).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


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


def _register() -> None:
    # commands attach themselves to ``cli`` when their module is imported; by name,
    # because ``from . import run`` would return the ``run()`` function below instead
    import importlib

    for module in ("build", "evaluate", "run", "testcmd", "validate"):
        importlib.import_module(f"{__name__}.{module}")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    fmt = _format_from_argv(args)
    _register()
    try:
        result = cli.main(args=args, prog_name="agc", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        return 1
    except click.ClickException as exc:
        if fmt == "json":
            emit_error("json", AgentGraphError("usage-invalid", exc.format_message()))
        else:
            exc.show()
        return exc.exit_code
    except AgentGraphError as exc:
        emit_error(fmt if fmt in FORMATS else "human", exc, _manifest_bases(args))
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
