"""Helpers for the Flow Run tests (no tests here): tiny packages, a fake Agent, crashes.

``package(root, id, graph, *sections)`` writes ``root/id/FLOW.md``; the section helpers
write one node each (``agent``, ``command`` running ``node -e JS``, ``call``). Nodes are
written ``ref[ref]`` so a section's heading is its ref. :class:`FakeAgent` answers from a
list; :func:`crash_when` makes a commit raise :class:`Crash` (a stand-in for the process
dying right after it) once a predicate holds for the committed document.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agent_graph.documents.schema import validate
from agent_graph.flow import AgentAnswer, AgentFailure, AgentRequest
from agent_graph.flow.runtime import store
from agent_graph.flow.runtime.validate import check_record

NODE = "node"


def package(
    root: Path, flow_id: str, graph: str, *sections: str, files: dict[str, str] | None = None
) -> Path:
    directory = root / flow_id
    directory.mkdir(parents=True, exist_ok=True)
    lines = "\n".join(f"  {line.strip()}" for line in graph.strip().splitlines())
    text = (
        f"---\nname: {flow_id}\ndescription: test Flow {flow_id}\n---\n\n"
        f"```mermaid\nflowchart TD\n{lines}\n```\n\n" + "\n".join(sections)
    )
    (directory / "FLOW.md").write_text(text, encoding="utf-8")
    for name, content in (files or {}).items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return directory


def _results(results: dict[str, str]) -> str:
    return "".join(f"### {name}\n\n{text}\n\n" for name, text in results.items())


def agent(ref: str, body: str, results: dict[str, str], *, reuse: bool = False) -> str:
    marker = "复用Agent" if reuse else "新建Agent"
    return f"## {ref}\n\n```{marker}\n{body}\n```\n\n{_results(results)}"


def command(
    ref: str,
    js: str = "",
    *,
    stdin: str | None = None,
    args: list[str] | None = None,
    program: str = NODE,
) -> str:
    """A command node; ``stdin`` is raw JSON template text (may hold placeholders)."""
    argv = json.dumps(args if args is not None else ["-e", js], ensure_ascii=False)
    block = f'{{\n  "command": {json.dumps(program)},\n  "args": {argv}'
    if stdin is not None:
        block += f',\n  "stdin": {stdin}'
    block += "\n}"
    return f"## {ref}\n\n```执行自定义命令\n{block}\n```\n\n### 已执行\n\nThe command ran.\n\n"


def call(ref: str, flow: str, *, task: str | None = None, plain: bool = False) -> str:
    block = (
        f'{{"flow": {json.dumps(flow)}' + (f', "task": {task}' if task is not None else "") + "}"
    )
    results = "" if plain else _results({"已完成": "The child completed.", "已失败": "It failed."})
    return f"## {ref}\n\n```执行Flow\n{block}\n```\n\n{results}"


#: ``node -e`` bodies used throughout
ECHO_STDIN = "let d='';process.stdin.on('data',c=>d+=c).on('end',()=>process.stdout.write(d))"
PRINT_CWD = "process.stdout.write(process.cwd())"


class FakeAgent:
    """Answers in order: ``(result, content)`` or ``(result, content, agent)`` tuples, an
    :class:`AgentFailure`, or a callable taking the request."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.requests: list[AgentRequest] = []
        self.released: list[str] = []
        self.created = 0

    def ask(self, request: AgentRequest) -> AgentAnswer:
        self.requests.append(request)
        if not self.answers:
            raise AgentFailure("the fake Agent has no answer left")
        answer = self.answers.pop(0)
        if callable(answer):
            answer = answer(request)
        if isinstance(answer, AgentFailure):
            raise answer
        if isinstance(answer, AgentAnswer):
            return answer
        result, content, *rest = answer
        if rest:
            ref = rest[0]
        elif request.marker == "new":
            self.created += 1
            ref = f"agent-{self.created}"
        else:
            ref = request.agent
        return AgentAnswer(result, content, ref)

    def release(self, agent: str) -> None:
        self.released.append(agent)


class Crash(BaseException):
    """The test's stand-in for the process dying (nothing in the runner catches it)."""


@contextmanager
def crash_when(
    monkeypatch: pytest.MonkeyPatch, predicate: Callable[[dict[str, Any]], bool]
) -> Iterator[None]:
    real = store.RunFile._write

    def write(self: store.RunFile, document: dict[str, Any], *, new: bool) -> None:
        real(self, document, new=new)
        if predicate(document):
            raise Crash

    monkeypatch.setattr(store.RunFile, "_write", write)
    try:
        yield
    finally:
        monkeypatch.setattr(store.RunFile, "_write", real)


def read(path: Path) -> dict[str, Any]:
    """A Run record the runtime wrote (its snapshot and journal folded by the runtime's
    reader), checked against flow-run.schema.json on the way, and by the runtime's own
    checks (the references a schema cannot check)."""
    value: dict[str, Any] = store.RunFile(path).read()
    problem = validate("flow-run", value, path=str(path))
    assert problem is None, [d.to_dict() for d in problem.diagnostics]
    check_record(value, str(path))
    return value


def visited(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["node"], e["result"]) for e in document["events"] if e["type"] == "visited"]


def assert_log_whole(document: dict[str, Any]) -> None:
    """seq 1..n, no gap, no repeat; only ``visited`` events carry ``result``."""
    events = document["events"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for event in events:
        assert ("result" in event) == (event["type"] == "visited"), event
        assert event["runId"] == document["runId"]
    completed = [v for v in document["visits"] if v["status"] == "completed"]
    assert len([e for e in events if e["type"] == "visited"]) == len(completed)


def slow_command_flow(tmp_path: Path) -> tuple[Path, Path]:
    """A Flow whose first command writes its pid to ``pid`` and sleeps 1.5 s, then a quick
    second command: the package and the pid file (to signal the command by)."""
    pid = tmp_path / "pid"
    js = (
        f"require('fs').writeFileSync({json.dumps(str(pid))}, String(process.pid));"
        "setTimeout(()=>process.stdout.write('slept'),1500)"
    )
    pkg = package(
        tmp_path,
        "slow",
        "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|已执行| finish((结束))",
        command("a", js),
        command("b", "process.stdout.write('b')"),
    )
    return pkg, pid
