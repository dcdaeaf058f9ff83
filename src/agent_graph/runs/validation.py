"""Checking a whole Run document: version, JSON Schema, event numbering.

Run on every load and before every write, by every store, so no store can hand
out or keep a document the other would refuse. The JSON Schema engine is loaded
on first use only (the VM never needs it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import AgentGraphError
from .document import check_integrity, check_version

if TYPE_CHECKING:
    from ..documents.sourcemap import SourceMap


def check_document(
    value: Any, display: str, positions: Callable[[], SourceMap | None] | None = None
) -> dict[str, Any]:
    """``value`` as a checked Run document, or the error a host can act on.

    ``run-version-unsupported`` for a newer ``agent-graph.run.vN``; ``schema-invalid``
    ("<display> does not match run.schema.json", one diagnostic per finding, with
    line and column when ``positions`` can supply a source map); ``run-invalid`` for
    an event log with gaps. ``positions`` is only called when there is a finding to place.
    """
    from ..documents.schema import validate

    check_version(value, display)
    problem = validate("run", value, path=display)
    if problem is not None:
        source = positions() if positions is not None else None
        if source is not None:
            problem = validate("run", value, path=display, source=source) or problem
        raise AgentGraphError(problem.code, problem.message, problem.diagnostics)
    check_integrity(value, display)
    document: dict[str, Any] = value
    return document
