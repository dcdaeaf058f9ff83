"""One adapter per Run store, for the conformance suite (no tests here).

``tests/runs/test_store_conformance.py`` is written once against :class:`Adapter`; each store
supplies the few operations it needs, driven through the store's own API as its callers
drive it. A store that joins later (a database) is one more class here and one more row
of :data:`ADAPTERS`, and the whole suite holds it to the same properties.

A Run's *version* is a number the adapter stores in it (Facts for ``agent-graph.run.v1``,
the task of a Flow Run record), so a test can tell which whole version a read returned.

Kept free of pytest so that a child process can drive a store through the same adapter
(``python -c CHILD tests/ <store> <path> …``) and be killed in the middle of a commit.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import signal
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar, Literal
from unittest import mock

from agent_graph import flow
from agent_graph.documents.durable import temp_pattern
from agent_graph.documents.locks import lock_path
from agent_graph.flow.runtime.store import CRASH_BEFORE, RunFile
from agent_graph.runs import FileRunStore, MemoryRunStore, read_run

#: ``python -c CHILD TESTS STORE PATH VERSION``: commit VERSION to the Run at PATH through
#: the store's adapter, dying (SIGKILL) after the temporary file is written, before it
#: would become the Run.
CHILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from store_support import ADAPTERS
path = Path(sys.argv[3])
ADAPTERS[sys.argv[2]](path.parent).dying_commit(path, int(sys.argv[4]))
"""

#: ``python -c HOLDER TESTS STORE PATH``: hold the Run's lock as the store's writers take it
#: until killed; prints ``locked`` once it holds it.
HOLDER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from store_support import ADAPTERS
path = Path(sys.argv[3])
with ADAPTERS[sys.argv[2]](path.parent).holding(path):
    print("locked", flush=True)
    time.sleep(120)
"""

PROVIDER = "example.weekly-report"


class Adapter(ABC):
    """A Run store, seen through what every store must do."""

    name: ClassVar[str]
    #: Runs are files: the durable-write and lock-file properties apply.
    files: ClassVar[bool] = True
    #: What a writer does while another holds the Run's lock: wait its turn, or refuse.
    second_writer: ClassVar[Literal["waits", "refused"]]
    #: The code of a refused second writer (``refused`` stores).
    busy_code: ClassVar[str | None] = None
    #: The ``os`` call whose failure (an I/O error) fails a commit of this store.
    commit_call: ClassVar[str] = "replace"

    def __init__(self, where: Path) -> None:
        self.where = where

    def ref(self, name: str = "run.json") -> Any:
        """A reference to a Run named ``name`` in this adapter's place."""
        return self.where / name

    @abstractmethod
    def create(self, ref: Any, version: int) -> None:
        """Start a new Run at ``ref``; refuses (``run-target-exists``) to replace anything."""

    @abstractmethod
    def create_racing(self, ref: Any, version: int) -> None:
        """Start a new Run at ``ref`` as a writer whose check that nothing is there passed
        before another writer (which took no lock) got there first."""

    @abstractmethod
    def version(self, ref: Any) -> int:
        """Read the Run (taking no lock) and the version it holds; fails on a torn one."""

    @abstractmethod
    def commit(self, ref: Any, version: int, blob: str = "") -> None:
        """Replace the Run's version (and a payload ``blob``) as the store's writers do:
        a read-modify-write under the Run's lock."""

    @abstractmethod
    def holding(self, ref: Any) -> AbstractContextManager[object]:
        """Hold the Run's lock exactly as the store's writers take it."""

    def locked_operations(self, ref: Any) -> list[Callable[[], object]]:
        """Every kind of operation on an existing Run that takes its lock."""
        return [lambda: self.commit(ref, 99)]

    def append(self, ref: Any, tag: str) -> None:
        """Add ``tag`` to what the Run holds, keeping the rest (stores whose writers wait)."""
        raise NotImplementedError(f"{self.name}: a Run has one writer")

    def appended(self, ref: Any) -> list[str]:
        """Every tag :meth:`append` added to the Run."""
        raise NotImplementedError(f"{self.name}: a Run has one writer")

    def dying_commit(self, ref: Any, version: int) -> None:
        """:meth:`commit`, killed (SIGKILL) before what it writes is whole (between the
        temporary file and the rename)."""
        raise NotImplementedError(f"{self.name} keeps no files")

    def debris(self, ref: Any) -> list[str]:
        """What killed writers of the Run at ``ref`` left beside it (temporary files)."""
        pattern = temp_pattern(ref.name)
        return [p.name for p in ref.parent.iterdir() if pattern.match(p.name)]

    def lock_file(self, ref: Any) -> Path:
        return lock_path(ref)


class ProviderFiles(Adapter):
    """``FileRunStore``: ``agent-graph.run.v1`` files; a second writer waits its turn."""

    name = "provider-file"
    second_writer = "waits"

    def store(self) -> FileRunStore:
        return FileRunStore()

    def create(self, ref: Any, version: int) -> None:
        self.store().start(ref, provider=PROVIDER, graph="report", facts={"n": version})

    def create_racing(self, ref: Any, version: int) -> None:
        store = self.store()
        with mock.patch.object(store, "_exists", return_value=False):  # lose the race
            store.start(ref, provider=PROVIDER, graph="report", facts={"n": version})

    def version(self, ref: Any) -> int:
        return int(read_run(ref).facts["n"])

    def commit(self, ref: Any, version: int, blob: str = "") -> None:
        self.store().set_facts(ref, {"n": version, "blob": blob}, replace=True)

    def holding(self, ref: Any) -> AbstractContextManager[object]:
        return self.store()._locked([Path(os.path.abspath(ref))])

    def append(self, ref: Any, tag: str) -> None:
        self.store().record(ref, f"report/{tag}", "completed")

    def appended(self, ref: Any) -> list[str]:
        return [key.removeprefix("report/") for key in self.store().load(ref).outcomes]

    def locked_operations(self, ref: Any) -> list[Callable[[], object]]:
        store = self.store()
        return [
            lambda: store.record(ref, "report/draft", "completed"),
            lambda: store.set_facts(ref, {"a": 1}),
            lambda: store.clear_authorities(ref),
            lambda: store.checkpoint(ref, self.where / "cp.json"),
        ]

    def dying_commit(self, ref: Any, version: int) -> None:
        def die(*args: object) -> None:  # the temporary file is whole, and flushed
            os.kill(os.getpid(), signal.SIGKILL)

        with mock.patch.object(os, "replace", die):
            self.commit(ref, version)


class ProviderMemory(ProviderFiles):
    """``MemoryRunStore``: Runs in this process (no files), writers serialised."""

    name = "provider-memory"
    files = False

    def __init__(self, where: Path) -> None:
        super().__init__(where)
        self._store = MemoryRunStore()

    def store(self) -> MemoryRunStore:  # type: ignore[override]
        return self._store

    def ref(self, name: str = "run.json") -> Any:
        return name

    def version(self, ref: Any) -> int:
        return int(self._store.load(ref).facts["n"])

    def holding(self, ref: Any) -> AbstractContextManager[object]:
        return self._store._locked([ref])


class FlowRecords(Adapter):
    """``RunFile``: Flow Run records; a Run has one driver, a second is refused. The Run
    is one whose driver died (running), so each commit is a journal append, as the
    runner's are: the store's properties are held by the snapshot and its journal."""

    name = "flow-record"
    second_writer = "refused"
    busy_code = "run-busy"
    commit_call = "fsync"  # an append is written, then fsync'd: no rename

    def create(self, ref: Any, version: int) -> None:
        file = RunFile(ref)
        file.check_new()  # as agent_graph.flow.runtime.start does, before any node runs
        self.create_racing(ref, version)

    def create_racing(self, ref: Any, version: int) -> None:
        file = RunFile(ref)
        with file.lock():
            file.create(_flow_record(version))

    def version(self, ref: Any) -> int:
        return int(RunFile(ref).read()["task"]["n"])

    def commit(self, ref: Any, version: int, blob: str = "") -> None:
        file = RunFile(ref)
        with file.lock():
            document = file.read()
            document["task"] = {"n": version, "blob": blob}
            document["revision"] += 1  # one commit, one revision (as Record.commit stamps)
            file.commit(document)

    def holding(self, ref: Any) -> AbstractContextManager[object]:
        return RunFile(ref).lock()

    def locked_operations(self, ref: Any) -> list[Callable[[], object]]:
        return [lambda: self.commit(ref, 99), lambda: flow.resume(ref)]

    def dying_commit(self, ref: Any, version: int) -> None:
        os.environ[CRASH_BEFORE] = "1"  # the runtime's own crash hook: this process's 1st commit
        self.commit(ref, version)

    def debris(self, ref: Any) -> list[str]:
        """Temporary files, and the torn last line of a killed append."""
        found = super().debris(ref)
        journal = RunFile(ref).journal
        if journal.exists() and not journal.read_bytes().endswith(b"\n"):
            found.append(f"{journal.name} (a torn last line)")
        return found


@functools.cache
def _flow_template() -> dict[str, Any]:
    """A record the runtime wrote (so its shape is always the runtime's): a Run of a
    one-node Flow whose driver died while its Agent step ran (it is still running)."""
    from flow_run_support import Crash, FakeAgent, agent, package

    with tempfile.TemporaryDirectory() as tmp:
        pkg = package(Path(tmp), "one", "start((开始)) --> p[p]\np -->|ok| finish((结束))",
                      agent("p", ".", {"ok": "."}))  # fmt: skip

        def dying(request: object) -> object:
            raise Crash

        state = Path(tmp) / "r.json"
        with contextlib.suppress(Crash):
            flow.run(pkg, {"n": 0}, state=state, agent=FakeAgent(dying))
        document = RunFile(state).read()
        assert document["status"] == "running"
        return document


def _flow_record(version: int) -> dict[str, Any]:
    document = copy.deepcopy(_flow_template())
    document["task"] = {"n": version}
    return document


ADAPTERS: dict[str, type[Adapter]] = {
    adapter.name: adapter for adapter in (ProviderFiles, ProviderMemory, FlowRecords)
}
