"""Output for the CLI: one JSON document or human lines, and errors with caret excerpts.

A failure in human form names each problem once: a positioned line per diagnostic
(``path:line:column: code: message``, the source line and a caret), preceded by the
``ERROR code: message`` headline only when that says something no diagnostic says,
and followed by the ``N error(s), M warning(s)`` count. A position the message text
repeats ("… at line 3, column 7") is left out of the positioned line. Control and
invisible format characters of a source line are shown as symbols or escapes, never
sent to the terminal. ``--format json`` output is the envelope, unchanged.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence

from .. import codes
from ..errors import AgentGraphError, Diagnostic
from ..spelling import closest
from .colour import paint

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, TextIO

    #: A directory a diagnostic's path may be relative to (strings on agc flow check's
    #: path, which makes no Path: pathlib costs a cold check 4 ms of CPU).
    Base = str | os.PathLike[str]

FORMATS = ("human", "json")


def emit(
    fmt: str, document: dict[str, Any], lines: Sequence[str], stream: TextIO | None = None
) -> None:
    """One JSON document or the human lines on ``stream`` (standard output by default)."""
    out = stream if stream is not None else sys.stdout
    if fmt == "json":
        out.write(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        out.write("\n".join(paint(lines, out)) + "\n")
    out.flush()


def _source_line(diagnostic: Diagnostic, bases: Sequence[Base]) -> str | None:
    if diagnostic.path is None or diagnostic.line is None:
        return None
    for base in bases:
        candidate = os.path.join(base, diagnostic.path)
        try:
            if not os.path.isfile(candidate) or os.stat(candidate).st_size > 10 * 1024 * 1024:
                continue
            with open(candidate, encoding="utf-8", errors="replace", newline="") as handle:
                for number, text in enumerate(handle, start=1):
                    if number == diagnostic.line:
                        return text.rstrip("\r\n")
        except OSError:
            continue
    return None


def _visible_char(char: str) -> str:
    """How one character of a source line is shown: itself, or a visible stand-in."""
    if char == "\t":
        return " "
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # U+2400 CONTROL PICTURES: NUL is \u2400 …
    if code == 0x7F:
        return "\u2421"
    import unicodedata  # only for a character outside printable ASCII

    category = unicodedata.category(char)
    if category == "Cc":  # C1 controls have no pictures
        return f"\\x{code:02x}"
    if category in ("Cf", "Zl", "Zp", "Cs", "Co", "Cn") and char != "\ufffd":
        return f"<U+{code:04X}>"  # invisible: a byte order mark, bidi controls …
    return char


def visible(text: str, column: int | None = None) -> tuple[str, int]:
    """``text`` safe for a terminal, and where 1-based ``column`` lands in it (0-based)."""
    shown = [_visible_char(c) for c in text]
    before = max((column or 1) - 1, 0)
    offset = sum(len(s) for s in shown[:before]) + max(before - len(shown), 0)
    return "".join(shown), offset


#: Columns of a source line shown around the caret: a minified one-line document must
#: not print itself (and a caret line as long) once per finding.
EXCERPT_WIDTH: Final = 120


def window(shown: str, column: int, width: int = EXCERPT_WIDTH) -> tuple[str, int]:
    """At most ``width`` columns of ``shown`` around 0-based ``column``, with ``…`` where
    the line goes on, and where the column lands in the excerpt."""
    if len(shown) <= width:
        return shown, column
    start = max(0, min(column - width // 2, len(shown) - width))
    end = start + width
    excerpt, caret = shown[start:end], column - start
    if start > 0:
        excerpt, caret = "…" + excerpt, caret + 1
    if end < len(shown):
        excerpt += "…"
    return excerpt, caret


def _message(diagnostic: Diagnostic) -> str:
    """The message without the position the location already gives (parse errors)."""
    if diagnostic.line is None:
        return diagnostic.message
    line = rf" at line {diagnostic.line}"
    where = rf"{line}(?![0-9]|, column )"
    if diagnostic.column is not None:
        where = rf"{line}, column {diagnostic.column}(?![0-9])|{where}"
    return re.sub(where, "", diagnostic.message)


#: An absolute POSIX path in a message: up to the first blank, quote or separator.
_ABSOLUTE: Final = re.compile(r"(?<![\w./~-])/[^\s;,'\"()<>]+")


def relative_paths(message: str, here: str | None = None) -> str:
    """``message`` with each absolute path below the working directory written relative
    to it, as the location before the message already is (human output only: JSON
    keeps the message as the library wrote it)."""
    if "/" not in message:
        return message
    cwd = (here if here is not None else os.getcwd()).rstrip("/") + "/"

    def shorten(found: re.Match[str]) -> str:
        path = found.group(0)
        tail = path[len(path.rstrip(".:")) :]  # a sentence's full stop is not the path's
        path = path[: len(path) - len(tail)]
        return (path[len(cwd) :] if path.startswith(cwd) and path != cwd else path) + tail

    return _ABSOLUTE.sub(shorten, message)


def describe(diagnostic: Diagnostic, bases: Sequence[Base]) -> list[str]:
    """``path:line:col: code: message`` plus the source line and a caret under the column."""
    label = "" if diagnostic.severity == "error" else f"{diagnostic.severity}: "
    message, where = _message(diagnostic), diagnostic.location()
    if diagnostic.path is not None:
        message, where = relative_paths(message), relative_paths(where)
    lines = [f"{where}: {label}{diagnostic.code}: {message}"]
    text = _source_line(diagnostic, bases)
    if text is not None and diagnostic.line is not None:
        gutter = f"{diagnostic.line:>5} | "
        shown, column = window(*visible(text, diagnostic.column))
        lines.append(gutter + shown)
        lines.append(" " * (len(gutter) - 2) + "| " + " " * column + "^")
    return lines


def warnings_lines(warnings: Sequence[Diagnostic], bases: Sequence[Base]) -> list[str]:
    return [line for w in warnings for line in describe(w, bases)]


def emit_error(
    fmt: str, error: AgentGraphError, bases: Sequence[Base] = (), stream: TextIO | None = None
) -> None:
    """The error envelope, or the error with every diagnostic placed, on ``stream`` (stderr)."""
    out = stream if stream is not None else sys.stderr
    if fmt == "json":
        out.write(json.dumps(error.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")
        return
    out.write("\n".join(paint(error_lines(error, bases), out)) + "\n")


def _headline_needed(error: AgentGraphError) -> bool:
    """False when a diagnostic already says what the headline says."""
    return not any(
        d.code == error.code and d.severity == "error" and d.message == error.message
        for d in error.diagnostics
    )


def error_lines(error: AgentGraphError, bases: Sequence[Base] = ()) -> list[str]:
    """The human lines of a failure: each problem once, then the count of problems."""
    lines = [f"ERROR {error.code}: {error.message}"] if _headline_needed(error) else []
    if error.hint:
        lines[-1:] = [f"{lines[-1]}; {error.hint}"] if lines else [error.hint]
    search = [*bases, os.getcwd()]
    for diagnostic in error.diagnostics:
        lines.extend(describe(diagnostic, search))
    if error.diagnostics:
        errors = sum(1 for d in error.diagnostics if d.severity == "error")
        others = len(error.diagnostics) - errors
        lines.append(f"{max(errors, 1)} error(s), {others} warning(s)")
    # a command that would help, complete (``detail.next``): printed to be run as it is
    lines += [f"Next: {d.detail['next']}" for d in error.diagnostics if d.detail.get("next")]
    return lines


def report_safely(fmt: str, document: dict[str, Any], lines: Sequence[str]) -> None:
    """Print a command's result; text the output cannot encode is escaped, never an error.

    A Run holds Unicode text only (checked before it is written), but a path on the
    command line may hold bytes that were not UTF-8, and standard output may not be
    UTF-8: after a write has happened, the result is printed with escapes instead
    (``\\udcff``, ``\\u00fc`` in JSON) rather than reported as a failure.
    """
    try:
        emit(fmt, document, lines)
    except UnicodeEncodeError:  # nothing was written: the text is encoded before it goes out
        if fmt == "json":
            text = json.dumps(document, ensure_ascii=True, separators=(",", ":"))
        else:
            text = "\n".join(lines).encode("ascii", "backslashreplace").decode("ascii")
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def refuse_missing_entry(doc: dict[str, Any], entries: Sequence[str] = ()) -> None:
    """Human output: an Entry the Graph lacks is an error of the command (exit 1).

    The reference (and ``--format json``) reports it as an Evaluation with statusCode
    ``error`` and an ``entry-missing`` diagnostic, exit 0; a person reading "State:
    error" from a typo deserves the failure a script can see.
    """
    from ..errors import AgentGraphError

    if doc["statusCode"] != "error":
        return
    for diagnostic in doc["diagnostics"]:
        if diagnostic["code"] == codes.ENTRY_MISSING:
            close = closest(diagnostic["message"].rsplit(" ", 1)[-1], entries)
            hint = f"did you mean {close}?" if close else None
            raise AgentGraphError(codes.ENTRY_MISSING, diagnostic["message"], hint=hint)
