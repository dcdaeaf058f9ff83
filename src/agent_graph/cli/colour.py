"""Colour in human output: errors, warnings, statuses and carets, for terminals only.

``--color auto`` (the default) colours a stream only when it is a terminal, ``NO_COLOR``
is unset or empty (https://no-color.org) and ``TERM`` is not ``dumb``; ``always`` and
``never`` force it. Colour is added to finished lines at the moment they are written
(:func:`paint`), by what each line starts with, so the text itself never changes: with
colour off (any pipe, file or test capture) output is byte-identical to what it was.
The option is accepted before or after any command (``agc --color never validate``,
``agc validate --color never``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from contextvars import ContextVar

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:  # click is imported where the option is built: ``agc evaluate``'s fast path
    from typing import Any, Final, TextIO

    import click

CHOICES: Final = ("auto", "always", "never")
CHOICE: ContextVar[str] = ContextVar("agc_color", default="auto")

_RESET: Final = "\x1b[0m"
_RED, _YELLOW, _GREEN, _BLUE, _CYAN, _MAGENTA, _DIM, _BOLD = (
    "\x1b[31m",
    "\x1b[33m",
    "\x1b[32m",
    "\x1b[34m",
    "\x1b[36m",
    "\x1b[35m",
    "\x1b[2m",
    "\x1b[1m",
)
#: Severity words that open a line (``ERROR code: …``) and their colours.
_SEVERITY: Final = {"ERROR": _RED + _BOLD, "WARNING": _YELLOW + _BOLD, "INFO": _CYAN}
#: Statuses and outcomes, wherever a line names one after ``State:``/``Outcome:`` or in
#: an explanation (``publish: blocked``).
STATUS_COLOURS: Final = {
    "actionable": _GREEN,
    "complete": _GREEN,
    "completed": _GREEN,
    "waiting-user": _CYAN,
    "pending": _BLUE,
    "blocked": _MAGENTA,
    "error": _RED,
    "failed": _RED,
    "unverified": _YELLOW,
    "partial": _YELLOW,
    "skipped": _DIM,
    "unreached": _DIM,
}
# Line shapes, as pattern texts: ``re`` compiles each on its first use, so a command
# whose output is never coloured (JSON, a pipe) does not compile them at start-up.
_SEVERITY_LINE = r"^(ERROR|WARNING|INFO)\b"
_STATUS_LINE = r"^(State|Outcome|Status): ([a-z-]+)"
_CARET_LINE = r"^( +\| +)\^$"
_POSITIONED = r"^([^\s:][^:]*:\d+:\d+: )((?:warning: |info: )?)([a-z][a-z0-9.-]*)(: )"
_EXPLAINED = r"^(\s*)(\S+)( is )([a-z-]+)\b"


def enabled(stream: TextIO) -> bool:
    """Whether lines written to ``stream`` get colour now."""
    choice = CHOICE.get()
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


def _wrap(colour: str, text: str) -> str:
    return f"{colour}{text}{_RESET}"


def paint_line(line: str) -> str:
    """``line`` with ANSI colour by its shape (unchanged when it has no known shape)."""
    found = re.match(_SEVERITY_LINE, line)
    if found:
        word = found.group(1)
        return _wrap(_SEVERITY[word], word) + line[len(word) :]
    found = re.match(_STATUS_LINE, line)
    if found and found.group(2) in STATUS_COLOURS:
        start, end = found.span(2)
        return line[:start] + _wrap(STATUS_COLOURS[found.group(2)], found.group(2)) + line[end:]
    found = re.match(_CARET_LINE, line)
    if found:
        return found.group(1) + _wrap(_RED + _BOLD, "^")
    found = re.match(_POSITIONED, line)
    if found:
        severity = found.group(2)
        colour = _YELLOW if severity.startswith("warning") else _RED
        head = _wrap(_BOLD, found.group(1)) + severity + _wrap(colour, found.group(3))
        return head + line[found.end(3) :]
    found = re.match(_EXPLAINED, line)
    if found and found.group(4) in STATUS_COLOURS:
        start, end = found.span(4)
        return line[:start] + _wrap(STATUS_COLOURS[found.group(4)], found.group(4)) + line[end:]
    return line


def paint(lines: Sequence[str], stream: TextIO) -> Sequence[str]:
    """The lines as they should be written to ``stream``: coloured only when enabled."""
    if not enabled(stream):
        return lines
    return [paint_line(line) for line in lines]


def _set_choice(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        CHOICE.set(value)


def colour_option() -> click.Option:
    """``--color auto|always|never``: a parameter that only sets :data:`CHOICE` (it is not
    passed to the command's function, so any command can take it)."""
    import click

    return click.Option(
        ["--color", "--colour", "color"],
        type=click.Choice(CHOICES),
        default=None,
        expose_value=False,
        is_eager=True,
        callback=_set_choice,
        help="Colour human output: auto (terminals, unless NO_COLOR is set), always, never.",
    )


def add_colour_option(command: Any) -> None:
    """Give ``command`` (and every subcommand of a group) the ``--color`` option, once."""
    if not any(getattr(p, "name", None) == "color" for p in command.params):
        command.params.append(colour_option())
    for sub in getattr(command, "commands", {}).values():
        add_colour_option(sub)
