"""``agc flow run|resume|status|events``: the fixed shapes, the shipped examples with the
``script:`` adapter, the README's and docs/flow-runs.md's command, and the bad input of issue 14."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_graph import flow
from agent_graph.errors import AgentGraphError
from agent_graph.flow.agents.spec import adapter_from_spec
from cli_support import error_of, run
from flow_run_support import (
    FakeAgent,
    agent,
    assert_log_whole,
    command,
    package,
    read,
    visited,
)

ROOT = Path(__file__).resolve().parents[2]
FLOWS = ROOT / "examples" / "flows"

SHIP = [
    {"result": "written", "content": "1.0.0", "agent": "notes-agent"},
    {"result": "ready", "content": "release 1.0.0"},
    {"result": "ship", "content": "checks are fine"},
    {"result": "announced", "content": "Version 1.0.0 is out."},
]
ANSWERS = {
    "repo-stats": [],
    "draft-review": [
        {"result": "drafted", "content": "DRAFT.md"},
        {"result": "revise", "content": "shorter"},
        {"result": "revised", "content": "DRAFT.md"},
        {"result": "accept", "content": "good"},
    ],
    "preflight": [{"result": "ready", "content": "a change"}, {"result": "ship", "content": "ok"}],
    "ship-release": SHIP,
}


def script(path: Path, answers: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), "utf-8")
    return f"script:{path}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "package.json").write_text('{"name": "p", "version": "1.0.0"}', encoding="utf-8")
    (proj / "DRAFT.md").write_text("A short draft.\n", encoding="utf-8")
    return proj


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_every_example_runs_to_completion_with_the_script_adapter(
    name: str, tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = script(tmp_path / "answers.jsonl", ANSWERS[name])
    state = tmp_path / "run.json"
    args = ["flow", "run", str(FLOWS / name), "--task", "go", "--cwd", str(project)]
    code, out, err = run(
        [*args, "--state", str(state), "--agent", spec, "--format", "json"], capsys
    )
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert out.count("\n") == 1
    assert summary["state"] == "completed"
    assert summary["flow"] == name
    assert set(summary) == {"state", "runId", "flow", "result"}
    document = read(state)
    assert_log_whole(document)
    for visit in document["visits"]:
        if visit.get("childState"):
            assert_log_whole(read(tmp_path / visit["childState"]))


def test_human_output_streams_visits_and_ends_with_the_summary(
    tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = script(tmp_path / "a.jsonl", SHIP)
    args = ["flow", "run", str(FLOWS / "ship-release"), "--task", "@" + str(tmp_path / "a.jsonl")]
    code, out, _ = run(
        [*args, "--cwd", str(project), "--state", str(tmp_path / "r.json"), "--agent", spec], capsys
    )
    assert code == 0
    lines = out.splitlines()
    assert re.fullmatch(r"stats: 已完成 \(\d+\.\d\d s\)", lines[4])
    assert "  checks: tests, lint, audit in parallel" in lines
    assert re.match(r"Run run-[0-9a-f]+ of ship-release: completed", lines[-3])
    assert lines[-2] == "Result: Version 1.0.0 is out."
    assert read(tmp_path / "r.json")["task"] == (tmp_path / "a.jsonl").read_text("utf-8")


def test_events_status_and_a_failed_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package(
        tmp_path,
        "gate",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    spec = script(tmp_path / "a.jsonl", [{"result": "no"}, {"result": "nope"}])
    state = str(tmp_path / "r.json")
    code, out, _ = run(
        [
            "flow",
            "run",
            str(tmp_path / "gate"),
            "--task",
            "t",
            "--state",
            state,
            "--agent",
            spec,
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 1
    summary = json.loads(out)
    assert summary["state"] == "failed"
    assert summary["result"] is None
    assert summary["error"]["category"] == "outcome_validation"
    code, out, _ = run(["flow", "events", "--state", state, "--format", "json"], capsys)
    events = json.loads(out)["events"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events if "result" in e] == []
    assert [e["rejected"] for e in events if e["type"] == "answer-rejected"] == ["no", "nope"]
    code, out, _ = run(["flow", "status", "--state", state, "--format", "json"], capsys)
    status = json.loads(out)
    assert status["state"] == "failed"
    assert status["runId"] == summary["runId"]
    assert status["flow"] == "gate"
    assert "current" not in status
    code, out, _ = run(["flow", "events", "--state", state], capsys)
    assert code == 0
    assert "answer-rejected" in out


def test_status_names_the_current_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package(
        tmp_path,
        "s",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    stop = flow.Stop()

    def stopping(request: Any) -> Any:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    state = tmp_path / "r.json"
    assert (
        flow.run(tmp_path / "s", "t", state=state, agent=FakeAgent(stopping), stop=stop).state
        == "interrupted"
    )
    code, out, _ = run(["flow", "status", "--state", str(state), "--format", "json"], capsys)
    status = json.loads(out)
    assert status["state"] == "interrupted"
    assert status["current"] == {"node": "p", "visit": "v1"}
    spec = script(tmp_path / "a.jsonl", [{"result": "ok", "content": "done"}])
    code, out, _ = run(
        ["flow", "resume", "--state", str(state), "--agent", spec, "--format", "json"], capsys
    )
    assert code == 0
    assert json.loads(out)["result"] == "done"


@pytest.mark.parametrize("page", ["README.md", "docs/flow-runs.md"])
def test_the_run_a_flow_command_runs_as_written(tmp_path: Path, page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    section = text.split("\n## Run a Flow", 1)[1].split("\n## ", 1)[0]
    (command_text,) = re.findall(r"```bash\n(.*?)\n```", section, re.S)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", command_text],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "completed" in done.stdout


# -- bad input ---------------------------------------------------------------------------------


def one_agent(tmp_path: Path) -> Path:
    return package(
        tmp_path,
        "one",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )


def failed_with(tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str) -> dict[str, Any]:
    state = tmp_path / "r.json"
    code, out, _ = run(
        [
            "flow",
            "run",
            str(one_agent(tmp_path)),
            "--task",
            "t",
            "--state",
            str(state),
            "--agent",
            spec,
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 1
    error: dict[str, Any] = json.loads(out)["error"]
    state.unlink()
    return error


def test_bad_agent_answers_are_agent_execution_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text("not json\n", "utf-8")
    error = failed_with(tmp_path, capsys, f"script:{answers}")
    assert error["category"] == "agent_execution"
    assert "not JSON" in error["summary"]
    answers.write_text('{"content": 1}\n', "utf-8")
    assert "no `result`" in failed_with(tmp_path, capsys, f"script:{answers}")["summary"]
    answers.write_text("", "utf-8")
    assert "no answer left" in failed_with(tmp_path, capsys, f"script:{answers}")["summary"]


def test_an_adapter_that_raises_anything_fails_the_run_cleanly(tmp_path: Path) -> None:
    def broken(request: Any) -> Any:
        raise RuntimeError("adapter bug")

    summary = flow.run(one_agent(tmp_path), "t", state=tmp_path / "r.json", agent=FakeAgent(broken))
    assert summary.error == {
        "category": "agent_execution",
        "summary": "p: RuntimeError: adapter bug",
    }


def test_a_command_that_cannot_start_is_command_execution(tmp_path: Path) -> None:
    package(
        tmp_path,
        "c",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", program="definitely-not-installed-x"),
    )
    summary = flow.run(tmp_path / "c", "t", state=tmp_path / "r.json")
    assert summary.error is not None
    assert summary.error["category"] == "command_execution"
    assert "exec-not-found" in summary.error["summary"]


def test_command_timeout_kills_and_reports(tmp_path: Path) -> None:
    package(
        tmp_path,
        "t",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", "process.stderr.write('partial');setTimeout(()=>{},10000)"),
    )
    summary = flow.run(tmp_path / "t", "t", state=tmp_path / "r.json", command_timeout=0.5)
    assert summary.state == "completed"
    assert summary.result["status"] == "failure"
    assert summary.result["exitCode"] is None
    assert summary.result["stderr"].startswith(
        "partial\nagc: timed out: the command ran past the 0.5 s"
    )


def test_max_visits_is_loop_limit(tmp_path: Path) -> None:
    package(
        tmp_path,
        "loop",
        "start((开始)) --> p[p]\np -->|again| p\np -->|stop| finish((结束))",
        agent("p", ".", {"again": ".", "stop": "."}),
    )
    summary = flow.run(
        tmp_path / "loop",
        "t",
        state=tmp_path / "r.json",
        agent=FakeAgent(*[("again", i) for i in range(10)]),
        max_visits=3,
    )
    assert summary.error is not None
    assert summary.error["category"] == "loop_limit"
    assert len(read(tmp_path / "r.json")["visits"]) == 3


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--task", "@missing.txt"], "file-missing"),
        (["--task", "t", "--cwd", "no-such-dir"], "run-cwd-missing"),
        (["--task", "t", "--agent", "bogus:x"], "agent-spec-invalid"),
        (["--task", "t", "--agent", "script:no-such.jsonl"], "agent-spec-invalid"),
        (["--task", "t"], "agent-required"),
    ],
)
def test_bad_run_arguments(
    args: list[str],
    code: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    one_agent(tmp_path)
    error = error_of(["flow", "run", "one", "--state", "r.json", *args], capsys)
    assert error["code"] == code
    assert not (tmp_path / "r.json").exists()


def test_state_paths_that_cannot_hold_a_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pkg = str(one_agent(tmp_path))
    base = ["flow", "run", pkg, "--task", "t", "--agent", "script:x"]
    assert (
        error_of([*base, "--state", str(tmp_path / "no" / "r.json")], capsys)["code"]
        == "run-state-invalid"
    )
    (tmp_path / "mine.json").write_text("my own file", "utf-8")
    assert (
        error_of([*base, "--state", str(tmp_path / "mine.json")], capsys)["code"]
        == "run-target-exists"
    )
    assert (tmp_path / "mine.json").read_text("utf-8") == "my own file"
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user that can write anywhere")
        assert (
            error_of([*base, "--state", str(locked / "r.json")], capsys)["code"]
            == "file-write-failed"
        )
    finally:
        locked.chmod(0o755)


def test_spec_parser() -> None:
    for bad in ("", "  ", "nope:1", "two words"):
        with pytest.raises(AgentGraphError) as caught:
            adapter_from_spec(bad)
        assert caught.value.code == "agent-spec-invalid"


def interrupted(tmp_path: Path) -> Path:
    pkg = one_agent(tmp_path)
    stop = flow.Stop()

    def stopping(request: Any) -> Any:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    state = tmp_path / "r.json"
    flow.run(pkg, "t", state=state, agent=FakeAgent(stopping), stop=stop)
    return state


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (lambda b: b[: len(b) // 2], "run-record-invalid"),
        (lambda b: b.replace(b'"task":"t"', b'"task":"other"'), "run-record-modified"),
        (lambda b: b"[]", "run-record-invalid"),
        (lambda b: b.replace(b'"seq":2', b'"seq":3'), "run-record-invalid"),
    ],
)
def test_damaged_records_are_refused_and_kept(tmp_path: Path, damage: Any, code: str) -> None:
    state = interrupted(tmp_path)
    bad = damage(state.read_bytes())
    state.write_bytes(bad)
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(state, agent=FakeAgent(("ok", 1)))
    assert caught.value.code == code
    assert state.read_bytes() == bad


def test_truncation_reports_a_position(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = interrupted(tmp_path)
    state.write_bytes(state.read_bytes()[:100])
    error = error_of(["flow", "resume", "--state", str(state), "--agent", "script:x"], capsys)
    assert error["code"] == "run-record-invalid"
    assert error["diagnostics"][0]["detail"]["line"] == 1


def test_a_record_of_another_flow_is_refused(tmp_path: Path) -> None:
    state = interrupted(tmp_path)
    (tmp_path / "two").mkdir()
    shutil.copy(tmp_path / "one" / "FLOW.md", tmp_path / "two" / "FLOW.md")
    from agent_graph.flow.runtime.store import checksum

    document = read(state)
    document["entryPath"] = str(tmp_path / "two" / "FLOW.md")
    document["checksum"] = checksum(document)
    state.write_text(json.dumps(document), "utf-8")
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(state, agent=FakeAgent(("ok", 1)))
    assert caught.value.code == "run-flow-mismatch"


def test_a_missing_cwd_at_resume(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    pkg = one_agent(tmp_path)
    stop = flow.Stop()

    def stopping(request: Any) -> Any:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    flow.run(pkg, "t", state=tmp_path / "r.json", agent=FakeAgent(stopping), stop=stop, cwd=proj)
    proj.rmdir()
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(tmp_path / "r.json", agent=FakeAgent(("ok", 1)))
    assert caught.value.code == "run-cwd-missing"
    proj.mkdir()
    assert flow.resume(tmp_path / "r.json", agent=FakeAgent(("ok", 1))).state == "completed"


def test_two_resumes_of_one_run_at_once(tmp_path: Path) -> None:
    state = interrupted(tmp_path)
    inside = threading.Event()
    release = threading.Event()
    codes: list[str] = []

    def slow(request: Any) -> Any:
        inside.set()
        release.wait(10)
        return flow.AgentAnswer("ok", "done", "A")

    first = threading.Thread(target=lambda: flow.resume(state, agent=FakeAgent(slow)))
    first.start()
    assert inside.wait(10)
    try:
        flow.resume(state, agent=FakeAgent(("ok", 1)))
    except AgentGraphError as error:
        codes.append(error.code)
    release.set()
    first.join(10)
    assert codes == ["run-busy"]
    document = read(state)
    assert document["status"] == "completed"
    assert_log_whole(document)
    assert visited(document) == [("p", "ok")]
