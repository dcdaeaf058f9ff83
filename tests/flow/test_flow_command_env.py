"""C.5: a command node's environment is the runner's ``os.environ`` as it is when the
command starts: every variable, nothing added, and a change the host makes between two
commands reaches the second (the runtime keeps one checked copy while nothing changes)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_graph import flow
from flow_run_support import command, package

PRINT_ENV = "process.stdout.write(JSON.stringify(process.env))"


def _seen(state: Path) -> list[dict[str, str]]:
    document = json.loads(state.read_text(encoding="utf-8"))
    return [json.loads(v["result"]["content"]["stdout"]) for v in document["visits"]]


def test_each_command_sees_os_environ_as_it_is_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = package(
        tmp_path,
        "env",
        "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|已执行| c[c]\n"
        "c -->|已执行| finish((结束))",
        command("a", PRINT_ENV),
        command("b", PRINT_ENV),
        command("c", PRINT_ENV),
    )
    monkeypatch.setenv("AGC_TEST_SPACED", "a b=c")
    expected = [dict(os.environ)]

    def changing(event: dict[str, Any], depth: int) -> None:
        # the visited event of a is handed on once durable, before b starts: so is b's
        if event["type"] == "visited" and event["node"] == "a":
            os.environ["AGC_TEST_ADDED"] = "1"
            expected.append(dict(os.environ))
        elif event["type"] == "visited" and event["node"] == "b":
            del os.environ["AGC_TEST_SPACED"]
            expected.append(dict(os.environ))

    monkeypatch.setenv("AGC_TEST_ADDED", "placeholder")  # restored (removed) afterwards
    monkeypatch.delenv("AGC_TEST_ADDED")
    state = tmp_path / "run.json"
    summary = flow.run(pkg, "t", state=state, cwd=tmp_path, on_event=changing)
    assert summary.state == "completed"
    assert _seen(state) == expected
    assert "AGC_TEST_ADDED" not in expected[0]
    assert expected[1]["AGC_TEST_ADDED"] == "1"
    assert "AGC_TEST_SPACED" not in expected[2]
