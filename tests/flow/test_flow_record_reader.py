"""Reading a Run record: the schema's findings, the identity before them, the references
after them (``validate.check_record``), and the typed vocabulary agreeing with the schema.

Each damaged record keeps a valid checksum, so what refuses it is the reader's check and
not ``run-record-modified``; the messages are pinned because hosts show them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest

from agent_graph import flow
from agent_graph.documents.schema import schema_document
from agent_graph.errors import AgentGraphError
from agent_graph.flow.runtime import failures, state
from agent_graph.flow.runtime.store import RunFile, checksum
from cli_support import error_of
from flow_run_support import FakeAgent, agent, command, package

FORK = """
start((开始)) --> p[p]
p -->|go| f{{并行}}
f --> x[x]
f --> y[y]
x -->|已执行| j[j]
y -->|已执行| j
j -->|已执行| finish((结束))
"""

Damage = Callable[[dict[str, Any]], Any]


def _fork(root: Path) -> Path:
    return package(
        root,
        "fork",
        FORK,
        agent("p", ".", {"go": "."}),
        command("x", "process.stdout.write('x')"),
        command("y", "process.stdout.write('y')"),
        command("j", "process.stdout.write('j')", stdin='{"x": {x.outcome}, "y": {y.outcome}}'),
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A completed Run through a fork round, and one interrupted at its first visit."""
    tmp_path = tmp_path_factory.mktemp("records")
    pkg = _fork(tmp_path)
    flow.run(pkg, "t", state=tmp_path / "done.json", agent=FakeAgent(("go", 1)))
    stop = flow.Stop()

    def stopping(request: Any) -> Any:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    flow.run(pkg, "t", state=tmp_path / "live.json", agent=FakeAgent(stopping), stop=stop)
    return tmp_path


@pytest.fixture
def records(written: Path) -> dict[str, dict[str, Any]]:
    return {
        name: json.loads((written / f"{name}.json").read_text(encoding="utf-8"))
        for name in ("done", "live")
    }


def _set(member: str, value: Any) -> Damage:
    return lambda d: d.update({member: value})


ENUM = '"running", "interrupted", "completed", "failed"'
CASES: list[tuple[str, str, Damage, str]] = [
    ("not-an-object", "done", lambda d: [], "not a JSON object"),
    (
        "another-schema",
        "done",
        _set("schema", "agent-graph.run.v1"),
        "`schema` is 'agent-graph.run.v1', not 'agent-graph.flow-run.v1'",
    ),
    ("no-run-id", "done", lambda d: d.pop("runId"), "/ must have required property 'runId'"),
    ("run-id-number", "done", _set("runId", 3), "/runId must be string (found 3)"),
    ("revision-boolean", "done", _set("revision", True), "/revision must be integer (found true)"),
    (
        "unknown-status",
        "done",
        _set("status", "paused"),
        f'/status must be equal to one of the allowed values: {ENUM} (found "paused")',
    ),
    (
        "unknown-visit-status",
        "done",
        lambda d: d["visits"][0].update(status="weird"),
        f'/visits/0/status must be equal to one of the allowed values: {ENUM} (found "weird")',
    ),
    (
        "visit-without-kind",
        "done",
        lambda d: d["visits"][0].pop("kind"),
        "/visits/0 must have required property 'kind'",
    ),
    (
        "parent-not-a-link",
        "done",
        _set("parent", {"runId": 1}),
        "/parent must have required property 'state' (and 1 more)",
    ),
    (
        "cursor-elsewhere",
        "live",
        lambda d: d["cursor"].update(at="elsewhere"),
        '/cursor/at must be equal to one of the allowed values: "node", "round" '
        '(found "elsewhere")',
    ),
    (
        "fingerprint-not-a-digest",
        "done",
        _set("fingerprint", "md5:x"),
        "/fingerprint does not have the required form. 'sha256:' followed by 64 lowercase "
        'hexadecimal digits. (found "md5:x")',
    ),
    ("unknown-member", "done", _set("extra", 1), "/ has an unknown member `extra`"),
    (
        "timestamp",
        "done",
        _set("startedAt", "yesterday"),
        '/startedAt must match format "date-time" (found "yesterday")',
    ),
    # what a schema cannot say
    (
        "repeated-visit-id",
        "done",
        lambda d: d["visits"][1].update(id=d["visits"][0]["id"]),
        "visits[1] repeats the id 'v1'",
    ),
    (
        "event-gap",
        "done",
        lambda d: d["events"][1].update(seq=3),
        "event 2 is missing or out of sequence (a gap or a repeat)",
    ),
    (
        "event-repeat",
        "done",
        lambda d: d["events"][2].update(seq=2),
        "event 3 is missing or out of sequence (a gap or a repeat)",
    ),
    (
        "event-of-another-run",
        "done",
        lambda d: d["events"][1].update(runId="run-0000000000"),
        "event 2 belongs to another Run",
    ),
    (
        "round-names-no-visit",
        "done",
        lambda d: d["rounds"][0]["branches"].update(x="v99"),
        "rounds[0] names a visit that does not exist",
    ),
    (
        "cursor-names-no-visit",
        "live",
        lambda d: d["cursor"].update(visit="v99"),
        "`cursor` names a visit that does not exist",
    ),
    (
        "cursor-names-no-round",
        "live",
        _set("cursor", {"at": "round", "round": "round9"}),
        "`cursor` names a round that does not exist",
    ),
    (
        "no-cursor-before-the-end",
        "live",
        _set("cursor", None),
        "a Run that has not ended has no `cursor`",
    ),
]


@pytest.mark.parametrize(
    ("base", "damage", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_damaged_record_is_refused_with_a_stable_message(
    records: dict[str, dict[str, Any]], tmp_path: Path, base: str, damage: Damage, message: str
) -> None:
    document = copy.deepcopy(records[base])
    changed = damage(document)
    value = changed if isinstance(changed, list) else document
    if isinstance(value, dict):
        value["checksum"] = checksum(value)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(AgentGraphError) as caught:
        RunFile(path).read()
    assert caught.value.code == "run-record-invalid"
    assert caught.value.message == f"{path} is not a Flow Run record agc wrote: {message}"


def test_schema_findings_are_diagnostics_with_pointers(
    records: dict[str, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = copy.deepcopy(records["live"])
    document["status"] = "paused"
    document["visits"][0]["kind"] = 7
    document["checksum"] = checksum(document)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    error = error_of(["flow", "status", "--state", str(path)], capsys)
    assert error["code"] == "run-record-invalid"
    assert error["message"].endswith("(and 1 more)")
    found = [(d["code"], d["detail"]["pointer"]) for d in error["diagnostics"]]
    assert found == [("schema.enum", "/status"), ("schema.enum", "/visits/0/kind")]


def test_every_record_the_runtime_wrote_here_is_read_back(
    records: dict[str, dict[str, Any]], written: Path
) -> None:
    assert RunFile(written / "done.json").read() == records["done"]
    assert RunFile(written / "live.json").read() == records["live"]


def _enum(schema: dict[str, Any], *path: str) -> list[str]:
    node: Any = schema
    for step in path:
        node = node[step]
    values: list[str] = node["enum"]
    return values


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        (state.RunStatus, ("$defs", "runStatus")),
        (state.VisitStatus, ("$defs", "runStatus")),
        (failures.Category, ("$defs", "category")),
        (state.EventType, ("$defs", "event", "properties", "type")),
        (state.RoundStatus, ("$defs", "round", "properties", "status")),
        (state.At, ("properties", "cursor", "properties", "at")),
        (state.Entry, ("$defs", "visit", "properties", "enteredFrom")),
    ],
    ids=lambda x: x.__name__ if isinstance(x, type) else "",
)
def test_the_typed_vocabulary_is_the_schemas(kind: type[StrEnum], path: tuple[str, ...]) -> None:
    assert [m.value for m in kind] == _enum(schema_document("flow-run"), *path)


def test_a_node_cursor_is_entered_from_a_subset_of_the_entries() -> None:
    cursor = _enum(schema_document("flow-run"), "properties", "cursor", "properties", "from")
    assert set(cursor) <= {e.value for e in state.Entry}
    assert state.Entry.PARALLEL.value not in cursor  # branches start from a round cursor


def test_categories_stay_plain_strings() -> None:
    assert tuple(c.value for c in failures.Category) == failures.CATEGORIES
    assert all(type(c) is str for c in failures.CATEGORIES)
    assert type(failures.RunFailure("loop_limit", "x").to_json()["category"]) is str
