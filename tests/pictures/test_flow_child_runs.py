"""``agc flow graph PARENT --state RUN`` draws child Flows from their child Run records.

Issue 26 item 14: the child Flows' nodes showed "not run" while the edge into the child
was green. A parent runs ``child`` twice (a retry loop) and ``child`` runs ``grand``;
every child record is read beside the parent's, its visits drawn in the child's
cluster. A missing, damaged or forged child record is a warning and ``unknown``, never
a failed picture.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_graph import flow
from agent_graph.flow import AgentFailure
from cli_support import run
from flow_run_support import Crash, FakeAgent, agent, call, command, crash_when, package
from mermaid_syntax import check

LOOP = (
    "start((开始)) --> c[c]\nc -->|已完成| q[q]\nc -->|已失败| t[t]\n"
    "t -->|已执行| finish((结束))\nq -->|again| c\nq -->|done| finish\nq -->|skip| finish"
)


def _family(root: Path, x: str = command("x", "1")) -> Path:
    package(root, "grand", "start((开始)) --> z[z]\nz -->|已执行| finish((结束))",
            command("z", "process.stdout.write('z')"))  # fmt: skip
    package(
        root, "child",
        "start((开始)) --> x[x]\nx -->|已执行| g[g]\ng --> y[y]\ny -->|已执行| finish((结束))",
        x, call("g", "grand", plain=True), command("y", "1"),
    )  # fmt: skip
    return package(root, "parent", LOOP, call("c", "child"),
                   agent("q", "Again?", {"again": "Again.", "done": "Done.", "skip": "No."}),
                   command("t", "1"))  # fmt: skip


def _run(tmp_path: Path, *answers: Any, x: str = command("x", "1")) -> tuple[Path, Path]:
    parent = _family(tmp_path / "flows", x)
    (tmp_path / "proj").mkdir()
    state = tmp_path / "run.json"
    flow.run(parent, "t", state=state, agent=FakeAgent(*answers), cwd=tmp_path / "proj")
    return parent, state


def _draw(capsys: pytest.CaptureFixture[str], parent: Path, state: Path) -> tuple[str, str]:
    code, out, err = run(["flow", "graph", str(parent), "--state", str(state)], capsys)
    assert code == 0, err
    check(out)
    return out, err


def _node(out: str, label: str) -> tuple[str, str]:
    """(id, label) of the node whose label has ``label`` (``ref · kind``)."""
    (found,) = re.findall(rf'^\s*(n\d+)\S*?"([^"]*<br/>{re.escape(label)}<br/>[^"]*)"', out, re.M)
    return found[0], found[1]


def _status(out: str, node_id: str) -> str:
    for names, status in re.findall(r"^\s*class (\S+) (\S+)$", out, re.M):
        if node_id in names.split(","):
            return str(status)
    raise AssertionError(f"{node_id} has no status class")


def _cluster(out: str, flow_id: str) -> str:
    (title,) = re.findall(rf'subgraph c\d+\["(Flow {flow_id}\b[^"]*)"\]', out)
    return str(title)


def _records(state: Path) -> dict[str, Path]:
    """The child records beside ``state``, by the Flow each is a Run of."""
    found: dict[str, Path] = {}
    for path in sorted(state.parent.glob(f"{state.stem}.*.json")):
        found.setdefault(json.loads(path.read_text(encoding="utf-8"))["flow"], path)
    return found


def test_child_and_grandchild_visits_come_from_their_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent, state = _run(tmp_path, ("again", "x"), ("done", "y"))
    out, err = _draw(capsys, parent, state)
    assert err == ""
    assert "not run" not in out.replace(_node(out, "t · command")[1], "")
    for label in ("x · command", "y · command", "z · command"):
        node_id, text = _node(out, label)
        assert text.endswith("2 runs · last: 已执行"), text
        assert _status(out, node_id) == "visited"
    assert _node(out, "g · runs grand")[1].endswith("2 runs · last: 已完成")
    assert re.fullmatch(r"Flow child · 2 Runs, last run-\w+: completed", _cluster(out, "child"))
    assert re.fullmatch(r"Flow grand · 2 Runs, last run-\w+: completed", _cluster(out, "grand"))
    assert _node(out, "t · command")[1].endswith("not run")  # the 已失败 side never ran


def test_a_child_flow_never_started_is_not_run_and_its_start_edge_did_not_fire(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _family(tmp_path / "flows")  # child and grand, beside the gate
    graph = "start((开始)) --> q[q]\nq -->|go| c[c]\nq -->|skip| finish((结束))\nc --> finish"
    ask = agent("q", "Go?", {"go": "Go.", "skip": "No."})
    package(tmp_path / "flows", "gate", graph, ask, call("c", "child", plain=True))
    gate = tmp_path / "flows" / "gate"
    state = tmp_path / "run.json"
    flow.run(gate, "t", state=state, agent=FakeAgent(("skip", "no")), cwd=tmp_path)
    out, _ = _draw(capsys, gate, state)
    node_id, text = _node(out, "x · command")
    assert (text.endswith("not run"), _status(out, node_id)) == (True, "unreached")
    assert _cluster(out, "child") == "Flow child"
    edges = [line.strip() for line in out.splitlines() if re.search(r" -\.?-> ", line)]
    (into_x,) = [i for i, e in enumerate(edges) if re.fullmatch(rf"s\d+ --> {node_id}", e)]
    unfired = re.search(r"linkStyle (\S+) stroke:#9e9e9e$", out, re.M)
    assert unfired is not None
    assert str(into_x) in unfired.group(1).split(",")  # drawn grey, not green


def test_a_failed_child_is_drawn_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    step = agent("x", "Do x.", {"已执行": "Done."})
    parent, state = _run(tmp_path, AgentFailure("no model here"), x=step)
    out, _ = _draw(capsys, parent, state)
    node_id, text = _node(out, "x · new Agent")
    assert text.endswith("1 run<br/>▶ failed (agent_execution)"), text
    assert _status(out, node_id) == "failed"
    assert _node(out, "y · command")[1].endswith("not run")
    assert re.fullmatch(r"Flow child · Run run-\w+: failed", _cluster(out, "child"))
    assert _node(out, "t · command")[1].endswith("1 run · last: 已执行")


def test_an_interrupted_child_shows_its_current_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = _family(tmp_path / "flows")
    state = tmp_path / "run.json"

    def at_y(document: dict[str, Any]) -> bool:
        cursor = document.get("cursor") or {}
        return document["flow"] == "child" and cursor.get("node") == "y"

    with crash_when(monkeypatch, at_y), pytest.raises(Crash):
        flow.run(parent, "t", state=state, agent=FakeAgent(), cwd=tmp_path)
    out, _ = _draw(capsys, parent, state)
    node_id, text = _node(out, "y · command")
    assert "▶ current" in text, text
    assert _status(out, node_id) == "current"
    assert _node(out, "x · command")[1].endswith("1 run · last: 已执行")
    assert _node(out, "z · command")[1].endswith("1 run · last: 已执行")


@pytest.mark.parametrize("damage", ["truncated", "missing", "edited", "another-run"])
def test_an_unreadable_child_record_is_unknown_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    parent, state = _run(tmp_path, ("done", "y"))
    records = _records(state)
    child = records["child"]
    if damage == "truncated":
        child.write_bytes(child.read_bytes()[:100])
    elif damage == "missing":
        child.unlink()
    elif damage == "edited":
        child.write_text(child.read_text(encoding="utf-8").replace('"z"', '"Z"', 1)
                         .replace("已执行", "已失败", 1), encoding="utf-8")  # fmt: skip
    else:
        child.write_bytes(records["grand"].read_bytes())
    out, err = _draw(capsys, parent, state)
    (warning,) = err.splitlines()
    assert warning.startswith("warning: the child Run run-")
    assert "of Flow child is drawn as unknown: " in warning
    expected = {"truncated": "run-record-invalid", "missing": "file-missing",
                "edited": "run-record-modified", "another-run": "run-flow-mismatch"}  # fmt: skip
    assert f": {expected[damage]}: " in warning
    for label in ("x · command", "z · command"):
        node_id, text = _node(out, label)
        assert text.endswith("? unknown (child Run record unreadable)"), text
        assert _status(out, node_id) == "unknown"
    assert re.fullmatch(r"Flow child · Run run-\w+: unknown", _cluster(out, "child"))
    assert _cluster(out, "grand") == "Flow grand · Runs unknown"
    assert "Traceback" not in err


def test_a_readable_run_beside_an_unreadable_one_says_its_count_is_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent, state = _run(tmp_path, ("again", "x"), ("done", "y"))
    first = json.loads(state.read_text(encoding="utf-8"))
    name = next(v["childState"] for v in first["visits"] if "childState" in v)
    (tmp_path / name).unlink()
    out, err = _draw(capsys, parent, state)
    assert "file-missing" in err
    assert _node(out, "x · command")[1].endswith("1 run + unknown · last: 已执行")
