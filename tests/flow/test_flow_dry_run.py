"""``agc flow run --dry-run``: every prompt and command argv in graph order, with the task
and constants filled in and run-time values as placeholders; nothing runs, nothing is
written (docs/flow-runs.md, "Dry run")."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_support import bash_block, run, run_bash
from flow_run_support import agent, command, package

ROOT = Path(__file__).resolve().parents[2]
FLOWS = ROOT / "examples" / "flows"


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            info = path.stat()
            out[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns)
    return out


def heads(steps: list[dict[str, Any]]) -> list[str]:
    """``flow.node`` of every step, child Flows' steps where their call is."""
    out = []
    for step in steps:
        out.append(f"{step['flow']}.{step['node']}")
        if step["kind"] == "flow":
            out += heads(step["call"]["steps"])
    return out


def dry(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run(["flow", "run", *args, "--dry-run"], capsys)


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    shutil.copytree(FLOWS, tmp_path / "flows")
    return tmp_path / "flows"


def test_ship_release_json_lists_every_step_in_graph_order(
    examples: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    before = tree(tmp_path)
    state = tmp_path / "run.json"
    code, out, err = dry(
        [str(examples / "ship-release"), "--task", "Release 1.4.0", "--state", str(state),
         "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert tree(tmp_path) == before  # no record, no kept program, no lock, no output file
    document = json.loads(out)
    assert document["dryRun"] is True
    assert document["flow"] == "ship-release"
    assert document["task"] == "Release 1.4.0"
    assert heads(document["steps"]) == [
        "ship-release.stats",
        "repo-stats.count",
        "repo-stats.table",
        "ship-release.notes",
        "ship-release.preflight",
        "preflight.scope",
        "preflight.tests",
        "preflight.lint",
        "preflight.audit",
        "preflight.merge",
        "preflight.verdict",
        "ship-release.announce",
        "ship-release.triage",
    ]
    stats, notes, preflight, announce, triage = document["steps"]
    count, table = stats["call"]["steps"]
    assert stats["call"]["task"] == "Release 1.4.0"  # no task template: the input itself
    scripts = (examples / "repo-stats" / "scripts").resolve()
    assert count["argv"] == ["node", str(scripts / "count-files.mjs"), "--skip", "node_modules"]
    assert count["stdin"] == {"request": "Release 1.4.0"}  # the start node gets the task
    assert table["stdin"] == {"counted": "<content of count>"}
    assert notes["marker"] == "新建Agent"
    assert notes["input"] == {
        "task": False,
        "from": [{"node": "stats", "result": "已完成"}, {"node": "triage", "result": "retry"}],
    }
    template = (examples / "ship-release" / "references" / "notes-template.md").resolve()
    assert f"[the release note template]({template})." in notes["prompt"]
    assert (
        "\n<content of stats or triage>\n\nResults:\n- written: RELEASE_NOTES.md"
        in (notes["prompt"])
    )
    assert notes["next"] == [{"result": "written", "to": "preflight"}]
    assert preflight["call"]["task"] == "Preflight for release <content of notes>"
    scope, tests, lint, audit, merge, verdict = preflight["call"]["steps"]
    assert "last round):\nPreflight for release <content of notes>\n\nResults:" in scope["prompt"]
    assert scope["input"] == {"task": True, "from": [{"node": "verdict", "result": "fix"}]}
    assert scope["next"] == [
        {"result": "ready", "to": "checks"},
        {"result": "nothing-to-check", "to": "结束"},
    ]
    assert tests["stdin"] == {"change": "<content of scope>"}
    assert "stdin" not in lint
    assert audit["argv"][1].endswith("/preflight/scripts/audit-lockfile.mjs")
    assert merge["input"]["from"] == [{"node": "scope", "result": "ready"}]  # the round's input
    assert merge["stdin"] == {
        "change": "<content of scope>",
        "tests": {"result": "已执行", "content": "<content of tests>"},
        "lint": {"result": "已执行", "content": "<content of lint>"},
        "audit": {"result": "已执行", "content": "<content of audit>"},
    }
    assert verdict["marker"] == "复用Agent"
    assert [x["name"] for x in verdict["results"]] == ["ship", "fix"]
    assert announce["input"]["from"] == [{"node": "preflight", "result": "已完成"}]
    assert triage["input"]["from"] == [{"node": "preflight", "result": "已失败"}]
    assert not state.exists()


def test_the_text_form_shows_prompts_argv_and_placeholders(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = dry([str(examples / "draft-review"), "--task", "A note on tea"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Dry run of Flow draft-review: nothing is run, nothing is written."
    assert lines[1] == 'Task: "A note on tea"'
    steps = [line for line in lines[3:] if line and not line.startswith(" ")]
    assert steps == [
        "draft: Agent step (新建Agent)",
        "measure: command",
        "review: Agent step (复用Agent)",
        "revise: Agent step (复用Agent)",
    ]
    measure = lines.index("measure: command")
    script = (examples / "draft-review" / "scripts" / "measure.mjs").resolve()
    assert lines[measure + 1 : measure + 5] == [
        "  input: content of draft (drafted) or revise (revised)",
        f'  argv: ["node", "{script}", "DRAFT.md"]',
        '  stdin: {"note": "<content of draft or revise>"}',
        "  then: 已执行 → review",
    ]
    draft = lines.index("draft: Agent step (新建Agent)")
    assert lines[draft + 1] == "  input: the task; on later visits content of review (start-over)"
    assert "  │ A note on tea" in lines[draft:measure]
    assert "  then: drafted → measure; cannot-draft → 结束" in lines[draft:measure]


def test_the_task_reaches_command_arguments_and_nothing_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "ran"
    js = f"require('fs').writeFileSync({json.dumps(str(marker))}, 'x')"
    pkg = package(
        tmp_path,
        "argv",
        "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|ok| finish((结束))",
        command("a", args=["-e", js, "--", "task={outcome}!"]),
        agent("b", "Look at {outcome}", {"ok": "Fine."}),
    )
    code, out, err = dry([str(pkg), "--task", "t 1", "--format", "json"], capsys)
    assert code == 0, err
    a, b = json.loads(out)["steps"]
    assert a["argv"] == ["node", "-e", js, "--", "task=t 1!"]
    assert b["prompt"].startswith("Look at <content of a>\n\nResults:\n- ok: Fine.\n\n")
    assert not marker.exists()  # the command was not run (and no --agent was needed)


def test_a_flow_that_does_not_compile_is_its_coded_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pkg = package(tmp_path, "bad", "start((开始)) --> a[a]\na -->|ok| nowhere[nowhere]")
    code, out, err = dry([str(pkg), "--task", "t", "--format", "json"], capsys)
    assert code == 1
    assert out == ""
    envelope = json.loads(err)
    assert envelope["error"]["code"] == "flow-finish-missing"
    assert envelope["error"]["diagnostics"][0]["detail"]["line"] == 7  # positioned
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad"]


def test_without_dry_run_the_state_is_still_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["flow", "run", str(FLOWS / "repo-stats"), "--task", "t"], capsys)
    assert code == 2
    assert "--state" in err
    assert out == ""


def test_the_dry_run_command_of_flow_runs_md_runs_as_written(tmp_path: Path) -> None:
    block = bash_block("Dry run", ROOT / "docs" / "flow-runs.md")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    before = tree(tmp_path)
    done = run_bash(block, tmp_path)
    assert done.stdout.startswith("Dry run of Flow ship-release: nothing is run")
    assert '  child task: "Preflight for release <content of notes>"' in done.stdout
    assert tree(tmp_path) == before


def test_a_large_flow_lists_each_step_once_in_graph_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 1,500 steps, a fork every ten, each Agent step also routed to finish: the plan
    # meets every node by several routes and must still list it once, where BFS first
    # reaches it (the generator declares nodes in that order)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import flow_bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    pkg = flow_bench.write_flow(tmp_path, 1500)
    declared = re.findall(r"--> *(?:\|[^|]*\| *)?(\w+)\[", (pkg / "FLOW.md").read_text())
    code, out, err = dry([str(pkg), "--task", "t", "--format", "json"], capsys)
    assert code == 0, err
    steps = json.loads(out)["steps"]
    assert [step["node"] for step in steps] == list(dict.fromkeys(declared))
    assert len(steps) == len(set(declared)) > 1400
    join = next(step for step in steps if step["node"] == "j9")
    assert join["input"]["from"] == [{"node": "n8", "result": "next"}]  # once, not per branch
