"""The process-backed Agent adapters: ``command:``, ``claude`` and ``codex``.

Unit level: each test calls ``adapter.ask(AgentRequest(...))`` against a small program
(``command:``) or the fake CLIs in ``tests/fake_agents`` (first on PATH), which log every
call, so a test sees the exact argv, stdin prompt and cwd an adapter used.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_graph.flow.agents import AgentFailure, AgentRequest, ResultChoice, claude, codex, command
from agent_graph.flow.agents import _transport as transport

FAKES = Path(__file__).resolve().parents[1] / "fake_agents"

# The three parts of §3.2, with what tends to break transports: a leading dash, quotes,
# backslashes, braces, non-ASCII and a JSON-looking example.
PROMPT = (
    "--not-an-option: write a draft for the request below. Follow the style guide.\n"
    'Request: "a short note" about C:\\temp and {"braces": true} — 草稿\n'
    "\n"
    "## Results\n"
    "### drafted\n"
    "DRAFT.md is written. Content: one sentence.\n"
    "### cannot-draft\n"
    "More information is needed. Content: the questions.\n"
    "\n"
    "Submit your result by calling the result submission tool.\n"
)
RESULTS = (
    ResultChoice("drafted", "DRAFT.md is written. Content: one sentence."),
    ResultChoice("cannot-draft", "More information is needed. Content: the questions."),
)


def request(cwd: Path, **changes: Any) -> AgentRequest:
    fields: dict[str, Any] = {
        "run_id": "run-1",
        "flow": "draft-review",
        "node": "Write the first draft",
        "marker": "new",
        "agent": None,
        "prompt": PROMPT,
        "results": RESULTS,
        "cwd": str(cwd),
    }
    fields.update(changes)
    return AgentRequest(**fields)


@dataclass
class Fakes:
    """The fake CLIs' world for one test: their home, script and call log."""

    home: Path
    monkeypatch: pytest.MonkeyPatch

    def script(self, *lines: dict[str, Any]) -> None:
        path = self.home / "script.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
        self.monkeypatch.setenv("FAKE_AGENT_SCRIPT", str(path))

    def calls(self) -> list[dict[str, Any]]:
        path = self.home / "calls.jsonl"
        if not path.exists():
            return []
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        return [r for r in rows if "fake" in r]

    def hang_child(self) -> int:
        path = self.home / "calls.jsonl"
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        return int(next(r["hangChildPid"] for r in rows if "hangChildPid" in r))


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    home = tmp_path / "fake-home"
    home.mkdir()
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_AGENT_HOME", str(home))
    monkeypatch.delenv("FAKE_AGENT_SCRIPT", raising=False)
    monkeypatch.delenv(transport.TIMEOUT_ENV, raising=False)
    return Fakes(home, monkeypatch)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    where = tmp_path / "run cwd"  # a space: the cwd is passed, never through a shell
    where.mkdir()
    return where


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def write_program(where: Path, name: str, body: str) -> Path:
    path = where / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --------------------------------------------------------------------------- command:

ECHO_AGENT = """
    import json, os, sys
    raw = sys.stdin.buffer.read()
    request = json.loads(raw)
    with open(os.environ["AGENT_LOG"], "wb") as out:
        out.write(raw)
    print(json.dumps({
        "result": "drafted",
        "content": {"cwd": os.getcwd(), "marker": request["marker"],
                    "env": os.environ.get("AGENT_MARK")},
        "agent": os.environ.get("AGENT_REF", "agent-7"),
    }))
"""


@pytest.fixture
def echo_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENT_LOG", str(tmp_path / "request.json"))
    monkeypatch.setenv("AGENT_MARK", "inherited")
    monkeypatch.delenv(transport.TIMEOUT_ENV, raising=False)
    return write_program(tmp_path, "echo-agent", ECHO_AGENT)


def test_command_sends_the_request_and_maps_the_answer(
    echo_agent: Path, workdir: Path, tmp_path: Path
) -> None:
    adapter = command.from_spec(json.dumps([sys.executable, str(echo_agent)]))
    answer = adapter.ask(request(workdir))
    assert answer.result == "drafted"
    assert answer.agent == "agent-7"
    assert answer.content == {"cwd": str(workdir), "marker": "new", "env": "inherited"}
    raw = (tmp_path / "request.json").read_bytes()
    expected = {
        "runId": "run-1",
        "flow": "draft-review",
        "node": "Write the first draft",
        "marker": "new",
        "agent": None,
        "prompt": PROMPT,
        "results": [{"name": r.name, "description": r.description} for r in RESULTS],
    }
    # compact UTF-8 JSON, the prompt byte for byte
    assert raw == json.dumps(expected, ensure_ascii=False, separators=(",", ":")).encode()


def test_command_reuse_and_re_prompt_fields(
    echo_agent: Path, workdir: Path, tmp_path: Path
) -> None:
    adapter = command.from_spec(json.dumps([sys.executable, str(echo_agent)]))
    adapter.ask(request(workdir, marker="reuse", agent="agent-7", attempt=2, rejected="done"))
    sent = json.loads((tmp_path / "request.json").read_bytes())
    assert (sent["marker"], sent["agent"]) == ("reuse", "agent-7")
    assert (sent["attempt"], sent["rejected"]) == (2, "done")


def test_command_without_an_agent_ref_keeps_the_bound_one(tmp_path: Path, workdir: Path) -> None:
    program = write_program(
        tmp_path, "anon", 'import sys; sys.stdin.read(); print(\'{"result":"drafted"}\')\n'
    )
    adapter = command.from_spec(json.dumps([str(program)]))
    reused = adapter.ask(request(workdir, marker="reuse", agent="a-1"))
    assert (reused.result, reused.content, reused.agent) == ("drafted", None, "a-1")
    assert adapter.ask(request(workdir)).agent is None


def test_command_plain_name_is_found_on_path(
    tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write_program(
        bin_dir,
        "my-agent",
        'import sys; sys.stdin.read(); print(\'{"result":"cannot-draft","content":"why?"}\')\n',
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    answer = command.from_spec("my-agent").ask(request(workdir))
    assert (answer.result, answer.content) == ("cannot-draft", "why?")


@pytest.mark.parametrize(
    "rest", ["", "  ", "[]", '[""]', "[1]", '["a", 2]', "[oops", '{"a":1}', "python3 agent.py"]
)
def test_command_spec_errors_are_value_errors(rest: str) -> None:
    with pytest.raises(ValueError, match="command:") as caught:
        command.from_spec(rest)
    assert isinstance(caught.value, transport.AgentSpecError)
    assert caught.value.code == "agent-spec-invalid"


BAD_OUTPUTS = [
    ("print('not json at all')", "not JSON"),
    ("pass", "printed nothing"),
    ("print('[1, 2]')", "an array, not a JSON object"),
    ("print('\"drafted\"')", "a string, not a JSON object"),
    ('print(\'{"content": "x"}\')', "without a `result`"),
    ("print('{\"result\": 3}')", "not a name"),
    ('print(\'{"result": ""}\')', "not a name"),
    ('print(\'{"result": "drafted", "agent": 5}\')', "`agent` that is not a string"),
    ("import sys; sys.stderr.write('model quota exceeded\\n'); sys.exit(3)", "exited with 3"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "killed by SIGKILL"),
]


@pytest.mark.parametrize(("body", "message"), BAD_OUTPUTS)
def test_command_failures(body: str, message: str, tmp_path: Path, workdir: Path) -> None:
    program = write_program(tmp_path, "bad", "import sys\nsys.stdin.read()\n" + body + "\n")
    with pytest.raises(AgentFailure, match=message) as caught:
        command.from_spec(json.dumps([str(program)])).ask(request(workdir))
    assert caught.value.category == "agent_execution"
    if "exited with 3" in message:
        assert "model quota exceeded" in caught.value.summary


def test_command_hang_is_killed_with_its_group(tmp_path: Path, workdir: Path) -> None:
    pid_file = tmp_path / "child.pid"
    program = write_program(
        tmp_path,
        "hang",
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """,
    )
    adapter = command.from_spec(json.dumps([str(program)]), timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(AgentFailure, match=r"did not answer within 1 s") as caught:
        adapter.ask(request(workdir))
    assert time.monotonic() - started < 1.0 + transport.TERM_GRACE_S + 3.0
    assert caught.value.category == "agent_execution"
    assert not alive(int(pid_file.read_text()))


@pytest.mark.parametrize("kind", ["missing", "not-executable"])
def test_command_that_cannot_start(kind: str, tmp_path: Path, workdir: Path) -> None:
    target = tmp_path / "agent.sh"
    if kind == "not-executable":
        target.write_text("#!/bin/sh\necho '{}'\n")
    with pytest.raises(AgentFailure, match="Cannot start the agent") as caught:
        command.from_spec(json.dumps([str(target)])).ask(request(workdir))
    assert caught.value.category == "agent_execution"


def test_timeout_option_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(transport.TIMEOUT_ENV, raising=False)
    assert transport.resolve_timeout(None) == transport.DEFAULT_TIMEOUT_S == 1800.0
    monkeypatch.setenv(transport.TIMEOUT_ENV, "12.5")
    assert transport.resolve_timeout(None) == 12.5
    assert transport.resolve_timeout(3) == 3.0  # the runner's option wins
    for adapter in (command.from_spec("x"), claude.from_spec(""), codex.from_spec("")):
        assert getattr(adapter, "timeout_s", None) == 12.5
    monkeypatch.setenv(transport.TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match=transport.TIMEOUT_ENV):
        transport.resolve_timeout(None)
    for bad in (0, -1, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="positive"):
            transport.resolve_timeout(bad)


def test_release_is_a_no_op() -> None:
    for adapter in (command.from_spec("x"), claude.from_spec(""), codex.from_spec("")):
        adapter.release("anything")


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"result":"drafted","content":"x"}', {"result": "drafted", "content": "x"}),
        ('  \n{"result":"a"}\n', {"result": "a"}),
        ('Done.\n```json\n{"result": "a", "content": {"n": 1}}\n```\n', None),
        ('Done.\n```\n{"result": "a", "content": {"n": 1}}\n```', None),
        ('~~~JSON\n{"result": "a", "content": {"n": 1}}\n~~~', None),
        ('Here: {"result": "a", "content": {"n": 1}} — thanks', None),
        ('Shape: {"x": 1}. Answer: {"result": "a", "content": {"n": 1}}', None),
        ('```python\n{"result": "b"}\n```\nfinal {"result": "a", "content": {"n": 1}}', None),
        ("no json here", "none"),
        ('{"x": 1} only', {"x": 1}),
    ],
)
def test_find_answer_object(text: str, expected: Any) -> None:
    found = transport.find_answer_object(text)
    if expected == "none":
        assert found is None
    elif expected is None:
        assert found == {"result": "a", "content": {"n": 1}}
    else:
        assert found == expected


def test_transport_note_lists_the_results_and_the_rejected_name(workdir: Path) -> None:
    note = transport.transport_note(request(workdir), content="a string")
    assert '"drafted", "cannot-draft"' in note
    assert "a string" in note
    assert "previous answer" not in note
    again = transport.transport_note(request(workdir, attempt=2, rejected="done"), content="x")
    assert 'named the result "done"' in again


# --------------------------------------------------------------------------- claude


def last_call(fakes: Fakes) -> dict[str, Any]:
    calls = fakes.calls()
    assert calls, "the fake was not called"
    return calls[-1]


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def assert_prompt_intact(sent: str) -> None:
    # the three parts first, unchanged; then only the transport note
    assert sent.startswith(PROMPT)
    assert sent.count(PROMPT) == 1
    assert "How to submit your result here" in sent[len(PROMPT) :]


def test_claude_new_session_then_resume(fakes: Fakes, workdir: Path) -> None:
    fakes.script(
        {"result": "drafted", "content": "A note on temp folders."},
        {"result": "cannot-draft", "content": {"questions": ["which note?"]}},
    )
    adapter = claude.from_spec("")
    first = adapter.ask(request(workdir))
    call = last_call(fakes)
    assert call["argv"][:4] == ["-p", "--output-format", "json", "--json-schema"]
    assert "--resume" not in call["argv"]
    schema = json.loads(option(call["argv"], "--json-schema"))
    assert schema["properties"]["result"]["enum"] == ["drafted", "cannot-draft"]
    assert schema["required"] == ["result", "content"]
    assert call["cwd"] == str(workdir)
    assert_prompt_intact(call["prompt"])
    assert (first.result, first.content) == ("drafted", "A note on temp folders.")
    assert first.agent == call["session"]

    second = adapter.ask(request(workdir, marker="reuse", agent=first.agent))
    call = last_call(fakes)
    assert option(call["argv"], "--resume") == first.agent
    assert call["resumed"] is True
    assert second.agent == first.agent
    assert second.content == {"questions": ["which note?"]}  # content is any JSON


def test_claude_new_marker_starts_another_session(fakes: Fakes, workdir: Path) -> None:
    adapter = claude.from_spec("")
    one = adapter.ask(request(workdir))
    two = adapter.ask(request(workdir, agent=one.agent))  # 新建Agent replaces the binding
    assert one.agent != two.agent
    assert "--resume" not in last_call(fakes)["argv"]
    assert one.result == "drafted"  # the fake's default: the schema's first result


def test_claude_extra_args_reach_the_cli(fakes: Fakes, workdir: Path) -> None:
    extra = ["--model", "sonnet", "--permission-mode", "acceptEdits", "--allowedTools", "Edit"]
    claude.from_spec(json.dumps(extra)).ask(request(workdir))
    assert last_call(fakes)["argv"][-len(extra) :] == extra


@pytest.mark.parametrize("rest", ["[oops", '"--model"', '["--model", 1]', "{}"])
def test_claude_and_codex_spec_errors(rest: str) -> None:
    with pytest.raises(ValueError, match="claude:"):
        claude.from_spec(rest)
    with pytest.raises(ValueError, match="codex:"):
        codex.from_spec(rest)


def test_claude_reuse_without_binding_is_agent_binding(fakes: Fakes, workdir: Path) -> None:
    with pytest.raises(AgentFailure, match="no session is bound") as caught:
        claude.from_spec("").ask(request(workdir, marker="reuse", agent=None))
    assert caught.value.category == "agent_binding"
    assert fakes.calls() == []


def test_claude_resume_of_unknown_session_fails(fakes: Fakes, workdir: Path) -> None:
    with pytest.raises(AgentFailure, match="No conversation found with session ID: gone"):
        claude.from_spec("").ask(request(workdir, marker="reuse", agent="gone"))


ANSWER = {"result": "drafted", "content": "ok"}


@pytest.mark.parametrize(
    "line",
    [
        {**ANSWER, "fake": "text"},  # fenced block in prose, no structured_output
        {**ANSWER, "fake": "text", "text": 'Sure. {"result": "drafted", "content": "ok"}'},
        {**ANSWER, "fake": "text", "text": '{"result":"drafted","content":"ok"}'},
        {
            "fake": "garbage",  # an array of messages ending in the result message
            "stdout": json.dumps(
                [
                    {"type": "system", "subtype": "init", "session_id": "s-1"},
                    {"type": "result", "subtype": "success", "is_error": False,
                     "result": "", "session_id": "s-1", "structured_output": ANSWER},
                ]
            ),
        },
        {
            "fake": "garbage",  # a warning line before the envelope
            "stdout": "Warning: update available\n"
            + json.dumps({"type": "result", "subtype": "success", "is_error": False,
                          "result": json.dumps(ANSWER), "session_id": "s-1"}),
        },
    ],
)  # fmt: skip
def test_claude_answer_variants(line: dict[str, Any], fakes: Fakes, workdir: Path) -> None:
    fakes.script(line)
    answer = claude.from_spec("").ask(request(workdir))
    assert (answer.result, answer.content) == ("drafted", "ok")
    assert answer.agent


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"fake": "garbage", "stdout": "<html>oops</html>"}, "no JSON result envelope"),
        ({"fake": "garbage", "stdout": ""}, "no JSON result envelope"),
        ({"fake": "crash", "stderr": "API Error: 401 invalid key", "exit": 1}, "401 invalid key"),
        ({"fake": "error", "message": "tool loop"}, "error_during_execution: tool loop"),
        ({"fake": "text", "text": "I could not decide."}, "without a JSON answer object"),
        ({"fake": "text", "text": ""}, "neither structured output nor a result text"),
        ({"fake": "no-session", **ANSWER}, "no session_id"),
        ({"content": "no result"}, "without a `result`"),
        ({"fake": "garbage", "stdout": json.dumps({"type": "result", "subtype":
          "error_max_turns", "is_error": False, "session_id": "s"})}, "error_max_turns"),
        ({"fake": "garbage", "stdout": json.dumps({"type": "result", "is_error": True,
          "result": "Credit balance is too low", "session_id": "s"})}, "Credit balance"),
    ],
)  # fmt: skip
def test_claude_failures(line: dict[str, Any], message: str, fakes: Fakes, workdir: Path) -> None:
    fakes.script(line)
    with pytest.raises(AgentFailure, match=message) as caught:
        claude.from_spec("").ask(request(workdir))
    assert caught.value.category == "agent_execution"


def test_claude_hang_is_killed(fakes: Fakes, workdir: Path) -> None:
    fakes.script({"fake": "hang"})
    started = time.monotonic()
    with pytest.raises(AgentFailure, match="did not answer within 1 s"):
        claude.from_spec("", timeout_s=1).ask(request(workdir))
    assert time.monotonic() - started < 1.0 + transport.TERM_GRACE_S + 3.0
    assert not alive(fakes.hang_child())


def test_claude_missing_cli(fakes: Fakes, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(workdir))
    with pytest.raises(AgentFailure, match="Cannot start the agent `claude`"):
        claude.from_spec("").ask(request(workdir))


def test_claude_re_prompt_names_the_rejected_result(fakes: Fakes, workdir: Path) -> None:
    fakes.script({**ANSWER, "expect": 'named the result "finished"'})
    claude.from_spec("").ask(request(workdir, attempt=2, rejected="finished"))


# --------------------------------------------------------------------------- codex


def test_codex_new_thread_then_resume(fakes: Fakes, workdir: Path) -> None:
    fakes.script(
        {"result": "drafted", "content": "A note."},
        {"result": "cannot-draft", "content": "Which note?"},
    )
    extra = ["--sandbox", "workspace-write", "--skip-git-repo-check"]
    adapter = codex.from_spec(json.dumps(extra))
    first = adapter.ask(request(workdir))
    call = last_call(fakes)
    argv = call["argv"]
    assert argv[:2] == ["exec", "--json"]
    assert argv[-1] == "-"  # the prompt comes from stdin
    assert "resume" not in argv
    assert argv[-1 - len(extra) : -1] == extra
    assert call["schema"] == {
        "type": "object",
        "properties": {
            "result": {
                "type": "string",
                "description": "the result name you submit",
                "enum": ["drafted", "cannot-draft"],
            },
            "content": {"type": "string", "description": "the result content"},
        },
        "required": ["result", "content"],
        "additionalProperties": False,
    }
    assert call["cwd"] == str(workdir)
    assert_prompt_intact(call["prompt"])
    assert (first.result, first.content, first.agent) == ("drafted", "A note.", call["session"])

    second = adapter.ask(request(workdir, marker="reuse", agent=first.agent))
    argv = last_call(fakes)["argv"]
    # the fake, like the CLI, rejects exec options after `resume`: they came before it
    assert argv[-3:] == ["resume", first.agent, "-"]
    assert argv.index("--output-schema") < argv.index("resume")
    assert argv.index("--sandbox") < argv.index("resume")
    assert (second.result, second.agent) == ("cannot-draft", first.agent)
    assert last_call(fakes)["resumed"] is True


def test_codex_reuse_without_binding_is_agent_binding(fakes: Fakes, workdir: Path) -> None:
    with pytest.raises(AgentFailure, match="no thread is bound") as caught:
        codex.from_spec("").ask(request(workdir, marker="reuse", agent=""))
    assert caught.value.category == "agent_binding"


def test_codex_resume_of_unknown_thread_fails(fakes: Fakes, workdir: Path) -> None:
    with pytest.raises(AgentFailure, match="no rollout found for thread id t-gone"):
        codex.from_spec("").ask(request(workdir, marker="reuse", agent="t-gone"))


@pytest.mark.parametrize(
    "line",
    [
        ANSWER,
        {**ANSWER, "fake": "text"},
        {**ANSWER, "fake": "text", "text": 'Result: {"result": "drafted", "content": "ok"}'},
    ],
)
def test_codex_answer_variants(line: dict[str, Any], fakes: Fakes, workdir: Path) -> None:
    fakes.script(line)
    answer = codex.from_spec("").ask(request(workdir))
    assert (answer.result, answer.content) == ("drafted", "ok")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"fake": "garbage", "stdout": "not an event stream"}, "without a final agent message"),
        ({"fake": "crash", "stderr": "Not inside a trusted directory", "exit": 1}, "trusted"),
        ({"fake": "error", "message": "stream disconnected"}, "failed: stream disconnected"),
        ({"fake": "text", "text": "no answer here"}, "without a JSON answer object"),
        ({"fake": "no-session", **ANSWER}, "no thread id"),
        ({"result": 7}, "not a name"),
    ],
)
def test_codex_failures(line: dict[str, Any], message: str, fakes: Fakes, workdir: Path) -> None:
    fakes.script(line)
    with pytest.raises(AgentFailure, match=message) as caught:
        codex.from_spec("").ask(request(workdir))
    assert caught.value.category == "agent_execution"


def test_codex_hang_is_killed(fakes: Fakes, workdir: Path) -> None:
    fakes.script({"fake": "hang"})
    started = time.monotonic()
    with pytest.raises(AgentFailure, match=r"did not answer within 1\.5 s"):
        codex.from_spec("", timeout_s=1.5).ask(request(workdir))
    assert time.monotonic() - started < 1.5 + transport.TERM_GRACE_S + 3.0
    assert not alive(fakes.hang_child())


def test_codex_stream_variants() -> None:
    legacy = "\n".join(
        [
            "Reading prompt from stdin...",
            json.dumps({"type": "thread.started", "thread_id": "t-1"}),
            json.dumps({"type": "error", "message": "Reconnecting... 1/5"}),
            json.dumps(
                {"type": "item.completed", "item": {"item_type": "assistant_message", "text": "A"}}
            ),
            json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": "B"}}),
            json.dumps({"type": "item.completed", "item": {"type": "reasoning", "text": "C"}}),
            "[1, 2]",
        ]
    )
    stream = codex._Stream.parse(legacy)
    assert (stream.thread_id, stream.message, stream.failed) == ("t-1", "B", None)
    assert stream.error == "Reconnecting... 1/5"


def test_codex_last_message_file_is_the_fallback(
    tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a CLI whose stream names the thread but carries no agent_message item
    program = write_program(
        tmp_path,
        "codex-o",
        """
        import json, sys
        argv = sys.argv[1:]
        sys.stdin.read()
        with open(argv[argv.index("--output-last-message") + 1], "w") as out:
            out.write('{"result": "drafted", "content": "from -o"}')
        print(json.dumps({"type": "thread.started", "thread_id": "t-9"}))
        """,
    )
    monkeypatch.delenv(transport.TIMEOUT_ENV, raising=False)
    adapter = codex.CodexAdapter(executable=str(program))
    answer = adapter.ask(request(workdir))
    assert (answer.content, answer.agent) == ("from -o", "t-9")


def test_adapters_share_the_protocol() -> None:
    from agent_graph.flow.agents import AgentAdapter

    makers: list[Callable[[str], object]] = [claude.from_spec, codex.from_spec]
    for make in makers:
        assert isinstance(make(""), AgentAdapter)
    assert isinstance(command.from_spec("x"), AgentAdapter)


# --------------------------------------------------------------------------- end to end

DRAFT_REVIEW = Path(__file__).resolve().parents[2] / "examples" / "flows" / "draft-review"
DRAFT = "# Releases\n\nWe cut a release by tagging main.\n"


def run_flow(
    capsys: pytest.CaptureFixture[str], workdir: Path, agent: str
) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """``agc flow run`` on draft-review: exit code, JSON summary, visited events."""
    from cli_support import run

    state = workdir / "run.json"
    code, out, _ = run(
        ["flow", "run", str(DRAFT_REVIEW), "--task", "A note on releases", "--cwd",
         str(workdir), "--state", str(state), "--agent", agent, "--format", "json"],
        capsys,
    )  # fmt: skip
    summary = json.loads(out.strip().splitlines()[-1])
    events_code, events_out, _ = run(
        ["flow", "events", "--state", str(state), "--format", "json"], capsys
    )
    assert events_code == 0
    visits = [e for e in json.loads(events_out)["events"] if "result" in e]
    return code, summary, visits


def test_draft_review_runs_with_fake_claude(
    fakes: Fakes, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fakes.script(
        {"result": "drafted", "content": "A note.", "write": {"DRAFT.md": DRAFT},
         "expect": "Write a draft"},
        {"result": "revise", "content": "Mention the changelog.", "expect": "longestParagraph"},
        {"result": "revised", "content": "Added it.",
         "write": {"DRAFT.md": DRAFT + "The changelog comes first.\n"}},
        {"result": "accept", "content": "The note explains how a release is cut."},
    )  # fmt: skip
    code, summary, visits = run_flow(capsys, workdir, 'claude:["--permission-mode","acceptEdits"]')
    assert code == 0, summary
    assert summary["state"] == "completed"
    assert summary["result"] == "The note explains how a release is cut."
    assert [v["result"] for v in visits] == [
        "drafted", "已执行", "revise", "revised", "已执行", "accept",
    ]  # fmt: skip
    measured = visits[1]["content"]
    assert measured["status"] == "success"  # the command read the DRAFT.md the agent wrote
    assert json.loads(measured["stdout"])["words"] > 0
    calls = fakes.calls()
    assert [c["resumed"] for c in calls] == [False, True, True, True]
    assert len({c["session"] for c in calls}) == 1  # 复用Agent resumed the bound session
    assert all(c["cwd"] == str(workdir) for c in calls)
    assert all(c["argv"][-2:] == ["--permission-mode", "acceptEdits"] for c in calls)


def test_draft_review_runs_with_fake_codex(
    fakes: Fakes, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fakes.script(
        {"result": "drafted", "content": "First try.", "write": {"DRAFT.md": DRAFT}},
        {"result": "start-over", "content": "It misses the request."},
        {"result": "drafted", "content": "Second try.", "write": {"DRAFT.md": DRAFT},
         "expect": "It misses the request."},
        {"result": "accept", "content": "Good."},
    )  # fmt: skip
    code, summary, visits = run_flow(capsys, workdir, 'codex:["--sandbox","workspace-write"]')
    assert code == 0, summary
    assert (summary["state"], summary["result"]) == ("completed", "Good.")
    assert [v["result"] for v in visits] == [
        "drafted", "已执行", "start-over", "drafted", "已执行", "accept",
    ]  # fmt: skip
    calls = fakes.calls()
    assert [c["resumed"] for c in calls] == [False, True, False, True]
    first, second = calls[0]["session"], calls[2]["session"]
    assert first != second  # 新建Agent replaced the binding with a new thread
    assert [c["session"] for c in calls] == [first, first, second, second]


def test_agent_failure_fails_the_run(
    fakes: Fakes, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fakes.script({"fake": "crash", "stderr": "API Error: overloaded", "exit": 1})
    code, summary, visits = run_flow(capsys, workdir, "claude")
    assert code == 1
    assert summary["state"] == "failed"
    assert summary["error"]["category"] == "agent_execution"
    assert "API Error: overloaded" in summary["error"]["summary"]
    assert visits == []
