"""Runs under concurrent writers and crashes: no lost update, no torn file.

* 8 processes each record 50 outcomes through ``agc run record`` (the CLI's
  ``main`` in a loop, so the test stays fast on two cores) into one Run: exactly
  401 events numbered 1..401 and 400 outcomes afterwards.
* A writer is SIGKILLed at random moments, many times: the file is always the
  complete last committed version or the complete next one.
* Locks: a held lock times out with ``run-locked``; a writer that has to wait says so
  at once (``agc run …`` on stderr, human output only), naming the process the holder
  wrote into the lock.

What every store guarantees (a new Run replaces nothing, debris swept, permissions
kept, the lock file's checks, a killed holder frees the lock …) is in
``tests/runs/test_store_conformance.py``.
"""

from __future__ import annotations

import fcntl
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

from agent_graph.errors import AgentGraphError
from agent_graph.runs import FileRunStore, read_run

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock")

SRC = Path(__file__).resolve().parents[2] / "src"
ENV = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
TEMP = re.compile(r"\.run\.json\.agc-[0-9]+-[0-9a-f]{16}\.tmp\Z")

CLI_WORKER = """
import json, os, sys, time
from agent_graph.cli import main
path, worker, count, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(count):
    detail = json.dumps({"worker": worker, "i": i})
    args = ["run", "record", f"report/w{worker}-{i}", "completed", "--state", path,
            "--detail", detail, "--format", "json"]
    code = main(args)
    if code != 0:
        sys.exit(code)
"""

KILLED_WRITER = """
import os, sys, time
from agent_graph.runs import FileRunStore
path, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def pause():  # hold still at a chosen point of a write until the parent kills us
    print("paused", flush=True)
    time.sleep(120)

real_write, real_replace = os.write, os.replace
if mode == "in-write":  # half of the new version is in the temporary file
    os.write = lambda fd, data: (real_write(fd, bytes(data[: len(data) // 2])), pause())
elif mode == "before-rename":  # the new version is complete and flushed, not yet renamed
    os.replace = lambda src, dst: pause()
elif mode == "after-rename":  # renamed, the directory not yet flushed
    os.replace = lambda src, dst: (real_replace(src, dst), pause())
store = FileRunStore()
blob = "x" * 1_000_000
store.load(path)  # every import done before the parent starts its clock
print("ready", flush=True)
while True:
    n += 1
    store.set_facts(path, {"blob": blob, "n": n}, replace=True)
    print(n, flush=True)
"""


def start(path: Path, **facts: Any) -> None:
    FileRunStore().start(path, provider="example.weekly-report", graph="report", facts=facts)


def python(code: str, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], env=ENV, text=True, **kwargs)


@pytest.mark.slow
def test_eight_processes_record_fifty_outcomes_each(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    start(path)
    go = tmp_path / "go"
    workers = [
        python(
            CLI_WORKER,
            str(path),
            str(worker),
            "50",
            str(go),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for worker in range(8)
    ]
    go.touch()
    for proc in workers:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
    document = json.loads(path.read_text(encoding="utf-8"))  # valid JSON
    events = document["events"]
    assert len(events) == 401
    assert [e["sequence"] for e in events] == list(range(1, 402))
    assert events[0]["type"] == "run.started"
    assert {e["type"] for e in events[1:]} == {"node.outcome-recorded"}
    assert len(document["outcomes"]) == 400
    for worker in range(8):  # each writer's outcomes appear in the order it recorded them
        mine = [e["detail"]["i"] for e in events[1:] if e["detail"]["worker"] == worker]
        assert mine == list(range(50))
    assert read_run(path).document == document  # and it passes every check
    assert not [p for p in tmp_path.iterdir() if TEMP.match(p.name)]


def test_agc_processes_record_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    start(path)
    procs = [
        subprocess.Popen(
            [
                sys.executable, "-c",
                "import sys\nfrom agent_graph.cli import main\n"
                "for i in range(3):\n"
                "    if main(['run', 'record', f'report/p{sys.argv[1]}-{i}', 'partial',"
                " '--state', sys.argv[2]]):\n"
                "        sys.exit(1)\n",
                str(n), str(path),
            ],
            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for n in range(4)
    ]  # fmt: skip
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "Recorded report/p" in out
    run = read_run(path)
    assert [e["sequence"] for e in run.events] == list(range(1, 14))
    assert len(run.outcomes) == 12


def _committed(lines: list[str], last: int) -> int:
    numbers = [int(line) for line in lines if line.strip().isdigit()]
    return numbers[-1] if numbers else last


@pytest.mark.slow
def test_sigkill_mid_write_leaves_the_old_or_the_new_version(tmp_path: Path) -> None:
    """Killed at chosen points of a write, then at random moments, many times over."""
    path = tmp_path / "run.json"
    start(path, n=0)
    committed, previous = 0, path.read_bytes()
    rng = random.Random(5)
    modes = ["in-write", "before-rename", "after-rename"] * 2 + ["random"] * 16
    for mode in modes:
        writer = python(KILLED_WRITER, str(path), str(committed), mode, stdout=subprocess.PIPE)
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
        if mode == "random":
            time.sleep(rng.uniform(0.0, 0.12))
        else:
            assert writer.stdout.readline().strip() == "paused"
        writer.send_signal(signal.SIGKILL)
        rest = writer.stdout.read()
        writer.wait(timeout=30)
        writer.stdout.close()
        abandoned = [p for p in tmp_path.iterdir() if TEMP.match(p.name)]
        last = _committed(rest.splitlines(), committed)
        run = read_run(path)  # complete: JSON, schema-valid, events 1..n without gaps
        n = run.facts["n"]
        assert n in (last, last + 1), (mode, n, last)  # the committed version or the next
        assert len(run.events) == n + 1
        if mode in ("in-write", "before-rename"):
            assert path.read_bytes() == previous  # byte for byte the old version
            assert len(abandoned) == 1  # the new one died in its temporary file
        elif mode == "after-rename":
            assert n == committed + 1  # the new version, whole
        old = json.loads(previous)
        assert run.events[: len(old["events"])] == old["events"]  # nothing lost
        committed, previous = n, path.read_bytes()
    FileRunStore().record(path, "report/draft", "completed")  # the next writer sweeps up
    assert not [p for p in tmp_path.iterdir() if TEMP.match(p.name)]
    assert read_run(path).outcome("report/draft") == "completed"


# -- locks --------------------------------------------------------------------------------


def test_a_held_lock_times_out(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    start(path)
    before = path.read_bytes()
    with (tmp_path / ".run.json.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        began = time.monotonic()
        with pytest.raises(AgentGraphError) as info:
            FileRunStore(lock_timeout=0.3).record(path, "report/draft", "completed")
        assert 0.3 <= time.monotonic() - began < 5
    assert info.value.code == "run-locked"
    assert path.read_bytes() == before
    FileRunStore(lock_timeout=0.3).record(path, "report/draft", "completed")


# -- file details -------------------------------------------------------------------------


def test_checkpoint_is_undone_when_the_source_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, target = tmp_path / "run.json", tmp_path / "cp.json"
    start(path)
    before = path.read_bytes()
    store = FileRunStore()

    def fail(key: Path, document: dict[str, Any]) -> None:
        raise AgentGraphError("file-write-failed", f"Cannot write {key}: disk full")

    monkeypatch.setattr(store, "_replace", fail)
    with pytest.raises(AgentGraphError) as info:
        store.checkpoint(path, target)
    assert info.value.code == "file-write-failed"
    assert not target.exists()
    assert path.read_bytes() == before


# -- waiting for a lock is said at once, with the holder (issue 10) ------------------------

HOLDER = """
import sys, time
from pathlib import Path
from agent_graph.runs import FileRunStore
with FileRunStore()._locked([Path(sys.argv[1])]):
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def hold(path: Path, seconds: float) -> subprocess.Popen[str]:
    """A process holding ``path``'s lock (taken as agc takes it) for ``seconds``."""
    holder = python(HOLDER, str(path), str(seconds), stdout=subprocess.PIPE)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    return holder


def release(holder: subprocess.Popen[str]) -> None:
    holder.kill()
    holder.wait(timeout=30)
    assert holder.stdout is not None
    holder.stdout.close()


def test_a_waiting_store_says_so_once_naming_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    start(path)
    holder = hold(path, 1.0)
    heard: list[str] = []
    try:
        FileRunStore(on_wait=heard.append).record(path, "report/draft", "completed")
    finally:
        release(holder)
    lock = tmp_path / ".run.json.lock"
    assert heard == [
        f"Waiting for the lock {lock}: process {holder.pid} holds it (giving up after 60 s)"
    ]
    assert read_run(path).outcome("report/draft") == "completed"


def test_a_library_store_waits_silently(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.json"
    start(path)
    holder = hold(path, 0.5)
    try:
        FileRunStore().record(path, "report/draft", "completed")
    finally:
        release(holder)
    assert capsys.readouterr() == ("", "")


def test_a_timed_out_wait_names_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    start(path)
    holder = hold(path, 30)
    try:
        with pytest.raises(AgentGraphError) as info:
            FileRunStore(lock_timeout=0.3).record(path, "report/draft", "completed")
    finally:
        release(holder)
    assert info.value.code == "run-locked"
    assert info.value.message == (
        f"Process {holder.pid} has held the lock {tmp_path / '.run.json.lock'} for over 0.3 s; "
        "is a writer stuck?"
    )


def test_a_holder_that_wrote_no_id_is_another_process(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    start(path)
    lock = tmp_path / ".run.json.lock"
    lock.write_text("99999999\n", encoding="ascii")  # left by a killed holder: not alive
    heard: list[str] = []
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(AgentGraphError) as info:
            FileRunStore(lock_timeout=0.2, on_wait=heard.append).record(
                path, "report/draft", "completed"
            )
    assert heard == [
        f"Waiting for the lock {lock}: another process holds it (giving up after 0.2 s)"
    ]
    assert info.value.message.startswith(f"Another process has held the lock {lock} for over")


@pytest.mark.parametrize("fmt", ["human", "json"])
def test_agc_run_says_at_once_on_stderr_that_it_waits(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
) -> None:
    from agent_graph.cli import main
    from agent_graph.runs.file import WAIT_NOTICE

    monkeypatch.chdir(tmp_path)  # no ./provider.yaml: nothing to compile first
    path = tmp_path / "run.json"
    start(path)
    holder = hold(path, 1.0)
    try:
        code = main(
            ["run", "record", "report/draft", "completed", "--state", str(path), "--format", fmt]
        )
    finally:
        release(holder)
    out, err = capsys.readouterr()
    assert code == 0, err
    lock = tmp_path / ".run.json.lock"
    if fmt == "human":
        assert err.splitlines() == [
            f"agc: Waiting for the lock {lock}: process {holder.pid} holds it "
            "(giving up after 60 s)"
        ]
    else:
        assert err == ""
        assert json.loads(out)["outcomes"]["report/draft"]["outcome"] == "completed"
    assert WAIT_NOTICE.get() is None  # the command's notice ends with the command
