"""The exec layer: argument vectors, exact environments, limits, process groups.

Every test runs real processes. "Alive" is read from ``/proc`` (a killed grandchild is
adopted by PID 1 and may stay a zombie for a moment; a zombie is dead), so the module
runs on Linux only. Timeouts are small; nothing asserts wall-clock speed, but a run that
should return early is given a long timeout and must not report ``timed_out``.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from agent_graph.errors import AgentGraphError
from agent_graph.exec import (
    CODES,
    DEFAULT_ENV_NAMES,
    SHELL,
    Completed,
    ExecError,
    Overflow,
    inherited_env,
    minimal_env,
    run,
    shell_argv,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="uses /proc to see processes")

PY = sys.executable
MIB = 1024 * 1024
ENV = minimal_env(("PATH", "LANG"))


def go(argv: list[str] | tuple[str, ...], **options: object) -> Completed:
    """``run`` with roomy defaults: a cwd, the test env, 10 s and 1 MiB per stream."""
    kwargs: dict[str, object] = {
        "cwd": os.getcwd(),
        "env": ENV,
        "timeout_s": 10.0,
        "max_stdout": MIB,
        "max_stderr": MIB,
    }
    kwargs.update(options)
    return run(argv, **kwargs)  # type: ignore[arg-type]


def py(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def group_alive(pgid: int) -> bool:
    """Whether any member of process group ``pgid`` is alive (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if int(fields[2]) == pgid and fields[0] not in "ZX":
                return True
    return False


def read_pid(path: Path) -> int:
    return int(path.read_text().split()[0])


# -- how a process ended --------------------------------------------------------------------


def test_exit_codes_and_output_are_captured_exactly() -> None:
    done = go(shell_argv("printf 'out\\377'; printf 'err\\n' >&2; exit 3"))
    assert (done.exit_code, done.signal, done.timed_out, done.overflow) == (3, None, False, None)
    assert (done.stdout, done.stderr) == (b"out\xff", b"err\n")
    assert done.argv == (SHELL, "-c", "printf 'out\\377'; printf 'err\\n' >&2; exit 3")
    assert done.cwd == os.getcwd()
    assert done.pgid == done.pid
    assert done.elapsed_s > 0
    assert not done.ok
    with pytest.raises(ExecError) as caught:
        done.check()
    assert caught.value.code == "exec-failed"
    assert caught.value.message == f"`{SHELL}` exited with 3: err"
    assert caught.value.detail["exitCode"] == 3
    assert isinstance(caught.value, AgentGraphError)


def test_success_is_ok_and_check_returns_the_result() -> None:
    done = go(["true"])
    assert (done.exit_code, done.ok) == (0, True)
    assert done.check() is done


def test_a_terminating_signal_is_reported_as_its_number() -> None:
    done = go(shell_argv("kill -s USR1 $$"))
    assert (done.exit_code, done.signal, done.timed_out) == (None, signal.SIGUSR1, False)
    assert done.signal_name == "SIGUSR1"
    with pytest.raises(ExecError) as caught:
        done.check()
    assert caught.value.code == "exec-signal"
    assert "SIGUSR1" in caught.value.message


# -- timeouts and process groups --------------------------------------------------------------


def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    done = go(shell_argv(f"sleep 60 & echo $! > '{pidfile}'; sleep 60"), timeout_s=0.5)
    assert done.timed_out
    assert (done.exit_code, done.signal) == (None, signal.SIGKILL)
    assert not done.survivors
    assert not alive(read_pid(pidfile))
    assert not group_alive(done.pgid)
    with pytest.raises(ExecError) as caught:
        done.check()
    assert caught.value.code == "exec-timeout"
    assert caught.value.message == f"`{SHELL}` exceeded the 0.5 s timeout"


def test_members_left_behind_by_an_exiting_leader_are_killed_without_waiting() -> None:
    # the background sleep keeps stdout and stderr open; we must not wait for it
    done = go(shell_argv("sleep 60 & echo $!"), timeout_s=30.0)
    assert (done.exit_code, done.timed_out) == (0, False)
    assert not alive(int(done.stdout))
    assert not group_alive(done.pgid)


def test_a_child_ignoring_sigterm_is_killed_after_the_grace() -> None:
    done = go(shell_argv("trap '' TERM; sleep 60 & sleep 60"), timeout_s=0.5, term_grace_s=0.2)
    assert done.timed_out
    assert done.signal == signal.SIGKILL
    assert not group_alive(done.pgid)


def test_the_grace_lets_a_child_clean_up_on_sigterm() -> None:
    script = "trap 'echo cleaned; exit 7' TERM; sleep 60 & wait"
    graceful = go(shell_argv(script), timeout_s=0.5, term_grace_s=5.0)
    assert graceful.timed_out
    assert (graceful.exit_code, graceful.stdout) == (7, b"cleaned\n")
    assert not group_alive(graceful.pgid)
    # without a grace the group gets SIGKILL straight away
    abrupt = go(shell_argv(script), timeout_s=0.5)
    assert (abrupt.exit_code, abrupt.signal, abrupt.stdout) == (None, signal.SIGKILL, b"")


def test_a_process_that_left_the_group_cannot_hold_the_pipes_open() -> None:
    # a grandchild that calls setsid() escapes the group kill (documented); it still
    # holds stdout, and run() must return anyway
    escapee = py(
        """
        import os, sys, time
        pid = os.fork()
        if pid == 0:
            os.setsid()
            time.sleep(60)
        else:
            print(pid, flush=True)
        """
    )
    done = go(escapee, timeout_s=30.0)
    pid = int(done.stdout)
    try:
        assert (done.exit_code, done.timed_out) == (0, False)
    finally:
        os.kill(pid, signal.SIGKILL)


# -- output limits ----------------------------------------------------------------------------


def test_stdout_cap_holds_against_50_mib() -> None:
    flood = py(
        """
        import sys
        block = b"x" * 65536
        for _ in range(800):
            sys.stdout.buffer.write(block)
        """
    )
    done = go(flood, max_stdout=1000)
    assert done.overflow == Overflow("stdout", 1000)
    assert done.stdout == b"x" * 1000
    assert done.signal == signal.SIGKILL
    assert not group_alive(done.pgid)
    with pytest.raises(ExecError) as caught:
        done.check()
    assert caught.value.code == "exec-stdout-limit"
    assert caught.value.message == f"`{PY}` exceeded the 1000 byte stdout limit"


def test_stderr_limit_is_separate_from_stdout() -> None:
    both = "import sys; sys.stdout.write('o' * 50); sys.stderr.write('e' * 11)"
    done = go(py(both), max_stdout=50, max_stderr=10)
    assert done.overflow == Overflow("stderr", 10)
    assert (done.stdout, done.stderr) == (b"o" * 50, b"e" * 10)
    with pytest.raises(ExecError) as caught:
        done.check()
    assert caught.value.code == "exec-stderr-limit"
    assert caught.value.detail["limit"] == 10


@pytest.mark.parametrize(("written", "over"), [(0, False), (100, False), (101, True)])
def test_exactly_the_limit_is_fine(written: int, over: bool) -> None:
    done = go(py(f"import sys; sys.stdout.write('a' * {written})"), max_stdout=100)
    assert (done.overflow is not None) is over
    assert done.stdout == b"a" * min(written, 100)


def test_a_zero_limit_allows_no_output() -> None:
    assert go(["true"], max_stderr=0, max_stdout=0).ok
    assert go(["echo"], max_stdout=0).overflow == Overflow("stdout", 0)


def test_streams_are_read_concurrently() -> None:
    # 4 MiB to each stream, alternately: a reader that drained one pipe before the
    # other would deadlock against the child's full stderr pipe
    chatty = py(
        """
        import sys
        for _ in range(64):
            sys.stderr.buffer.write(b"e" * 65536)
            sys.stdout.buffer.write(b"o" * 65536)
        """
    )
    done = go(chatty, max_stdout=8 * MIB, max_stderr=8 * MIB, timeout_s=30.0)
    assert (done.exit_code, done.timed_out, done.overflow) == (0, False, None)
    assert (len(done.stdout), len(done.stderr)) == (4 * MIB, 4 * MIB)


# -- environment ------------------------------------------------------------------------------


def test_the_environment_is_exactly_what_is_passed() -> None:
    done = go(["/usr/bin/env"], env={"ONLY": "this", "SPACED": "a b=c"})
    assert done.stdout == b"ONLY=this\nSPACED=a b=c\n"
    assert go(["/usr/bin/env"], env={}).stdout == b""


def test_minimal_env_picks_named_variables_only() -> None:
    source = {"PATH": "/bin", "HOME": "/root", "SECRET": "x", "LANG": "C.UTF-8"}
    assert minimal_env(source=source) == {"PATH": "/bin", "LANG": "C.UTF-8"}
    assert minimal_env(("HOME", "NOPE", "PATH"), source=source) == {"HOME": "/root", "PATH": "/bin"}
    assert "HOME" not in DEFAULT_ENV_NAMES
    os.environ.setdefault("PATH", "/usr/bin:/bin")
    assert minimal_env(("PATH",)) == {"PATH": os.environ["PATH"]}


def test_inherited_env_is_os_environ_now_and_the_same_copy_while_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = inherited_env()
    assert list(first.items()) == list(os.environ.items())  # names, values and order
    assert inherited_env() is first
    with pytest.raises(TypeError):
        first["AGC_TEST_ENV"] = "x"  # type: ignore[index]
    # every kind of change makes a new copy: added, changed, removed, moved
    monkeypatch.setenv("AGC_TEST_ENV", "one")
    added = inherited_env()
    assert added is not first
    assert added["AGC_TEST_ENV"] == "one"
    monkeypatch.setenv("AGC_TEST_ENV", "two")
    assert inherited_env()["AGC_TEST_ENV"] == "two"
    name, value = next(iter(os.environ.items()))
    monkeypatch.delenv(name)
    assert name not in inherited_env()
    os.environ[name] = value  # back, at the end: same items, another order
    moved = inherited_env()
    assert list(moved.items()) == list(os.environ.items())
    assert list(moved)[-1] == name
    monkeypatch.delenv("AGC_TEST_ENV")
    assert list(inherited_env().items()) == list(os.environ.items())


def test_a_child_given_inherited_env_sees_exactly_os_environ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def seen() -> list[str]:
        return go(["/usr/bin/env"], env=inherited_env()).stdout.decode().splitlines()

    monkeypatch.setenv("AGC_TEST_SPACED", "a b=c")
    assert seen() == [f"{k}={v}" for k, v in os.environ.items()]
    monkeypatch.delenv("AGC_TEST_SPACED")
    monkeypatch.setenv("AGC_TEST_LATER", "1")
    assert seen() == [f"{k}={v}" for k, v in os.environ.items()]


def test_the_program_is_found_on_the_childs_path(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "my-tool"
    tool.parent.mkdir()
    tool.write_text('#!/bin/sh\necho found "$0"\n')
    tool.chmod(0o755)
    done = go(["my-tool"], env={"PATH": f"/nonexistent:{tool.parent}"})
    assert done.stdout == f"found {tool}\n".encode()
    # not on the child's PATH: the parent's does not count
    with pytest.raises(ExecError) as caught:
        go(["my-tool"], env={"PATH": "/nonexistent"})
    assert caught.value.code == "exec-not-found"
    # a relative path is resolved in the child's cwd
    done = go(["bin/my-tool"], cwd=tmp_path, env={})
    assert done.stdout == f"found {tool}\n".encode()
    # argv[0] reaches the program as written, not as resolved
    assert go(["cat", "/proc/self/cmdline"]).stdout == b"cat\0/proc/self/cmdline\0"


# -- no shell unless asked --------------------------------------------------------------------


def test_arguments_are_passed_literally_without_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    tricky = ["a; touch pwned", "$(touch pwned)", "`touch pwned`", "*", "'q' \"d\"", "", "$HOME"]
    show = py("import sys; sys.stdout.write('\\n'.join(sys.argv[1:]))")
    done = go([*show, *tricky], cwd=tmp_path)
    assert done.stdout.decode().split("\n") == tricky
    assert not marker.exists()


def test_shell_argv_is_the_one_way_to_a_shell(tmp_path: Path) -> None:
    assert shell_argv("echo a; echo b") == (SHELL, "-c", "echo a; echo b")
    done = go(shell_argv("echo a; touch made; echo $((1 + 2))"), cwd=tmp_path)
    assert done.stdout == b"a\n3\n"
    assert (tmp_path / "made").exists()


# -- stdin ------------------------------------------------------------------------------------


def test_stdin_is_written_and_closed() -> None:
    payload = b'{"json": "with \\u0000 and bytes \xff"}\x00tail'
    assert go(["cat"], stdin=payload).stdout == payload
    big = bytes(range(256)) * (5 * MIB // 256)
    assert go(["cat"], stdin=big, max_stdout=8 * MIB).stdout == big


def test_without_stdin_the_child_reads_end_of_file() -> None:
    done = go(["cat"], timeout_s=30.0)
    assert (done.exit_code, done.stdout, done.timed_out) == (0, b"", False)


def test_a_child_that_ignores_its_stdin_does_not_block_us() -> None:
    done = go(["true"], stdin=b"x" * (4 * MIB), timeout_s=30.0)
    assert (done.exit_code, done.timed_out) == (0, False)


# -- requests that cannot start ---------------------------------------------------------------


def _code(argv: object, **options: object) -> str:
    with pytest.raises(ExecError) as caught:
        go(argv, **options)  # type: ignore[arg-type]
    assert caught.value.code in CODES
    assert "\n" not in caught.value.message
    return caught.value.code


def test_missing_and_unrunnable_programs(tmp_path: Path) -> None:
    plain = tmp_path / "plain.sh"
    plain.write_text("echo hi\n")
    plain.chmod(0o644)
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF not really")
    garbage.chmod(0o755)
    assert _code(["definitely-not-a-program-7f3a"]) == "exec-not-found"
    assert _code([str(tmp_path / "missing")]) == "exec-not-found"
    assert _code(["./missing"], cwd=tmp_path) == "exec-not-found"
    assert _code([str(plain)]) == "exec-not-executable"
    assert _code(["plain.sh"], env={"PATH": str(tmp_path)}) == "exec-not-executable"
    assert _code([str(tmp_path)]) == "exec-not-executable"
    assert _code([str(garbage)]) == "exec-not-executable"


def test_missing_or_bad_working_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert _code(["true"], cwd=tmp_path / "missing") == "exec-cwd-missing"
    assert _code(["true"], cwd=tmp_path / "file") == "exec-cwd-invalid"
    assert _code(["true"], cwd=None) == "exec-cwd-invalid"
    assert _code(["true"], cwd="") == "exec-cwd-invalid"


@pytest.mark.parametrize(
    ("argv", "options", "code"),
    [
        ("echo hi", {}, "exec-argv-invalid"),
        ([], {}, "exec-argv-invalid"),
        ([""], {}, "exec-argv-invalid"),
        (["echo", 1], {}, "exec-argv-invalid"),
        (["echo", "a\0b"], {}, "exec-argv-invalid"),
        (["true"], {"env": {"A=B": "1"}}, "exec-env-invalid"),
        (["true"], {"env": {"": "1"}}, "exec-env-invalid"),
        (["true"], {"env": {"A": "\0"}}, "exec-env-invalid"),
        (["true"], {"timeout_s": 0}, "exec-option-invalid"),
        (["true"], {"timeout_s": -1.0}, "exec-option-invalid"),
        (["true"], {"timeout_s": float("nan")}, "exec-option-invalid"),
        (["true"], {"timeout_s": float("inf")}, "exec-option-invalid"),
        (["true"], {"max_stdout": -1}, "exec-option-invalid"),
        (["true"], {"max_stderr": 1.5}, "exec-option-invalid"),
        (["true"], {"max_stdout": True}, "exec-option-invalid"),
        (["true"], {"term_grace_s": -0.1}, "exec-option-invalid"),
        (["true"], {"stdin": "text"}, "exec-option-invalid"),
    ],
)
def test_invalid_requests(argv: object, options: dict[str, object], code: str) -> None:
    assert _code(argv, **options) == code


def test_codes_are_kebab_case_and_unique() -> None:
    assert len(set(CODES)) == len(CODES)
    assert all(c.startswith("exec-") and c == c.lower() and " " not in c for c in CODES)


# -- concurrency ------------------------------------------------------------------------------


def test_runs_from_several_threads_stay_apart() -> None:
    results: dict[int, Completed] = {}

    def one(n: int) -> None:
        results[n] = go(shell_argv(f"echo {n}; echo {n} >&2; exit {n}"))

    threads = [threading.Thread(target=one, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n, done in results.items():
        assert (done.exit_code, done.stdout, done.stderr) == (n, b"%d\n" % n, b"%d\n" % n)


# -- descriptors ------------------------------------------------------------------------------


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_every_pipe_end_is_closed_however_a_run_ends(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF not really")
    garbage.chmod(0o755)
    go(["true"])  # whatever a first run sets up once is not counted
    before = _open_fds()
    go(["true"])
    go(shell_argv("cat; echo err >&2"), stdin=b"fed")
    go(shell_argv("exec >&- 2>&-; sleep 0.2"))  # closes its pipes, then runs on
    go(py("import time; time.sleep(5)"), timeout_s=0.2)
    go(py("import sys; sys.stdout.write('x' * 100)"), max_stdout=10)
    go(py("import os; os.close(0)"), stdin=b"y" * (1 << 20))  # stdin left unread
    assert _code([str(garbage)]) == "exec-not-executable"  # refused by execve, in Popen
    assert _code(["true"], cwd=tmp_path / "missing") == "exec-cwd-missing"
    assert _open_fds() == before


def test_an_interrupt_as_supervision_starts_still_kills_the_child(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Closing the child's pipe ends is the first thing supervision does, inside its
    cleanup: a KeyboardInterrupt there kills and reaps the group and closes every end."""
    from agent_graph.exec import process

    started: list[int] = []
    real_popen, real_close = process.subprocess.Popen, process.close_fd

    def popen(*args: object, **kwargs: object) -> object:
        proc = real_popen(*args, **kwargs)  # type: ignore[call-overload]
        started.append(proc.pid)
        return proc

    def close_once(fd: int | None) -> None:
        real_close(fd)
        if started and not getattr(close_once, "fired", False):
            close_once.fired = True  # type: ignore[attr-defined]
            raise KeyboardInterrupt

    go(["true"])  # whatever a first run sets up once is not counted
    before = _open_fds()
    monkeypatch.setattr(process.subprocess, "Popen", popen)
    monkeypatch.setattr(process, "close_fd", close_once)
    with pytest.raises(KeyboardInterrupt):
        go(py("import time; time.sleep(30)"), timeout_s=60.0)
    monkeypatch.undo()
    assert len(started) == 1
    assert not alive(started[0])
    assert not group_alive(started[0])
    assert _open_fds() == before
