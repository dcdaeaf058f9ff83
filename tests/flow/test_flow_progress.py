"""What a person sees while and after a Run runs (issue 26 item 13): the running node and
its elapsed time on a terminal (one line, cleared; nothing without a terminal, nothing on
stdout), "timed out" for a command the timeout killed, and the Result as text."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_graph.cli.flow_display import RESULT_LINES, result_lines
from cli_support import run
from flow_run_support import command, package

PYTHON_AGC = (sys.executable, "-m", "agent_graph")
SRC = str(Path(__file__).resolve().parents[2] / "src")
CLEAR = "\r\x1b[K"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _slow(tmp_path: Path) -> Path:
    return package(
        tmp_path,
        "slow",
        "start((开始)) --> wait[wait]\nwait -->|已执行| finish((结束))",
        command("wait", "setTimeout(()=>process.stdout.write('waited'),3500)"),
    )


def _read_all(fd: int, proc: subprocess.Popen[bytes]) -> bytes:
    """Everything written to the pty until the process ends (a pty must be drained, or a
    chatty child blocks on it)."""
    data = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the other end closed (Linux: EIO)
                break
            if not chunk:
                break
            data += chunk
        elif proc.poll() is not None:
            break
    return data


@pytest.mark.slow
def test_a_terminal_sees_the_running_node_and_its_time_then_a_cleared_line(
    tmp_path: Path,
) -> None:
    pkg = _slow(tmp_path)
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(
            [*PYTHON_AGC, "flow", "run", str(pkg), "--task", "t", "--state", "r.json"],
            cwd=tmp_path,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=slave,
        )
        os.close(slave)
        terminal = _read_all(master, proc).decode("utf-8")
        out = proc.communicate(timeout=60)[0].decode("utf-8")
    finally:
        os.close(master)
    assert proc.returncode == 0
    assert "running wait (0 s)" in terminal
    assert "running wait (2 s)" in terminal  # redrawn as time passes, not drawn once
    assert terminal.endswith(CLEAR)  # nothing left on the line at the end
    drawn = [part for part in terminal.split(CLEAR) if part]
    assert drawn
    assert all(part.startswith("running wait (") for part in drawn)
    assert "\x1b" not in out
    assert "running" not in out
    assert "wait: 已执行" in out


def test_without_a_terminal_there_is_no_progress_line(tmp_path: Path) -> None:
    pkg = package(
        tmp_path,
        "quick",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", "setTimeout(()=>process.stdout.write('done'),600)"),
    )
    done = subprocess.run(
        [*PYTHON_AGC, "flow", "run", str(pkg), "--task", "t", "--state", "r.json"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "\x1b" not in done.stdout


def test_a_timed_out_command_says_so_in_the_summary_and_the_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pkg = package(
        tmp_path,
        "late",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", "process.stdout.write('partial');setTimeout(()=>{},10000)"),
    )
    state = str(tmp_path / "r.json")
    code, out, _ = run(
        ["flow", "run", str(pkg), "--task", "t", "--state", state, "--command-timeout", "0.5"],
        capsys,
    )
    assert code == 0
    assert "a: 已执行" in out
    assert out.splitlines()[0].endswith(", timed out")
    assert "Timed out (--command-timeout): a" in out
    assert "  partial" in out  # the Result is the command's stdout, as text
    assert "(the command timed out: --command-timeout)" in out
    code, out, _ = run(
        [
            "flow",
            "run",
            str(pkg),
            "--task",
            "t",
            "--state",
            state + "2",
            "--format",
            "json",
            "--command-timeout",
            "0.5",
        ],
        capsys,
    )
    assert json.loads(out)["timedOutCommands"] == ["a"]
    code, out, _ = run(["flow", "events", "--state", state], capsys)
    visited = next(line for line in out.splitlines() if "visited" in line)
    assert visited.endswith(", timed out")
    assert "timed out" in json.dumps(json.loads(run_json(state, capsys))["events"])


def run_json(state: str, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = run(["flow", "events", "--state", state, "--format", "json"], capsys)
    assert code == 0
    return out


def test_the_result_is_shown_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = package(
        tmp_path,
        "lines",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", "process.stdout.write('first \"line\"\\nsecond\\n')"),
    )
    code, out, _ = run(
        ["flow", "run", str(pkg), "--task", "t", "--state", str(tmp_path / "r.json")], capsys
    )
    assert code == 0
    assert 'Result:\n  first "line"\n  second\nRecord:' in out
    assert "\\n" not in out
    assert "exitCode" not in out
    code, out, _ = run(["flow", "status", "--state", str(tmp_path / "r.json")], capsys)
    assert 'Result:\n  first "line"\n  second\n' in out


def test_result_lines() -> None:
    assert result_lines("one line", "more") == ["Result: one line"]
    assert result_lines({"a": [1, "é"]}, "more") == ['Result: {"a": [1, "é"]}']
    assert result_lines("", "more") == ["Result: (empty)"]
    failed = {"status": "failure", "exitCode": 3, "stdout": "", "stderr": "boom"}
    assert result_lines(failed, "more") == ["Result:", "  (the command failed: exit code 3)"]
    many = "\n".join(str(i) for i in range(RESULT_LINES + 5))
    lines = result_lines(many, "agc flow status --state r.json --format json")
    assert lines[1:3] == ["  0", "  1"]
    assert lines[-1] == "  … 5 more line(s): agc flow status --state r.json --format json"
    assert len(lines) == RESULT_LINES + 2
