"""Source positions of loaded documents, addressed by JSON pointer.

Every value the loader builds gets an entry ``pointer -> (line, column)`` (1-based,
the position where the value's node starts). Later passes report problems by
pointer; :meth:`SourceMap.locate` falls back to the nearest ancestor that has a
position, so a missing required member points at its parent object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import Diagnostic, Severity

#: Deepest collection nesting accepted (YAML and JSON). The reference's YAML
#: parser overflows its own stack at ~800 levels; we stop far below the point
#: where recursive consumers (jsonschema with a recursive schema fails at
#: ~300 levels under Python's default recursion limit) would fail.
MAX_DEPTH: Final = 200


def escape_token(token: str | int) -> str:
    """RFC 6901 escaping of one reference token."""
    return str(token).replace("~", "~0").replace("/", "~1")


def join_pointer(parent: str, token: str | int) -> str:
    return f"{parent}/{escape_token(token)}"


@dataclass(slots=True)
class SourceMap:
    """``pointer -> (line, column)``; ``line_offset`` shifts frontmatter headers into file lines."""

    positions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def locate(self, pointer: str) -> tuple[int, int] | None:
        probe = pointer
        while True:
            hit = self.positions.get(probe)
            if hit is not None:
                return hit
            if not probe:
                return None
            probe = probe.rsplit("/", 1)[0]


def positioned(
    code: str,
    message: str,
    *,
    path: str | None,
    source: SourceMap | None,
    pointer: str | None,
    severity: Severity = "error",
    detail: dict[str, Any] | None = None,
) -> Diagnostic:
    """The one way a finding at a JSON pointer becomes a diagnostic with line and column."""
    where = source.locate(pointer) if source is not None and pointer is not None else None
    line, column = where if where is not None else (None, None)
    return Diagnostic(code, message, severity, path, line, column, pointer, dict(detail or {}))


@dataclass(slots=True)
class Document:
    """A parsed file: its value, where each value came from, and its paths."""

    value: Any
    source: SourceMap
    abs_path: Path
    body: str | None = None  # Markdown body after the frontmatter, when there is one


class ParseError(ValueError):
    """A syntax or construction failure with a 1-based position, when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        where = (
            f"line {self.line}"
            if self.column is None
            else (f"line {self.line}, column {self.column}")
        )
        return f"{self.message} at {where}"
