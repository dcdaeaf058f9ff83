"""The exception of the exec layer, and which codes it carries (``codes.EXEC_*``, defined
with every other code in :mod:`agent_graph.codes`)."""

from __future__ import annotations

from typing import Any

from .. import codes
from ..errors import AgentGraphError

#: Every code an :class:`ExecError` may carry: the first eight are raised by ``run()``
#: before anything starts, the rest by ``Completed.check()`` for a process that ran.
CODES = (
    codes.EXEC_ARGV_INVALID,
    codes.EXEC_ENV_INVALID,
    codes.EXEC_OPTION_INVALID,
    codes.EXEC_CWD_MISSING,
    codes.EXEC_CWD_INVALID,
    codes.EXEC_NOT_FOUND,
    codes.EXEC_NOT_EXECUTABLE,
    codes.EXEC_START_FAILED,
    codes.EXEC_TIMEOUT,
    codes.EXEC_STDOUT_LIMIT,
    codes.EXEC_STDERR_LIMIT,
    codes.EXEC_SIGNAL,
    codes.EXEC_FAILED,
)


class ExecError(AgentGraphError):
    """A process that could not be started, or (from :meth:`Completed.check`) one that did
    not succeed. ``code`` is one of :data:`CODES`; ``detail`` is machine-readable context
    (``argv``, ``cwd``, ``limit``, ``exitCode`` … as they apply)."""

    def __init__(self, code: str, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(code, message)
        self.detail: dict[str, Any] = dict(detail or {})
