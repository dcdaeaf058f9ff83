"""``agc mcp serve --http``: loopback only, a bearer token written 0600, Host/Origin checks,
and both protocol eras through the SDK's Streamable HTTP client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp_support import ROOT, serve_args, workspace

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    ws = workspace(tmp_path)
    token_file = tmp_path / "token"
    args = [*serve_args(ws), "--http", "127.0.0.1:0", "--token-file", str(token_file)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_graph", "mcp", "serve", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ws.root,
    )
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        assert "listening on " in line, line
        url = line.split("listening on ", 1)[1].strip()
        assert token_file.stat().st_mode & 0o777 == 0o600
        yield url, token_file.read_text(encoding="utf-8").strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()


def _post(url: str, headers: dict[str, str]) -> int:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **headers,
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        error.close()
        return int(error.code)


def test_token_and_origin_are_checked(served: tuple[str, str]) -> None:
    url, token = served
    assert _post(url, {}) == 401
    assert _post(url, {"authorization": "Bearer wrong"}) == 401
    auth = {"authorization": f"Bearer {token}"}
    assert _post(url, {**auth, "origin": "http://evil.example"}) == 403
    assert _post(url, auth) == 200


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_both_eras_over_http(served: tuple[str, str], mode: str) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    url, token = served

    async def body(client: Any) -> None:
        listed = await client.call_tool("providers_list", {})
        assert listed.structured_content["providers"][0]["id"] == "example.weekly-report"
        started = await client.call_tool("run_start", {"run": f"w48-{mode}"})
        assert started.structured_content["route"]["node"] == "draft"

    async def run() -> None:
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}) as http:
            await body_with(streamable_http_client(url, http_client=http))

    async def body_with(transport: Any) -> None:
        from mcp import Client

        async with Client(transport, mode=mode) as client:
            await body(client)

    import anyio

    anyio.run(run)


@pytest.mark.parametrize("address", ["0.0.0.0:0", "example.com:80", "127.0.0.1:x"])
def test_only_loopback_is_served(tmp_path: Path, address: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agent_graph", "mcp", "serve", "--http", address,
         "--token-file", str(tmp_path / "t"), "--format", "json"],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    assert json.loads(done.stderr)["error"]["code"] == "mcp-http-invalid"
    assert not (tmp_path / "t").exists()
