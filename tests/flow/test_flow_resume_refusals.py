"""Resume's refusals that keep a Run safe: a command interrupted mid-way (Ctrl-C, a crash)
is the person's decision (a plain resume refuses, ``command-interrupted``, naming
``--rerun-interrupted`` and ``--fail-interrupted``; each then goes on); a forged record
cannot make agc write outside its directory; a cwd that became a file is named as such."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_graph import codes, flow
from agent_graph.errors import AgentGraphError
from agent_graph.flow.runtime import status, store
from flow_run_support import (
    Crash,
    call,
    command,
    crash_when,
    package,
    read,
    slow_command_flow,
    visited,
)

PYTHON_AGC = (sys.executable, "-m", "agent_graph")
BOTH = ("--rerun-interrupted", "--fail-interrupted")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _agc(words: list[str]) -> subprocess.CompletedProcess[str]:
    """``words`` as printed (``agc …``), run by this interpreter from the worktree."""
    assert words[0] == "agc"
    return subprocess.run(
        [*PYTHON_AGC, *words[1:]],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.glob("*.json")}


def _child_flow(root: Path) -> Path:
    pkg = package(
        root,
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| f[f]\n"
        "f -->|已执行| finish",
        call("c", "kid"),
        command("f", "process.stdout.write('fallback')"),
    )
    package(
        root,
        "kid",
        "start((开始)) --> l[l]\nl -->|已执行| finish((结束))",
        command("l", "process.stdout.write('leaf')"),
    )
    return pkg


def _crashed_in_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "r.json"
    with (
        crash_when(
            monkeypatch,
            lambda d: (
                d["parent"] is not None and any(v["status"] == "running" for v in d["visits"])
            ),
        ),
        pytest.raises(Crash),
    ):
        flow.run(_child_flow(tmp_path), "t", state=state)
    return state


@pytest.mark.slow
def test_ctrl_c_during_a_command_then_plain_resume_refuses_then_rerun(tmp_path: Path) -> None:
    pkg, pid = slow_command_flow(tmp_path)
    state = tmp_path / "my run.json"  # a space: the printed commands must quote it
    proc = subprocess.Popen(
        [*PYTHON_AGC, "flow", "run", str(pkg), "--task", "t", "--state", str(state)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        from test_flow_run_kill import wait_for

        wait_for(pid)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert proc.returncode == 130
    assert "Interrupted command: a" in out
    printed = {
        line.split(": ", 1)[0]: shlex.split(line.split(": ", 1)[1])
        for line in out.splitlines()
        if line.startswith(("Run it again: ", "Or fail it (command_interrupted): "))
    }
    expected = ["agc", "flow", "resume", "--state", str(state)]
    assert printed == {
        "Run it again": [*expected, "--rerun-interrupted"],
        "Or fail it (command_interrupted)": [*expected, "--fail-interrupted"],
    }
    before = _files(tmp_path)
    refused = _agc(expected)
    assert refused.returncode == 1
    assert codes.COMMAND_INTERRUPTED in refused.stderr
    assert "--rerun-interrupted" in refused.stderr
    assert "--fail-interrupted" in refused.stderr
    assert _files(tmp_path) == before  # nothing changed: still interrupted, still resumable
    again = _agc(printed["Run it again"])
    assert again.returncode == 0, again.stderr
    assert visited(read(state)) == [("a", "已执行"), ("b", "已执行")]


def test_a_plain_resume_refuses_and_fail_interrupted_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = package(
        tmp_path,
        "one",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", "process.stdout.write('a')"),
    )
    state = tmp_path / "r.json"
    with crash_when(monkeypatch, lambda d: bool(d["visits"])), pytest.raises(Crash):
        flow.run(pkg, "t", state=state)
    before = _files(tmp_path)
    assert flow.status(state)["state"] == "running"
    for _ in range(2):  # refusing twice: refusing leaves nothing that a second one would see
        with pytest.raises(AgentGraphError) as refused:
            flow.resume(state)
        assert refused.value.code == codes.COMMAND_INTERRUPTED
        assert "a was interrupted" in refused.value.message
        assert _files(tmp_path) == before
    summary = flow.resume(state, fail_interrupted=True)
    assert summary.state == "failed"
    assert summary.error is not None
    assert summary.error["category"] == "command_interrupted"
    assert [r["strategy"] for r in read(state)["recoveries"]] == ["refuse-command"]


def test_an_interrupted_command_in_a_child_run_is_refused_then_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _crashed_in_child(tmp_path, monkeypatch)
    before = _files(tmp_path)
    with pytest.raises(AgentGraphError) as refused:
        flow.resume(state)
    assert refused.value.code == codes.COMMAND_INTERRUPTED
    assert "c → l" in refused.value.message
    assert _files(tmp_path) == before  # the parent's record and the child's
    summary = flow.resume(state, fail_interrupted=True)
    assert summary.state == "completed"  # the parent took the child's 已失败 edge
    parent = read(state)
    assert [n for n, _ in visited(parent)] == ["c", "f"]
    assert visited(parent)[0] == ("c", "已失败")
    child = read(tmp_path / parent["visits"][0]["childState"])
    assert child["status"] == "failed"
    assert child["error"]["category"] == "command_interrupted"


def test_an_interrupted_command_in_a_child_run_reruns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _crashed_in_child(tmp_path, monkeypatch)
    summary = flow.resume(state, rerun_interrupted=True)
    assert summary.state == "completed"
    assert [n for n, _ in visited(read(state))] == ["c"]


def test_rerun_and_fail_interrupted_together_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _crashed_in_child(tmp_path, monkeypatch)
    before = _files(tmp_path)
    with pytest.raises(AgentGraphError) as refused:
        flow.resume(state, rerun_interrupted=True, fail_interrupted=True)
    assert refused.value.code == codes.RUN_OPTION_INVALID
    both = _agc(["agc", "flow", "resume", "--state", str(state), *BOTH])
    assert both.returncode == 2
    assert _files(tmp_path) == before


def _forge(state: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the record and recompute its checksum, as anyone who can write it can: the
    whole state (snapshot and journal folded) written back as one file, the journal gone."""
    document = store.RunFile(state).read()
    change(document)
    document.pop("checksum")
    document["checksum"] = store.checksum(document)
    state.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    store.RunFile(state).journal.unlink(missing_ok=True)


@pytest.mark.parametrize("name", ["../escape.json", "ABSOLUTE", "sub/r.run-1.json", "r.json"])
def test_a_forged_child_state_is_refused_and_nothing_is_written_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    state = runs / "r.json"
    with (
        crash_when(monkeypatch, lambda d: d["parent"] is None and bool(d["visits"])),
        pytest.raises(Crash),
    ):
        flow.run(_child_flow(tmp_path), "t", state=state)
    target = str(tmp_path / "abs.json") if name == "ABSOLUTE" else name

    def point_elsewhere(document: dict[str, Any]) -> None:
        document["visits"][0]["childState"] = target

    _forge(state, point_elsewhere)
    for reading in (flow.resume, status):
        with pytest.raises(AgentGraphError) as refused:
            reading(state)
        assert refused.value.code == codes.RUN_RECORD_INVALID
        assert "visits[0].childState" in refused.value.message
        assert refused.value.diagnostics[0].pointer == "/visits/0/childState"
    assert sorted(p.name for p in tmp_path.glob("*.json")) == []
    assert sorted(p.name for p in runs.iterdir() if p.suffix == ".json") == ["r.json"]


def test_a_cwd_that_became_a_file_is_run_cwd_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    state = tmp_path / "r.json"
    with crash_when(monkeypatch, lambda d: bool(d["visits"])), pytest.raises(Crash):
        flow.run(_child_flow(tmp_path), "t", state=state, cwd=project)
    project.rmdir()
    project.write_text("not a directory", encoding="utf-8")
    before = state.read_bytes()
    with pytest.raises(AgentGraphError) as refused:
        flow.resume(state, rerun_interrupted=True)
    assert refused.value.code == codes.RUN_CWD_INVALID
    assert state.read_bytes() == before
    project.unlink()
    with pytest.raises(AgentGraphError) as missing:
        flow.resume(state, rerun_interrupted=True)
    assert missing.value.code == codes.RUN_CWD_MISSING


def test_the_interrupted_summary_names_the_commands_cut_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = flow.Stop()
    real = store.RunFile._write

    def write(self: store.RunFile, document: dict[str, Any], *, new: bool) -> None:
        real(self, document, new=new)
        if document["parent"] is not None and document["visits"]:
            stop.request(kill_children=False)  # as Ctrl-C does, while the child's command runs

    monkeypatch.setattr(store.RunFile, "_write", write)
    summary = flow.run(_child_flow(tmp_path), "t", state=tmp_path / "r.json", stop=stop)
    monkeypatch.setattr(store.RunFile, "_write", real)
    assert summary.state == "interrupted"
    assert summary.to_json()["interruptedCommands"] == ["c → l"]
    with pytest.raises(AgentGraphError) as refused:
        flow.resume(tmp_path / "r.json")
    assert refused.value.code == codes.COMMAND_INTERRUPTED
    assert flow.resume(tmp_path / "r.json", rerun_interrupted=True).state == "completed"
