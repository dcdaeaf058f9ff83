"""``agc`` through click: the command-line front end (thin: options -> library call -> render).

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
from typing import Final

import click

from .. import codes
from ..errors import AgentGraphError
from ..protocol import PROTOCOL_VERSION, __version__
from .colour import CHOICE, add_colour_option, colour_option
from .failures import failure_exit
from .options import FORMAT_MISSING, format_from_argv, provider_options
from .render import emit_error

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


#: Every subcommand: name -> (module of this package, attribute). A command's module is
#: imported only when that command runs (or ``--help`` lists them all), so one command's
#: start-up does not pay for every other's imports.
COMMANDS: dict[str, tuple[str, str]] = {
    "build": ("build", "build_command"),
    "code": ("code", "code_group"),
    "evaluate": ("evaluate", "evaluate_command"),
    "explain": ("explain", "explain_command"),
    "flow": ("flow", "flow_group"),
    "graph": ("graph", "graph_command"),
    "init": ("init", "init_command"),
    "inspect": ("validate", "inspect_group"),
    "import": ("importcmd", "import_group"),
    "ir": ("ir", "ir_group"),
    "lsp": ("lsp", "lsp_command"),
    "mcp": ("mcp", "mcp_group"),
    "migrate": ("migrate", "migrate_command"),
    "resource": ("resource", "resource_group"),
    "route": ("evaluate", "route_command"),
    "run": ("run", "run_group"),
    "schema": ("schema", "schema_group"),
    "test": ("testcmd", "test_command"),
    "validate": ("validate", "validate_command"),
}


#: The order ``agc --help`` lists the commands in: the order of the work.
WORKFLOW: Final = (
    "init", "validate", "test", "evaluate", "route", "explain", "graph", "run", "build",
    "inspect", "code", "resource", "ir", "import", "migrate", "schema", "flow", "mcp", "lsp",
    "help",
)  # fmt: skip
_WEEKLY = "examples/weekly-report/provider.yaml"
_DRAFTED = """--facts '{"report":{"digest":"sha256:1f"}}'"""
#: One example a command's help ends with, run from the repository root (in this order,
#: each after the ones before: a test runs them all as printed).
EXAMPLES: Final = {
    "init": 'agc init my-provider --id "Acme Notes"',
    "validate": f"agc validate -m {_WEEKLY}",
    "test": f"agc test examples/weekly-report/tests -m {_WEEKLY}",
    "evaluate": f"agc evaluate report -m {_WEEKLY} {_DRAFTED}",
    "route": f"agc route report -m {_WEEKLY} {_DRAFTED}",
    "explain": f"agc explain report -m {_WEEKLY} {_DRAFTED}",
    "graph": f"agc graph report -m {_WEEKLY} {_DRAFTED}",
    "run": f"agc run start report -m {_WEEKLY} --state weekly-run.json",
    "build": f"agc build -m {_WEEKLY} dist/weekly-report",
    "inspect": f"agc inspect provider -m {_WEEKLY}",
    "code": f"agc code list -m {_WEEKLY}",
    "resource": f"agc resource locate procedure.report.draft -m {_WEEKLY}",
    "ir": f"agc ir dump -m {_WEEKLY}",
    "import": "agc import skill examples/weekly-report/skills/report-drafting/SKILL.md "
    "--into my-provider",
    "migrate": "agc migrate -m tests/legacy/release-notes",
    "schema": "agc schema list",
    "flow": "agc flow check examples/flows/repo-stats",
    "mcp": f"agc mcp config claude -m {_WEEKLY}",
    "lsp": "agc lsp < /dev/null  # an editor starts it; it serves until stdin closes",
    "help": "agc help run record",
}
#: The options every command takes; listed once, by ``agc --help``, and named at the end
#: of each command's help instead of a dozen lines on each.
GLOBAL: Final = ("manifest", "skill", "registry", "fmt", "color")


def load_command(name: str) -> click.Command | None:
    found = COMMANDS.get(name)
    if found is None:
        return None
    from importlib import import_module

    command: click.Command = getattr(import_module(f"{__package__}.{found[0]}"), found[1])
    _full_short_help(command)
    add_colour_option(command)  # --color is global: accepted after any command too
    _help_once(command, EXAMPLES.get(name))
    return command


def _help_once(command: click.Command, example: str | None) -> None:
    """Hide the global options from ``command``'s help (and its subcommands'), name them
    in one line, and end with ``example``."""
    if getattr(command, "_agc_help_done", False):
        return
    hidden = []
    for param in command.params:
        if isinstance(param, click.Option) and param.name in GLOBAL and not param.hidden:
            param.hidden = True
            hidden.append(param.opts[-1] if param.name != "manifest" else "-m")
    epilog = [command.epilog] if command.epilog else []
    if hidden:
        epilog.append(f"Global options (agc --help): {', '.join(hidden)}.")
    if example is not None:
        epilog.append(f"\b\nExample:\n  {example}")
    command.epilog = "\n\n".join(epilog) or None
    command._agc_help_done = True  # type: ignore[attr-defined]
    for sub in getattr(command, "commands", {}).values():
        _help_once(sub, None)


def commands() -> list[click.Command]:
    """Every subcommand, in the order ``--help`` lists them."""
    return [command for name in COMMANDS if (command := load_command(name)) is not None]


class _Commands(click.Group):
    """The top-level group: subcommands come from :data:`COMMANDS`, loaded on demand."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(WORKFLOW)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name == "help":
            _help_once(help_command, EXAMPLES["help"])
            return help_command
        return load_command(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and not name.startswith("-") and self.get_command(ctx, name) is None:
            ctx.fail(f"No such command {name!r}.{did_you_mean(name, [*COMMANDS, 'help'])}")
        return super().resolve_command(ctx, args)


def did_you_mean(name: str, choices: Sequence[str]) -> str:
    """What click says of a mistyped subcommand (`` Did you mean 'x'?``), for the choices
    close to ``name``; ``""`` when none is."""
    import difflib

    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
    if not close:
        return ""
    if len(close) == 1:
        return f" Did you mean {close[0]!r}?"
    return f" (Did you mean one of: {', '.join(repr(c) for c in close)}?)"


@click.command("help", context_settings=CONTEXT_SETTINGS)
@click.argument("words", nargs=-1, metavar="[COMMAND]...")
@click.pass_context
def help_command(ctx: click.Context, /, words: tuple[str, ...]) -> None:
    """Show the help of agc or of COMMAND (agc help run record)."""
    parent = ctx.parent
    assert parent is not None
    command: click.Command = parent.command
    current = parent
    for index, word in enumerate(words):
        if not isinstance(command, click.Group):
            raise click.UsageError(f"{' '.join(words[:index])} has no subcommands", ctx)
        found = command.get_command(current, word)
        if found is None:
            known = command.list_commands(current)
            raise click.UsageError(f"No such command {word!r}.{did_you_mean(word, known)}", ctx)
        command = found
        current = click.Context(found, info_name=word, parent=current)
    click.echo(current.get_help())


@click.group(cls=_Commands, context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
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


cli.params.append(colour_option())


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


def main(argv: Sequence[str] | None = None) -> int:
    """``agc`` through click: every command, option and usage error."""
    args = list(sys.argv[1:] if argv is None else argv)
    fmt = format_from_argv(args)
    CHOICE.set("auto")  # every invocation starts from the default (tests run many in one process)
    try:
        result = cli.main(args=args, prog_name="agc", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        return 1
    except click.ClickException as exc:
        if isinstance(exc, click.BadOptionUsage) and exc.option_name == "--format":
            # no usable --format value: one line (an envelope when json was asked for before)
            error = AgentGraphError(codes.USAGE_INVALID, FORMAT_MISSING)
            emit_error("json" if fmt == "json" else "human", error)
            return 2
        if fmt == "json":
            emit_error("json", AgentGraphError(codes.USAGE_INVALID, exc.format_message()))
        else:
            exc.show()
        return exc.exit_code
    except (KeyboardInterrupt, Exception) as exc:  # AgentGraphError too: failure_exit says how
        return failure_exit(exc, fmt, args)
    return result if isinstance(result, int) else 0
