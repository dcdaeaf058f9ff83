"""Kill tests: the runner process dies (SIGKILL) during a command, during an Agent step,
inside a child Run and between two events (the test-only crash hooks of
``flow/runtime/store.py``); SIGINT stops it cleanly. Every Run then resumes (or is refused
with the right code) and every event log is whole: seq 1..n, no gap, no repeat. The kill
loop SIGKILLs Runs at random moments (over 100 times, inside Agent, command, fork-branch
and child-Flow visits) and resumes each until it completes, every node visited once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agent_graph import codes, flow
from flow_run_support import (
    Crash,
    agent,
    assert_log_whole,
    call,
    command,
    crash_when,
    package,
    read,
    slow_command_flow,
    visited,
)

SRC = str(Path(__file__).resolve().parents[2] / "src")


def agc(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    environment = {**os.environ, **(env or {})}
    environment["PYTHONPATH"] = SRC + os.pathsep + environment.get("PYTHONPATH", "")
    return subprocess.Popen(
        [sys.executable, "-m", "agent_graph", *args],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def killed(proc: subprocess.Popen[str]) -> None:
    """SIGKILL ``proc``, reap it and close its pipes (its command may still hold them)."""
    proc.kill()
    proc.wait(10)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def wait_for(path: Path, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text("utf-8").strip():
            return path.read_text("utf-8")
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def whole(state: Path) -> dict[str, Any]:
    document = read(state)
    assert_log_whole(document)
    for visit in document["visits"]:
        if visit.get("childState") and (state.parent / visit["childState"]).exists():
            whole(state.parent / visit["childState"])
    return document


def kill_group_of(pid_file: Path) -> None:
    """The orphaned command of a SIGKILLed runner: its group outlives the runner."""
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.killpg(int(pid_file.read_text("utf-8")), signal.SIGKILL)


def test_sigkill_during_a_command_then_resume(tmp_path: Path) -> None:
    pkg, pid = slow_command_flow(tmp_path)
    state = tmp_path / "r.json"
    proc = agc("flow", "run", str(pkg), "--task", "t", "--state", str(state))
    try:
        wait_for(pid)
        killed(proc)
    finally:
        kill_group_of(pid)
    assert whole(state)["status"] == "running"
    before = state.read_bytes()
    code, out, err = finish(agc("flow", "resume", "--state", str(state), "--format", "json"))
    assert code == 1, err
    assert json.loads(err)["error"]["code"] == codes.COMMAND_INTERRUPTED
    assert state.read_bytes() == before
    code, out, err = finish(
        agc("flow", "resume", "--state", str(state), "--fail-interrupted", "--format", "json")
    )
    assert code == 1, err
    summary = json.loads(out)
    assert summary["error"]["category"] == "command_interrupted"
    document = whole(state)
    assert document["visits"][0]["status"] == "interrupted"
    assert [r["strategy"] for r in document["recoveries"]] == ["refuse-command"]


@pytest.mark.slow
def test_sigkill_during_a_command_then_rerun(tmp_path: Path) -> None:
    pkg, pid = slow_command_flow(tmp_path)
    state = tmp_path / "r.json"
    proc = agc("flow", "run", str(pkg), "--task", "t", "--state", str(state))
    try:
        wait_for(pid)
        killed(proc)
    finally:
        kill_group_of(pid)
    code, _, err = finish(agc("flow", "resume", "--state", str(state), "--rerun-interrupted"))
    assert code == 0, err
    document = whole(state)
    assert [(v["node"], v["status"], v["retryOf"]) for v in document["visits"]] == [
        ("a", "interrupted", None),
        ("a", "completed", "v1"),
        ("b", "completed", None),
    ]


@pytest.mark.slow
def test_sigint_stops_commands_and_exits_130(tmp_path: Path) -> None:
    pkg, pid = slow_command_flow(tmp_path)
    state = tmp_path / "r.json"
    proc = agc("flow", "run", str(pkg), "--task", "t", "--state", str(state))
    group = int(wait_for(pid))
    proc.send_signal(signal.SIGINT)
    code, out, _ = finish(proc)
    assert code == 130
    assert "Run it again: agc flow resume --state" in out
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)  # the command's whole group is gone
    document = whole(state)
    assert document["status"] == "interrupted"
    assert document["visits"][0]["status"] == "interrupted"
    code, _, err = finish(agc("flow", "resume", "--state", str(state), "--rerun-interrupted"))
    assert code == 0, err
    assert visited(whole(state)) == [("a", "已执行"), ("b", "已执行")]


BLOCKING_RUNNER = """
import sys, time
from pathlib import Path
from agent_graph import codes, flow

marker, pkg, state, mode = sys.argv[1:5]

class Blocking:
    def ask(self, request):
        Path(marker).write_text(request.run_id)
        time.sleep(60)
    def release(self, agent):
        pass

if mode == "run":
    flow.run(pkg, "t", state=state, agent=Blocking())
"""


def blocking_runner(tmp_path: Path, pkg: Path, state: Path) -> Path:
    marker = tmp_path / "asked"
    script = tmp_path / "runner.py"
    script.write_text(textwrap.dedent(BLOCKING_RUNNER), "utf-8")
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(marker), str(pkg), str(state), "run"], env=env
    )
    wait_for(marker)
    proc.kill()
    proc.wait(10)
    return marker


def resume_answering(tmp_path: Path, state: Path, content: str) -> dict[str, Any]:
    """``agc flow resume`` with a script agent answering ``ok`` with ``content``: its summary."""
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"result": "ok", "content": content}) + "\n", "utf-8")
    code, out, err = finish(
        agc(
            "flow",
            "resume",
            "--state",
            str(state),
            "--agent",
            f"script:{answers}",
            "--format",
            "json",
        )
    )
    assert code == 0, err
    summary: dict[str, Any] = json.loads(out)
    return summary


def test_sigkill_during_an_agent_step_then_the_visit_is_retried(tmp_path: Path) -> None:
    pkg = package(
        tmp_path,
        "ask",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", "{outcome}", {"ok": "."}),
    )
    state = tmp_path / "r.json"
    blocking_runner(tmp_path, pkg, state)
    assert whole(state)["visits"][0]["status"] == "running"
    assert resume_answering(tmp_path, state, "answered")["result"] == "answered"
    document = whole(state)
    assert [(v["status"], v["retryOf"]) for v in document["visits"]] == [
        ("interrupted", None),
        ("completed", "v1"),
    ]
    assert [r["strategy"] for r in document["recoveries"]] == ["retry-agent"]


def test_sigkill_inside_a_child_run_resumes_the_child_first(tmp_path: Path) -> None:
    pkg = package(
        tmp_path,
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| finish",
        call("c", "kid"),
    )
    package(
        tmp_path,
        "kid",
        "start((开始)) --> a[a]\na -->|已执行| k[k]\nk -->|ok| finish((结束))",
        command("a", "process.stdout.write('a')"),
        agent("k", "{outcome}", {"ok": "."}),
    )
    state = tmp_path / "r.json"
    marker = blocking_runner(tmp_path, pkg, state)
    parent = whole(state)
    child_state = tmp_path / parent["visits"][0]["childState"]
    assert marker.read_text("utf-8") == read(child_state)["runId"]
    assert read(child_state)["status"] == "running"
    child_direct = finish(agc("flow", "resume", "--state", str(child_state), "--format", "json"))
    assert json.loads(child_direct[2])["error"]["code"] == "run-child-direct-resume"
    assert resume_answering(tmp_path, state, "child done")["result"] == "child done"
    child = whole(child_state)
    assert [v["node"] for v in child["visits"]] == ["a", "k", "k"]  # the command was not rerun
    assert whole(state)["visits"][0]["result"] == {"result": "已完成", "content": "child done"}


CHAIN = """
start((开始)) --> a[a]
a -->|已执行| f{{并行}}
f --> x[x]
f --> y[y]
x -->|已执行| j[j]
y -->|已执行| j
j -->|已执行| c[c]
c --> finish((结束))
"""


def chain_flow(tmp_path: Path) -> Path:
    pkg = package(
        tmp_path,
        "chain",
        CHAIN,
        command("a", "process.stdout.write('a')"),
        command("x", "process.stdout.write('x')"),
        command("y", "process.stdout.write('y')"),
        command(
            "j",
            "",
            args=["-e", "process.stdin.pipe(process.stdout)"],
            stdin='{"x": {x.outcome}, "y": {y.outcome}}',
        ),
        call("c", "leaf", plain=True),
    )
    package(
        tmp_path,
        "leaf",
        "start((开始)) --> l[l]\nl -->|已执行| finish((结束))",
        command("l", "process.stdout.write('leaf')"),
    )
    return pkg


def commits_of_a_whole_run(tmp_path: Path) -> int:
    state = tmp_path / "count.json"
    assert flow.run(chain_flow(tmp_path), "t", state=state).state == "completed"
    document = read(state)
    child = read(tmp_path / document["visits"][-1]["childState"])
    return int(document["revision"]) + int(child["revision"])


@pytest.mark.slow
@pytest.mark.parametrize("hook", ["AGC_FLOW_CRASH_AFTER_COMMIT", "AGC_FLOW_CRASH_BEFORE_COMMIT"])
def test_a_crash_between_any_two_commits_resumes(tmp_path: Path, hook: str) -> None:
    total = commits_of_a_whole_run(tmp_path)
    pkg = tmp_path / "chain"
    step = 1 if hook.endswith("AFTER_COMMIT") else 3  # before-rename: a sample is enough
    for number in range(1, total, step):
        state = tmp_path / f"r{number}.json"
        code, _, _ = finish(
            agc(
                "flow",
                "run",
                str(pkg),
                "--task",
                "t",
                "--state",
                str(state),
                env={hook: str(number)},
            )
        )
        assert code == -signal.SIGKILL, number
        if not state.exists():
            assert number == 1
            assert hook.endswith("BEFORE_COMMIT")
            continue
        whole(state)
        code, out, err = finish(
            agc("flow", "resume", "--state", str(state), "--rerun-interrupted", "--format", "json")
        )
        assert code == 0, (number, err)
        assert json.loads(out)["result"]["stdout"] == "leaf"
        document = whole(state)
        assert [n for n, _ in visited(document)].count("j") == 1, number


def test_a_command_found_running_is_not_rerun_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = chain_flow(tmp_path)
    state = tmp_path / "r.json"
    with (
        crash_when(monkeypatch, lambda d: len(d["visits"]) == 3 and d["parent"] is None),
        pytest.raises(Crash),
    ):
        flow.run(pkg, "t", state=state)
    summary = flow.resume(state, fail_interrupted=True)
    assert summary.state == "failed"
    assert summary.error is not None
    assert summary.error["category"] == "command_interrupted"
    assert "x" in summary.error["summary"]
    whole(state)


# -- the kill loop: random SIGKILLs over every kind of visit -------------------------------

#: An Agent speaking the ``command:`` protocol: answers the first declared result after a
#: short think (so kills land inside Agent steps too).
LOOP_AGENT = """
import json, sys, time
request = json.load(sys.stdin)
time.sleep(0.05)
name = request["results"][0]["name"]
agent = request["agent"] or "a-" + request["runId"] + "-" + request["node"]
print(json.dumps({"result": name, "content": request["node"], "agent": agent}))
"""

KILL_LOOP = """
start((开始)) --> a[a]
a -->|ok| c[c]
c -->|已执行| f{{并行}}
f --> x[x]
f --> y[y]
x -->|已执行| j[j]
y -->|已执行| j
j -->|已执行| k[k]
k --> finish((结束))
"""
KILL_LOOP_KINDS = {"a": "agent", "c": "command", "x": "fork", "y": "fork", "j": "command"}
KILL_LOOP_KINDS.update(l="command", m="agent")  # the child Flow's
NAP = "setTimeout(()=>process.stdout.write('done'),60)"


def kill_loop_flow(tmp_path: Path) -> tuple[Path, str]:
    """Agent, command, a fork of two commands, a join and a child Flow (a command and an
    Agent): the package and the ``--agent`` spec."""
    pkg = package(
        tmp_path,
        "loop",
        KILL_LOOP,
        agent("a", "Start.", {"ok": "."}),
        command("c", NAP),
        command("x", NAP),
        command("y", NAP),
        command(
            "j",
            "",
            args=["-e", "process.stdin.pipe(process.stdout)"],
            stdin='{"x": {x.outcome}, "y": {y.outcome}}',
        ),
        call("k", "leaf", plain=True),
    )
    package(
        tmp_path,
        "leaf",
        "start((开始)) --> l[l]\nl -->|已执行| m[m]\nm -->|ok| finish((结束))",
        command("l", NAP),
        agent("m", "End.", {"ok": "."}),
    )
    script = tmp_path / "agent.py"
    script.write_text(LOOP_AGENT, encoding="utf-8")
    return pkg, "command:" + json.dumps([sys.executable, str(script)])


def running_kinds(state: Path) -> list[str]:
    """What the killed Run was doing: the kinds of its visits left running."""
    if not state.exists():
        return []
    document = whole(state)
    found = []
    for visit in document["visits"]:
        if visit["status"] != "running":
            continue
        if visit.get("childState"):
            found.append("child")
            found += [f"child-{k}" for k in running_kinds(state.parent / visit["childState"])]
        else:
            found.append(KILL_LOOP_KINDS.get(visit["node"], visit["kind"]))
    return found


def assert_each_visited_once(document: dict[str, Any], nodes: list[str]) -> None:
    """No visit lost or duplicated: each node completed exactly once (retries of killed
    visits are new visits; only one of them completes)."""
    assert sorted(n for n, _ in visited(document)) == sorted(nodes)
    for visit in document["visits"]:
        assert visit["status"] in ("completed", "interrupted"), visit


@pytest.mark.slow
def test_random_sigkills_over_every_kind_of_visit_then_resume(tmp_path: Path) -> None:
    import random

    chooser = random.Random(26)  # the kill times vary with the machine; the plan does not
    pkg, spec = kill_loop_flow(tmp_path)
    kills, runs = 0, 0
    where: dict[str, int] = {}
    deadline = time.monotonic() + 150
    while kills < 100:
        assert time.monotonic() < deadline, (kills, where)
        runs += 1
        state = tmp_path / f"r{runs}.json"
        started = False
        for attempt in range(8):  # kill up to 7 times, then let the Run end
            if not started:
                argv = ["flow", "run", str(pkg), "--task", "t", "--state", str(state)]
            else:
                argv = ["flow", "resume", "--state", str(state), "--rerun-interrupted"]
            proc = agc(*argv, "--agent", spec)
            if attempt == 7:
                code, out, err = finish(proc)
                assert code == 0, (out, err)
                break
            # from just after the start: the first Agent step now runs within 0.25 s of it
            time.sleep(chooser.uniform(0.05, 1.2))
            if proc.poll() is not None:  # it finished first
                code, out, err = finish(proc)
                assert code == 0, (out, err)
                break
            killed(proc)
            started = started or state.exists()
            status = whole(state)["status"] if started else None
            if status == "completed":
                break  # killed while it exited: nothing was left to do
            # resumable: a record that reads whole, never failed (nor stopped) by a kill
            assert status in (None, "running"), status
            kills += 1
            for kind in running_kinds(state):
                where[kind] = where.get(kind, 0) + 1
        document = whole(state)
        assert document["status"] == "completed", (runs, document["error"])
        assert_each_visited_once(document, ["a", "c", "x", "y", "j", "k"])
        child = whole(state.parent / document["visits"][-1]["childState"])
        assert child["status"] == "completed"
        assert_each_visited_once(child, ["l", "m"])
    print(f"{kills} kills over {runs} Runs, by what was running: {where}")
    # every kind of visit was killed at least a few times
    for kind in ("agent", "command", "fork", "child", "child-command", "child-agent"):
        assert where.get(kind, 0) >= 2, where
