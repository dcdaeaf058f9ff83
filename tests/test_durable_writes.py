"""One durable write under both Run stores: the same guarantees, proved on each.

``documents/durable.py`` is the only write path of the Provider Run store
(``agent-graph.run.v1``) and of Flow Run records (and the programs kept beside them).
Each store here is driven through its own API; the checks are the same for every store,
so a store that joins later (a database) is added as one more row of :data:`STORES`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_graph import flow
from agent_graph.documents.durable import temp_name, temp_pattern, write_durably
from agent_graph.runs import FileRunStore
from test_flow_run_support import FakeAgent, agent, package


@dataclass(frozen=True)
class Store:
    """Make a record at a path, then change it (each one commit or more)."""

    create: Callable[[Path], None]
    change: Callable[[Path], None]


def _provider_create(path: Path) -> None:
    FileRunStore().start(path, provider="acme.p", graph="main")


def _provider_change(path: Path) -> None:
    FileRunStore().set_facts(path, {"x": 1})


def _flow_create(path: Path) -> None:
    pkg = package(path.parent, "one", "start((开始)) --> p[p]\np -->|ok| finish((结束))",
                  agent("p", ".", {"ok": "."}))  # fmt: skip
    stop = flow.Stop()

    def stopping(request: object) -> object:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    flow.run(pkg, "t", state=path, agent=FakeAgent(stopping), stop=stop)


def _flow_change(path: Path) -> None:
    flow.resume(path, agent=FakeAgent(("ok", "done")))


STORES = {
    "provider-run": Store(_provider_create, _provider_change),
    "flow-run": Store(_flow_create, _flow_change),
}


@pytest.fixture(params=sorted(STORES))
def store(request: pytest.FixtureRequest) -> Store:
    return STORES[request.param]


def test_debris_of_a_killed_writer_is_swept_and_nothing_else(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    store.create(path)
    stale = tmp_path / ".run.json.agc-123-0123456789abcdef.tmp"
    stale.write_bytes(b"half a record")
    others = [tmp_path / ".run.json.x.agc-1-0123456789abcdef.tmp", tmp_path / ".run.json.tmp"]
    for other in others:
        other.write_bytes(b"not ours")
    store.change(path)
    assert not stale.exists()
    assert all(other.exists() for other in others)
    assert not [p for p in tmp_path.iterdir() if temp_pattern("run.json").match(p.name)]


def test_a_replaced_record_keeps_its_permissions(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    store.create(path)
    os.chmod(path, 0o600)
    store.change(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_new_file_never_replaces_one_that_appeared(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        write_durably(target, b"theirs", new=True)
    assert target.read_bytes() == b"mine"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_a_failed_publish_leaves_the_old_version_and_no_debris(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_bytes(b"old")

    def crash() -> None:
        raise OSError("disk went away")

    with pytest.raises(OSError, match="disk went away"):
        write_durably(target, b"new", new=False, before_publish=crash)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_temporary_names_match_their_pattern() -> None:
    name = temp_name("run.json")
    assert temp_pattern("run.json").match(name)
    assert not temp_pattern("run.jso").match(name)
