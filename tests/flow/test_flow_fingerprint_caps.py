"""The fingerprint's caps (issue 26 item 7): a file too large to hash is refused by name.

Hashing every byte of ``scripts/`` and ``references/`` made a 4 GiB sparse file cost
23 s per check, run and resume. Now a file over ``MAX_FILE_BYTES`` (or the one that
takes the package past ``MAX_PACKAGE_BYTES``, or one that cannot be opened) is an error
at that file, found with a ``stat``; the hash streams and never reads past the cap. The
large files here are sparse (``os.truncate``): cheap to make, and reading one would be
the bug.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from agent_graph import codes, flow
from agent_graph.documents import fingerprint as fp
from agent_graph.errors import AgentGraphError
from flow_run_support import FakeAgent, agent, package

GIB = 1 << 30


def one(tmp_path: Path) -> Path:
    return package(tmp_path, "one", "start((开始)) --> p[p]\np -->|ok| finish((结束))",
                   agent("p", ".", {"ok": "."}))  # fmt: skip


def sparse(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    os.truncate(path, size)
    return path


class NoRead:
    """Counts how many bytes the fingerprint reads of ``big``: none may be read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, big: Path) -> None:
        self.opened: list[str] = []
        real_open = open

        def spying_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            if Path(file) == big:
                self.opened.append(str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(fp, "open", spying_open, raising=False)


@pytest.mark.parametrize("where", ["scripts/data/big.bin", "references/huge.md"])
def test_a_file_over_the_cap_is_an_error_naming_it(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = one(tmp_path)
    big = sparse(pkg / where, 4 * GIB)
    spy = NoRead(monkeypatch, big)
    diagnostics = flow.check(pkg)
    errors = [d for d in diagnostics if d.severity == "error"]
    assert [(d.code, d.path, d.line) for d in errors] == [
        (codes.FILE_TOO_LARGE, f"one/{where}", None)
    ]
    assert f"{4 * GIB} bytes" in errors[0].message
    assert where in errors[0].message
    with pytest.raises(AgentGraphError) as caught:
        flow.run(pkg, "t", state=tmp_path / "r.json", agent=FakeAgent(("ok", "x")))
    assert caught.value.code == codes.FILE_TOO_LARGE
    assert not (tmp_path / "r.json").exists()  # refused before any Run record
    assert spy.opened == []  # found by its size: not one byte hashed


def test_a_file_at_the_cap_is_hashed(tmp_path: Path) -> None:
    pkg = one(tmp_path)
    sparse(pkg / "scripts" / "edge.bin", fp.MAX_FILE_BYTES)
    assert [d for d in flow.check(pkg) if d.severity == "error"] == []
    digests = dict(fp.package_files(pkg))
    assert digests["scripts/edge.bin"] == hashlib.sha256(bytes(fp.MAX_FILE_BYTES)).hexdigest()


def test_the_package_total_is_capped_at_the_file_that_crosses_it(tmp_path: Path) -> None:
    pkg = one(tmp_path)
    count = fp.MAX_PACKAGE_BYTES // fp.MAX_FILE_BYTES
    for i in range(count + 1):
        sparse(pkg / "scripts" / f"part-{i:02}.bin", fp.MAX_FILE_BYTES - 4096)
    problems = fp.unhashable_files(pkg)
    assert [(p.path, p.code) for p in problems] == [
        (f"scripts/part-{count:02}.bin", codes.FILE_TOO_LARGE)
    ]
    assert "in all" in problems[0].reason


def test_an_unreadable_file_is_an_error_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Permission denied (faked: the tests may run as root, who reads anything)."""
    pkg = one(tmp_path)
    locked = pkg / "scripts" / "secret.mjs"
    locked.parent.mkdir()
    locked.write_text("export {};\n", encoding="utf-8")
    real_open = os.open

    def refusing(path: Any, flags: int, *args: Any) -> int:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(fp.os, "open", refusing)
    errors = [d for d in flow.check(pkg) if d.severity == "error"]
    assert [(d.code, d.path) for d in errors] == [
        (codes.FILE_READ_FAILED, "one/scripts/secret.mjs")
    ]
    assert "Permission denied" in errors[0].message


def test_unhashed_entries_match_no_digest(tmp_path: Path) -> None:
    pkg = one(tmp_path)
    sparse(pkg / "scripts" / "big.bin", fp.MAX_FILE_BYTES + 1)
    digests = dict(fp.package_files(pkg))
    assert digests["scripts/big.bin"] == f"unhashed:{codes.FILE_TOO_LARGE}"


def test_a_file_that_grows_past_the_cap_refuses_the_resume(tmp_path: Path) -> None:
    pkg = one(tmp_path)
    data = sparse(pkg / "scripts" / "data.bin", 1024)
    stop = flow.Stop()

    def stopping(request: Any) -> Any:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    state = tmp_path / "r.json"
    summary = flow.run(pkg, "t", state=state, agent=FakeAgent(stopping), stop=stop)
    assert summary.state == "interrupted"
    before = state.read_bytes()
    os.truncate(data, 4 * GIB)
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(state, agent=FakeAgent(("ok", "x")))
    assert caught.value.code == codes.RUN_FINGERPRINT_MISMATCH
    assert state.read_bytes() == before


def test_a_file_that_grows_while_hashed_is_not_hashed_past_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stat said small, the read finds more: the entry is unhashed, never a digest
    of a prefix (which would match a later, different file)."""
    pkg = one(tmp_path)
    sparse(pkg / "scripts" / "grows.bin", 4 * GIB)
    monkeypatch.setattr(fp, "_unhashable", lambda counted, problems: list(problems))
    digests = dict(fp.package_files(pkg))
    assert digests["scripts/grows.bin"] == "unhashed:changed"


@pytest.mark.parametrize("name", [b"\xff.md", b"x\xe4\xb8.mjs"])
def test_a_name_that_is_not_utf8_is_refused_not_a_crash(name: bytes, tmp_path: Path) -> None:
    """The fingerprint is UTF-8 JSON: compiling used to end in UnicodeEncodeError."""
    pkg = one(tmp_path)
    odd = pkg / "scripts" / os.fsdecode(name)
    odd.parent.mkdir()
    odd.write_text("export {};\n", encoding="utf-8")
    shown = "scripts/" + name.decode("utf-8", "backslashreplace")
    errors = [d for d in flow.check(pkg) if d.severity == "error"]
    assert [(d.code, d.path) for d in errors] == [(codes.RESOURCE_PATH_INVALID, f"one/{shown}")]
    with pytest.raises(AgentGraphError) as caught:
        flow.compile(pkg)
    assert caught.value.code == codes.RESOURCE_PATH_INVALID
    assert dict(fp.package_files(pkg))[shown] == f"unhashed:{codes.RESOURCE_PATH_INVALID}"


def test_a_package_directory_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    pkg = one(tmp_path)
    moved = pkg.with_name(os.fsdecode(b"one\xff"))
    pkg.rename(moved)
    diagnostics = flow.check(moved)
    errors = [d for d in diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == [codes.FLOW_ENTRY_INVALID]
    assert "one\\xff" in errors[0].message
    assert codes.FLOW_ID_NOT_REFERENCEABLE not in [d.code for d in diagnostics]
    with pytest.raises(AgentGraphError) as caught:
        flow.compile(moved)
    assert caught.value.code == codes.FLOW_ENTRY_INVALID


def test_a_directory_that_cannot_be_listed_is_not_skipped_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = one(tmp_path)
    hidden = pkg / "scripts" / "lib"
    hidden.mkdir(parents=True)
    (hidden / "helper.mjs").write_text("export {};\n", encoding="utf-8")
    real_scandir = os.scandir

    def refusing(path: Any) -> Any:
        if Path(path) == hidden:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(fp.os, "scandir", refusing)
    errors = [d for d in flow.check(pkg) if d.severity == "error"]
    assert [(d.code, d.path) for d in errors] == [(codes.FILE_READ_FAILED, "one/scripts/lib/")]
    assert "cannot be listed" in errors[0].message
