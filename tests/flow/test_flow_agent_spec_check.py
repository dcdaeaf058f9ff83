"""``--agent`` is checked before a Run record exists (issue 26 item 10): an unknown form,
a ``claude``/``codex`` CLI that is not installed, a ``command:`` program that does not
resolve are coded errors and leave the directory as it was (no record, no lock, no kept
program); ``command:`` argv files are found from the invoking directory, not ``--cwd``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agent_graph import codes, flow
from agent_graph.errors import AgentGraphError
from agent_graph.flow.agents.spec import adapter_from_spec, portable_spec
from cli_support import error_of
from flow_run_support import agent, package, read

ECHO_AGENT = """import json, sys
request = json.load(sys.stdin)
print(json.dumps({"result": request["results"][0]["name"], "content": "from agent.py",
                  "agent": request["agent"] or "a-1"}))
"""


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _one_agent(root: Path) -> Path:
    return package(
        root,
        "one",
        "start((开始)) --> a[a]\na -->|ok| finish((结束))",
        agent("a", "Do it", {"ok": "Done."}),
    )


@pytest.mark.parametrize(
    ("spec", "code", "words"),
    [
        ("gpt", codes.AGENT_SPEC_INVALID, ["Unknown Agent adapter 'gpt'", "command:gpt"]),
        ("bogus:x", codes.AGENT_SPEC_INVALID, ["Unknown Agent adapter"]),
        (
            "claude",
            codes.AGENT_UNAVAILABLE,
            ["npm install -g @anthropic-ai/claude-code", "docs/agents.md"],
        ),
        ("codex", codes.AGENT_UNAVAILABLE, ["npm install -g @openai/codex", "docs/agents.md"]),
        ("command:no-such-agent-program", codes.AGENT_UNAVAILABLE, ["no-such-agent-program"]),
        ('command:["./missing.py"]', codes.AGENT_UNAVAILABLE, ["missing.py", "does not exist"]),
        ('command:["./agent.txt"]', codes.AGENT_UNAVAILABLE, ["not an executable file"]),
    ],
)
def test_a_bad_agent_is_refused_before_anything_is_written(
    spec: str,
    code: str,
    words: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _one_agent(tmp_path)
    (tmp_path / "agent.txt").write_text("not a program", "utf-8")
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no claude, no codex, nothing else either
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path)
    args = ["flow", "run", "one", "--task", "t", "--state", "r.json", "--agent", spec]
    error = error_of(args, capsys)
    assert error["code"] == code
    for word in words:
        assert word in error["message"]
    assert _tree(tmp_path) == before  # no record, no lock, no programs directory


def test_a_bad_agent_on_resume_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = _one_agent(tmp_path)
    stop = flow.Stop()

    class Stopping:
        def ask(self, request: object) -> object:
            stop.request(kill_children=False)
            raise flow.AgentFailure("stopped")

        def release(self, agent: str) -> None:
            del agent

    flow.run(pkg, "t", state=tmp_path / "r.json", agent=Stopping(), stop=stop)
    monkeypatch.chdir(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    error = error_of(["flow", "resume", "--state", "r.json", "--agent", "gpt"], capsys)
    assert error["code"] == codes.AGENT_SPEC_INVALID
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_command_argv_files_resolve_from_the_invoking_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = _one_agent(tmp_path)
    invoking, work = tmp_path / "me", tmp_path / "work"
    invoking.mkdir()
    work.mkdir()
    (invoking / "agent.py").write_text(ECHO_AGENT, "utf-8")
    monkeypatch.chdir(invoking)
    spec = "command:" + json.dumps([sys.executable, "agent.py"])
    summary = flow.run(pkg, "t", state=tmp_path / "r.json", agent=spec, cwd=work)
    assert (summary.state, summary.result) == ("completed", "from agent.py")
    assert read(tmp_path / "r.json")["cwd"] == str(work)  # it ran there, found from here
    assert portable_spec(spec) == "command:" + json.dumps(
        [sys.executable, str(invoking / "agent.py")]
    )


def test_portable_specs(tmp_path: Path) -> None:
    base = str(tmp_path)
    (tmp_path / "a.py").write_text("", "utf-8")
    assert portable_spec("script:x.jsonl", base=base) == f"script:{tmp_path / 'x.jsonl'}"
    assert portable_spec("script:/abs.jsonl", base=base) == "script:/abs.jsonl"
    assert portable_spec("command:my-agent", base=base) == "command:my-agent"  # a PATH name
    assert portable_spec("command:./bin/agent", base=base) == "command:" + json.dumps(
        [str(tmp_path / "bin" / "agent")]
    )
    # options and words naming no file stay as typed
    assert json.loads(
        portable_spec('command:["node","a.py","--flag","missing.py"]', base=base)[8:]
    ) == ["node", str(tmp_path / "a.py"), "--flag", "missing.py"]
    assert portable_spec('claude:["--model","sonnet"]', base=base) == 'claude:["--model","sonnet"]'


def test_a_program_on_path_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\nexit 1\n", "utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    assert adapter_from_spec("claude") is not None
    assert adapter_from_spec("command:claude") is not None
    with pytest.raises(AgentGraphError) as caught:
        adapter_from_spec("codex", base=str(tmp_path))
    assert caught.value.code == codes.AGENT_UNAVAILABLE
