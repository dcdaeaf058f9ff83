"""``run``: one argument vector, in its own process group, with a time limit and output
limits, and nothing of it left alive afterwards.

The life of a run:

1. start the program (never through a shell) as the leader of a new session, so it and
   everything it starts share one process group whose id is its pid;
2. feed stdin and read stdout/stderr concurrently until the leader exits, the timeout
   passes or a stream exceeds its limit;
3. if the leader is still running: SIGTERM to the group and, for at most
   ``term_grace_s``, keep reading while waiting for the leader to exit;
4. always SIGKILL the group, so members left behind (``sleep 60 &``) die too. The leader
   is detected as exited without being reaped (``waitid(WNOWAIT)``), so its pid, which is
   the group's id, cannot be reused before this kill;
5. reap the leader, read what is still buffered in the pipes (at most ``DRAIN_S``: a
   process that left the group and keeps a pipe open cannot hold us), and wait (at most
   ``GONE_S``) until no member of the group is alive.

A process that leaves the group on purpose (``setsid``, ``setpgid``) escapes the kill;
containing those needs cgroups or a container, which is the host's job.
"""

from __future__ import annotations

import errno
import math
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence

from .. import codes
from .argv import check_argv, check_cwd, resolve_executable
from .codes import ExecError
from .environment import checked
from .group import signal_group, wait_group_gone
from .pump import Pump, close_fd
from .result import Completed

DRAIN_S = 0.25  # reading what is left in the pipes after the group is killed
GONE_S = 1.0  # waiting for SIGKILLed members to die
_TICK_S = 0.05  # polling the leader where no pidfd is available


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    timeout_s: float,
    max_stdout: int,
    max_stderr: int,
    stdin: bytes | None = None,
    term_grace_s: float = 0.0,
) -> Completed:
    """Run ``argv`` in ``cwd`` with exactly the environment ``env`` and return how it ended.

    ``stdin`` is written to the child and then closed; ``None`` gives it an empty stdin
    (``/dev/null``). ``argv[0]`` is found through ``env["PATH"]`` (see
    :func:`~agent_graph.exec.argv.resolve_executable`). On timeout or when a stream writes
    more than its limit, the group gets SIGTERM and ``term_grace_s`` seconds (0: none),
    then SIGKILL. A request that cannot start raises :class:`ExecError`; anything the
    process does afterwards is reported in the :class:`Completed` (see its ``check()``).
    """
    args = check_argv(argv)
    environment = checked(env)
    where = check_cwd(cwd)
    _check_options(timeout_s, max_stdout, max_stderr, stdin, term_grace_s)
    executable = resolve_executable(args[0], path=environment.get("PATH"), cwd=where)
    started = time.monotonic()
    # the pipes are made here and handed to Popen as descriptors: Popen's own would each
    # be wrapped in a file object the pump never uses (exec.run of `true`: 11 us of 0.23 ms)
    ends: list[int] = []
    data = bytes(stdin) if stdin is not None else b""
    try:
        out_r, out_w = _pipe(ends)
        err_r, err_w = _pipe(ends)
        in_r, in_w = _pipe(ends) if stdin is not None else (subprocess.DEVNULL, None)
        proc = subprocess.Popen(
            args,
            executable=executable,
            cwd=where,
            env=environment,
            stdin=in_r,
            stdout=out_w,
            stderr=err_w,
            start_new_session=True,
            close_fds=True,
        )
    except BaseException as exc:
        for fd in ends:
            close_fd(fd)
        if isinstance(exc, OSError):
            raise _start_error(exc, args, where) from exc
        raise
    # straight into supervision, whose cleanup kills the group: an interrupt from here
    # on (closing the child's ends makes calls, where a pending signal is handled) does
    # not leave the child running unsupervised
    return _supervise(
        proc,
        (out_r, err_r, in_w),
        (out_w, err_w, in_r),
        (args, where, started, timeout_s),
        (max_stdout, max_stderr),
        data,
        term_grace_s,
    )


def _pipe(ends: list[int]) -> tuple[int, int]:
    """A new pipe (read end, write end), both noted in ``ends`` to close on failure."""
    read, write = os.pipe()
    ends += (read, write)
    return read, write


def _supervise(
    proc: subprocess.Popen[bytes],
    pipes: tuple[int, int, int | None],
    given: tuple[int, int, int],
    what: tuple[tuple[str, ...], str, float, float],
    limits: tuple[int, int],
    data: bytes,
    grace: float,
) -> Completed:
    """Watch the started child to its end; ``given``: the pipe ends the child holds,
    closed here in the parent."""
    pid = proc.pid
    timed_out = False
    wake: int | None = None
    pump: Pump | None = None
    handed = False
    open_ends = [end for end in given if end >= 0]
    try:
        while open_ends:
            close_fd(open_ends.pop())
        args, where, started, timeout_s = what
        exited = _exited(pid)
        # a leader that is done already (a quick command) needs no descriptor to wait on
        # (3 us of exec.run of `true`)
        wake = None if exited else _pidfd(pid)
        tick = math.inf if wake is not None else _TICK_S
        handed = True  # from here the pump owns the pipes, even if making it fails
        pump = Pump(pipes[0], pipes[1], limits, stdin=pipes[2], data=data, wake=wake)
        deadline = started + timeout_s
        while not exited and pump.overflow is None:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            pump.step(min(deadline - now, tick))
            exited = _exited(pid)
        if not exited and grace > 0:
            signal_group(pid, signal.SIGTERM)
            until = time.monotonic() + grace
            while not _exited(pid) and (now := time.monotonic()) < until:
                pump.step(min(until - now, tick))
    finally:
        signal_group(pid, signal.SIGKILL)
        proc.wait()
        if pump is not None:
            pump.drain(DRAIN_S)
            pump.close()
        elif not handed:
            for fd in (*pipes, *open_ends):
                close_fd(fd)
        if wake is not None:
            os.close(wake)
        survivors = not wait_group_gone(pid, GONE_S)
    assert pump is not None  # else the exception that prevented it propagates
    stdout, stderr = pump.output()
    code = proc.returncode
    return Completed(
        argv=args,
        cwd=where,
        pid=pid,
        exit_code=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        timed_out=timed_out,
        overflow=pump.overflow,
        stdout=stdout,
        stderr=stderr,
        elapsed_s=time.monotonic() - started,
        timeout_s=timeout_s,
        survivors=survivors,
    )


def _exited(pid: int) -> bool:
    """Whether the leader has exited, without reaping it (it stays a zombie, holding its
    pid and with it the process group id, until ``proc.wait()``)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # someone else reaped it
        return True


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux ≥ 5.3), else None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def _check_options(
    timeout_s: float, max_stdout: int, max_stderr: int, stdin: bytes | None, grace: float
) -> None:
    for name, limit in (("max_stdout", max_stdout), ("max_stderr", max_stderr)):
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ExecError(
                codes.EXEC_OPTION_INVALID, f"`{name}` must be a non-negative integer: {limit!r}"
            )
    for name, seconds, low in (("timeout_s", timeout_s, False), ("term_grace_s", grace, True)):
        valid = isinstance(seconds, int | float) and not isinstance(seconds, bool)
        if not valid or not math.isfinite(seconds) or seconds < 0 or (seconds == 0 and not low):
            what = "a non-negative" if low else "a positive"
            raise ExecError(
                codes.EXEC_OPTION_INVALID, f"`{name}` must be {what} number: {seconds!r}"
            )
    if stdin is not None and not isinstance(stdin, bytes | bytearray | memoryview):
        raise ExecError(codes.EXEC_OPTION_INVALID, "`stdin` must be bytes or None")


def _start_error(exc: OSError, args: tuple[str, ...], where: str) -> ExecError:
    """The failure of ``fork``/``chdir``/``execve`` (after our own checks passed: a race,
    or something they cannot see, like an exec format error)."""
    program = args[0]
    detail = {"argv": list(args), "cwd": where, "errno": exc.errno}
    reason = exc.strerror or str(exc)
    if exc.filename == where:
        code = codes.EXEC_CWD_MISSING if exc.errno == errno.ENOENT else codes.EXEC_CWD_INVALID
        return ExecError(code, f"Cannot enter working directory {where}: {reason}", detail)
    if exc.errno == errno.ENOENT:
        return ExecError(codes.EXEC_NOT_FOUND, f"Executable not found: {program}", detail)
    if exc.errno in (errno.EACCES, errno.EPERM, errno.ENOEXEC, errno.EISDIR):
        return ExecError(codes.EXEC_NOT_EXECUTABLE, f"Cannot execute `{program}`: {reason}", detail)
    return ExecError(codes.EXEC_START_FAILED, f"Cannot start `{program}`: {reason}", detail)
