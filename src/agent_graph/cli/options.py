"""Options shared by several commands, and peeking at argv before click parses it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .. import codes
from ..errors import AgentGraphError
from .render import FORMATS
from .words import FORMAT_MISSING, format_from_argv, manifest_bases, provider_words, shell_command

__all__ = [
    "FORMAT_MISSING",
    "format_from_argv",
    "manifest_bases",
    "provider_words",
    "shell_command",
]

F = TypeVar("F", bound=Callable[..., Any])


def _check_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--format`` is human or json (exit 2 otherwise); an option in its place is no value."""
    if value is None or value in FORMATS:
        return value
    if value.startswith("-"):  # ``--format --manifest x``: click took the next option as it
        raise click.BadOptionUsage("--format", FORMAT_MISSING, ctx)
    shown = value if value else "(empty)"
    raise AgentGraphError(
        codes.FORMAT_INVALID, f"Unsupported format: {shown}; --format takes human or json"
    )


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
