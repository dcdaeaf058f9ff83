"""Audit findings on Runs (issue 9): writes that failed after committing, the lock, event logs.

* Text that is not Unicode (an unpaired surrogate such as ``"\\ud800"``, or an argument
  byte that was not UTF-8) is refused by every JSON reader with its line and column, and
  by the stores before anything is written; a Run file holding one (written by an older
  version) is reported and left untouched. A command never reports failure for a write
  it made: output that cannot be encoded is printed escaped.
* ``agc run start`` refuses a lock that is a symbolic link (``run-lock-invalid``; every
  store's lock-file checks are in ``tests/runs/test_store_conformance.py``), and nothing (no
  directory, no lock file) is created for a Run that does not exist.
* Every schema-valid event log is read (empty, or not starting with ``run.started``) and
  continued from its last sequence; a gap, a repeat or a decrease is ``run-invalid``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agent_graph
from agent_graph.documents.json_text import JsonError, parse_json, read_json
from agent_graph.errors import AgentGraphError
from agent_graph.runs import FileRunStore, MemoryRunStore, RunStore, codec, read_run
from agent_graph.runs.validation import check_document
from cli_support import error_of, ok_json, run

ROOT = Path(__file__).resolve().parents[2]
WEEKLY = ROOT / "examples" / "weekly-report"
MANIFEST = str(WEEKLY / "provider.yaml")
PROVIDER = "example.weekly-report"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def failure(call: Callable[[], object]) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as info:
        call()
    return info.value


def started(path: Path) -> bytes:
    FileRunStore().start(path, provider=PROVIDER, graph="report")
    return path.read_bytes()


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


# -- 5. unpaired surrogates: the JSON readers -------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "column", "shown"),
    [
        ('"\\ud800"', 1, 2, "\\ud800"),
        ('{"a": [1,\n  "x\\uDC00"]}', 2, 5, "\\uDC00"),
        ('{"\\udbff": 1}', 1, 3, "\\udbff"),  # a key
        ('["\\ud83d\\ud83d\\ude00"]', 1, 3, "\\ud83d"),  # a high half, then a pair
        ('["\\ud800x\\udc00"]', 1, 3, "\\ud800"),  # halves apart are no pair
        ('["ok", "\\ude00\\ud83d"]', 1, 9, "\\ude00"),  # halves in the wrong order
        ('"\udcff"', 1, 2, "U+DCFF"),  # an argv byte that was not UTF-8
    ],
)
def test_parse_json_refuses_unpaired_surrogates_at_their_position(
    text: str, line: int, column: int, shown: str
) -> None:
    with pytest.raises(JsonError) as info:
        parse_json(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert shown in info.value.message
    assert "surrogate" in info.value.message
    info.value.message.encode("ascii")  # the message itself can always be printed


def test_parse_json_keeps_pairs_and_escaped_backslashes() -> None:
    value, _ = parse_json(r'["\ud83d\ude00", "\uD83D\uDE00", "\\ud800", "\\\ud83d\ude00"]')
    assert value == ["😀", "😀", "\\ud800", "\\😀"]


def test_read_json_refuses_unpaired_surrogates(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{\n  "a": "\\ud800",\n  "b": "\\\\ud800 \\ud83d\\ude00"\n}', encoding="utf-8")
    with pytest.raises(JsonError) as info:
        read_json(path)
    assert (info.value.line, info.value.column) == (2, 9)
    path.write_text('{"b": "\\\\ud800 \\ud83d\\ude00"}', encoding="utf-8")
    assert read_json(path) == {"b": "\\ud800 😀"}


def test_the_run_codec_refuses_surrogates_both_ways() -> None:
    with pytest.raises(ValueError, match="surrogate"):
        codec.loads('{"a": "\\ud800"}')
    assert codec.loads('{"a": "\\ud83d\\ude00"}') == {"a": "😀"}
    with pytest.raises(AgentGraphError) as info:
        codec.dumps({"a": "\ud800"})  # used to be written escaped
    assert info.value.code == "run-invalid"


def test_a_json_definition_file_with_a_surrogate_is_parse_failed(tmp_path: Path) -> None:
    provider = tmp_path / "provider"
    shutil.copytree(WEEKLY, provider)
    graph = _yaml(provider / "graphs" / "report.yaml")
    # in a gate's prompt the old reader let it through to a raw UnicodeEncodeError
    text = json.dumps(graph, indent=2).replace('"prompt": "', '"prompt": "\\udfff', 1)
    (provider / "graphs" / "report.json").write_text(text, encoding="utf-8")
    manifest = provider / "provider.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("graphs/report.yaml", "graphs/report.json"),
        encoding="utf-8",
    )
    lines = text.splitlines()
    line = next(n for n, t in enumerate(lines, 1) if "\\udfff" in t)
    column = lines[line - 1].index("\\udfff") + 1
    error = failure(lambda: agent_graph.compile_provider(manifest))  # not UnicodeEncodeError
    assert error.code == "parse-failed"
    assert (error.diagnostics[0].line, error.diagnostics[0].column) == (line, column)


def _yaml(path: Path) -> Any:
    from agent_graph.documents.yaml12 import parse_yaml

    return parse_yaml(path.read_text(encoding="utf-8"))[0]


def test_validate_reports_a_json_definition_with_a_surrogate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider = tmp_path / "provider"
    shutil.copytree(WEEKLY, provider)
    graph = _yaml(provider / "graphs" / "report.yaml")
    text = json.dumps(graph, indent=2).replace('"description": "', '"description": "\\ud800', 1)
    (provider / "graphs" / "report.json").write_text(text, encoding="utf-8")
    manifest = provider / "provider.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("graphs/report.yaml", "graphs/report.json"),
        encoding="utf-8",
    )
    error = error_of(["validate", "-m", str(manifest)], capsys)
    assert error["code"] == "parse-failed"
    assert error["diagnostics"][0]["detail"]["line"] >= 1


# -- 5. unpaired surrogates: CLI arguments are refused before anything is written --------


@pytest.mark.parametrize(
    ("args", "column"),
    [
        (["record", "report/draft", "completed", "--detail", '"\\ud800"'], 2),
        (["record", "report/draft", "completed", "--detail", '{"a": ["\\udc00"]}'], 9),
        (["record", "report/draft", "completed", "--detail", '"\udcff"'], 2),
        (["facts", "--set", '{"a":"\\ud800"}'], 7),
        (["facts", "--set", '{"\\ud800":1}', "--replace"], 3),
    ],
)
def test_cli_json_with_a_surrogate_is_refused_and_nothing_written(
    here: Path, capsys: pytest.CaptureFixture[str], args: list[str], column: int
) -> None:
    before = started(here / "run.json")
    error = error_of(["run", *args, "--state", "run.json"], capsys)
    assert error["code"] == "json-invalid"  # was unexpected-error, after the write
    assert "surrogate" in error["message"]
    assert error["diagnostics"][0]["detail"] == {"line": 1, "column": column}
    assert (here / "run.json").read_bytes() == before  # a retry cannot record twice


def test_run_start_with_surrogate_facts_creates_nothing(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "start", "report", "-m", MANIFEST, "--state", "r.json"]
    error = error_of([*args, "--facts", '{"a": "\\ud800"}'], capsys)
    assert error["code"] == "json-invalid"
    assert listing(here) == []


def test_an_at_file_with_a_surrogate_is_parse_failed(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = started(here / "run.json")
    (here / "detail.json").write_text('{\n  "note": "\\udead"\n}\n', encoding="utf-8")
    args = ["run", "record", "report/draft", "completed", "--state", "run.json"]
    error = error_of([*args, "--detail", "@detail.json"], capsys)
    assert error["code"] == "parse-failed"
    assert error["diagnostics"][0]["detail"] == {"line": 2, "column": 12}
    assert (here / "run.json").read_bytes() == before


def test_cli_arguments_that_are_not_unicode_are_refused_before_writing(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = started(here / "run.json")
    error = error_of(
        ["run", "record", "report/dr\udcffaft", "completed", "--state", "run.json"], capsys
    )
    assert error["code"] == "state-key-invalid"
    error = error_of(["run", "authority", "--state", "run.json", "--set", "a\udcff"], capsys)
    assert error["code"] == "authority-invalid"
    assert (here / "run.json").read_bytes() == before
    args = ["run", "start", "report", "-m", MANIFEST, "--state", "new.json"]
    error = error_of([*args, "--workspace", "ws\udcff"], capsys)
    assert error["code"] == "run-invalid"
    assert error["diagnostics"][0]["detail"]["pointer"] == "/workspace"
    assert listing(here) == [".run.json.lock", "run.json"]  # no new.json, no lock


def test_output_that_cannot_be_encoded_never_fails_a_committed_write(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "r\udcff.json"  # a file name with a byte that is not UTF-8 (legal on POSIX)
    if not os.path.supports_unicode_filenames:
        try:
            os.fsencode(name)
        except UnicodeEncodeError:  # pragma: no cover - a file system that cannot hold it
            pytest.skip("file names cannot hold this byte")
    started(here / name)
    code, out, err = run(["run", "record", "report/draft", "completed", "--state", name], capsys)
    assert (code, err) == (0, "")  # was 1, unexpected-error: UnicodeEncodeError
    assert out.splitlines()[0] == "Recorded report/draft: completed"
    assert "r\\udcff.json" in out
    code, out, err = run(
        ["run", "checkpoint", "--state", name, "--to", "cp.json", "--format", "json"], capsys
    )
    assert (code, err) == (0, "")
    assert json.loads(out)["run"] == str(here / name)
    events = json.loads((here / name).read_text(encoding="utf-8"))["events"]
    assert [e["type"] for e in events] == [
        "run.started",
        "node.outcome-recorded",
        "run.checkpointed",
    ]


# -- 5. unpaired surrogates: the stores refuse them before writing ------------------------


def _stores(tmp_path: Path) -> list[tuple[RunStore, Callable[[str], Any]]]:
    return [(FileRunStore(), lambda name: tmp_path / name), (MemoryRunStore(), lambda name: name)]


@pytest.mark.parametrize("kind", [0, 1], ids=["file", "memory"])
def test_stores_refuse_surrogates_before_writing(tmp_path: Path, kind: int) -> None:
    store, ref = _stores(tmp_path)[kind]
    path = ref("run.json")
    original = store.start(path, provider="p", graph="g", facts={"ü": "😀"})
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: store.record(path, "g/n", "completed", {"a": ["\ud800"]}), "detail-invalid"),
        (lambda: store.record(path, "g/n", "completed", "\udcff"), "detail-invalid"),
        (lambda: store.record(path, "g/\udcff", "completed"), "state-key-invalid"),
        (lambda: store.set_facts(path, {"a": "\udfff"}), "facts-invalid"),
        (lambda: store.set_facts(path, {"\ud800": 1}, replace=True), "facts-invalid"),
        (lambda: store.set_authorities(path, ["ok", "a\udcff"]), "authority-invalid"),
    ]
    for call, code in calls:
        error = failure(call)
        assert error.code == code, error.message
        error.message.encode("utf-8")  # the message can be printed
    assert store.load(path) == original
    bad_start: list[Callable[[], object]] = [
        lambda: store.start(ref("a.json"), provider="p\ud800", graph="g"),
        lambda: store.start(ref("b.json"), provider="p", graph="g", workspace="/w\udcff"),
        lambda: store.start(ref("c.json"), provider="p", graph="g", facts={"x": "\ud800"}),
    ]
    for call in bad_start:
        error = failure(call)
        assert error.code in ("run-invalid", "facts-invalid"), error.message
        error.message.encode("utf-8")
    assert not any(store.exists(ref(n)) for n in ("a.json", "b.json", "c.json"))
    if kind == 0:
        assert listing(tmp_path) == [".run.json.lock", "run.json"]


def test_check_document_places_a_surrogate_by_pointer() -> None:
    document = MemoryRunStore().start("r", provider="p", graph="g").to_dict()
    document["outcomes"] = {"g/n": {"outcome": "completed", "recordedAt": document["createdAt"]}}
    document["outcomes"]["g/n"]["detail"] = {"k": [0, "\ud800"]}
    error = failure(lambda: check_document(document, "r"))
    assert error.code == "run-invalid"
    assert error.diagnostics[0].pointer == "/outcomes/g~1n/detail/k/1"


# -- 5. a Run file an older version wrote with a surrogate: reported, untouched ------------


def _old_run(path: Path) -> tuple[bytes, int, int]:
    started(path)
    text = path.read_text(encoding="utf-8").replace('"facts": {}', '"facts": {"a": "x\\ud800"}')
    path.write_text(text, encoding="utf-8")
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "\\ud800" in t)
    return path.read_bytes(), line, text.splitlines()[line - 1].index("\\ud800") + 1


def test_a_run_file_with_a_surrogate_is_refused_by_the_stores(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    before, line, column = _old_run(path)
    store = FileRunStore()
    operations: list[Callable[[], object]] = [
        lambda: read_run(path),
        lambda: store.load(path),
        lambda: store.record(path, "report/draft", "completed"),
        lambda: store.set_facts(path, {"b": 1}),
        lambda: store.set_authorities(path, ["x"]),
        lambda: store.checkpoint(path, tmp_path / "cp.json"),
        lambda: store.resume(path, tmp_path / "resumed.json"),
        lambda: store.events(path),
    ]
    for operation in operations:
        error = failure(operation)
        assert error.code == "parse-failed", error.message
        assert (error.diagnostics[0].line, error.diagnostics[0].column) == (line, column)
    assert path.read_bytes() == before
    assert not (tmp_path / "cp.json").exists()
    assert not (tmp_path / "resumed.json").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["record", "report/draft", "completed"],
        ["facts", "--set", '{"b": 1}'],
        ["authority", "--set", "x"],
        ["authority"],
        ["events"],
        ["checkpoint", "--to", "cp.json"],
        ["status", "-m", MANIFEST],
    ],
)
def test_cli_commands_on_a_run_file_with_a_surrogate(
    here: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    before, line, column = _old_run(here / "run.json")
    error = error_of(["run", *args, "--state", "run.json"], capsys)
    assert error["code"] == "parse-failed"
    assert error["diagnostics"][0]["detail"] == {"line": line, "column": column}
    assert (here / "run.json").read_bytes() == before
    assert not (here / "cp.json").exists()


# -- 11. the lock never follows a symbolic link; nothing is made for a missing Run --------


needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")


@needs_symlinks
def test_run_start_refuses_a_symlinked_lock(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / ".new.json.lock").symlink_to("elsewhere")
    args = ["run", "start", "report", "-m", MANIFEST, "--state", "new.json"]
    assert error_of(args, capsys)["code"] == "run-lock-invalid"
    assert listing(here) == [".new.json.lock"]
    assert not os.path.lexists(here / "elsewhere")  # was created, and new.json written


@needs_symlinks
def test_a_dangling_state_symlink_creates_nothing(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "dang.json").symlink_to(Path("nope") / "missing.json")
    for args in (
        ["record", "report/draft", "completed"],
        ["facts", "--set", "{}"],
        ["authority"],
        ["checkpoint", "--to", "cp.json"],
        ["events"],
    ):
        error = error_of(["run", *args, "--state", "dang.json"], capsys)
        assert error["code"] == "file-read-failed", args
    assert listing(here) == ["dang.json"]  # was: nope/ and nope/.missing.json.lock
    # start and resume refuse to write through it (a path is there), and make nothing
    args = ["run", "start", "report", "-m", MANIFEST, "--state", "dang.json"]
    assert error_of(args, capsys)["code"] == "run-target-exists"
    assert listing(here) == ["dang.json"]


def test_a_missing_run_in_a_missing_directory_creates_nothing(tmp_path: Path) -> None:
    store = FileRunStore()
    missing = tmp_path / "no" / "such" / "run.json"
    for operation in (
        lambda: store.record(missing, "g/n", "completed"),
        lambda: store.set_facts(missing, {"a": 1}),
        lambda: store.clear_authorities(missing),
        lambda: store.checkpoint(missing, tmp_path / "other" / "cp.json"),
        lambda: store.resume(missing, tmp_path / "other" / "r.json"),
    ):
        assert failure(operation).code == "file-read-failed"
    assert listing(tmp_path) == []


def test_checkpoint_and_resume_still_create_their_directories(tmp_path: Path) -> None:
    store = FileRunStore()
    path = tmp_path / "run.json"
    started(path)
    store.checkpoint(path, tmp_path / "a" / "b" / "cp.json")
    store.resume(tmp_path / "a" / "b" / "cp.json", tmp_path / "c" / "r.json")
    assert read_run(tmp_path / "c" / "r.json").events[-1]["type"] == "run.resumed"


# -- 12. every schema-valid log is read; only real inconsistencies are refused -----------
# (issue 23: the reference reads a Run another host wrote with an empty log, or one that
# does not begin with run.started; refusing it broke `evaluate --state`.)


def _with_events(path: Path, events: list[dict[str, Any]]) -> bytes:
    started(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["events"] = events
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path.read_bytes()


AT = "2026-01-02T03:04:05.000Z"
FOREIGN_LOGS: dict[str, list[dict[str, Any]]] = {
    "empty": [],
    "no run.started": [{"sequence": 1, "at": AT, "type": "facts.updated", "detail": {"x": 1}}],
    "starts at 7": [
        {"sequence": 7, "at": AT, "type": "host.imported", "detail": {"from": "elsewhere"}},
        {"sequence": 8, "at": AT, "type": "facts.updated"},
    ],
}


@pytest.mark.parametrize("case", sorted(FOREIGN_LOGS))
def test_a_foreign_log_is_read_and_continued(tmp_path: Path, case: str) -> None:
    events = FOREIGN_LOGS[case]
    path = tmp_path / "run.json"
    _with_events(path, events)
    store = FileRunStore()
    assert store.load(path).events == events
    assert store.events(path) == events
    store.record(path, "report/draft", "completed")
    store.set_facts(path, {"a": 1})
    after = read_run(path).events
    first = events[-1]["sequence"] + 1 if events else 1
    assert after[: len(events)] == events
    assert [e["sequence"] for e in after[len(events) :]] == [first, first + 1]
    assert [e["type"] for e in after[len(events) :]] == ["node.outcome-recorded", "facts.updated"]
    store.checkpoint(path, tmp_path / "cp.json")
    store.resume(tmp_path / "cp.json", tmp_path / "r.json")
    assert read_run(tmp_path / "r.json").events[-1]["sequence"] == first + 3


@pytest.mark.parametrize("case", sorted(FOREIGN_LOGS))
def test_a_foreign_log_is_evaluated_by_the_cli(
    here: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    _with_events(here / "run.json", FOREIGN_LOGS[case])
    fresh = ok_json(["evaluate", "report", "-m", MANIFEST], capsys)
    evaluation = ok_json(["evaluate", "report", "-m", MANIFEST, "--state", "run.json"], capsys)
    assert evaluation["statusCode"] == fresh["statusCode"]
    assert evaluation["primaryRoute"]["node"] == fresh["primaryRoute"]["node"]
    status = ok_json(["run", "status", "-m", MANIFEST, "--state", "run.json"], capsys)
    assert status["evaluation"]["statusCode"] == fresh["statusCode"]
    ok_json(["run", "record", "report/draft", "completed", "--state", "run.json"], capsys)
    events = json.loads((here / "run.json").read_text(encoding="utf-8"))["events"]
    assert events[-1]["sequence"] == (FOREIGN_LOGS[case] or [{"sequence": 0}])[-1]["sequence"] + 1


@pytest.mark.parametrize(
    ("sequences", "index", "said"),
    [
        ([1, 3], 1, "event 2 has sequence 3, which skips 2"),
        ([1, 2, 6], 2, "event 3 has sequence 6, which skips 3–5"),
        ([1, 1], 1, "event 2 has sequence 1, which repeats the sequence of the event before it"),
        ([4, 5, 2], 2, "event 3 has sequence 2, which goes down from 5"),
    ],
)
def test_an_inconsistent_log_is_refused_where_it_breaks(
    tmp_path: Path, sequences: list[int], index: int, said: str
) -> None:
    path = tmp_path / "run.json"
    events = [{"sequence": n, "at": AT, "type": "facts.updated"} for n in sequences]
    before = _with_events(path, events)
    lines = path.read_text(encoding="utf-8").splitlines()
    store = FileRunStore()
    for operation in (
        lambda: store.load(path),
        lambda: store.record(path, "report/draft", "completed"),
        lambda: store.set_facts(path, {"a": 1}),
        lambda: store.checkpoint(path, tmp_path / "cp.json"),
    ):
        error = failure(operation)
        assert error.code == "run-invalid", error.message
        assert said in error.message
        diagnostic = error.diagnostics[0]
        assert diagnostic.pointer == f"/events/{index}/sequence"
        assert diagnostic.line is not None
        assert f'"sequence": {sequences[index]}' in lines[diagnostic.line - 1]
    assert path.read_bytes() == before
    assert not (tmp_path / "cp.json").exists()
    document = json.loads(before)
    assert failure(lambda: check_document(document, "x")).code == "run-invalid"
