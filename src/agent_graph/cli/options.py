"""Options shared by several commands, and peeking at argv before click parses it."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import AgentGraphError
from .render import FORMATS

F = TypeVar("F", bound=Callable[..., Any])

#: The usage error for ``--format`` without a value (``agc validate --format``).
FORMAT_MISSING = "Option '--format' requires a value: human or json"


def format_from_argv(argv: Sequence[str]) -> str:
    """Peek at ``--format`` before click parses, so usage errors can honour it.

    The last ``--format`` given a value wins, as it does when click parses (a
    subcommand's option overrides the group's); ``human`` when there is none. An
    option right after ``--format`` is not its value (:func:`_check_format`).
    """
    found = "human"
    for index, arg in enumerate(argv):
        if arg == "--format" and index + 1 < len(argv):
            if not argv[index + 1].startswith("-"):
                found = argv[index + 1]
        elif arg.startswith("--format="):
            found = arg.split("=", 1)[1]
    return found


def _check_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--format`` is human or json (exit 2 otherwise); an option in its place is no value."""
    if value is None or value in FORMATS:
        return value
    if value.startswith("-"):  # ``--format --manifest x``: click took the next option as it
        raise click.BadOptionUsage("--format", FORMAT_MISSING, ctx)
    shown = value if value else "(empty)"
    raise AgentGraphError(
        "format-invalid", f"Unsupported format: {shown}; --format takes human or json"
    )


def manifest_bases(argv: Sequence[str]) -> list[Path]:
    """Directories diagnostics may be relative to (for caret excerpts in error output)."""
    for index, arg in enumerate(argv):
        given = None
        if arg in ("-m", "--manifest") and index + 1 < len(argv):
            given = argv[index + 1]
        elif arg.startswith("--manifest="):
            given = arg.split("=", 1)[1]
        if given is not None:
            path = Path(os.path.abspath(given))
            return [path if path.is_dir() else path.parent]  # -m DIR means DIR/provider.yaml
    return []


def shell_command(words: Iterable[str]) -> str:
    """Words as one command line that a POSIX shell runs as printed (each quoted by shlex)."""
    return " ".join(shlex.quote(word) for word in words)


def provider_words(manifest: str | None, skill: str | None, registry: str | None) -> list[str]:
    """The Provider options to repeat in a printed command, with absolute paths.

    ``--skill`` wins over ``-m`` (as when the Provider is loaded). Nothing when neither
    was given: the default ``./provider.yaml`` served, and a printed command runs in the
    same working directory.
    """
    words: list[str] = []
    if skill:
        words += ["--skill", os.path.abspath(skill)]
    elif manifest:
        words += ["-m", os.path.abspath(manifest)]
    if registry:
        words += ["--registry", os.path.abspath(registry)]
    return words


#: ``--format`` alone, for commands that take no Provider (``agc flow …``).
format_option = click.option(
    "--format",
    "fmt",
    default=None,
    metavar="human|json",
    callback=_check_format,
    help="Output format (default: human).",
)


def provider_options(func: F) -> F:
    """Global options, accepted before or after the subcommand (the reference allows both)."""
    options = [
        click.option(
            "-m",
            "--manifest",
            "manifest",
            default=None,
            metavar="PATH",
            help="Provider manifest, or a directory holding provider.yaml "
            "(default: provider.yaml in the working directory).",
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
        format_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


class VariadicOption(click.Option):
    """A repeatable option that also swallows the words after it (commander's ``<x...>``)."""

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            inner = parser._long_opt.get(name) or parser._short_opt.get(name)
            if inner is None:  # pragma: no cover - click always registers every name
                continue
            original: Callable[[Any, Any], None] = inner.process

            def process(
                value: Any, state: Any, _original: Callable[[Any, Any], None] = original
            ) -> None:
                _original(value, state)
                while state.rargs and not state.rargs[0].startswith("-"):
                    _original(state.rargs.pop(0), state)

            inner.process = process


#: ``--authority ID...``: commander's variadic ``<id...>``, repeatable too.
authority_option = click.option(
    "--authority",
    "authorities",
    cls=VariadicOption,
    multiple=True,
    metavar="ID...",
    help="Session authorities (takes the following words; repeatable).",
)


def evaluation_options(func: F) -> F:
    decorators = [
        click.option(
            "--entry",
            default=None,
            metavar="NAME",
            help="Graph entrypoint (default: the Skill binding's, else 'default').",
        ),
        click.option(
            "--state",
            "state_path",
            default=None,
            metavar="RUN.json",
            help="An agent-graph.run.v1 file: its facts, outcomes, authorities and "
            "workspace are the base the other options overlay.",
        ),
        click.option(
            "--facts",
            default=None,
            metavar="JSON|@FILE",
            help="Facts as a JSON object, or @file (JSON for .json, else YAML).",
        ),
        click.option(
            "--outcomes",
            default=None,
            metavar="JSON|@FILE",
            help="Outcome strings by state key, as a JSON object or @file.",
        ),
        authority_option,
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def state_option(
    help_text: str = "The Run file (agent-graph.run.v1).",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--state", "state", required=True, metavar="RUN.json", help=help_text)
