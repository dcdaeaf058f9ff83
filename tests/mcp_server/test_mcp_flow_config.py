"""``agc mcp config`` with ``--flows`` and ``--http``: snippets that start the same server."""

from __future__ import annotations

import shlex

import pytest

from cli_support import run

HTTP = ["--http", "127.0.0.1:8765", "--token-file", ".agc-token"]


def test_flows_reach_the_snippet_and_make_flows_the_default_profile(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["mcp", "config", "claude", "--flows", "flows", "--runs", "runs"], capsys)
    assert code == 0
    command = shlex.split(out.splitlines()[-1])
    assert command[command.index("--") + 1 :] == [
        "agc", "mcp", "serve", "--flows", "flows", "--runs", "runs",
    ]  # fmt: skip


@pytest.mark.parametrize("client", ["claude", "codex", "vscode", "cursor"])
def test_http_snippets_name_the_url_and_never_the_token(
    client: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["mcp", "config", client, "--runs", "runs", *HTTP], capsys)
    assert code == 0
    assert "http://127.0.0.1:8765/mcp" in out
    assert "agc mcp serve --runs runs --http 127.0.0.1:8765 --token-file .agc-token" in out
    assert "Authorization" in out or "bearer_token_env_var" in out


@pytest.mark.parametrize(
    "args",
    [
        ["desktop", *HTTP],
        ["claude", "--http", "127.0.0.1:0", "--token-file", "t"],
        ["claude", "--http", "10.0.0.1:8765", "--token-file", "t"],
        ["claude", "--http", "127.0.0.1:8765"],
    ],
)
def test_http_snippets_refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["mcp", "config", *args], capsys)
    assert code != 0
    assert "ERROR" in err
