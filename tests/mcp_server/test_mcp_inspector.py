"""The MCP Inspector's CLI mode against ``agc mcp serve`` over stdio: an independent
client's view of the tool list (with its ``--strict`` portability checks) and a call.

Skipped unless the Inspector is installed: ``$AGC_MCP_INSPECTOR`` names its
``mcp-inspector`` script, else ``~/.cache/agent-graph-inspector`` holds it
(``npm install --no-save @modelcontextprotocol/inspector@2.12.0`` there); it runs offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_support import ROOT, WEEKLY

pytest.importorskip("mcp")

_DEFAULT = Path.home() / ".cache" / "agent-graph-inspector" / "node_modules" / ".bin"
INSPECTOR = Path(os.environ.get("AGC_MCP_INSPECTOR", _DEFAULT / "mcp-inspector"))

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not INSPECTOR.is_file(),
    reason="the MCP Inspector CLI is not installed (see this module's docstring)",
)


def _inspect(tmp_path: Path, *method: str) -> dict[str, object]:
    server = [
        "env",
        f"PYTHONPATH={ROOT / 'src'}",
        sys.executable,
        "-m",
        "agent_graph",
        "mcp",
        "serve",
        "-m",
        str(WEEKLY),
        "--tools",
        "all",
    ]
    done = subprocess.run(
        [str(INSPECTOR), "--cli", *method, "--", *server],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        check=True,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.slow
def test_the_inspector_lists_the_tools_strictly(tmp_path: Path) -> None:
    listed = _inspect(tmp_path, "--method", "tools/list", "--strict")
    tools = listed["tools"]
    assert isinstance(tools, list)
    assert [t["name"] for t in tools][:3] == ["providers_list", "graph_evaluate", "graph_route"]


@pytest.mark.slow
def test_the_inspector_calls_a_tool(tmp_path: Path) -> None:
    called = _inspect(
        tmp_path, "--method", "tools/call", "--tool-name", "run_start", "--tool-arg", "run=w48"
    )
    structured = called["structuredContent"]
    assert isinstance(structured, dict)
    assert structured["route"]["node"] == "draft"
