"""Special files given where a Run reads a file (``--state``, ``--task @FILE``,
``--agent script:FILE``): a FIFO is refused at once rather than waited on, a device or a
file over the cap is refused rather than read into memory, with the Provider files' codes.

Every call runs in a subprocess with a timeout, so a regression fails instead of hanging."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_graph import codes
from flow_run_support import command, package

SRC = str(Path(__file__).resolve().parents[2] / "src")

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")


def _agc(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "agent_graph", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


def _flow(tmp_path: Path) -> Path:
    return package(
        tmp_path,
        "one",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", "process.stdout.write('a')"),
    )


def _refused(result: subprocess.CompletedProcess[str], code: str) -> None:
    assert result.returncode == 1, result.stderr
    assert code in result.stderr
    assert "Traceback" not in result.stderr


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


@pytest.mark.parametrize("verb", ["status", "events", "resume", "graph"])
def test_state_fifo_is_refused_at_once(tmp_path: Path, verb: str) -> None:
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    before = [str(_flow(tmp_path))] if verb == "graph" else []
    _refused(_agc("flow", verb, *before, "--state", str(fifo)), codes.FILE_READ_FAILED)


def test_state_device_and_oversized_record_are_refused(tmp_path: Path) -> None:
    _refused(_agc("flow", "status", "--state", os.devnull), codes.FILE_READ_FAILED)
    big = _sparse(tmp_path / "big.json", (1 << 30) + 1)
    _refused(_agc("flow", "status", "--state", str(big)), codes.FILE_TOO_LARGE)


@pytest.mark.parametrize("kind", ["fifo", "device", "oversized"])
def test_task_file_special_or_oversized_is_refused(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(tmp_path / "task")
        given, code = str(tmp_path / "task"), codes.FILE_READ_FAILED
    elif kind == "device":
        given, code = "/dev/zero", codes.FILE_READ_FAILED
    else:
        given, code = str(_sparse(tmp_path / "task", 33 * 1024 * 1024)), codes.FILE_TOO_LARGE
    state = tmp_path / "r.json"
    found = _agc("flow", "run", str(_flow(tmp_path)), "--task", "@" + given, "--state", str(state))
    _refused(found, code)
    assert not state.exists()


@pytest.mark.parametrize("kind", ["fifo", "device", "oversized"])
def test_agent_script_special_or_oversized_is_refused(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(tmp_path / "answers")
        given, code = str(tmp_path / "answers"), codes.FILE_READ_FAILED
    elif kind == "device":
        given, code = "/dev/zero", codes.FILE_READ_FAILED
    else:
        given, code = str(_sparse(tmp_path / "answers", 33 * 1024 * 1024)), codes.FILE_TOO_LARGE
    state = tmp_path / "r.json"
    found = _agc(
        "flow", "run", str(_flow(tmp_path)), "--task", "t", "--state", str(state),
        "--agent", "script:" + given,
    )  # fmt: skip
    _refused(found, code)
    assert not state.exists()
