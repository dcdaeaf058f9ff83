"""The Flow loop through a real ``agc mcp serve --flows`` subprocess over stdio pipes.

The first server starts the Run (the user consents through the scripted form) and is
shut down by closing its stdin while the Run waits for an Agent step (and killed if it
is slow to go, as the SDK's client does); a second server
resumes the Run from its record and the caller answers it to the end, and ``agc flow
status`` on the record agrees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from agent_graph.flow import status as flow_status
from mcp_support import ROOT, Answers, with_client
from test_mcp_flow import Setup, answer_loop

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _params(setup: Setup) -> Any:
    from mcp import StdioServerParameters

    args = ["--flows", str(setup.flows), "--runs", str(setup.runs), "--workspace", "."]
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "agent_graph", "mcp", "serve", *args],
        env={"PYTHONPATH": str(ROOT / "src")},
        cwd=str(setup.work),
    )


async def _call(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    found: dict[str, Any] = result.structured_content
    return found


@pytest.mark.slow
def test_flow_survives_a_server_restart_over_stdio(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    answers = Answers()
    answers.add("accept", {"decision": "run-once"})
    answers.add("accept", {"decision": "run-once"})  # the new process asks again

    async def first(client: Any) -> None:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "flow_answer" in names  # --flows makes `flows` the default profile
        view = await _call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})
        assert view["state"] == "awaiting-agent"

    with_client(_params(setup), "legacy", first, answers)
    # read through the runtime's API, never the record's bytes (its layout is the runtime's)
    stopped = flow_status(setup.record("h"))
    # interrupted when the server stopped its driver on stdin EOF; running when the
    # client's grace ran out first and it killed the server: both resume
    assert stopped["state"] in ("interrupted", "running")

    async def second(client: Any) -> None:
        view = await _call(client, "flow_status", {"run": "h"})
        assert view["state"] == "interrupted"
        resumed = await _call(client, "flow_control", view["next"]["arguments"])
        done = await answer_loop(setup, client, resumed)
        assert done["state"] == "completed"

    with_client(_params(setup), "legacy", second, answers)
    assert len(answers.asked) == 2
    assert setup.ran()
    status = subprocess.run(
        [sys.executable, "-m", "agent_graph", "flow", "status", "--state",
         str(setup.record("h")), "--format", "json"],
        capture_output=True, text=True, env=ENV, timeout=120, check=True,
    )  # fmt: skip
    assert json.loads(status.stdout)["state"] == "completed"
