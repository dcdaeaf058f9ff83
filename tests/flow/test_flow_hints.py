"""Every command line the Flow commands print runs as printed (issue 26 item 9), and a
scripted Run interrupted after its first Agent step resumes with the next answer line
(item 11).

The tests run agc as a person would: from a directory of their own (``invoking``), with
``--agent script:answers.jsonl`` relative to it and ``--cwd`` elsewhere; each printed hint
is split with shlex and run from *another* directory, and what it said it would do is
checked in the records it leaves.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_graph import codes
from flow_run_support import agent, call, command, package, read, slow_command_flow, visited
from test_flow_run_kill import wait_for

PYTHON_AGC = (sys.executable, "-m", "agent_graph")
SRC = str(Path(__file__).resolve().parents[2] / "src")
_SCRIPT = ("--agent", "script:answers.jsonl")
HINTS = ("Resume it: ", "Run it again: ", "Or fail it (command_interrupted): ", "Start a new Run")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def agc(words: list[str], where: Path) -> subprocess.CompletedProcess[str]:
    """``agc …`` words (as printed) run by this interpreter from the worktree, in ``where``."""
    assert words[0] == "agc", words
    return subprocess.run(
        [*PYTHON_AGC, *words[1:]],
        cwd=where,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def hints(text: str) -> dict[str, list[str]]:
    """The printed commands, by the words that introduce them (``Run it again`` …)."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith(HINTS) and ": agc " in line:
            label, _, words = line.partition(": agc ")
            found[label] = shlex.split("agc " + words)
    return found


def _answers(path: Path, *answers: tuple[str, str]) -> None:
    lines = [json.dumps({"result": r, "content": c}) for r, c in answers]
    path.write_text("\n".join(lines) + "\n", "utf-8")


def _slow(pid: Path, text: str) -> str:
    """A command that writes its pid, then sleeps 1.5 s and prints ``text``."""
    return command(
        "s",
        f"require('fs').writeFileSync({json.dumps(str(pid))}, String(process.pid));"
        f"setTimeout(()=>process.stdout.write({json.dumps(text)}),1500)",
    )


def scripted(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Agent ``a`` (result ok), a slow command ``s``, Agent ``c`` (result done): the
    package, the invoking directory (holding answers.jsonl) and the pid file of ``s``."""
    pid = tmp_path / "pid"
    pkg = package(
        tmp_path / "flows",
        "demo",
        "start((开始)) --> a[a]\na -->|ok| s[s]\ns -->|已执行| c[c]\nc -->|done| finish((结束))",
        agent("a", "First step", {"ok": "The first step is done."}),
        _slow(pid, "slept"),
        agent("c", "Last step: {outcome}", {"done": "All is done."}, reuse=True),
    )
    invoking = tmp_path / "me"
    invoking.mkdir()
    (tmp_path / "work").mkdir()
    _answers(invoking / "answers.jsonl", ("ok", "first answer"), ("done", "second answer"))
    return pkg, invoking, pid


def _start(pkg: Path, invoking: Path, state: str, *more: str) -> subprocess.Popen[str]:
    words = ["flow", "run", str(pkg), "--task", "t", "--state", state, "--cwd", "../work"]
    return subprocess.Popen(
        [*PYTHON_AGC, *words, "--agent", "script:answers.jsonl", *more],
        cwd=invoking,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stop(proc: subprocess.Popen[str], pid: Path, sig: signal.Signals) -> str:
    try:
        wait_for(pid)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    return out


def _agent_contents(document: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (v["node"], v["result"]["content"])
        for v in document["visits"]
        if v["kind"].startswith("agent") and v["status"] == "completed"
    ]


@pytest.mark.slow
def test_ctrl_c_then_the_printed_resume_keeps_the_agent_and_the_next_answer(
    tmp_path: Path,
) -> None:
    pkg, invoking, pid = scripted(tmp_path)
    proc = _start(pkg, invoking, "my run.json", "--command-timeout", "30")
    out = _stop(proc, pid, signal.SIGINT)
    assert proc.returncode == 130, out
    printed = hints(out)
    state = invoking / "my run.json"
    again = ["--agent", f"script:{invoking / 'answers.jsonl'}", "--command-timeout", "30.0"]
    resume = ["agc", "flow", "resume", "--state", str(state)]
    assert printed == {
        "Run it again": [*resume, "--rerun-interrupted", *again],
        "Or fail it (command_interrupted)": [*resume, "--fail-interrupted", *again],
    }
    # from anywhere: the printed words carry absolute paths
    done = agc(printed["Run it again"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    document = read(state)
    assert visited(document) == [("a", "ok"), ("s", "已执行"), ("c", "done")]
    # the resume took line 2 for c, not line 1 again (which would be an undeclared `ok`)
    assert _agent_contents(document) == [("a", "first answer"), ("c", "second answer")]
    assert not [e for e in document["events"] if e["type"] == "answer-rejected"]
    assert document["cwd"] == str(tmp_path / "work")


@pytest.mark.slow
def test_a_kill_after_the_first_agent_step_resumes_with_the_second_line(tmp_path: Path) -> None:
    pkg, invoking, pid = scripted(tmp_path)
    proc = _start(pkg, invoking, "r.json")
    _stop(proc, pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    # the command was cut short: the refusal prints the two ways on, with the --agent
    refused = agc(
        ["agc", "flow", "resume", "--state", "r.json", "--agent", "script:answers.jsonl"], invoking
    )
    assert refused.returncode == 1
    assert codes.COMMAND_INTERRUPTED in refused.stderr
    printed = hints(refused.stderr)
    assert set(printed) == {"Run it again", "Or fail it (command_interrupted)"}
    assert printed["Run it again"][-2:] == ["--agent", f"script:{invoking / 'answers.jsonl'}"]
    done = agc(printed["Run it again"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    document = read(invoking / "r.json")
    assert _agent_contents(document) == [("a", "first answer"), ("c", "second answer")]


#: An Agent that, the first time, writes its pid and waits to be interrupted; after that,
#: answers at once. It lives in the invoking directory and runs in the Run's --cwd.
SLOW_THEN_QUICK = """import json, os, sys, time
request = json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
first = os.path.join(here, "pid")
if not os.path.exists(first):
    with open(first, "w") as out:
        out.write(str(os.getpid()))
    time.sleep(60)
print(json.dumps({"result": request["results"][0]["name"], "content": os.getcwd(),
                  "agent": request["agent"] or "a-1"}))
"""


@pytest.mark.slow
def test_ctrl_c_during_an_agent_step_then_the_printed_resume_with_a_command_agent(
    tmp_path: Path,
) -> None:
    pkg = package(
        tmp_path / "flows",
        "ask",
        "start((开始)) --> a[a]\na -->|ok| finish((结束))",
        agent("a", "Think", {"ok": "Done."}),
    )
    invoking = tmp_path / "my dir"  # a space: the printed --agent must quote it
    invoking.mkdir()
    (tmp_path / "work").mkdir()
    (invoking / "agent.py").write_text(SLOW_THEN_QUICK, "utf-8")
    spec = "command:" + json.dumps([sys.executable, "agent.py"])
    words = ["flow", "run", str(pkg), "--task", "t", "--state", "r.json", "--cwd", "../work"]
    proc = subprocess.Popen(
        [*PYTHON_AGC, *words, "--agent", spec, "--max-visits", "5"],
        cwd=invoking,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = _stop(proc, invoking / "pid", signal.SIGINT)
    assert proc.returncode == 130, out
    printed = hints(out)
    agent_spec = "command:" + json.dumps([sys.executable, str(invoking / "agent.py")])
    assert printed == {
        "Resume it": [
            "agc", "flow", "resume", "--state", str(invoking / "r.json"),
            "--agent", agent_spec, "--max-visits", "5",
        ]
    }  # fmt: skip
    done = agc(printed["Resume it"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    document = read(invoking / "r.json")
    assert document["status"] == "completed"
    assert _agent_contents(document) == [("a", str(tmp_path / "work"))]


def _loop(tmp_path: Path) -> Path:
    return package(
        tmp_path / "flows",
        "loop",
        "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|已执行| finish((结束))",
        command("a", "process.stdout.write('a')"),
        command("b", "process.stdout.write('b')"),
    )


def test_a_failed_run_sends_to_a_new_run_and_that_command_starts_one(tmp_path: Path) -> None:
    pkg = _loop(tmp_path)
    (tmp_path / "work").mkdir()
    (tmp_path / "task.txt").write_text("the task, from a file", "utf-8")
    words = ["flow", "run", str(pkg), "--task", "@task.txt", "--state", "r.json"]
    first = agc(["agc", *words, "--cwd", "work", "--max-visits", "1"], tmp_path)
    assert first.returncode == 1
    assert "resume" not in first.stdout
    printed = hints(first.stdout)
    assert list(printed) == ["Start a new Run with another --state"]
    fresh = tmp_path / "r-2.json"
    assert printed["Start a new Run with another --state"] == [
        "agc", "flow", "run", str(pkg / "FLOW.md"), "--task", f"@{tmp_path / 'task.txt'}",
        "--state", str(fresh), "--cwd", str(tmp_path / "work"), "--max-visits", "1",
    ]  # fmt: skip
    before = (tmp_path / "r.json").read_bytes()
    again = agc(printed["Start a new Run with another --state"], tmp_path / "work")
    assert again.returncode == 1  # the same limit: it fails the same way, in its own record
    assert (tmp_path / "r.json").read_bytes() == before
    old, new = read(tmp_path / "r.json"), read(fresh)
    assert new["runId"] != old["runId"]
    assert (new["task"], new["cwd"], new["error"]) == (old["task"], old["cwd"], old["error"])
    # a resume of the failed Run is refused, and its hint is the same kind of new Run
    refused = agc(["agc", "flow", "resume", "--state", "r.json"], tmp_path)
    assert codes.RUN_NOT_RESUMABLE in refused.stderr
    sentence = refused.stderr.split("start a new Run with another --state: ", 1)[1]
    words_again = shlex.split(sentence.rsplit(")", 1)[0])
    assert words_again[words_again.index("--state") + 1] == str(tmp_path / "r-3.json")
    third = agc(words_again, tmp_path)
    assert third.returncode == 0, third.stderr  # this resume had no --max-visits to repeat
    third_run = read(tmp_path / "r-3.json")
    assert (third_run["task"], third_run["cwd"]) == ("the task, from a file", old["cwd"])


def test_an_existing_state_points_to_resume_only_when_the_run_can_go_on(tmp_path: Path) -> None:
    pkg = _loop(tmp_path)
    assert agc(["agc", "flow", "run", str(pkg), "--task", "t", "--state", "r.json"], tmp_path)
    again = agc(["agc", "flow", "run", str(pkg), "--task", "t", "--state", "r.json"], tmp_path)
    assert codes.RUN_TARGET_EXISTS in again.stderr
    assert "resume" not in again.stderr  # the Run completed: nothing to resume
    assert f"choose another --state (such as {tmp_path / 'r-2.json'})" in again.stderr


@pytest.mark.slow
def test_resuming_a_child_record_names_the_parent_command_with_the_agent(
    tmp_path: Path,
) -> None:
    pid = tmp_path / "pid"
    pkg = package(
        tmp_path / "flows",
        "parent",
        "start((开始)) --> k[k]\nk -->|已完成| finish((结束))\nk -->|已失败| finish",
        call("k", "kid"),
    )
    package(
        tmp_path / "flows",
        "kid",
        "start((开始)) --> a[a]\na -->|ok| s[s]\ns -->|已执行| finish((结束))",
        agent("a", "Kid step", {"ok": "Done."}),
        _slow(pid, "slept"),
    )
    _answers(tmp_path / "answers.jsonl", ("ok", "kid answer"))
    proc = subprocess.Popen(
        [*PYTHON_AGC, "flow", "run", str(pkg), "--task", "t", "--state", "p.json", *_SCRIPT],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _stop(proc, pid, signal.SIGINT)
    child = next(tmp_path.glob("p.run-*.json"))
    refused = agc(
        ["agc", "flow", "resume", "--state", child.name, "--agent", "script:answers.jsonl"],
        tmp_path,
    )
    assert codes.RUN_CHILD_DIRECT_RESUME in refused.stderr
    words = shlex.split(refused.stderr.split("resumes only with it: ", 1)[1].strip())
    assert words == [
        "agc", "flow", "resume", "--state", str(tmp_path / "p.json"),
        "--agent", f"script:{tmp_path / 'answers.jsonl'}",
    ]  # fmt: skip
    # as printed, it resumes the parent, which asks about the child's interrupted command
    parent = agc(words, tmp_path / "flows")
    assert codes.COMMAND_INTERRUPTED in parent.stderr
    done = agc(hints(parent.stderr)["Run it again"], tmp_path / "flows")
    assert done.returncode == 0, done.stdout + done.stderr
    assert read(tmp_path / "p.json")["status"] == "completed"


def test_a_task_no_command_line_can_repeat_gets_no_command(tmp_path: Path) -> None:
    from agent_graph.flow.runtime import hints

    state = tmp_path / "r.json"
    for task in ("@not-a-file-name", "a\0b", "x" * (hints.MAX_TASK_WORD + 1), {"json": 1}):
        assert hints.task_word(task) is None
        hint = hints.new_run_hint("f/FLOW.md", hints.task_word(task), state, "/w", [])
        assert hint == "start a new Run with another --state"
    hint = hints.new_run_hint("f/FLOW.md", "it's", state, "/w", ["--agent", "script:/a b"])
    assert shlex.split(hint.split(": ", 1)[1]) == [
        "agc", "flow", "run", "f/FLOW.md", "--task", "it's", "--state", str(tmp_path / "r-2.json"),
        "--cwd", "/w", "--agent", "script:/a b",
    ]  # fmt: skip


@pytest.mark.slow
def test_the_printed_fail_it_fails_the_run_and_its_new_run_hint_runs(tmp_path: Path) -> None:
    pkg, pid = slow_command_flow(tmp_path)
    proc = subprocess.Popen(
        [*PYTHON_AGC, "flow", "run", str(pkg), "--task", "t", "--state", "r.json"],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    printed = hints(_stop(proc, pid, signal.SIGINT))
    failed = agc(printed["Or fail it (command_interrupted)"], tmp_path / "slow")
    assert failed.returncode == 1
    document = read(tmp_path / "r.json")
    assert (document["status"], document["error"]["category"]) == (
        "failed",
        "command_interrupted",
    )
    assert "resume" not in failed.stdout
    pid.unlink()
    again = agc(hints(failed.stdout)["Start a new Run with another --state"], tmp_path / "slow")
    assert again.returncode == 0, again.stdout + again.stderr
    assert visited(read(tmp_path / "r-2.json")) == [("a", "已执行"), ("b", "已执行")]
