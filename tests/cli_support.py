"""Running ``agc`` in process for tests: raw results, JSON documents and error envelopes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_graph.cli import main


def run(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one ``agc`` invocation."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def ok_json(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The JSON document of a successful command."""
    code, out, err = run([*args, "--format", "json"], capsys)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def error_of(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The ``error`` member of the envelope a failing command writes to stderr (exit 1)."""
    code, out, err = run([*args, "--format", "json"], capsys)
    assert code == 1, out
    assert out == ""
    envelope = json.loads(err)
    assert envelope["schema"] == "agent-graph.error.v1"
    error: dict[str, Any] = envelope["error"]
    return error


ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def bash_block(heading: str, page: Path = README) -> str:
    """The one ```bash block under ``## heading`` of ``page`` (README.md or a docs page)."""
    text = page.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, re.S)
    return str(block)


def run_bash(block: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``block`` run by ``bash -e`` in ``cwd`` as a user would, with this Python's ``agc``
    first on PATH; fails the test (with the output) unless it exits 0."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-e", "-c", block],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done
