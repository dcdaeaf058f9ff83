"""Diagnostics of one ``FLOW.md``, collected in any order and reported in document order."""

from __future__ import annotations

from ...errors import Diagnostic, Severity
from ...frozen import field, slotted


@slotted
class Findings:
    """Every finding of one package file. ``path``: as diagnostics show it; ``flow``: the
    package's id, in each diagnostic's ``detail`` (a child's findings name the child)."""

    path: str
    flow: str
    prefix: str = ""  # a child's messages start with its id
    items: list[Diagnostic] = field(default_factory=list)

    def error(
        self,
        code: str,
        message: str,
        line: int | None = 1,
        column: int | None = 1,
        severity: Severity = "error",
    ) -> None:
        self.items.append(
            Diagnostic(
                code,
                self.prefix + message,
                severity,
                self.path,
                line,
                column,
                None,
                {"flow": self.flow},
            )
        )

    def file_error(self, code: str, message: str, path: str) -> None:
        """An error about another file of the package than FLOW.md: its position is that
        file (``path``, as diagnostics show it), as a whole."""
        self.items.append(
            Diagnostic(
                code, self.prefix + message, "error", path, None, None, None, {"flow": self.flow}
            )
        )

    def warning(
        self, code: str, message: str, line: int | None = 1, column: int | None = 1
    ) -> None:
        self.error(code, message, line, column, "warning")

    def ordered(self) -> list[Diagnostic]:
        """By position; findings at one position keep the order they were found in."""
        return sorted(self.items, key=lambda d: (d.line or 0, d.column or 0))
