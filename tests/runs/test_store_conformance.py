"""What every Run store guarantees, proved once per store.

Each test is written against :class:`store_support.Adapter` and runs for every store in
:data:`store_support.ADAPTERS`: ``FileRunStore`` and ``MemoryRunStore``
(``agent-graph.run.v1``) and ``RunFile`` (Flow Run records). A store that joins later
(a database) has to pass the same tests; those about files (the durable write, the lock
file) apply to the stores that keep files.

* a new Run never replaces anything, even when another writer got there first;
* a commit is whole or nothing: a writer that fails or is killed between writing its
  temporary file and publishing it leaves the complete previous version, and the next
  commit sweeps what a killed writer left (and nothing else); a replaced Run keeps its
  permissions;
* a second writer waits its turn (Provider stores: no update lost) or is refused at once
  (a Flow Run has one driver: ``run-busy``);
* the lock sits beside the real file, so a Run reached through a symbolic link shares it;
  a lock file that is a symbolic link or not a regular file is refused
  (``run-lock-invalid``), never followed; the holder's process id is in it while it is
  held, and a killed holder frees it;
* readers take no lock and always see a whole version.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_graph.documents.durable import temp_pattern
from agent_graph.errors import AgentGraphError
from store_support import ADAPTERS, CHILD, HOLDER, Adapter

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock")

TESTS = Path(__file__).resolve().parents[1]
SRC = TESTS.parent / "src"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
FILE_STORES = sorted(name for name, adapter in ADAPTERS.items() if adapter.files)
WAITING_STORES = sorted(n for n, adapter in ADAPTERS.items() if adapter.second_writer == "waits")


@pytest.fixture(params=sorted(ADAPTERS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Adapter:
    return ADAPTERS[request.param](tmp_path)


@pytest.fixture(params=FILE_STORES)
def files(request: pytest.FixtureRequest, tmp_path: Path) -> Adapter:
    return ADAPTERS[request.param](tmp_path)


def failure(call: Callable[[], object]) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as info:
        call()
    return info.value


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def debris(directory: Path, name: str = "run.json") -> list[str]:
    return [p.name for p in directory.iterdir() if temp_pattern(name).match(p.name)]


class Holder(threading.Thread):
    """Holds a Run's lock in another thread (its own descriptor) until told to let go."""

    def __init__(self, store: Adapter, ref: Any) -> None:
        super().__init__(daemon=True)
        self.store, self.ref = store, ref
        self.inside, self.release = threading.Event(), threading.Event()
        self.released_at = 0.0

    def run(self) -> None:
        with self.store.holding(self.ref):
            self.inside.set()
            self.release.wait(30)
            self.released_at = time.monotonic()

    def __enter__(self) -> Holder:
        self.start()
        assert self.inside.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.join(30)


def hold_in_a_process(store: Adapter, ref: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(TESTS), store.name, str(ref)],
        env=ENV,
        text=True,
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    return holder


def kill(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait(timeout=30)
    if process.stdout is not None:
        process.stdout.close()


# -- a new Run never replaces anything ----------------------------------------------------


RACING = pytest.mark.parametrize("racing", [False, True], ids=["checked", "lost-the-race"])


@RACING
def test_a_new_run_never_replaces_an_existing_one(store: Adapter, racing: bool) -> None:
    ref = store.ref()
    store.create(ref, 1)
    create = store.create_racing if racing else store.create
    assert failure(lambda: create(ref, 2)).code == "run-target-exists"
    assert store.version(ref) == 1


@RACING
def test_a_new_run_never_replaces_a_file_that_appeared(
    files: Adapter, tmp_path: Path, racing: bool
) -> None:
    ref = files.ref()
    ref.write_text("someone else's file\n", encoding="utf-8")
    create = files.create_racing if racing else files.create
    assert failure(lambda: create(ref, 1)).code == "run-target-exists"
    assert ref.read_text(encoding="utf-8") == "someone else's file\n"
    assert debris(tmp_path) == []


# -- whole or nothing ---------------------------------------------------------------------


def test_a_failed_commit_leaves_the_whole_previous_version(
    files: Adapter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = files.ref()
    files.create(ref, 1)
    before = ref.read_bytes()

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, files.commit_call, broken)
    error = failure(lambda: files.commit(ref, 2, "x" * 100_000))
    assert error.code == "file-write-failed"
    assert "Input/output error" in error.message
    assert ref.read_bytes() == before
    assert files.debris(ref) == []
    assert files.version(ref) == 1
    monkeypatch.undo()
    files.commit(ref, 2)
    assert files.version(ref) == 2


def test_a_new_run_that_fails_to_publish_leaves_nothing(
    files: Adapter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = files.ref("new.json")

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "link", broken)
    assert failure(lambda: files.create(ref, 1)).code == "file-write-failed"
    assert not os.path.lexists(ref)
    assert debris(tmp_path, "new.json") == []


def test_a_writer_killed_before_publishing_leaves_the_previous_version(
    files: Adapter, tmp_path: Path
) -> None:
    ref = files.ref()
    files.create(ref, 1)
    before = ref.read_bytes()
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(TESTS), files.name, str(ref), "2"],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -9, child.stderr
    assert ref.read_bytes() == before  # byte for byte: the new version died unpublished
    assert files.version(ref) == 1
    assert len(files.debris(ref)) == 1
    files.commit(ref, 3)  # the next writer sweeps it up
    assert files.debris(ref) == []
    assert files.version(ref) == 3


def test_debris_of_killed_writers_is_swept_and_nothing_else(files: Adapter, tmp_path: Path) -> None:
    ref = files.ref()
    files.create(ref, 1)
    stale = tmp_path / ".run.json.agc-123-0123456789abcdef.tmp"
    stale.write_bytes(b"half a record")
    others = [tmp_path / ".run.json.x.agc-1-0123456789abcdef.tmp", tmp_path / ".run.json.tmp"]
    for other in others:
        other.write_bytes(b"not ours")
    files.commit(ref, 2)
    assert not stale.exists()
    assert all(other.exists() for other in others)
    assert debris(tmp_path) == []


def test_a_replaced_run_keeps_its_permissions(files: Adapter) -> None:
    ref = files.ref()
    files.create(ref, 1)
    os.chmod(ref, 0o600)
    files.commit(ref, 2)
    assert stat.S_IMODE(ref.stat().st_mode) == 0o600


# -- a second writer ----------------------------------------------------------------------


def test_a_second_writer_waits_its_turn_or_is_refused(store: Adapter) -> None:
    ref = store.ref()
    store.create(ref, 1)
    with Holder(store, ref) as holder:
        if store.second_writer == "refused":
            error = failure(lambda: store.commit(ref, 2))
            assert error.code == store.busy_code
            assert not holder.released_at  # at once, while the other still holds it
            assert store.version(ref) == 1
            return
        threading.Timer(0.3, holder.release.set).start()
        store.commit(ref, 2)
        finished = time.monotonic()
    assert holder.released_at
    assert finished >= holder.released_at
    assert store.version(ref) == 2


@pytest.mark.parametrize("name", WAITING_STORES)
def test_writers_that_wait_lose_no_update(name: str, tmp_path: Path) -> None:
    store = ADAPTERS[name](tmp_path)
    ref = store.ref()
    store.create(ref, 0)

    def work(worker: int) -> None:
        for i in range(25):
            store.append(ref, f"w{worker}-{i}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(store.appended(ref)) == sorted(f"w{n}-{i}" for n in range(8) for i in range(25))


# -- the lock -----------------------------------------------------------------------------


#: What a lock file agc did not make may be, and how the refusal names it.
FOREIGN_LOCKS = {
    "dangling-symlink": "a symbolic link",
    "symlink-to-a-file": "a symbolic link",
    "directory": "a directory",
    "fifo": "not a regular file",  # opening it must neither block nor lock a pipe
}


@pytest.mark.parametrize("kind", sorted(FOREIGN_LOCKS))
def test_a_lock_file_agc_did_not_make_is_refused(files: Adapter, tmp_path: Path, kind: str) -> None:
    ref = files.ref()
    files.create(ref, 1)
    before = ref.read_bytes()
    lock = files.lock_file(ref)
    lock.unlink()
    victim = tmp_path / "victim"
    if kind == "symlink-to-a-file":
        victim.write_text("mine\n", encoding="utf-8")
    if "symlink" in kind:
        lock.symlink_to("victim")
    elif kind == "directory":
        lock.mkdir()
    else:
        os.mkfifo(lock)
    names = listing(tmp_path)
    for operation in files.locked_operations(ref):
        error = failure(operation)
        assert error.code == "run-lock-invalid", error.message
        assert f"{lock} is {FOREIGN_LOCKS[kind]}" in error.message
    assert ref.read_bytes() == before
    assert os.path.islink(lock) == ("symlink" in kind)
    # nothing made through it; at most the lock of a checkpoint's target (taken first)
    assert [name for name in listing(tmp_path) if not name.endswith(".lock")] == [
        name for name in names if not name.endswith(".lock")
    ]
    if kind == "symlink-to-a-file":
        assert victim.read_text(encoding="utf-8") == "mine\n"


def test_a_new_run_whose_lock_is_a_symbolic_link_is_not_made(
    files: Adapter, tmp_path: Path
) -> None:
    ref = files.ref("new.json")
    files.lock_file(ref).symlink_to("elsewhere")
    assert failure(lambda: files.create(ref, 1)).code == "run-lock-invalid"
    assert listing(tmp_path) == [".new.json.lock"]


def test_a_run_reached_through_a_symbolic_link_shares_its_lock(
    files: Adapter, tmp_path: Path
) -> None:
    real = tmp_path / "data" / "run.json"
    real.parent.mkdir()
    files.create(real, 1)
    real.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    files.commit(link, 2)
    assert link.is_symlink()
    assert files.version(real) == 2
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert files.lock_file(link) == real.parent / ".run.json.lock"  # one lock for both names
    assert not (tmp_path / ".link.json.lock").exists()
    with Holder(files, link) as holder:
        if files.second_writer == "refused":
            assert failure(lambda: files.commit(real, 3)).code == files.busy_code
            return
        threading.Timer(0.3, holder.release.set).start()
        files.commit(real, 3)
        assert time.monotonic() >= holder.released_at > 0
    assert files.version(link) == 3


def test_the_holder_names_itself_in_the_lock(files: Adapter) -> None:
    ref = files.ref()
    files.create(ref, 1)
    lock = files.lock_file(ref)
    with files.holding(ref):
        assert lock.read_text(encoding="ascii") == f"{os.getpid()}\n"
    assert lock.read_bytes() == b""  # released: no holder to name
    files.commit(ref, 2)
    assert lock.read_bytes() == b""


def test_a_killed_holder_releases_the_lock(files: Adapter) -> None:
    ref = files.ref()
    files.create(ref, 1)
    holder = hold_in_a_process(files, ref)
    try:
        assert files.lock_file(ref).read_text(encoding="ascii") == f"{holder.pid}\n"
        if files.second_writer == "refused":
            assert failure(lambda: files.commit(ref, 2)).code == files.busy_code
    finally:
        kill(holder)
    files.commit(ref, 2)
    assert files.version(ref) == 2


# -- readers ------------------------------------------------------------------------------


def test_readers_see_whole_versions(store: Adapter) -> None:
    ref = store.ref()
    store.create(ref, 0)
    last = 12
    blob = "x" * 300_000  # a version large enough to be written in many pieces
    seen: list[int] = []

    def write() -> None:
        for n in range(1, last + 1):
            store.commit(ref, n, blob)

    writer = threading.Thread(target=write)
    writer.start()
    while writer.is_alive():
        seen.append(store.version(ref))  # raises on a torn or damaged version
    writer.join()
    seen.append(store.version(ref))
    assert seen == sorted(seen)
    assert seen[-1] == last


def test_a_reader_takes_no_lock(store: Adapter) -> None:
    ref = store.ref()
    store.create(ref, 1)
    seen: list[int] = []
    with Holder(store, ref):  # a writer in the middle of its read-modify-write
        reader = threading.Thread(target=lambda: seen.append(store.version(ref)), daemon=True)
        reader.start()
        reader.join(10)
        assert not reader.is_alive(), "the reader waited for the writer's lock"
    assert seen == [1]
