"""``--agent ask`` under a real pseudo-terminal: ``python -m agent_graph flow run`` runs in a
session of its own whose controlling terminal is the pty, and the test answers through
the pty's master side like a person would (docs/agents.md, "The ask adapter").

Stdout and stderr are pipes, not the pty: the questions go to ``/dev/tty``, so they
never reach ``--format json``'s stdout. Every wait is bounded; a process still running
when its test ends is killed with its session.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flow_run_support import agent, package, read, visited

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a POSIX pty")

TIMEOUT_S = 30.0
#: Makes the pty (this process's stdin) the controlling terminal of the new session, then
#: becomes ``python -m agent_graph …``: what a terminal emulator does for a shell.
TAKE_TERMINAL = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


class Person:
    """The master side of a pty whose slave is the controlling terminal of ``agc``."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, slave = os.openpty()
        self.seen = b""
        self.proc = subprocess.Popen(
            [sys.executable, "-c", TAKE_TERMINAL, "-m", "agent_graph", *args],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
        os.close(slave)

    def expect(self, text: str) -> str:
        """Waits until the terminal has shown ``text`` (after what was already read)."""
        wanted = text.encode("utf-8")
        deadline = time.monotonic() + TIMEOUT_S
        while wanted not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"not shown: {text!r}; the terminal shows:\n{self.shown}")
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the other side is closed (the process ended)
                chunk = b""
            if not chunk:
                raise AssertionError(f"the terminal closed before {text!r}:\n{self.shown}")
            self.seen += chunk
        before, _, after = self.seen.partition(wanted)
        self.seen = after
        return before.decode("utf-8", "replace")

    @property
    def shown(self) -> str:
        return self.seen.decode("utf-8", "replace")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode("utf-8"))

    def finish(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=TIMEOUT_S)
        return self.proc.returncode, out.decode("utf-8"), err.decode("utf-8")

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.communicate(timeout=TIMEOUT_S)
        os.close(self.master)


@pytest.fixture
def people() -> Iterator[list[Person]]:
    started: list[Person] = []
    yield started
    for person in started:
        person.close()


def two_steps(tmp_path: Path) -> Path:
    return package(
        tmp_path,
        "asked",
        "start((开始)) --> p[p]\np -->|ok| q[q]\np -->|again| p\nq -->|done| finish((结束))",
        agent("p", "Plan the work for: {outcome}", {"ok": "Planned.", "again": "Try again."}),
        agent("q", "Do what was planned:\n{outcome}", {"done": "Done."}, reuse=True),
    )


def ask_run(people: list[Person], tmp_path: Path, pkg: Path, state: Path) -> Person:
    args = ["flow", "run", str(pkg), "--task", "paint the shed", "--state", str(state)]
    person = Person([*args, "--agent", "ask", "--format", "json"], tmp_path)
    people.append(person)
    return person


def test_the_person_answers_each_step_and_the_run_completes(
    tmp_path: Path, people: list[Person]
) -> None:
    state = tmp_path / "run.json"
    person = ask_run(people, tmp_path, two_steps(tmp_path), state)
    shown = person.expect("Result (1-2 or its name): ")
    assert "Agent step asked.p (新建Agent)" in shown
    assert "│ Plan the work for: paint the shed\r\n" in shown  # the prompt, task filled in
    assert "  1. ok: Planned.\n" in shown.replace("\r\n", "\n")
    assert "  2. again: Try again.\n" in shown.replace("\r\n", "\n")
    person.type("7\n")  # not a result: asked again
    assert "'7' is not a result of this step." in person.expect("Result (1-2 or its name): ")
    person.type("wrong\n")
    assert "'wrong' is not a result" in person.expect("Result (1-2 or its name): ")
    person.type("1\n")
    person.expect("Content (text, ended by an empty line; or json: and a JSON value):")
    person.type("buy paint\nthen brush\n\n")
    shown = person.expect("Result (1 or its name, Enter for 1): ")
    assert "Agent step asked.q (复用Agent ask-" in shown
    assert "│ Do what was planned:\r\n│ buy paint\r\n│ then brush\r\n" in shown  # → {outcome}
    person.type("\n")  # Enter: the only result
    person.expect("JSON value):")
    person.type('json:{"coats": 2}\n\n')
    code, out, err = person.finish()
    assert code == 0, err
    summary = json.loads(out)
    assert summary["state"] == "completed"
    assert summary["result"] == {"coats": 2}
    document = read(state)
    assert visited(document) == [("p", "ok"), ("q", "done")]
    contents = [e["content"] for e in document["events"] if e["type"] == "visited"]
    assert contents == ["buy paint\nthen brush", {"coats": 2}]
    bound = [e["agent"] for e in document["events"] if e["type"] == "agent-bound"]
    assert len(bound) == 1
    assert bound[0].startswith("ask-")


def test_content_that_is_not_json_after_the_prefix_is_asked_again(
    tmp_path: Path, people: list[Person]
) -> None:
    state = tmp_path / "run.json"
    person = ask_run(people, tmp_path, two_steps(tmp_path), state)
    person.expect("Result (1-2 or its name): ")
    person.type("again\n")
    person.expect("JSON value):")
    person.type("json:{oops\n\n")
    assert "That is not a JSON value" in person.expect("JSON value):")
    person.type("json:[NaN]\n\n")  # Python's json reads it; a Run would refuse it
    assert "That is not a JSON value (NaN is not JSON data)" in person.expect("JSON value):")
    person.type("json:[1, 2]\n\n")
    person.expect("Result (1-2 or its name): ")  # `again` routed back to p
    person.type("ok\n")
    person.expect("JSON value):")
    person.type("fine\n\n")
    person.expect("Result (1 or its name, Enter for 1): ")
    person.type("done\n")
    person.expect("JSON value):")
    person.type("ok\n\n")
    code, _, err = person.finish()
    assert code == 0, err
    document = read(state)
    assert visited(document) == [("p", "again"), ("p", "ok"), ("q", "done")]
    assert document["status"] == "completed"
    inputs = [v["input"] for v in document["visits"]]
    assert inputs[1] == [1, 2]  # the JSON content is the next visit's input


@pytest.mark.parametrize("key", ["\x03", "\x04"], ids=["ctrl-c", "ctrl-d"])
def test_ctrl_c_or_ctrl_d_while_asking_interrupts_the_run_resumably(
    tmp_path: Path, people: list[Person], key: str
) -> None:
    state = tmp_path / "run.json"
    pkg = two_steps(tmp_path)
    person = ask_run(people, tmp_path, pkg, state)
    person.expect("Result (1-2 or its name): ")
    if key == "\x03":
        person.type("1\n")
        person.expect("JSON value):")
        person.type("half an ans")  # Ctrl-C while the content is being typed
    person.type(key)  # Ctrl-D: at the result question, the input ends
    person.expect("(interrupted)")  # the terminal says the question was abandoned
    code, out, err = person.finish()
    assert code == 130, err
    summary = json.loads(out)
    assert summary["state"] == "interrupted"
    assert "error" not in summary
    document = read(state)
    assert document["status"] == "interrupted"
    assert visited(document) == []  # nothing half-typed was recorded
    kept = state.read_bytes()
    refused = subprocess.run(
        [sys.executable, "-m", "agent_graph", "flow", "resume", "--state", str(state),
         "--agent", "ask", "--format", "json"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT_S,
        start_new_session=True, cwd=tmp_path,
    )  # fmt: skip
    assert refused.returncode == 1
    assert json.loads(refused.stderr)["error"]["code"] == "agent-ask-no-terminal"
    assert state.read_bytes() == kept  # the refused resume left the Run as it was
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        '{"result": "ok", "content": "plan"}\n{"result": "done", "content": "painted"}\n',
        encoding="utf-8",
    )
    resumed = subprocess.run(
        [sys.executable, "-m", "agent_graph", "flow", "resume", "--state", str(state),
         "--agent", f"script:{answers}", "--format", "json"],
        capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"] == "painted"
    assert visited(read(state)) == [("p", "ok"), ("q", "done")]


def test_without_a_terminal_ask_is_refused_before_a_record_is_written(tmp_path: Path) -> None:
    state = tmp_path / "run.json"
    args = ["flow", "run", str(two_steps(tmp_path)), "--task", "t", "--state", str(state)]
    done = subprocess.run(
        [sys.executable, "-m", "agent_graph", *args, "--agent", "ask", "--format", "json"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        start_new_session=True,  # a new session has no controlling terminal
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    error: dict[str, Any] = json.loads(done.stderr)["error"]
    assert error["code"] == "agent-ask-no-terminal"
    assert "--agent script:FILE" in error["message"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["asked"]  # no record, no lock


def test_ask_takes_no_arguments(tmp_path: Path) -> None:
    from agent_graph.errors import AgentGraphError
    from agent_graph.flow.agents.spec import adapter_from_spec

    with pytest.raises(AgentGraphError) as caught:
        adapter_from_spec("ask:loud")
    assert caught.value.code == "agent-spec-invalid"


def _request(prompt: str, **extra: Any) -> Any:
    from agent_graph.flow import AgentRequest, ResultChoice

    return AgentRequest(
        run_id="run-1", flow="f", node="n", marker="new", agent=None, prompt=prompt,
        results=(ResultChoice("ok", "Fine."), ResultChoice("no", "Not fine.")), cwd=".",
        **extra,
    )  # fmt: skip


def _master_output(master: int) -> str:
    seen = b""
    while select.select([master], [], [], 0.2)[0]:
        chunk = os.read(master, 65536)
        if not chunk:
            break
        seen += chunk
    return seen.decode("utf-8", "replace")


def test_control_characters_of_a_prompt_are_shown_not_sent_to_the_terminal() -> None:
    from agent_graph.flow.agents.ask import AskAdapter

    master, slave = os.openpty()
    try:
        os.write(master, b'no\njson:"x\\u001b"\n\n')  # typed ahead: the tty buffers it
        adapter = AskAdapter(os.ttyname(slave))
        answer = adapter.ask(_request("red \x1b[31mtext\x07 here\r!", attempt=2, rejected="maybe"))
        shown = _master_output(master)
    finally:
        os.close(master)
        os.close(slave)
    assert (answer.result, answer.content) == ("no", "x\x1b")  # JSON content is kept whole
    assert answer.agent is not None
    assert answer.agent.startswith("ask-")
    assert "│ red ^[[31mtext^G here^M!" in shown
    assert "\x1b" not in shown
    assert "\x07" not in shown
    assert "(The result 'maybe' was refused: it is not declared.)" in shown


def test_a_path_that_is_not_a_terminal_is_the_coded_refusal(tmp_path: Path) -> None:
    from agent_graph.errors import AgentGraphError
    from agent_graph.flow.agents.ask import from_spec

    plain = tmp_path / "not-a-tty"
    plain.write_text("", encoding="utf-8")
    for path in (str(plain), str(tmp_path / "missing")):
        with pytest.raises(AgentGraphError) as caught:
            from_spec("", terminal=path)
        assert caught.value.code == "agent-ask-no-terminal"
        assert path in caught.value.message
