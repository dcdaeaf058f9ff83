"""How a failed command ends: the error on stderr (an envelope under ``--format json``)
and its exit code. Shared by the click front end and ``agc evaluate``'s fast path, so a
failure reads the same whichever ran."""

from __future__ import annotations

from collections.abc import Sequence

from .. import codes
from ..errors import AgentGraphError
from .render import FORMATS, emit_error
from .words import manifest_bases

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

#: The coded errors that are a bad option value: exit 2, as click's own usage errors.
USAGE_CODES: Final = frozenset({codes.FORMAT_INVALID, codes.OPTION_INVALID, codes.USAGE_INVALID})


def failure_exit(exc: BaseException, fmt: str, args: Sequence[str]) -> int:
    """Report ``exc`` (an :class:`AgentGraphError`, an interrupt or anything unexpected)
    and return the exit code: 1, 2 for a bad option value (:data:`USAGE_CODES`), 130 for
    an interrupt."""
    if isinstance(exc, KeyboardInterrupt):
        return 130
    shown = fmt if fmt in FORMATS else "human"
    if isinstance(exc, AgentGraphError):
        emit_error(shown, exc, manifest_bases(args))
        return 2 if exc.code in USAGE_CODES else 1
    if isinstance(exc, RecursionError):  # a last guard: deep input never prints a traceback
        message = "input nests too deeply"
    else:
        message = f"{type(exc).__name__}: {exc}"
    emit_error(shown, AgentGraphError(codes.UNEXPECTED_ERROR, message))
    return 1
