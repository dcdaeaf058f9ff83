"""The bytes of every Run record commit, pinned: scenarios covering each event, status,
recovery strategy and error path, on a fixed clock, compared with golden files.

A record's checksum covers its compact JSON in member order, and hosts and tests read the
files, so a change to how the runtime builds the document must not move a member or
change a value unnoticed. Each scenario runs with the runtime's clock, run ids and visit
timings made deterministic, keeps every version committed (child records too, in commit
order) and compares them with ``tests/golden/flow-records/<scenario>.txt``: one line per
commit, ``<record file name> <record>``, with the temporary directory written as
``<TMP>`` and the checksum member (checked against the bytes first) left out. The golden
files were written by the single-file store; the journal keeps them: after each commit
the document its reader folds from snapshot and journal is the golden one, and a file
left without a journal (a new, ended or interrupted Run) is that document byte for byte.

Regenerate the golden files after an intended change of the format with
``AGC_UPDATE_GOLDEN=1 pytest tests/flow/test_flow_record_bytes.py`` and review the diff.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_graph import flow
from agent_graph.flow import AgentAnswer, AgentFailure, AgentRequest
from agent_graph.flow.runtime import Stop, record, store
from agent_graph.flow.runtime.binding import BINDINGS
from flow_run_support import (
    ECHO_STDIN,
    PRINT_CWD,
    Crash,
    FakeAgent,
    agent,
    call,
    command,
    package,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "flow-records"
_CHECKSUM = re.compile(rb',"checksum":"(sha256:[0-9a-f]{64})"}$')


class _Clock:
    """``datetime`` for the runtime's ``now()``: one millisecond later at every call."""

    start = datetime(2026, 1, 1, tzinfo=UTC)
    calls = 0

    @classmethod
    def now(cls, tz: Any = None) -> datetime:
        cls.calls += 1
        return cls.start + timedelta(milliseconds=cls.calls)


class Capture:
    """Each commit as its reader sees it: the snapshot and the journal folded (the golden
    files hold the whole document the old single-file records held after each commit, so
    the fold is proven to rebuild exactly that state); where no journal is left (a new,
    an ended or an interrupted Run) the file itself must be that document, byte for byte."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lines: list[str] = []
        self.whole_files = 0

    def add(self, path: Path) -> None:
        document = store.RunFile(path).read()
        body = store.canonical(document)
        assert document["checksum"] == "sha256:" + hashlib.sha256(body).hexdigest()
        if not store.RunFile(path).journal.exists():
            data = path.read_bytes()
            found = _CHECKSUM.search(data)
            assert found is not None, data[-100:]
            assert data[: found.start()] + b"}" == body
            assert found.group(1).decode() == document["checksum"]
            self.whole_files += 1
        text = body.decode("utf-8").replace(str(self.root), "<TMP>")
        self.lines.append(f"{path.name} {text}")


@pytest.fixture
def capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Capture:
    root = tmp_path.resolve()
    found = Capture(root)
    ticks = iter(range(1, 1 << 30))
    ids = iter(range(1, 1 << 30))
    _Clock.calls = 0
    monkeypatch.setattr(record, "datetime", _Clock)
    # visit durations: 7 ms from each start to its end, whatever the machine's speed
    monkeypatch.setattr(record, "time", SimpleNamespace(monotonic=lambda: next(ticks) * 0.007))
    monkeypatch.setattr(
        record, "secrets", SimpleNamespace(token_hex=lambda n: f"{next(ids):0{2 * n}x}")
    )
    real = store.RunFile._write

    def write(self: store.RunFile, document: dict[str, Any], *, new: bool) -> None:
        real(self, document, new=new)
        found.add(self.path if new else self.real)

    monkeypatch.setattr(store.RunFile, "_write", write)
    (root / "flows").mkdir()
    (root / "proj").mkdir()
    return found


def _run(capture: Capture, flow_id: str, fake: Any = None, **options: Any) -> flow.RunSummary:
    options.setdefault("cwd", capture.root / "proj")
    state = options.pop("state", capture.root / "run.json")
    return flow.run(
        capture.root / "flows" / flow_id, "the task", state=state, agent=fake, **options
    )


def _resume(capture: Capture, fake: Any = None, **options: Any) -> flow.RunSummary:
    return flow.resume(capture.root / "run.json", agent=fake, **options)


def _stopping(stop: Stop) -> Callable[[AgentRequest], AgentAnswer]:
    def ask(request: AgentRequest) -> AgentAnswer:
        stop.request(kill_children=False)
        raise AgentFailure("stopped")

    return ask


def _stop_when(
    monkeypatch: pytest.MonkeyPatch,
    predicate: Callable[[dict[str, Any]], bool],
    then: Callable[[], None],
) -> None:
    """After the first commit for which ``predicate`` holds, call ``then`` (once)."""
    inner = store.RunFile._write
    done: list[bool] = []

    def write(self: store.RunFile, document: dict[str, Any], *, new: bool) -> None:
        inner(self, document, new=new)
        if not done and predicate(document):
            done.append(True)
            then()

    monkeypatch.setattr(store.RunFile, "_write", write)


def _branch_running(document: dict[str, Any]) -> bool:
    return any(
        v["status"] == "running" and v["enteredFrom"] == "parallel" for v in document["visits"]
    )


def _crash() -> None:
    raise Crash


FORK = """
start((开始)) --> p[p]
p -->|go| f{{并行}}
f --> x[x]
f --> y[y]
x -->|已执行| j[j]
y -->|已执行| j
j -->|已执行| finish((结束))
"""


def _fork(capture: Capture, y_program: str = "node") -> None:
    package(
        capture.root / "flows",
        "fork",
        FORK,
        agent("p", "{outcome}", {"go": "."}),
        command("x", ECHO_STDIN, stdin='{"in": "{outcome}"}'),
        command("y", ECHO_STDIN, stdin='{"in": "{outcome}"}', program=y_program),
        command("j", ECHO_STDIN, stdin='{"in": "{outcome}", "x": {x.outcome}, "y": {y.outcome}}'),
    )


def _kid(capture: Capture, answers: str = "ok") -> None:
    package(
        capture.root / "flows",
        "kid",
        "start((开始)) --> k[k]\nk -->|ok| finish((结束))",
        agent("k", "kid: {outcome}", {answers: "."}),
    )


# -- scenarios ------------------------------------------------------------------------------


def agents_and_bindings(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "chain",
        "start((开始)) --> p[p]\np -->|ok| q[q]\nq -->|ok| n[n]\nn -->|ok| c[c]\n"
        "c -->|已执行| finish((结束))",
        agent("p", "P: {outcome}", {"ok": "."}),
        agent("q", "Q: {outcome}", {"ok": "."}, reuse=True),
        agent("n", "N: {outcome}", {"ok": "."}),
        command("c", PRINT_CWD),
    )
    fake = FakeAgent(
        ("nope", 1), ("ok", {"from": "p", "n": [1, 2.5, None]}), ("ok", "é"), ("ok", 3)
    )
    _run(capture, "chain", fake)


def undeclared_twice(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "one",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    _run(capture, "one", FakeAgent(("a", 1, "A"), ("b", 2, "A")))


def agent_failure_and_empty_binding(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "reuse",
        "start((开始)) --> q[q]\nq -->|ok| finish((结束))",
        agent("q", ".", {"ok": "."}, reuse=True),
    )
    _run(capture, "reuse", FakeAgent(("ok", 1)))
    package(
        capture.root / "flows",
        "one",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    _run(capture, "one", FakeAgent(AgentFailure("it broke")), state=capture.root / "two.json")


def commands(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "cmd",
        "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|已执行| finish((结束))",
        command("a", "process.stderr.write('warn');process.exit(3)"),
        command("b", "", args=["x"], program="no-such-program-agc"),
    )
    _run(capture, "cmd")


def fork_and_join(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    _fork(capture)
    _run(capture, "fork", FakeAgent(("go", {"saved": True})), max_parallel=1)


def fork_branch_cannot_start(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    _fork(capture, y_program="no-such-program-agc")
    _run(capture, "fork", FakeAgent(("go", "in")), max_parallel=1)


def children(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| d[d]\nc -->|已失败| d\n"
        "d -->|已完成| finish((结束))\nd -->|已失败| finish",
        call("c", "kid", task='{"a": "x {outcome} y", "n": 5}'),
        call("d", "kid"),
    )
    _kid(capture)
    _run(capture, "parent", FakeAgent(("ok", "kid done"), AgentFailure("kid broke")))


def plain_child_fails(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "parent",
        "start((开始)) --> c[c]\nc --> finish((结束))",
        call("c", "kid", plain=True),
    )
    _kid(capture)
    _run(capture, "parent", FakeAgent(("nope", 1), ("nope", 2)))


def loop_limit(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "loop",
        "start((开始)) --> p[p]\np -->|again| p\np -->|done| finish((结束))",
        agent("p", "{outcome}", {"again": ".", "done": "."}),
    )
    _run(capture, "loop", FakeAgent(("again", 1), ("again", 2), ("again", 3)), max_visits=2)


def interrupted_agent_retried(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "one",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    stop = Stop()
    _run(capture, "one", FakeAgent(_stopping(stop)), stop=stop, agent_ref="A")
    _resume(capture, FakeAgent(("ok", "done")))


def binding_dropped(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "one",
        "start((开始)) --> p[p]\np -->|ok| q[q]\nq -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
        agent("q", ".", {"ok": "."}),
    )
    stop = Stop()

    def second(request: AgentRequest) -> AgentAnswer:
        stop.request(kill_children=False)
        raise AgentFailure("stopped")

    _run(capture, "one", FakeAgent(("ok", 1, "A"), second), stop=stop)
    assert BINDINGS.bind("A", "run-elsewhere")
    try:
        _resume(capture, FakeAgent(("ok", 2, "B")))
    finally:
        BINDINGS.unbind("A", "run-elsewhere")


def _command_flow(capture: Capture) -> None:
    package(
        capture.root / "flows",
        "cmd",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", ECHO_STDIN, stdin='{"t": "{outcome}"}'),
    )


def interrupted_command_refused(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    _command_flow(capture)
    stop = Stop()
    _stop_when(monkeypatch, lambda d: bool(d["visits"]), lambda: stop.request(kill_children=False))
    _run(capture, "cmd", stop=stop)
    _resume(capture, fail_interrupted=True)


def interrupted_command_rerun(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    _command_flow(capture)
    stop = Stop()
    _stop_when(monkeypatch, lambda d: bool(d["visits"]), lambda: stop.request(kill_children=False))
    _run(capture, "cmd", stop=stop)
    _resume(capture, rerun_interrupted=True)


def crashed_branch_refused_then_rerun(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    _fork(capture)
    inner = store.RunFile._write
    _stop_when(monkeypatch, _branch_running, _crash)
    with pytest.raises(Crash):
        _run(capture, "fork", FakeAgent(("go", "in")), max_parallel=1)
    monkeypatch.setattr(store.RunFile, "_write", inner)
    # the record is its snapshot and its journal: both are put back
    files = [capture.root / "run.json", store.RunFile(capture.root / "run.json").journal]
    before = {path: path.read_bytes() for path in files if path.exists()}
    assert len(before) == 2  # the crash left journal lines after the snapshot
    _resume(capture, FakeAgent(), fail_interrupted=True, max_parallel=1)
    for path, data in before.items():
        path.write_bytes(data)
    capture.lines.append("(the record before the refused resume, put back)")
    _resume(capture, FakeAgent(), rerun_interrupted=True, max_parallel=1)


def crashed_child_resumed(capture: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        capture.root / "flows",
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| finish",
        call("c", "kid"),
    )
    _kid(capture)
    inner = store.RunFile._write
    _stop_when(
        monkeypatch,
        lambda d: d["parent"] is not None and any(v["status"] == "running" for v in d["visits"]),
        _crash,
    )
    with pytest.raises(Crash):
        _run(capture, "parent", FakeAgent(("ok", 1)))
    monkeypatch.setattr(store.RunFile, "_write", inner)
    _resume(capture, FakeAgent(("ok", "again")))


SCENARIOS: dict[str, Callable[[Capture, pytest.MonkeyPatch], None]] = {
    f.__name__.replace("_", "-"): f
    for f in (
        agents_and_bindings,
        undeclared_twice,
        agent_failure_and_empty_binding,
        commands,
        fork_and_join,
        fork_branch_cannot_start,
        children,
        plain_child_fails,
        loop_limit,
        interrupted_agent_retried,
        binding_dropped,
        interrupted_command_refused,
        interrupted_command_rerun,
        crashed_branch_refused_then_rerun,
        crashed_child_resumed,
    )
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_commit_matches_the_golden_record(
    name: str, capture: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    SCENARIOS[name](capture, monkeypatch)
    text = "".join(line + "\n" for line in capture.lines)
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("AGC_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8", newline="\n")
    expected = golden.read_text(encoding="utf-8").splitlines()
    for number, (got, want) in enumerate(zip(capture.lines, expected, strict=False), start=1):
        assert got == want, f"commit {number} of {name} differs"
    assert len(capture.lines) == len(expected)
    # most commits are journal lines, not whole files (each Run's first and last are files)
    assert capture.whole_files < len(expected)
