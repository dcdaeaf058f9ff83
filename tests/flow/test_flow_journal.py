"""The Run record's journal (``flow/runtime/store.py``, ``journal.py``): one line per
commit holding the change, folded by the reader; torn, stale, edited and oversized cases;
contents over 64 KiB kept once beside the record; temporary files of killed writers
swept when the lock is taken."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_graph import codes, flow
from agent_graph.errors import AgentGraphError
from agent_graph.flow.runtime import store
from agent_graph.flow.runtime.journal import REF
from flow_run_support import Crash, FakeAgent, agent, crash_when, package

LOOP = "start((开始)) --> p[p]\np -->|again| p\np -->|stop| finish((结束))"


def _loop(tmp_path: Path) -> Path:
    return package(tmp_path, "loop", LOOP, agent("p", "Go on.", {"again": ".", "stop": "."}))


def _journal(state: Path) -> Path:
    return store.RunFile(state).journal


def _crashed_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, visits: int, content: Any = "c"
) -> Path:
    """A loop Run killed (the test's stand-in) after the commit that started visit
    ``visits``: its record is a snapshot and a journal."""
    state = tmp_path / "r.json"
    answers = [("again", content)] * (visits + 5)
    with (
        crash_when(monkeypatch, lambda d: len(d["visits"]) == visits),
        pytest.raises(Crash),
    ):
        flow.run(_loop(tmp_path), "t", state=state, agent=FakeAgent(*answers))
    return state


def test_each_commit_appends_a_line_the_size_of_its_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _crashed_loop(tmp_path, monkeypatch, 40)
    lines = _journal(state).read_bytes().splitlines()
    document = store.RunFile(state).read()
    # the create wrote the snapshot; every later commit is one line
    assert len(lines) == document["revision"] - 1
    assert json.loads(state.read_bytes())["revision"] == 1
    # a visit's lines do not grow with the Run (only its numbers get more digits): the
    # 40th visit's lines are about as long as the first's, where a document would be 40x
    assert max(len(x) for x in lines[-6:]) <= 1.1 * max(len(x) for x in lines[1:7])
    assert sum(len(x) for x in lines[-2:]) < len(json.dumps(document)) / 10


def test_the_fold_is_the_document_and_a_completed_run_is_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _crashed_loop(tmp_path, monkeypatch, 5)
    before = store.RunFile(state).read()
    summary = flow.resume(state, agent=FakeAgent(("stop", "done")))
    assert summary.state == "completed"
    assert not _journal(state).exists()
    document = json.loads(state.read_bytes())
    assert store.RunFile(state).read() == document
    assert document["checksum"] == store.checksum(document)
    assert document["visits"][: len(before["visits"]) - 1] == before["visits"][:-1]


def test_a_torn_last_line_is_ignored_then_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _crashed_loop(tmp_path, monkeypatch, 4)
    before = store.RunFile(state).read()
    journal = _journal(state)
    whole = journal.read_bytes()
    journal.write_bytes(whole + b'{"r":99,"set":{"status":"fail')  # a killed append
    assert store.RunFile(state).read() == before
    file = store.RunFile(state)
    with file.lock():
        document = file.read()
        document["agentBinding"] = None
        document["revision"] += 1
        file.commit(document)
    data = journal.read_bytes()
    assert data.startswith(whole)
    assert b'"r":99' not in data
    assert data.endswith(b"\n")
    assert store.RunFile(state).read()["revision"] == before["revision"] + 1


def test_a_journal_a_killed_compaction_left_is_already_folded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _crashed_loop(tmp_path, monkeypatch, 4)
    journal = _journal(state)
    left = journal.read_bytes()
    assert flow.resume(state, agent=FakeAgent(("stop", "done"))).state == "completed"
    completed = store.RunFile(state).read()
    journal.write_bytes(left)  # compaction renamed the snapshot, then died
    assert store.RunFile(state).read() == completed
    assert flow.status(state)["state"] == "completed"


@pytest.mark.parametrize("edit", ["value", "drop-line", "snapshot"])
def test_an_edited_record_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    state = _crashed_loop(tmp_path, monkeypatch, 4)
    journal = _journal(state)
    lines = journal.read_bytes().splitlines(keepends=True)
    if edit == "value":
        number = next(i for i, line in enumerate(lines) if b'"again"' in line)
        lines[number] = lines[number].replace(b'"again"', b'"stop!"', 1)
        journal.write_bytes(b"".join(lines))
    elif edit == "drop-line":
        journal.write_bytes(b"".join(lines[:1] + lines[2:]))
    else:
        document = json.loads(state.read_bytes())
        document["task"] = "another task"
        document["checksum"] = store.checksum(document)
        state.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(AgentGraphError) as refused:
        store.RunFile(state).read()
    expected = codes.RUN_RECORD_INVALID if edit == "drop-line" else codes.RUN_RECORD_MODIFIED
    assert refused.value.code == expected, refused.value.message


def test_large_contents_are_kept_once_beside_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = {"text": "é" * 100_000, "n": 1}
    state = _crashed_loop(tmp_path, monkeypatch, 3, content=big)
    assert flow.resume(state, agent=FakeAgent(("stop", big))).state == "completed"
    contents = list((tmp_path / store.CONTENTS).iterdir())
    assert len(contents) == 1  # results, events, cursor inputs, conclusion: one file
    size = len(json.dumps(big, ensure_ascii=False).encode())
    assert state.stat().st_size < size / 2
    raw = json.loads(state.read_bytes())
    assert raw["conclusion"] == {REF: "sha256:" + contents[0].stem}
    document = store.RunFile(state).read()
    assert document["conclusion"] == big
    assert all(v["result"]["content"] == big for v in document["visits"] if v["result"])
    visited = [e["content"] for e in document["events"] if e["type"] == "visited"]
    assert visited == [big] * 3  # v1, v2, and v4 (the retry of v3, killed while asked)


@pytest.mark.parametrize("damage", ["missing", "changed"])
def test_a_missing_or_damaged_content_file_is_coded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    state = _crashed_loop(tmp_path, monkeypatch, 2, content="x" * 70_000)
    [kept] = (tmp_path / store.CONTENTS).iterdir()
    if damage == "missing":
        kept.unlink()
    else:
        kept.write_bytes(kept.read_bytes().replace(b"xxx", b"xyx", 1))
    for reading in (store.RunFile(state).read, lambda: flow.status(state)):
        with pytest.raises(AgentGraphError) as refused:
            reading()
        assert refused.value.code == codes.RUN_CONTENT_INVALID
        assert kept.name in refused.value.message


def test_a_content_that_looks_like_a_reference_is_a_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tricky = {REF: "sha256:" + "0" * 64}
    state = _crashed_loop(tmp_path, monkeypatch, 2, content=tricky)
    assert flow.resume(state, agent=FakeAgent(("stop", tricky))).state == "completed"
    assert store.RunFile(state).read()["conclusion"] == tricky


def test_the_writer_fails_the_run_before_it_writes_what_its_reader_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "MAX_RECORD_BYTES", 200_000)
    state = tmp_path / "r.json"
    huge = "y" * 300_000  # over the (lowered) cap even as a side file
    answers = FakeAgent(("again", "small"), ("again", huge), ("stop", "never"))
    with pytest.raises(AgentGraphError) as failed:
        flow.run(_loop(tmp_path), "t", state=state, agent=answers)
    assert failed.value.code == codes.RUN_RECORD_TOO_LARGE
    document = store.RunFile(state).read()  # still readable: nothing over the cap was written
    assert document["status"] == "failed"
    assert document["error"]["category"] == "persistence"
    assert document["visits"][1]["result"]["content"] is None
    assert document["events"][-1]["type"] == "run-failed"
    assert all(f.stat().st_size <= 200_000 for f in tmp_path.rglob("*") if f.is_file())
    with pytest.raises(AgentGraphError) as refused:
        flow.resume(state, agent=FakeAgent())
    assert refused.value.code == codes.RUN_NOT_RESUMABLE


def test_taking_the_lock_sweeps_what_killed_writers_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _crashed_loop(tmp_path, monkeypatch, 2, content="z" * 70_000)
    stale = tmp_path / ".r.json.agc-123-0123456789abcdef.tmp"
    stale.write_bytes(b"half a record")
    contents = tmp_path / store.CONTENTS
    dead = contents / f".{'a' * 64}.json.agc-{_dead_pid()}-0123456789abcdef.tmp"
    live = contents / f".{'b' * 64}.json.agc-{os.getppid()}-0123456789abcdef.tmp"
    for path in (dead, live):
        path.write_bytes(b"half a content")
    with store.RunFile(state).lock():
        pass
    assert not stale.exists()
    assert not dead.exists()
    assert live.exists()  # its writer may still be writing it


def _dead_pid() -> int:
    """A process id no process has (one that ended)."""
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return int(child.stdout)


def test_a_long_journal_is_folded_into_the_snapshot_while_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "COMPACT_AFTER", 4096)
    state = _crashed_loop(tmp_path, monkeypatch, 30)
    snapshot = json.loads(state.read_bytes())
    assert snapshot["status"] == "running"
    assert snapshot["revision"] > 1  # compacted at least once since the start
    assert _journal(state).stat().st_size <= max(4096, 2 * state.stat().st_size)
    document = store.RunFile(state).read()
    assert document["revision"] > snapshot["revision"]  # and journaled since
    assert [v["id"] for v in document["visits"]] == [f"v{n}" for n in range(1, 31)]


def test_a_start_the_record_cannot_hold_is_refused_with_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "MAX_RECORD_BYTES", 100_000)
    state = tmp_path / "r.json"
    with pytest.raises(AgentGraphError) as refused:
        flow.run(_loop(tmp_path), "t" * 200_000, state=state, agent=FakeAgent())
    assert refused.value.code == codes.RUN_RECORD_TOO_LARGE
    assert not state.exists()
