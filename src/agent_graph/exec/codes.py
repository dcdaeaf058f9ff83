"""The stable error codes of the exec layer and the exception that carries them."""

from __future__ import annotations

from typing import Any

from ..errors import AgentGraphError

# raised by run() before anything is started
ARGV_INVALID = "exec-argv-invalid"
ENV_INVALID = "exec-env-invalid"
OPTION_INVALID = "exec-option-invalid"
CWD_MISSING = "exec-cwd-missing"
CWD_INVALID = "exec-cwd-invalid"
NOT_FOUND = "exec-not-found"
NOT_EXECUTABLE = "exec-not-executable"
START_FAILED = "exec-start-failed"
# raised by Completed.check() for a process that ran
TIMEOUT = "exec-timeout"
STDOUT_LIMIT = "exec-stdout-limit"
STDERR_LIMIT = "exec-stderr-limit"
SIGNALED = "exec-signal"
FAILED = "exec-failed"

CODES = (
    ARGV_INVALID,
    ENV_INVALID,
    OPTION_INVALID,
    CWD_MISSING,
    CWD_INVALID,
    NOT_FOUND,
    NOT_EXECUTABLE,
    START_FAILED,
    TIMEOUT,
    STDOUT_LIMIT,
    STDERR_LIMIT,
    SIGNALED,
    FAILED,
)


class ExecError(AgentGraphError):
    """A process that could not be started, or (from :meth:`Completed.check`) one that did
    not succeed. ``code`` is one of :data:`CODES`; ``detail`` is machine-readable context
    (``argv``, ``cwd``, ``limit``, ``exitCode`` … as they apply)."""

    def __init__(self, code: str, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(code, message)
        self.detail: dict[str, Any] = dict(detail or {})
