"""``agc flow list``: every package it can find, each shared id once (issue 26 item 15).

Without ROOT (the working directory, or ``.flows``) the listing never stops at a
problem: packages sharing an id are all listed and the id is one warning, a FLOW.md
that cannot be read is listed with a warning. A ROOT given is a discovery root (A.75):
a shared id there is the error ``flow-id-duplicate``, one diagnostic per id.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from agent_graph import codes
from cli_support import error_of, ok_json, run
from flow_run_support import command, package

ROOT = Path(__file__).resolve().parents[2]
GRAPH = "start((开始)) --> a[a]\na -->|已执行| finish((结束))"


def _tree(base: Path) -> None:
    """Three packages called ``main``, two called ``helper``, one alone, one unreadable."""
    for group in ("one", "two", "three"):
        package(base / group, "main", GRAPH, command("a", "1"))
    for group in ("one", "two"):
        package(base / group, "helper", GRAPH, command("a", "1"))
    package(base, "alone", GRAPH, command("a", "1"))
    (base / "binary").mkdir()
    (base / "binary" / "FLOW.md").write_bytes(b"---\nname: \xff\xfe broken\n---\n")


def test_without_root_every_package_is_listed_and_each_shared_id_warned_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    doc = ok_json(["flow", "list"], capsys)
    ids = Counter(f["id"] for f in doc["flows"])
    assert ids == {"main": 3, "helper": 2, "alone": 1, "binary": 1}
    assert sorted(f["path"] for f in doc["flows"] if f["id"] == "main") == [
        os.path.join(g, "main", "FLOW.md") for g in ("one", "three", "two")
    ]
    warned = [(d["code"], d["severity"]) for d in doc["diagnostics"]]
    assert Counter(warned) == {
        (codes.FLOW_ID_DUPLICATE, "warning"): 2,
        (codes.PARSE_FAILED, "warning"): 1,
    }
    shared = {d["message"].split("'")[1] for d in doc["diagnostics"]
              if d["code"] == codes.FLOW_ID_DUPLICATE}  # fmt: skip
    assert shared == {"main", "helper"}
    (unreadable,) = [d for d in doc["diagnostics"] if d["code"] == codes.PARSE_FAILED]
    assert unreadable["path"] == os.path.join("binary", "FLOW.md")
    binary = next(f for f in doc["flows"] if f["id"] == "binary")
    assert (binary["name"], binary["description"]) == (None, None)


def test_the_human_listing_has_one_line_per_package_then_one_per_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["flow", "list"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 7 + 3
    assert [line.split()[0] for line in lines[:7]] == ["alone", "binary", *["helper"] * 2,
                                                      *["main"] * 3]  # fmt: skip
    assert sum(f"warning: {codes.FLOW_ID_DUPLICATE}:" in line for line in lines[7:]) == 2
    assert any("3 packages have the id 'main'" in line for line in lines[7:])


def test_a_given_root_is_a_discovery_root_where_a_shared_id_is_one_error_per_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(tmp_path)
    error = error_of(["flow", "list", str(tmp_path)], capsys)
    assert error["code"] == codes.FLOW_ID_DUPLICATE
    diagnostics = error["diagnostics"]
    assert [d["code"] for d in diagnostics] == [codes.FLOW_ID_DUPLICATE] * 2
    assert [d["message"].split("'")[1] for d in diagnostics] == ["helper", "main"]


def test_a_long_list_of_sharers_is_shortened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for number in range(40):
        package(tmp_path / f"case-{number:02}", "main", GRAPH, command("a", "1"))
    monkeypatch.chdir(tmp_path)
    (warning,) = ok_json(["flow", "list"], capsys)["diagnostics"]
    assert "40 packages have the id 'main'" in warning["message"]
    assert "and 37 more" in warning["message"]
    assert warning["message"].count("FLOW.md") == 3


def test_at_the_repository_root_everything_is_listed_and_each_shared_id_warned_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(["flow", "list", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    doc = json.loads(out)
    listed = Counter(f["id"] for f in doc["flows"])
    examples = {p.parent.name for p in (ROOT / "examples" / "flows").glob("*/FLOW.md")}
    assert examples <= set(listed)
    duplicates = [d for d in doc.get("diagnostics", []) if d["code"] == codes.FLOW_ID_DUPLICATE]
    warned = Counter(d["message"].split("'")[1] for d in duplicates)
    assert warned == {flow_id: 1 for flow_id, count in listed.items() if count > 1}
    assert all(d["severity"] == "warning" for d in doc.get("diagnostics", []))


def test_a_directory_that_cannot_be_read_is_a_warning_not_the_end_of_the_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(tmp_path)
    real = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        if Path(path).name == "two":  # stands in for a directory without read permission
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "scandir", scandir)
    doc = ok_json(["flow", "list"], capsys)
    assert Counter(f["id"] for f in doc["flows"]) == {"main": 2, "helper": 1, "alone": 1,
                                                      "binary": 1}  # fmt: skip
    (refused,) = [d for d in doc["diagnostics"] if d["code"] == codes.FILE_READ_FAILED]
    assert (refused["path"], refused["severity"]) == ("two", "warning")
    assert "Permission denied" in refused["message"]
