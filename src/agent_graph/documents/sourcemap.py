"""Source positions of loaded documents, addressed by JSON pointer.

Every value the loader builds gets an entry ``pointer -> (line, column)`` (1-based,
the position where the value's node starts). Later passes report problems by
pointer; :meth:`SourceMap.locate` falls back to the nearest ancestor that has a
position, so a missing required member points at its parent object.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import Diagnostic, Severity
from ..frozen import record

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

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


#: ``pointer -> (line, column)``.
Positions = dict[str, tuple[int, int]]


class SourceMap:
    """``pointer -> (line, column)``; ``line_offset`` shifts frontmatter headers into file lines.

    ``positions`` may be given at once, or as ``pending``: a function that builds the
    map on first use (a loader records positions cheaply while it parses and spells
    them as JSON pointers only when a diagnostic or a caller asks for one).
    """

    __slots__ = ("_pending", "_positions")

    def __init__(
        self,
        positions: dict[str, tuple[int, int]] | None = None,
        *,
        pending: Callable[[], dict[str, tuple[int, int]]] | None = None,
    ) -> None:
        if positions is None and pending is None:
            positions = {}
        self._positions = positions
        self._pending = pending if positions is None else None

    @property
    def positions(self) -> dict[str, tuple[int, int]]:
        found = self._positions
        if found is None:
            pending = self._pending
            found = self._positions = pending() if pending is not None else {}
            self._pending = None
        return found

    @positions.setter
    def positions(self, value: dict[str, tuple[int, int]]) -> None:
        self._positions, self._pending = value, None

    def share(self) -> tuple[Positions | None, Callable[[], Positions] | None]:
        """The map or its pending builder, for a wrapper that must not force it."""
        return self._positions, self._pending

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, SourceMap)
        return self.positions == other.positions

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(positions={self.positions!r})"

    def locate(self, pointer: str) -> tuple[int, int] | None:
        positions = self.positions
        probe = pointer
        while True:
            hit = positions.get(probe)
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


@record
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
