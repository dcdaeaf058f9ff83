"""Error and diagnostic types shared by the compiler, the VM and the CLI.

Hosts branch on ``code``; messages are for people. Every code is a constant of
:mod:`agent_graph.codes`, given its meaning in :mod:`agent_graph.error_codes` and
documented in ``docs/error-codes.md`` (``tests/project/test_error_codes.py`` keeps the three and
the source in step).
A diagnostic carries the provider-relative ``path`` of the file it points into and,
when known, the 1-based ``line``/``column`` and the JSON pointer of the offending value.
"""

from __future__ import annotations

from .frozen import field, record

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    Severity = Literal["info", "warning", "error"]
else:
    Severity = str  # what annotations name; they are never evaluated at run time

ERROR_SCHEMA = "agent-graph.error.v1"


@record
class Diagnostic:
    """One finding. ``detail`` holds extra machine-readable data (schemaPath, params …)."""

    code: str
    message: str
    severity: Severity = "error"
    path: str | None = None
    line: int | None = None
    column: int | None = None
    pointer: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }
        if self.path is not None:
            out["path"] = self.path
        detail: dict[str, Any] = {}
        if self.line is not None:
            detail["line"] = self.line
        if self.column is not None:
            detail["column"] = self.column
        if self.pointer is not None:
            detail["pointer"] = self.pointer
        detail.update(self.detail)
        if detail:
            out["detail"] = detail
        return out

    def location(self) -> str:
        """``path:line:column`` (or the parts that are known)."""
        parts = [self.path or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class AgentGraphError(Exception):
    """A failure with a stable ``code``; ``diagnostics`` lists every finding behind it."""

    def __init__(
        self,
        code: str,
        message: str,
        diagnostics: list[Diagnostic] | None = None,
        *,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])
        # for people only (a "did you mean"): the envelope keeps the reference's message
        self.hint = hint

    def to_dict(self) -> dict[str, Any]:
        """The ``agent-graph.error.v1`` envelope."""
        return {
            "schema": ERROR_SCHEMA,
            "state": "error",
            "error": {
                "code": self.code,
                "message": self.message,
                "diagnostics": [d.to_dict() for d in self.diagnostics],
            },
        }


@record
class Problem:
    """One failed check as the reference would throw it.

    ``code``/``message`` are what the reference's thrown error would carry (for a
    schema failure: ``schema-invalid`` and "<file> does not match <name>.schema.json");
    ``diagnostics`` are the individual findings (for schema failures one per
    validator error with code ``schema.<keyword>``; otherwise one diagnostic with
    the same code as the problem).
    """

    code: str
    message: str
    diagnostics: list[Diagnostic]


class ProblemSink:
    """Collects problems in check order so a whole Provider is reported in one run."""

    def __init__(self, limit: int = 1000) -> None:
        self.problems: list[Problem] = []
        self.warnings: list[Diagnostic] = []
        self.limit = limit

    def add(self, problem: Problem) -> None:
        if len(self.problems) < self.limit:
            self.problems.append(problem)

    def error(
        self,
        code: str,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        pointer: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        diag = Diagnostic(code, message, "error", path, line, column, pointer, dict(detail or {}))
        self.add(Problem(code, message, [diag]))

    def add_error(self, exc: AgentGraphError) -> None:
        self.add(Problem(exc.code, exc.message, exc.diagnostics))

    def warn(self, diagnostic: Diagnostic) -> None:
        self.warnings.append(diagnostic)

    @property
    def failed(self) -> bool:
        return bool(self.problems)

    def raise_if_failed(self) -> None:
        if not self.problems:
            return
        first = self.problems[0]
        diagnostics = [d for p in self.problems for d in p.diagnostics]
        raise AgentGraphError(first.code, first.message, diagnostics + self.warnings)
