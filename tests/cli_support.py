"""Running ``agc`` in process for tests: raw results, JSON documents and error envelopes."""

from __future__ import annotations

import json
from collections.abc import Sequence
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
