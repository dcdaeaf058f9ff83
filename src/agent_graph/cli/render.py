"""Output for the CLI: one JSON document or human lines, and errors with caret excerpts."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..errors import AgentGraphError, Diagnostic

FORMATS = ("human", "json")


def emit(
    fmt: str, document: dict[str, Any], lines: Sequence[str], stream: TextIO | None = None
) -> None:
    """One JSON document or the human lines on ``stream`` (standard output by default)."""
    out = stream if stream is not None else sys.stdout
    if fmt == "json":
        out.write(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        out.write("\n".join(lines) + "\n")
    out.flush()


def _source_line(diagnostic: Diagnostic, bases: Sequence[Path]) -> str | None:
    if diagnostic.path is None or diagnostic.line is None:
        return None
    for base in bases:
        candidate = base / diagnostic.path
        try:
            if not candidate.is_file() or candidate.stat().st_size > 10 * 1024 * 1024:
                continue
            with candidate.open("r", encoding="utf-8", errors="replace", newline="") as handle:
                for number, text in enumerate(handle, start=1):
                    if number == diagnostic.line:
                        return text.rstrip("\r\n")
        except OSError:
            continue
    return None


def describe(diagnostic: Diagnostic, bases: Sequence[Path]) -> list[str]:
    """``path:line:col: code: message`` plus the source line and a caret under the column."""
    label = "" if diagnostic.severity == "error" else f"{diagnostic.severity}: "
    lines = [f"{diagnostic.location()}: {label}{diagnostic.code}: {diagnostic.message}"]
    text = _source_line(diagnostic, bases)
    if text is not None and diagnostic.line is not None:
        gutter = f"{diagnostic.line:>5} | "
        lines.append(gutter + text.expandtabs(1))
        column = max((diagnostic.column or 1) - 1, 0)
        lines.append(" " * (len(gutter) - 2) + "| " + " " * column + "^")
    return lines


def warnings_lines(warnings: Sequence[Diagnostic], bases: Sequence[Path]) -> list[str]:
    return [line for w in warnings for line in describe(w, bases)]


def emit_error(
    fmt: str, error: AgentGraphError, bases: Sequence[Path] = (), stream: TextIO | None = None
) -> None:
    """The error envelope, or the error with every diagnostic placed, on ``stream`` (stderr)."""
    out = stream if stream is not None else sys.stderr
    if fmt == "json":
        out.write(json.dumps(error.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")
        return
    lines = [f"ERROR {error.code}: {error.message}"]
    search = [*bases, Path(os.getcwd())]
    for diagnostic in error.diagnostics:
        lines.extend(describe(diagnostic, search))
    if len(error.diagnostics) > 1:
        errors = sum(1 for d in error.diagnostics if d.severity == "error")
        lines.append(f"{errors} error(s), {len(error.diagnostics) - errors} warning(s)")
    out.write("\n".join(lines) + "\n")
