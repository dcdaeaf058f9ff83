"""``python -m agent_graph mcp serve`` as a real subprocess over stdio pipes.

The SDK's own stdio client drives the weekly report to ``complete`` with a scripted Gate
answer in both eras, and ``agc run status`` on the same Run file agrees. A raw JSON-lines
harness checks that stdout carries nothing but JSON-RPC messages while the server's
observers run child processes that write to stdout and stderr.
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

from mcp_support import ROOT, Answers, Workspace, serve_args, with_client, workspace

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _params(ws: Workspace) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "agent_graph", "mcp", "serve", *serve_args(ws)],
        env={"PYTHONPATH": str(ROOT / "src")},
        cwd=str(ws.root),
    )


async def _call(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    found: dict[str, Any] = result.structured_content
    return found


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_weekly_report_completes_over_stdio(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    answers = Answers()
    answers.add("accept", {"decision": "approve"})

    async def body(client: Any) -> None:
        step = await _call(client, "run_start", {"run": "w48"})
        assert step["next"]["tool"] == "run_record"
        ws.draft()
        step = await _call(client, "run_record", step["next"]["arguments"])
        assert step["next"]["tool"] == "gate_resolve"
        step = await _call(client, "gate_resolve", step["next"]["arguments"])
        assert step["decision"] == "approved"
        ws.publish()
        step = await _call(client, "run_record", step["next"]["arguments"])
        assert step["evaluation"]["statusCode"] == "complete"

    with_client(_params(ws), mode, body, answers)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_graph",
            "run",
            "status",
            "--state",
            str(ws.run_file("w48")),
            *serve_args(ws)[:2],
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout)["evaluation"]["statusCode"] == "complete"


NOISY = """\
import json, sys
print("chatter on stdout", flush=True)
print("chatter on stderr", file=sys.stderr)
print(json.dumps({}))
"""


@pytest.mark.slow
def test_stdout_carries_only_protocol_messages(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws.root / "noisy.py").write_text(NOISY, encoding="utf-8")
    with ws.config.open("a", encoding="utf-8") as config:
        config.write(
            f"  - id: noisy\n    writes: [noise]\n    command: [{sys.executable}, noisy.py]\n"
        )
    requests: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "run_start", "arguments": {"run": "w48"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "run_status", "arguments": {"run": "w48"}},
        },
    ]
    # one request at a time: the answer to each is read before the next is sent
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_graph", "mcp", "serve", *serve_args(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ws.root,
        env=ENV,
        text=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    lines = []
    try:
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if request.get("id") is not None:
                lines.append(proc.stdout.readline())
        proc.stdin.close()
        lines += proc.stdout.read().splitlines()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    messages = [json.loads(line) for line in lines if line.strip()]
    assert [m.get("id") for m in messages] == [1, 2, 3, 4]
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    status = messages[3]["result"]["structuredContent"]
    assert {o["observer"] for o in status["observed"]} == {"report-draft", "publication", "noisy"}
    assert proc.returncode == 0  # stdin EOF ends the server
    assert "chatter" not in "".join(lines)
