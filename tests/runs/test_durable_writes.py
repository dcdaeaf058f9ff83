"""The one durable write itself (``documents/durable.py``), below any store.

It is the only write path of the Provider Run store (``agent-graph.run.v1``) and of Flow
Run records (and the programs kept beside them). What each store gets from it (debris
swept, permissions kept, whole or nothing) is proved store by store in
``tests/runs/test_store_conformance.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_graph.documents.durable import temp_name, temp_pattern, write_durably


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
