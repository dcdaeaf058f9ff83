"""Runs: the conformance suite every ``RunStore`` passes, then what only files do.

The conformance tests are parametrized over :class:`FileRunStore` and
:class:`MemoryRunStore` with the same clock and id source, so they also prove the
two stores write identical documents.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_graph.errors import AgentGraphError
from agent_graph.runs import (
    NO_DETAIL,
    Checkpoint,
    FileRunStore,
    MemoryRunStore,
    Run,
    RunStore,
    evaluation_input,
)

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def stamp(ms: int) -> str:
    """The timestamp of the clock's ``ms``-th reading (0-based)."""
    return (T0 + timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Clock:
    """Advances one millisecond per reading, so every operation has a known time."""

    def __init__(self) -> None:
        self.readings = 0

    def __call__(self) -> datetime:
        moment = T0 + timedelta(milliseconds=self.readings)
        self.readings += 1
        return moment


@dataclass
class Harness:
    store: RunStore
    ref: Callable[[str], str]
    kind: str


def make(kind: str, tmp_path: Path) -> Harness:
    ids = iter(f"run-{n}" for n in range(1, 1000))
    if kind == "file":
        store: RunStore = FileRunStore(clock=Clock(), ids=lambda: next(ids))
        return Harness(store, lambda name: str(tmp_path / name), kind)
    return Harness(MemoryRunStore(clock=Clock(), ids=lambda: next(ids)), lambda name: name, kind)


@pytest.fixture(params=["file", "memory"])
def h(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    return make(request.param, tmp_path)


def started(h: Harness, name: str = "run.json", **extra: Any) -> str:
    ref = h.ref(name)
    h.store.start(ref, provider="example.weekly-report", graph="report", **extra)
    return ref


def error(call: Callable[[], object]) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as info:
        call()
    return info.value


# -- conformance: start and load ----------------------------------------------------------


def test_both_stores_satisfy_the_protocol(h: Harness) -> None:
    assert isinstance(h.store, RunStore)


def test_start_writes_the_reference_shape(h: Harness, tmp_path: Path) -> None:
    ref = h.ref("run.json")
    run = h.store.start(
        ref,
        provider="example.weekly-report",
        graph="report",
        workspace=tmp_path / "ws",
        facts={"report": {"digest": "sha256:1f"}},
        authorities=["z.z", "a.a", "z.z"],
    )
    assert list(run.document) == [
        "schema", "id", "provider", "graph", "entry", "workspace", "createdAt", "updatedAt",
        "facts", "outcomes", "authorities", "events",
    ]  # fmt: skip
    assert run.document == {
        "schema": "agent-graph.run.v1",
        "id": "run-1",
        "provider": "example.weekly-report",
        "graph": "report",
        "entry": "default",
        "workspace": str(tmp_path / "ws"),
        "createdAt": stamp(0),
        "updatedAt": stamp(0),
        "facts": {"report": {"digest": "sha256:1f"}},
        "outcomes": {},
        "authorities": ["a.a", "z.z"],
        "events": [{"sequence": 1, "at": stamp(0), "type": "run.started"}],
    }
    assert h.store.load(ref) == run
    assert h.store.exists(ref)
    assert not h.store.exists(h.ref("other.json"))


def test_start_without_workspace_or_facts(h: Harness) -> None:
    run = h.store.start(h.ref("r.json"), provider="p", graph="g", entry="alt", run_id="mine")
    assert run.workspace is None
    assert "workspace" not in run.document
    assert (run.id, run.entry, run.facts, run.authorities) == ("mine", "alt", {}, [])


def test_relative_workspace_is_stored_absolute(h: Harness) -> None:
    run = h.store.start(h.ref("r.json"), provider="p", graph="g", workspace=".")
    assert run.workspace == os.path.abspath(".")


def test_start_refuses_to_replace(h: Harness) -> None:
    ref = started(h)
    before = h.store.load(ref)
    failure = error(lambda: h.store.start(ref, provider="other", graph="g"))
    assert failure.code == "run-target-exists"
    assert failure.message == f"Run start refuses to replace an existing path: {ref}"
    assert h.store.load(ref) == before


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"facts": ["not", "an", "object"]}, "json-object-required"),
        ({"facts": {"x": math.nan}}, "facts-invalid"),
        ({"facts": {"x": {1: "int key"}}}, "facts-invalid"),
        ({"facts": {"x": object()}}, "facts-invalid"),
        ({"authorities": "report.publish"}, "authority-invalid"),
        ({"authorities": [1]}, "authority-invalid"),
        ({"graph": ""}, "schema-invalid"),
    ],
)
def test_start_checks_its_input(h: Harness, kwargs: dict[str, Any], code: str) -> None:
    args: dict[str, Any] = {"provider": "p", "graph": "g", **kwargs}
    ref = h.ref("r.json")
    assert error(lambda: h.store.start(ref, **args)).code == code
    assert not h.store.exists(ref)


def test_load_of_a_missing_run(h: Harness) -> None:
    failure = error(lambda: h.store.load(h.ref("missing.json")))
    assert failure.code == "file-read-failed"
    assert h.ref("missing.json") in failure.message


def test_runs_are_snapshots(h: Harness) -> None:
    ref = started(h, facts={"a": [1]})
    run = h.store.load(ref)
    run.facts["a"].append(2)
    run.events.clear()
    fresh = h.store.load(ref)
    assert fresh.facts == {"a": [1]}
    assert len(fresh.events) == 1


# -- conformance: mutations ---------------------------------------------------------------


def test_record_keeps_the_latest_outcome_and_appends_events(h: Harness) -> None:
    ref = started(h)
    h.store.record(ref, "report/draft", "partial", {"words": 120})
    run = h.store.record(ref, "report/draft", "completed")
    assert run.outcomes == {"report/draft": {"outcome": "completed", "recordedAt": stamp(2)}}
    assert run.outcome("report/draft") == "completed"
    assert run.outcome("report/publish") is None
    assert run.updated_at == stamp(2)
    assert run.created_at == stamp(0)
    assert run.events[1:] == [
        {
            "sequence": 2,
            "at": stamp(1),
            "type": "node.outcome-recorded",
            "node": "report/draft",
            "outcome": "partial",
            "detail": {"words": 120},
        },
        {
            "sequence": 3,
            "at": stamp(2),
            "type": "node.outcome-recorded",
            "node": "report/draft",
            "outcome": "completed",
        },
    ]
    assert h.store.load(ref) == run


def test_record_detail_null_is_a_detail(h: Harness) -> None:
    ref = started(h)
    run = h.store.record(ref, "report/draft", "failed", None)
    assert run.outcomes["report/draft"] == {
        "outcome": "failed",
        "recordedAt": stamp(1),
        "detail": None,
    }
    assert run.events[-1]["detail"] is None
    run = h.store.record(ref, "report/draft", "failed", NO_DETAIL)
    assert "detail" not in run.events[-1]


def test_record_accepts_subgraph_state_keys(h: Harness) -> None:
    ref = started(h)
    run = h.store.record(ref, "report/sub>child/inspect", "completed")
    assert run.outcome("report/sub>child/inspect") == "completed"


@pytest.mark.parametrize(
    ("key", "outcome", "detail", "code"),
    [
        ("report/draft", "done", NO_DETAIL, "outcome-invalid"),
        ("report/draft", "Completed", NO_DETAIL, "outcome-invalid"),
        ("draft", "completed", NO_DETAIL, "state-key-invalid"),
        ("other/draft", "completed", NO_DETAIL, "state-key-invalid"),
        ("report/", "completed", NO_DETAIL, "state-key-invalid"),
        ("report/draft", "completed", {"x": math.inf}, "detail-invalid"),
    ],
)
def test_record_refuses_bad_input_and_changes_nothing(
    h: Harness, key: str, outcome: str, detail: Any, code: str
) -> None:
    ref = started(h)
    before = h.store.load(ref)
    assert error(lambda: h.store.record(ref, key, outcome, detail)).code == code
    assert h.store.load(ref) == before


def test_record_into_a_missing_run(h: Harness) -> None:
    assert error(lambda: h.store.record(h.ref("nope.json"), "g/n", "completed")).code == (
        "file-read-failed"
    )


def test_facts_merge_shallowly_or_replace(h: Harness) -> None:
    ref = started(h, facts={"report": {"digest": "a", "approved": True}, "keep": 1})
    run = h.store.set_facts(ref, {"report": {"digest": "b"}, "new": [1]})
    assert run.facts == {"report": {"digest": "b"}, "keep": 1, "new": [1]}
    assert run.events[-1] == {
        "sequence": 2,
        "at": stamp(1),
        "type": "facts.updated",
        "detail": {"keys": ["new", "report"]},
    }
    run = h.store.set_facts(ref, {"only": True}, replace=True)
    assert run.facts == {"only": True}
    assert run.events[-1]["type"] == "facts.replaced"
    assert run.events[-1]["detail"] == {"keys": ["only"]}
    assert error(lambda: h.store.set_facts(ref, [1])).code == "json-object-required"  # type: ignore[arg-type]
    assert h.store.load(ref).facts == {"only": True}


def test_authorities_set_and_clear(h: Harness) -> None:
    ref = started(h, authorities=["old"])
    run = h.store.set_authorities(ref, (a for a in ["report.publish", "a.b", "a.b"]))
    assert run.authorities == ["a.b", "report.publish"]
    assert run.events[-1]["detail"] == {"authorities": ["a.b", "report.publish"]}
    run = h.store.clear_authorities(ref)
    assert run.authorities == []
    assert run.events[-1] == {
        "sequence": 3,
        "at": stamp(2),
        "type": "authorities.updated",
        "detail": {"authorities": []},
    }
    assert error(lambda: h.store.set_authorities(ref, "a.b")).code == "authority-invalid"


# -- conformance: checkpoint and resume ---------------------------------------------------


def test_checkpoint_copies_without_authorities(h: Harness) -> None:
    ref = started(h, authorities=["report.publish"])
    h.store.record(ref, "report/draft", "completed")
    target = h.ref("checkpoints/week-48.json")
    result = h.store.checkpoint(ref, target)
    assert isinstance(result, Checkpoint)
    event = {
        "sequence": 3,
        "at": stamp(2),
        "type": "run.checkpointed",
        "detail": {"checkpoint": "week-48.json"},
    }
    source, copy = h.store.load(ref), h.store.load(target)
    assert (source, copy) == (result.run, result.checkpoint)
    assert source.events[-1] == event
    assert copy.events[-1] == event
    assert source.authorities == ["report.publish"]
    assert copy.authorities == []
    assert {**copy.document, "authorities": ["report.publish"]} == source.document


def test_checkpoint_refuses_an_existing_target(h: Harness) -> None:
    ref = started(h)
    other = started(h, "other.json")
    before = (h.store.load(ref), h.store.load(other))
    failure = error(lambda: h.store.checkpoint(ref, other))
    assert failure.code == "run-target-exists"
    assert failure.message == f"Checkpoint refuses to replace an existing path: {other}"
    assert (h.store.load(ref), h.store.load(other)) == before
    assert error(lambda: h.store.checkpoint(ref, ref)).code == "run-target-exists"


def test_checkpoint_of_a_missing_run_creates_nothing(h: Harness) -> None:
    target = h.ref("cp.json")
    assert error(lambda: h.store.checkpoint(h.ref("nope.json"), target)).code == (
        "file-read-failed"
    )
    assert not h.store.exists(target)


def test_resume_starts_a_new_file_from_a_checkpoint(h: Harness) -> None:
    ref = started(h, authorities=["report.publish"])
    h.store.record(ref, "report/draft", "completed")
    checkpoint = h.ref("cp/c1.json")
    h.store.checkpoint(ref, checkpoint)
    h.store.record(ref, "report/publish", "failed")  # the original goes on by itself
    resumed = h.store.resume(checkpoint, h.ref("resumed.json"))
    assert resumed.id == "run-1"
    assert resumed.authorities == []
    assert resumed.outcomes.keys() == {"report/draft"}
    assert [e["type"] for e in resumed.events] == [
        "run.started",
        "node.outcome-recorded",
        "run.checkpointed",
        "run.resumed",
    ]
    assert resumed.events[-1] == {
        "sequence": 4,
        "at": stamp(4),
        "type": "run.resumed",
        "detail": {"checkpoint": "c1.json"},
    }
    assert resumed.updated_at == stamp(4)
    assert h.store.load(h.ref("resumed.json")) == resumed
    assert h.store.load(checkpoint).events[-1]["type"] == "run.checkpointed"  # unchanged
    failure = error(lambda: h.store.resume(checkpoint, ref))
    assert failure.code == "run-target-exists"
    assert failure.message == f"Run resume refuses to replace an existing path: {ref}"
    assert error(lambda: h.store.resume(h.ref("nope"), h.ref("x"))).code == "file-read-failed"
    assert not h.store.exists(h.ref("x"))


def test_events_are_the_log(h: Harness) -> None:
    ref = started(h)
    h.store.record(ref, "report/draft", "completed")
    h.store.set_facts(ref, {"a": 1})
    events = h.store.events(ref)
    assert [e["sequence"] for e in events] == [1, 2, 3]
    assert events == h.store.load(ref).events


# -- conformance: evaluation input --------------------------------------------------------


def test_evaluation_input_overlays_the_run(h: Harness, tmp_path: Path) -> None:
    ref = started(
        h, facts={"report": {"digest": "a"}, "keep": 1}, authorities=["z"], workspace=tmp_path
    )
    h.store.record(ref, "report/draft", "partial")
    h.store.record(ref, "report/approve", "completed")
    run = h.store.load(ref)
    plain = evaluation_input(run)
    assert plain.facts == run.facts
    assert plain.outcomes == run.outcomes
    assert tuple(plain.authorities) == ("z",)
    assert plain.workspace == str(tmp_path)
    state = evaluation_input(
        run,
        facts={"report": {"digest": "b"}},
        outcomes={"report/draft": "completed"},
        authorities=["a", "z"],
        provider="example.weekly-report",
    )
    assert state.facts == {"report": {"digest": "b"}, "keep": 1}
    assert state.outcomes == {
        "report/draft": "completed",
        "report/approve": run.outcomes["report/approve"],
    }
    assert tuple(state.authorities) == ("a", "z")
    failure = error(lambda: evaluation_input(run, provider="example.other"))
    assert (failure.code, failure.message) == (
        "run-provider-mismatch",
        "Run run-1 targets example.weekly-report, not example.other",
    )
    assert error(lambda: evaluation_input(run, facts=[1])).code == "json-object-required"  # type: ignore[arg-type]


def test_a_run_drives_the_vm(h: Harness) -> None:
    import agent_graph

    manifest = Path(__file__).resolve().parents[2] / "examples/weekly-report/provider.yaml"
    program = agent_graph.compile_provider(manifest)
    ref = started(h)
    first = program.evaluate("report", "default", evaluation_input(h.store.load(ref)))
    assert first.primary is not None
    assert first.primary.node.id == "draft"
    h.store.set_facts(ref, {"report": {"digest": "sha256:1f"}})
    h.store.record(ref, "report/draft", "completed")
    second = program.evaluate("report", "default", evaluation_input(h.store.load(ref)))
    assert second.primary is not None
    assert second.primary.node.id == "approve"


# -- both stores write the same documents -------------------------------------------------


def _script(store: RunStore, ref: Callable[[str], str]) -> list[Run]:
    a = ref("a.json")
    store.start(a, provider="p", graph="g", facts={"n": 1.0, "z": -0.0}, authorities=["x"])
    store.record(a, "g/n", "completed", {"big": 2**60, "t": (1, 2)})
    store.set_facts(a, {"m": "é"})
    store.checkpoint(a, ref("cp.json"))
    store.resume(ref("cp.json"), ref("b.json"))
    return [store.load(ref(name)) for name in ("a.json", "cp.json", "b.json")]


def test_file_and_memory_stores_agree(tmp_path: Path) -> None:
    on_disk = make("file", tmp_path)
    in_memory = make("memory", tmp_path)
    files = _script(on_disk.store, on_disk.ref)
    memory = _script(in_memory.store, in_memory.ref)
    assert [r.document for r in files] == [r.document for r in memory]
    facts = files[0].facts
    assert facts["n"] == 1
    assert isinstance(facts["n"], int)
    assert math.copysign(1.0, facts["z"]) < 0
    assert files[0].outcomes["g/n"]["detail"] == {"big": float(2**60), "t": [1, 2]}


def test_importing_runs_stays_light() -> None:
    code = (
        "import sys, agent_graph.runs, agent_graph.vm;"
        "heavy = {'yaml', 'jsonschema', 'jsonschema_rs', 'click', 'lark'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "[]"


def test_written_file_is_indented_json_with_a_newline(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    run = FileRunStore().start(path, provider="p", graph="g", facts={"ü": 1})
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(run.document, indent=2, ensure_ascii=False) + "\n"
    assert text.startswith('{\n  "schema": "agent-graph.run.v1",\n')


# -- files: damaged Runs are reported and left untouched ----------------------------------


def _valid_text(tmp_path: Path) -> str:
    path = tmp_path / "valid.json"
    FileRunStore().start(path, provider="p", graph="g")
    return path.read_text(encoding="utf-8")


def _damaged(tmp_path: Path) -> dict[str, tuple[str, str]]:
    valid = _valid_text(tmp_path)
    doc = json.loads(valid)
    first = doc["events"][0]
    gap = {**doc, "events": [first, {**first, "type": "facts.updated", "sequence": 3}]}
    return {
        "truncated": (valid[: len(valid) // 2], "parse-failed"),
        "empty": ("", "parse-failed"),
        "not-json": ("schema: agent-graph.run.v1\n", "parse-failed"),
        "nan": (valid.replace('"facts": {}', '"facts": {"x": NaN}'), "parse-failed"),
        "array": ("[]\n", "schema-invalid"),
        "schema-invalid": (
            valid.replace('"outcomes": {}', '"outcomes": {"g/n": "x"}'),
            "schema-invalid",
        ),
        "newer": (
            valid.replace("agent-graph.run.v1", "agent-graph.run.v2"),
            "run-version-unsupported",
        ),
        "gap": (json.dumps(gap), "run-invalid"),
    }


@pytest.mark.parametrize(
    "case", ["truncated", "empty", "not-json", "nan", "array", "schema-invalid", "newer", "gap"]
)
def test_damaged_run_files_are_reported_and_untouched(tmp_path: Path, case: str) -> None:
    text, code = _damaged(tmp_path)[case]
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    store = FileRunStore()
    operations: list[Callable[[], object]] = [
        lambda: store.load(path),
        lambda: store.record(path, "g/n", "completed"),
        lambda: store.set_facts(path, {"a": 1}),
        lambda: store.clear_authorities(path),
        lambda: store.checkpoint(path, tmp_path / "cp.json"),
        lambda: store.resume(path, tmp_path / "resumed.json"),
        lambda: store.events(path),
    ]
    for operation in operations:
        failure = error(operation)
        assert failure.code == code, failure.message
        assert str(path) in failure.message
    assert path.read_text(encoding="utf-8") == text
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".run.json.lock", ".valid.json.lock", "run.json", "valid.json"]


def test_schema_problems_point_at_line_and_column(tmp_path: Path) -> None:
    text = _valid_text(tmp_path).replace('"outcomes": {}', '"outcomes": {"g/n": "completed"}')
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    failure = error(lambda: FileRunStore().load(path))
    assert failure.message == f"{path} does not match run.schema.json"
    first = failure.diagnostics[0]
    assert first.pointer == "/outcomes/g~1n"
    assert first.line == text.splitlines().index('  "outcomes": {"g/n": "completed"},') + 1


def test_gap_points_at_the_event(tmp_path: Path) -> None:
    text, _ = _damaged(tmp_path)["gap"]
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    failure = error(lambda: FileRunStore().load(path))
    assert failure.diagnostics[0].pointer == "/events/1/sequence"
    assert "event 2 has sequence 3, which skips 2" in failure.message


def test_a_yaml_run_is_read_and_rewritten_as_json(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(
        "schema: agent-graph.run.v1\nid: r\nprovider: p\ngraph: g\nentry: default\n"
        "createdAt: 2025-01-02T03:04:05.000Z\nupdatedAt: '2025-01-02T03:04:05.000Z'\n"
        "facts: {on: yes}\noutcomes: {}\nauthorities: []\n"
        "events: [{sequence: 1, at: '2025-01-02T03:04:05.000Z', type: run.started}]\n",
        encoding="utf-8",
    )
    store = FileRunStore()
    assert store.load(path).facts == {"on": "yes"}  # YAML 1.2: yes stays a string
    store.record(path, "g/n", "completed")
    assert json.loads(path.read_text(encoding="utf-8"))["events"][1]["node"] == "g/n"


def test_missing_directory_and_directory_targets(tmp_path: Path) -> None:
    store = FileRunStore()
    assert error(lambda: store.load(tmp_path / "no" / "run.json")).code == "file-read-failed"
    assert not (tmp_path / "no").exists()  # a failed read creates no lock file either
    assert error(lambda: store.load(tmp_path)).code == "file-read-failed"
    run = store.start(tmp_path / "deep" / "er" / "run.json", provider="p", graph="g")
    assert store.load(tmp_path / "deep" / "er" / "run.json") == run
