"""``执行自定义命令`` visits through the exec layer (docs/flow-runs.md §Execution, §3.3, §5.3, C.5).

No shell; the environment is inherited (C.5); the working directory is the Run's cwd
(never the package); stdin is the compact UTF-8 JSON of the rendered ``stdin`` without
a trailing newline, or an empty stdin when the block has none; output is decoded as
UTF-8 with replacement and never trimmed. The process leads its own process group,
which is killed whole when it times out or overflows and when the Run is interrupted.

Limits: no timeout unless the host sets one (``--command-timeout``; "none" is
:data:`NO_TIMEOUT`, about 23 days, the longest the exec layer can wait); each output stream
is capped at :data:`MAX_OUTPUT` (16 MiB): a command that writes more is stopped (its
group killed) and reported as a failure with a line saying so appended to ``stderr``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from ... import exec as ex
from ...ir import flow_records as r
from . import render
from .failures import RunFailure

MAX_OUTPUT: Final = 16 * 1024 * 1024
#: exec.run needs a finite timeout and epoll takes at most 2**31 ms; this one (about
#: 23 days) stands for "none".
NO_TIMEOUT: Final = 2_000_000.0
#: How the line agc appends to a timed-out command's stderr begins; :func:`timed_out`
#: finds it there, so the record itself says why the command ended.
TIMED_OUT_NOTE: Final = "agc: timed out:"


def timed_out(content: Any) -> bool:
    """Whether ``content`` is the ``已执行`` content of a command the timeout killed."""
    if not isinstance(content, dict) or content.get("exitCode", 0) is not None:
        return False
    stderr = content.get("stderr")
    # the notes are the last lines: only the end of a long stderr is read
    return isinstance(stderr, str) and f"\n{TIMED_OUT_NOTE} " in "\n" + stderr[-1000:]


def run_command(
    node: r.Node,
    root: Path,
    value: Any,
    branches: dict[int, Any],
    cwd: str,
    timeout_s: float | None,
) -> dict[str, Any]:
    """Run the node's command; its ``已执行`` content ``{status, exitCode, stdout, stderr}``.
    A command that cannot start raises :class:`RunFailure` (``command_execution``)."""
    from ...exec.environment import inherited_env
    from ...exec.process import run

    command = node.command
    assert command is not None
    args = render.argv(command, root, value)
    stdin: bytes | None = None
    if command.has_stdin:
        data = render.fill(command.stdin, command.slots, value, branches)
        stdin = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    try:
        done = run(
            args,
            cwd=cwd,
            env=inherited_env(),
            timeout_s=timeout_s if timeout_s is not None else NO_TIMEOUT,
            max_stdout=MAX_OUTPUT,
            max_stderr=MAX_OUTPUT,
            stdin=stdin,
            term_grace_s=2.0,
        )
    except ex.ExecError as error:
        raise RunFailure(
            "command_execution", f"{node.ref}: {error.message} ({error.code})"
        ) from None
    stdout = done.stdout.decode("utf-8", "replace")
    stderr = done.stderr.decode("utf-8", "replace")
    notes = []
    if done.timed_out:
        notes.append(
            f"{TIMED_OUT_NOTE} the command ran past the {done.timeout_s:g} s command timeout "
            "(--command-timeout); its process group was killed"
        )
    if done.overflow is not None:
        notes.append(
            f"agc: the command wrote more than {done.overflow.limit} bytes to "
            f"{done.overflow.stream}; it was stopped and the rest discarded"
        )
    for note in notes:
        stderr += ("" if not stderr or stderr.endswith("\n") else "\n") + note + "\n"
    killed = done.timed_out or done.overflow is not None
    exit_code = None if killed else done.exit_code
    return {
        "status": "success" if exit_code == 0 else "failure",
        "exitCode": exit_code,
        "stdout": stdout,
        "stderr": stderr,
    }
