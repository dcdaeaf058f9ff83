"""What a finished process leaves behind: how it ended and what it wrote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .. import codes
from .codes import ExecError

Stream = Literal["stdout", "stderr"]


@dataclass(frozen=True, slots=True)
class Overflow:
    """``stream`` wrote more than ``limit`` bytes (exactly ``limit`` is fine)."""

    stream: Stream
    limit: int


@dataclass(frozen=True, slots=True)
class Completed:
    """One run of one process group.

    ``exit_code`` is set when the process exited, ``signal`` (the signal number) when a
    signal ended it; exactly one of them is set. ``timed_out`` and ``overflow`` say why
    we killed it, if we did (``overflow`` is the first stream over its limit). ``stdout``
    and ``stderr`` are the raw bytes, each at most its limit (the rest was discarded).
    ``pid`` is the process's id and its process group's id. ``survivors`` is true only when
    a member of the group could not be killed (it changed user, or sits in uninterruptible
    sleep) and was still alive when :func:`run` returned.
    """

    argv: tuple[str, ...]
    cwd: str
    pid: int
    exit_code: int | None
    signal: int | None
    timed_out: bool
    overflow: Overflow | None
    stdout: bytes
    stderr: bytes
    elapsed_s: float
    timeout_s: float
    survivors: bool = False

    @property
    def pgid(self) -> int:
        return self.pid

    @property
    def ok(self) -> bool:
        """Exited with 0, in time and within both output limits."""
        return self.exit_code == 0 and not self.timed_out and self.overflow is None

    @property
    def signal_name(self) -> str | None:
        if self.signal is None:
            return None
        import signal

        try:
            return signal.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"

    def check(self) -> Completed:
        """``self`` when :attr:`ok`, else raise :class:`ExecError`: ``exec-timeout``,
        ``exec-stdout-limit``, ``exec-stderr-limit``, ``exec-signal`` or ``exec-failed``
        (in that order of precedence)."""
        program = self.argv[0]
        detail: dict[str, object] = {"argv": list(self.argv), "cwd": self.cwd}
        if self.timed_out:
            raise ExecError(
                codes.EXEC_TIMEOUT,
                f"`{program}` exceeded the {self.timeout_s:g} s timeout",
                {**detail, "timeout_s": self.timeout_s},
            )
        if self.overflow is not None:
            code = (
                codes.EXEC_STDOUT_LIMIT
                if self.overflow.stream == "stdout"
                else codes.EXEC_STDERR_LIMIT
            )
            raise ExecError(
                code,
                f"`{program}` exceeded the {self.overflow.limit} byte {self.overflow.stream} limit",
                {**detail, "limit": self.overflow.limit},
            )
        if self.signal is not None:
            raise ExecError(
                codes.EXEC_SIGNAL,
                f"`{program}` was killed by {self.signal_name}{_tail(self.stderr)}",
                {**detail, "signal": self.signal},
            )
        if self.exit_code != 0:
            raise ExecError(
                codes.EXEC_FAILED,
                f"`{program}` exited with {self.exit_code}{_tail(self.stderr)}",
                {**detail, "exitCode": self.exit_code},
            )
        return self


def _tail(stderr: bytes) -> str:
    """``": <last non-empty stderr line>"`` (lossy UTF-8, at most 200 characters)."""
    lines = [x for x in stderr.decode("utf-8", "replace").splitlines() if x.strip()]
    if not lines:
        return ""
    line = lines[-1].strip()
    return ": " + (line if len(line) <= 200 else line[:199] + "…")
