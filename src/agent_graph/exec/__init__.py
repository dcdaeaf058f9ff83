"""Running subprocesses safely: argument vectors, explicit environments, limits, groups.

Rules (DESIGN decision 8, "no shell where none is asked for"):

* :func:`run` takes an argument vector and runs the program directly. The only shell is
  the one asked for by name: ``run(shell_argv(command), …)`` runs ``/bin/sh -c command``.
* The child's environment is exactly ``env``; nothing is inherited. :func:`minimal_env`
  picks named variables (by default the reference materializer's list: ``PATH``,
  ``TMPDIR``, ``LANG``, ``TZ`` …) out of ``os.environ`` for callers that want them;
  :func:`inherited_env` is all of ``os.environ`` as it is, for those that pass it on.
* The child leads its own session and process group. On timeout, or when stdout or
  stderr exceeds its byte limit, the whole group is killed (SIGTERM and an optional
  grace, then SIGKILL); after the leader exits, members it left behind are killed too.
  Grandchildren that keep the pipes open cannot make ``run`` hang.
* stdout and stderr are read concurrently, each capped: at most ``limit + 1`` bytes of a
  stream are ever held, and at most ``limit`` are returned.
* The result (:class:`Completed`) keeps everything: exit code or signal number, timeout,
  which stream overflowed and its limit, the raw bytes, the elapsed time.

POSIX only. ``effect: read`` Actions are not sandboxed by any of this: a child can still
write files; limits bound time and output, not side effects.

Error codes (``ExecError``, an ``AgentGraphError``), for ``docs/error-codes.md``. Raised
by :func:`run` before anything starts:

* ``exec-argv-invalid``: the argument vector is empty, a string instead of a sequence,
  holds a non-string or a NUL byte, or names an empty program;
* ``exec-env-invalid``: an environment name is empty or holds ``=``/NUL, or a value is
  not a string or holds NUL;
* ``exec-option-invalid``: the timeout is not a positive finite number, the SIGTERM grace
  is negative, a byte limit is not a non-negative integer, or stdin is not bytes;
* ``exec-cwd-missing``: the working directory does not exist;
* ``exec-cwd-invalid``: the working directory is not a directory or cannot be entered;
* ``exec-not-found``: the program does not exist (as a path, or on the child's PATH);
* ``exec-not-executable``: the program is a directory, lacks execute permission or is
  not in an executable format;
* ``exec-start-failed``: the system refused to start it for another reason (out of
  processes or descriptors, argument list too long …).

Raised by :meth:`Completed.check` for a process that ran (in this precedence):

* ``exec-timeout``: it ran past its timeout; its group was killed;
* ``exec-stdout-limit`` / ``exec-stderr-limit``: it wrote more than that stream's byte
  limit; its group was killed;
* ``exec-signal``: a signal ended it;
* ``exec-failed``: it exited with a non-zero code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .argv import SHELL, resolve_executable, shell_argv
from .codes import CODES, ExecError

if TYPE_CHECKING:
    from .environment import DEFAULT_ENV_NAMES, inherited_env, minimal_env
    from .process import run
    from .result import Completed, Overflow, Stream

# Loaded on first use: route building imports ``shell_argv`` from here and should not
# pay for subprocess, selectors and the result types.
_LAZY = {
    "DEFAULT_ENV_NAMES": "environment",
    "inherited_env": "environment",
    "minimal_env": "environment",
    "run": "process",
    "Completed": "result",
    "Overflow": "result",
    "Stream": "result",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)


__all__ = [
    "CODES",
    "DEFAULT_ENV_NAMES",
    "SHELL",
    "Completed",
    "ExecError",
    "Overflow",
    "Stream",
    "inherited_env",
    "minimal_env",
    "resolve_executable",
    "run",
    "shell_argv",
]
