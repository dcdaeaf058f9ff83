"""Checking a whole Run document: version, Unicode text, JSON Schema, event log.

Run on every load and before every write, by every store, so no store can hand
out or keep a document the other would refuse. The JSON Schema engine is loaded
on first use only (the VM never needs it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import codes
from ..errors import AgentGraphError, Diagnostic
from .document import Run, check_integrity, check_version, not_unicode, printable
from .evaluation import ensure_provider

if TYPE_CHECKING:
    from ..documents.sourcemap import SourceMap


def _pointer(path: list[str | int]) -> str:
    from ..documents.sourcemap import escape_token

    return "".join(f"/{escape_token(part)}" for part in path)


def _placed(
    error: AgentGraphError, positions: Callable[[], SourceMap | None] | None
) -> AgentGraphError:
    """``error`` with the line and column of each diagnostic's pointer, when known."""
    source = positions() if positions is not None else None
    if source is None:
        return error
    placed: list[Diagnostic] = []
    for diagnostic in error.diagnostics:
        where = source.locate(diagnostic.pointer) if diagnostic.pointer is not None else None
        if where is not None and diagnostic.line is None:
            diagnostic = replace(diagnostic, line=where[0], column=where[1])
        placed.append(diagnostic)
    return AgentGraphError(error.code, error.message, placed)


def check_text(
    value: Any, display: str, positions: Callable[[], SourceMap | None] | None = None
) -> None:
    """``run-invalid`` when a string or key is not Unicode text (an unpaired surrogate).

    Such a Run could be written (escaped) but never printed or read back as text, so
    it is refused before any write, with the JSON pointer of the string.
    """
    problem = not_unicode(value)
    if problem is None:
        return
    path, point = problem
    pointer = printable(_pointer(path))  # a key may be the bad text itself
    message = f"the string at {pointer or '/'} holds an unpaired surrogate ({point})"
    error = AgentGraphError(
        codes.RUN_INVALID,
        f"{display} is not a valid Run: {message}, which is not Unicode text",
        [Diagnostic(codes.RUN_INVALID, message, path=display, pointer=pointer)],
    )
    raise _placed(error, positions) from None


def check_document(
    value: Any,
    display: str,
    positions: Callable[[], SourceMap | None] | None = None,
    *,
    parsed: bool = False,
    provider: str | None = None,
) -> dict[str, Any]:
    """``value`` as a checked Run document, or the error a host can act on.

    ``run-version-unsupported`` for a newer ``agent-graph.run.vN``; ``run-invalid``
    for text that is not Unicode (an unpaired surrogate); ``schema-invalid``
    ("<display> does not match run.schema.json", one diagnostic per finding, with
    line and column when ``positions`` can supply a source map); ``run-invalid`` for
    a log with a gap, a repeated or a falling sequence. With ``provider``, a Run of
    another Provider is ``run-provider-mismatch`` as soon as its shape is known: what
    the Run *is* is told before how it is written. ``positions`` is only called when there is
    a finding to place. ``parsed`` says ``value`` was just read by a reader that
    refuses text which is not Unicode (the Run codec, the JSON and YAML readers),
    which spares a whole-document pass; a document about to be written never is.
    """
    from ..documents.schema import validate

    check_version(value, display)
    if not parsed:
        check_text(value, display, positions)
    problem = validate("run", value, path=display)
    if problem is not None:
        source = positions() if positions is not None else None
        if source is not None:
            problem = validate("run", value, path=display, source=source) or problem
        raise AgentGraphError(problem.code, problem.message, problem.diagnostics)
    if provider is not None:
        ensure_provider(Run(value), provider)
    try:
        check_integrity(value, display)
    except AgentGraphError as error:
        raise _placed(error, positions) from None
    document: dict[str, Any] = value
    return document
