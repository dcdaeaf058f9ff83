"""Searching an agent CLI's reply for the answer object: right, bounded and linear.

The search runs after the CLI exited, so what it costs comes on top of the agent's
timeout and delays a Ctrl-C. The tests check the algorithm, not a clock: the
:class:`~agent_graph.flow.agents.answer_search.Meter` counts the characters each stage
examines, and adversarial replies of up to 1 MiB must stay within a small multiple of
their length. One test runs the worst inputs in a subprocess under a generous timeout,
and one interrupts it there.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_graph import codes
from agent_graph.exec import Completed
from agent_graph.flow.agents import AgentFailure, claude, codex
from agent_graph.flow.agents import _transport as transport
from agent_graph.flow.agents import answer_search as search

MIB = 1 << 20
ANSWER = {"result": "drafted", "content": "ok"}
FENCED_ANSWER = '\n```json\n{"result": "drafted", "content": "ok"}\n```\n'
#: Characters examined per reply character, at most: the whole-text decode (1), the
#: fence pass (2), the ``{`` scan's budget (4) and the one decode that crosses it (1).
STEPS_PER_CHAR = 8


def fill(unit: str, size: int, tail: str = "") -> str:
    """``unit`` repeated to about ``size`` characters (``tail`` included)."""
    return unit * ((size - len(tail)) // len(unit)) + tail


def nested(levels: int, leaf: str = "0") -> str:
    return '{"a":' * levels + leaf + "}" * levels


#: (name, reply, expected): a dict is the answer found, None "no answer object", a code
#: the coded refusal.
ADVERSARIAL: list[tuple[str, str, Any]] = [
    ("unclosed fences, answer last", fill("note ```json x\n", MIB, FENCED_ANSWER), ANSWER),
    ("unclosed fences at line starts", fill("```json\n{\n", MIB // 2), None),
    ("tilde and backtick fences", fill("~~~ ``` ~~~\n", MIB, FENCED_ANSWER), ANSWER),
    ("a one-line reply of fences", fill("```", MIB - 64, FENCED_ANSWER), ANSWER),
    ("open braces", fill("{", MIB, json.dumps(ANSWER)), ANSWER),
    ("open members", fill('{"a":1', MIB), None),
    ("open strings", fill('{"a":"x', MIB), None),
    ("member names only", fill('{"', MIB), None),
    ("open nesting", fill('{"a":', MIB), codes.AGENT_ANSWER_TOO_DEEP),
    ("nesting into a long string", '{"a":[' * 150 + '"' + "x" * (MIB - 1000), None),
    ("deep arrays in prose", fill("[" * 3000 + "\n", MIB), codes.AGENT_ANSWER_TOO_DEEP),
]


@pytest.mark.parametrize(("name", "text", "expected"), ADVERSARIAL, ids=[a[0] for a in ADVERSARIAL])
def test_adversarial_replies_are_searched_right_in_linear_steps(
    name: str, text: str, expected: Any
) -> None:
    assert len(text) <= search.MAX_REPLY_CHARS
    meter = search.Meter()
    if isinstance(expected, str):
        with pytest.raises(AgentFailure) as caught:
            search.find_answer_object(text, meter=meter)
        assert caught.value.code == expected
        assert expected in caught.value.summary
    else:
        assert search.find_answer_object(text, meter=meter) == expected
    assert meter.steps <= STEPS_PER_CHAR * len(text) + 1024, name


def test_steps_grow_linearly_with_the_reply() -> None:
    """Doubling an adversarial reply doubles the work: the old fence pattern grew with
    the square of the number of unclosed fences."""
    steps = []
    for size in (MIB // 4, MIB // 2, MIB):
        meter = search.Meter()
        search.find_answer_object(fill("note ```json {\n", size, FENCED_ANSWER), meter=meter)
        steps.append(meter.steps)
    assert steps[1] <= 2.2 * steps[0]
    assert steps[2] <= 2.2 * steps[1]


WORST = """
import json, sys, time
from agent_graph.flow.agents import answer_search as search
MIB = 1 << 20
replies = [
    "note ```json x\\n" * (MIB // 15),
    '{"a":"x' * (MIB // 7),
    '{"a":1' * (MIB // 6),
    '{"' * (MIB // 2),
    "{" * MIB,
]
print("ready", flush=True)
for _ in range(int(sys.argv[1])):
    for text in replies:
        try:
            search.find_answer_object(text)
        except search.AgentFailure:
            pass
print("done", flush=True)
"""


def test_the_worst_replies_finish_in_a_subprocess() -> None:
    """Five 1 MiB pathological replies: seconds at most on a loaded machine (the old
    search took 31 s for one of 97 KiB); the timeout only stops a regression hanging."""
    done = subprocess.run(
        [sys.executable, "-c", WORST, "1"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ready", "done"]


def test_a_search_is_interruptible() -> None:
    """SIGINT reaches the search between its steps: no C-level match holds it."""
    child = subprocess.Popen(
        [sys.executable, "-c", WORST, "1000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode != 0
    assert "KeyboardInterrupt" in stderr


def test_a_reply_over_the_limit_is_refused_with_its_code() -> None:
    text = json.dumps(ANSWER) + " " * search.MAX_REPLY_CHARS
    with pytest.raises(AgentFailure) as caught:
        search.find_answer_object(text, "Claude Code (`claude`)")
    assert caught.value.code == codes.AGENT_REPLY_TOO_LARGE
    assert caught.value.category == "agent_execution"
    assert f"{len(text)} characters" in caught.value.summary
    assert search.find_answer_object(text[: search.MAX_REPLY_CHARS]) == ANSWER


@pytest.mark.parametrize("levels", [search.MAX_ANSWER_DEPTH, 250, 5000])
def test_a_deep_answer_is_too_deep_not_missing(levels: int) -> None:
    answer = '{"result": "drafted", "content": ' + nested(levels - 1) + "}"
    for text in (answer, f"Here:\n```json\n{answer}\n```\n", f"Answer: {answer} thanks"):
        if levels <= search.MAX_ANSWER_DEPTH:
            assert search.find_answer_object(text) == json.loads(answer)
            continue
        with pytest.raises(AgentFailure) as caught:
            search.find_answer_object(text)
        assert caught.value.code == codes.AGENT_ANSWER_TOO_DEEP
        assert "nested more than 200 levels deep" in caught.value.summary


def test_deep_json_beside_the_answer_does_not_hide_it() -> None:
    text = "Scratch: " + nested(5000) + "\nAnswer: " + json.dumps(ANSWER)
    assert search.find_answer_object(text) == ANSWER


#: The fence pattern the search used before: backtracking, quadratic in the number of
#: unclosed fences, kept here as the reference the linear pass must agree with.
REFERENCE_FENCE = re.compile(r"(```|~~~)[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)\n[ \t]*\1", re.DOTALL)
FENCE_PIECES = ["```", "~~~", "````", "json", "JSON", "py", " ", "\t", "\n", "x", "{}", "`"]


def test_fences_agree_with_the_reference_pattern() -> None:
    rng = random.Random(26)
    texts = [
        "Unclosed ```json here\nthen\n~~~python\n{}\n~~~\n````\n{}\n```\n```JSON\nx\n  ```\n",
        "```json\n```",
        "```json\n\n```",
        "a ```\nb\n``` c ```\nd\n~~~\n```",
    ]
    texts += ["".join(rng.choices(FENCE_PIECES, k=rng.randint(0, 40))) for _ in range(3000)]
    for text in texts:
        expected = [
            (m.group(2), m.group(3), m.start(), m.end()) for m in REFERENCE_FENCE.finditer(text)
        ]
        got = [(f.tag, f.body, f.start, f.end) for f in search.find_fences(text)]
        assert got == expected, repr(text)


def test_objects_in_code_of_another_language_are_not_the_answer() -> None:
    assert search.find_answer_object('~~~python\n{"result": "wrong"}\n~~~\n') is None
    text = '~~~python\n{"result": "wrong"}\n~~~\nSo: ```JSON\n' + json.dumps(ANSWER) + "\n  ```\n"
    assert search.find_answer_object(text) == ANSWER


def test_a_passed_deadline_stops_the_search() -> None:
    meter = search.Meter(deadline=time.monotonic() - 1.0)
    with pytest.raises(AgentFailure, match="could not be searched before the timeout"):
        search.find_answer_object(fill("note ```json {\n", MIB // 4), "Codex", meter=meter)


def completed(elapsed_s: float, timeout_s: float) -> Completed:
    return Completed(
        argv=("claude",), cwd=".", pid=1, exit_code=0, signal=None, timed_out=False,
        overflow=None, stdout=b"", stderr=b"", elapsed_s=elapsed_s, timeout_s=timeout_s,
    )  # fmt: skip


def test_the_search_gets_what_is_left_of_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float | None] = []

    def spy(text: str, what: str, *, meter: search.Meter) -> dict[str, Any] | None:
        seen.append(meter.deadline)
        return None

    monkeypatch.setattr(transport, "find_answer_object", spy)
    before = time.monotonic()
    transport.search_reply("x", completed(2.0, 10.0), "Claude")
    transport.search_reply("x", completed(10.0, 10.0), "Claude")
    after = time.monotonic()
    assert seen[0] is not None
    assert before + 8.0 <= seen[0] <= after + 8.0
    grace = transport.SEARCH_GRACE_S
    assert seen[1] is not None
    assert before + grace <= seen[1] <= after + grace


def test_loads_reply_names_a_deep_answer() -> None:
    assert transport.loads_reply(json.dumps(ANSWER), "The agent command") == ANSWER
    with pytest.raises(AgentFailure) as caught:
        transport.loads_reply(nested(100_000), "The agent command")
    assert caught.value.code == codes.AGENT_ANSWER_TOO_DEEP
    with pytest.raises(AgentFailure, match="not JSON") as not_json:
        transport.loads_reply("{oops", "The agent command")
    assert not_json.value.code is None


def test_answer_from_refuses_a_deep_content() -> None:
    deep = json.loads(nested(300))
    with pytest.raises(AgentFailure) as caught:
        transport.answer_from({"result": "drafted", "content": deep}, None, "The agent")
    assert caught.value.code == codes.AGENT_ANSWER_TOO_DEEP


# ------------------------------------------------------------------- through the adapters

FAKES = Path(__file__).resolve().parents[1] / "fake_agents"


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "fake-home"
    home.mkdir()
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_AGENT_HOME", str(home))
    monkeypatch.delenv(transport.TIMEOUT_ENV, raising=False)
    return home


def script(home: Path, monkeypatch: pytest.MonkeyPatch, line: dict[str, Any]) -> None:
    path = home / "script.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    monkeypatch.setenv("FAKE_AGENT_SCRIPT", str(path))


def agent_request(cwd: Path) -> Any:
    from agent_graph.flow.agents import AgentRequest, ResultChoice

    return AgentRequest(
        run_id="run-1", flow="draft", node="Write", marker="new", agent=None,
        prompt="Write.\n", results=(ResultChoice("drafted", "done"),), cwd=str(cwd),
    )  # fmt: skip


@pytest.mark.parametrize("adapter", [claude, codex], ids=["claude", "codex"])
def test_adapters_find_the_answer_after_a_pathological_reply(
    adapter: Any, fake_cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = fill("note ```json x\n", MIB - 1024, FENCED_ANSWER)
    script(fake_cli, monkeypatch, {"fake": "text", "text": text})
    answer = adapter.from_spec("", timeout_s=60).ask(agent_request(tmp_path))
    assert (answer.result, answer.content) == ("drafted", "ok")


@pytest.mark.parametrize("adapter", [claude, codex], ids=["claude", "codex"])
def test_adapters_refuse_a_reply_over_the_limit(
    adapter: Any, fake_cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "x" * (search.MAX_REPLY_CHARS + 10) + FENCED_ANSWER
    script(fake_cli, monkeypatch, {"fake": "text", "text": text})
    with pytest.raises(AgentFailure) as caught:
        adapter.from_spec("", timeout_s=60).ask(agent_request(tmp_path))
    assert caught.value.code == codes.AGENT_REPLY_TOO_LARGE


def test_claude_envelope_nested_past_the_stack_is_too_deep(
    fake_cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    envelope = (
        '{"type": "result", "subtype": "success", "is_error": false, "session_id": "s-1",'
        ' "result": "", "structured_output": {"result": "drafted", "content": '
        + nested(100_000)
        + "}}"
    )
    script(fake_cli, monkeypatch, {"fake": "garbage", "stdout": envelope})
    with pytest.raises(AgentFailure) as caught:
        claude.from_spec("", timeout_s=60).ask(agent_request(tmp_path))
    assert caught.value.code == codes.AGENT_ANSWER_TOO_DEEP


def test_a_command_agent_with_a_deep_content_gets_the_coded_failure(tmp_path: Path) -> None:
    """``command:`` answers go through ``answer_from``: content nested 300 levels (still
    decodable) is ``agent-answer-too-deep``, not stored into the Run."""
    from agent_graph.flow.agents import command

    program = tmp_path / "deep-agent.py"
    program.write_text(
        "import sys\nsys.stdin.read()\n"
        "print('{\"result\": \"drafted\", \"content\": ' + '[' * 300 + ']' * 300 + '}')\n",
        encoding="utf-8",
    )
    adapter = command.from_spec(json.dumps([sys.executable, str(program)]), timeout_s=60)
    with pytest.raises(AgentFailure) as caught:
        adapter.ask(agent_request(tmp_path))
    assert caught.value.code == codes.AGENT_ANSWER_TOO_DEEP
