"""The ``agc`` command lines a Run's messages print, built so that they run as printed.

A hint repeats every option the Run needs on that command (``--agent`` with its paths
made absolute, the limits) and quotes each word for a POSIX shell (``shlex.join``). A
failed or completed Run is never resumed: its hint starts a new Run with a ``--state``
that does not exist yet.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The ``agc flow resume`` options that answer ``command-interrupted``.
RERUN_FLAG = "--rerun-interrupted"
FAIL_FLAG = "--fail-interrupted"


def options(
    agent: object,
    max_parallel: int | None = None,
    max_visits: int | None = None,
    command_timeout: float | None = None,
) -> list[str]:
    """The words that give the next invocation what this one had: ``--agent`` (only a
    spec string can be repeated; an adapter object is the host's own) and the limits."""
    words: list[str] = []
    if isinstance(agent, str):
        from ..agents.spec import portable_spec

        words += ["--agent", portable_spec(agent)]
    if max_parallel is not None:
        words += ["--max-parallel", str(max_parallel)]
    if max_visits is not None:
        words += ["--max-visits", str(max_visits)]
    if command_timeout is not None:
        words += ["--command-timeout", repr(float(command_timeout))]
    return words


def resume_words(path: str | os.PathLike[str], *more: str) -> str:
    """``agc flow resume --state PATH …`` as a POSIX shell runs it."""
    return shlex.join(["agc", "flow", "resume", "--state", os.fspath(path), *more])


def fresh_state(path: str | os.PathLike[str]) -> Path:
    """A record name beside ``path`` that nothing holds yet: ``run-2.json``, ``run-3.json`` …"""
    where = Path(os.path.abspath(os.fspath(path)))
    stem = where.name.removesuffix(".json")
    number = 2
    while True:
        candidate = where.with_name(f"{stem}-{number}.json")
        if not os.path.lexists(candidate):
            return candidate
        number += 1


#: The longest task text a printed command repeats; a longer one is a file's text that a
#: hint cannot name (the person still has the file).
MAX_TASK_WORD = 4096


def task_word(task: Any) -> str | None:
    """``task`` as a ``--task`` value, or None when a command line cannot give it: not
    text, text ``--task`` would read as a file name (``@…``), a NUL (no argument holds
    one) or more than :data:`MAX_TASK_WORD` characters."""
    if not isinstance(task, str) or task.startswith("@") or "\0" in task:
        return None
    return task if len(task) <= MAX_TASK_WORD else None


def new_run_words(
    entry: str, task: str | None, path: str | os.PathLike[str], cwd: str, more: Sequence[str]
) -> str | None:
    """``agc flow run ENTRY --task T --state <fresh> --cwd CWD …``, or None without a task."""
    if task is None:
        return None
    words = ["agc", "flow", "run", entry, "--task", task, "--state", str(fresh_state(path))]
    return shlex.join([*words, "--cwd", cwd, *more])


def new_run_hint(
    entry: str, task: str | None, path: str | os.PathLike[str], cwd: str, more: Sequence[str]
) -> str:
    """The sentence that sends a person to a new Run (a failed Run cannot be resumed)."""
    words = new_run_words(entry, task, path, cwd, more)
    if words is None:
        return "start a new Run with another --state"
    return f"start a new Run with another --state: {words}"
