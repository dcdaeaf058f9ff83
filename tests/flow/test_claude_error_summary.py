"""The Claude Code adapter's failure summary says what the CLI said went wrong.

Claude Code reports some failures (a missing login, an exhausted balance) as an
envelope with ``is_error: true`` and ``subtype: "success"``: the subtype only says the
turn ran to its end, so the summary must not read "reported an error: success: …"
(issue 26 item 17).
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_graph.flow.agents import AgentFailure, AgentRequest, ResultChoice
from agent_graph.flow.agents.claude import ClaudeAdapter


def _adapter(tmp_path: Path, envelope: dict[str, Any], exit_code: int = 0) -> ClaudeAdapter:
    """A stand-in ``claude`` that prints ``envelope`` and exits with ``exit_code``."""
    program = tmp_path / "claude"
    program.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdin.read()\n"
        f"sys.stdout.write({json.dumps(json.dumps(envelope))})\nsys.exit({exit_code})\n",
        encoding="utf-8",
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return ClaudeAdapter(executable=str(program), timeout_s=60)


def _request(cwd: Path) -> AgentRequest:
    return AgentRequest(
        run_id="run-1", flow="f", node="draft", marker="new", agent=None, prompt="Draft it.",
        results=(ResultChoice("drafted", "Drafted."),), cwd=str(cwd),
    )  # fmt: skip


def _summary(tmp_path: Path, envelope: dict[str, Any], exit_code: int = 0) -> str:
    with pytest.raises(AgentFailure) as caught:
        _adapter(tmp_path, envelope, exit_code).ask(_request(tmp_path))
    assert caught.value.category == "agent_execution"
    return str(caught.value)


ENVELOPE = {"type": "result", "session_id": "s-1", "total_cost_usd": 0}


@pytest.mark.parametrize("exit_code", [0, 1])
def test_is_error_with_subtype_success_names_only_the_reason(
    tmp_path: Path, exit_code: int
) -> None:
    summary = _summary(
        tmp_path,
        {**ENVELOPE, "subtype": "success", "is_error": True, "result": "Not logged in"},
        exit_code,
    )
    assert summary.endswith("reported an error: Not logged in"), summary
    assert "success" not in summary


def test_an_error_subtype_is_named_before_the_reason(tmp_path: Path) -> None:
    summary = _summary(
        tmp_path,
        {**ENVELOPE, "subtype": "error_during_execution", "is_error": True, "result": "tool loop"},
    )
    assert summary.endswith("reported an error: error_during_execution: tool loop"), summary


def test_is_error_without_any_message_still_says_so(tmp_path: Path) -> None:
    summary = _summary(tmp_path, {**ENVELOPE, "subtype": "success", "is_error": True})
    assert summary.endswith("reported an error: is_error, with no message"), summary
