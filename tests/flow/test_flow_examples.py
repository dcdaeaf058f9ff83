"""The shipped Flow examples (``examples/flows/``): valid, listed, compiled to the Flow IR.

The compiled program is checked for what the runtime relies on (routes, forks and joins,
branch slots, child calls, mapped resources) and for the C.4 fingerprint's coverage;
the bytes round-trip through the shared codec and damaged bytes are refused. Each example
runs to completion with the answers file it ships (``answers.jsonl``, for ``script:``),
using every answer, and the README's one-command ``ship-release`` Run runs as printed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_graph import flow
from agent_graph.errors import AgentGraphError
from agent_graph.ir import flow_records as r
from cli_support import README, bash_block, ok_json, run, run_bash

ROOT = Path(__file__).resolve().parents[2]
FLOWS = ROOT / "examples" / "flows"
EXAMPLES = sorted(p.name for p in FLOWS.iterdir() if (p / "FLOW.md").is_file())


def test_there_are_the_four_examples() -> None:
    assert EXAMPLES == ["draft-review", "preflight", "repo-stats", "ship-release"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_each_example_checks_valid_without_warnings(name: str) -> None:
    assert flow.check(FLOWS / name) == []
    assert flow.check(FLOWS / name / "FLOW.md") == []


def test_flow_check_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok_json(["flow", "check", str(FLOWS / "ship-release")], capsys)
    assert doc == {
        "state": "valid",
        "flow": "ship-release",
        "nodes": 5,
        "children": ["preflight", "repo-stats"],
        "diagnostics": [],
    }
    assert ok_json(["flow", "check", str(FLOWS / "preflight")], capsys)["nodes"] == 7  # 6 + fork


def test_flow_check_human(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["flow", "check", str(FLOWS / "ship-release")], capsys)
    assert code == 0
    assert out == "Valid flow ship-release: 5 node(s); runs preflight, repo-stats\n"


def test_flow_list(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok_json(["flow", "list", str(FLOWS)], capsys)
    assert [f["id"] for f in doc["flows"]] == EXAMPLES
    first = doc["flows"][0]
    assert first["name"] == "Draft and review"
    assert first["path"] == str(FLOWS / "draft-review" / "FLOW.md")
    assert first["description"].startswith("An Agent drafts a short document")


def test_flow_list_defaults_to_dot_flows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(FLOWS, tmp_path / ".flows")
    monkeypatch.chdir(tmp_path)
    doc = ok_json(["flow", "list"], capsys)
    assert doc["flows"][0]["path"] == ".flows/draft-review/FLOW.md"


def _node(flow_record: r.Flow, ref: str) -> r.Node:
    return next(n for n in flow_record.nodes if n.ref == ref)


def test_the_parallel_example_lowers_forks_joins_and_branch_slots() -> None:
    program = flow.compile(FLOWS / "preflight")
    root = program.root
    (fork,) = root.forks
    assert fork.ref == "checks"
    assert [root.nodes[i].ref for i in fork.branches] == ["tests", "lint", "audit"]
    merge = root.nodes[fork.join]
    assert merge.ref == "merge"
    assert merge.join_of == 0
    assert all(root.nodes[i].branch_of == 0 for i in fork.branches)
    assert merge.command is not None
    slots = {s.path: s for s in merge.command.slots}
    assert {p: root.nodes[s.branch].ref for p, s in slots.items() if s.branch != -1} == {
        ("tests",): "tests",
        ("lint",): "lint",
        ("audit",): "audit",
    }
    assert slots[("change",)].parts == ("", "")  # "{outcome}": the input's text, whole
    assert merge.command.stdin == {
        "change": "{outcome}",
        "tests": None,
        "lint": None,
        "audit": None,
    }
    scope = _node(root, "scope")
    assert {(x.result, x.fork, x.node) for x in scope.routes} == {
        ("ready", 0, -1),
        ("nothing-to-check", -1, -1),
    }
    verdict = _node(root, "verdict")
    assert [
        (x.result, root.nodes[x.node].ref if x.node != -1 else None) for x in verdict.routes
    ] == [
        ("ship", None),
        ("fix", "scope"),
    ]
    tests = _node(root, "tests")
    assert tests.command is not None
    assert [a.script for a in tests.command.args] == ["scripts/run-npm-script.mjs", None]


def test_the_parent_example_lowers_both_call_forms_and_its_closure() -> None:
    program = flow.compile(FLOWS / "ship-release")
    assert [f.id for f in program.flows] == ["ship-release", "repo-stats", "preflight"]
    root = program.root
    assert [program.flows[i].id for i in root.children] == ["preflight", "repo-stats"]
    stats, checks = _node(root, "stats"), _node(root, "preflight")
    assert stats.call is not None
    assert checks.call is not None
    assert stats.call.plain
    assert not stats.call.has_task
    assert [x.result for x in stats.routes] == ["已完成"]  # C.25
    assert not checks.call.plain
    assert program.flows[checks.call.flow].id == "preflight"
    assert checks.call.task == "Preflight for release {outcome}"
    assert [(s.path, s.parts) for s in checks.call.slots] == [((), ("Preflight for release ", ""))]
    assert sorted(x.result for x in checks.routes) == ["已失败", "已完成"]
    notes = _node(root, "notes")
    assert notes.kind == r.AGENT_NEW
    resources = [p.text for p in notes.prompt if p.kind == r.RESOURCE_PIECE]
    assert resources == ["references/notes-template.md"]
    assert [p.kind for p in notes.prompt].count(r.OUTCOME_PIECE) == 1
    assert [x.name for x in notes.results] == ["written"]
    assert notes.results[0].description.startswith("RELEASE_NOTES.md is written.")


def test_prompt_pieces_keep_fragments_and_text_around_links() -> None:
    root = flow.compile(FLOWS / "draft-review").root
    review = _node(root, "review")
    assert review.kind == r.AGENT_REUSE
    (link,) = [p for p in review.prompt if p.kind == r.RESOURCE_PIECE]
    assert (link.text, link.fragment) == ("references/style-guide.md", "#limits")
    rebuilt = "".join(
        "{outcome}" if p.kind == r.OUTCOME_PIECE else p.text + p.fragment for p in review.prompt
    )
    source = (FLOWS / "draft-review" / "FLOW.md").read_text(encoding="utf-8")
    assert rebuilt in source  # the prompt is the block, nothing added or lost


def test_the_program_round_trips_and_damage_is_refused() -> None:
    program = flow.compile(FLOWS / "ship-release")
    data = program.to_bytes()
    again = flow.FlowProgram.from_bytes(data, expected_digest=program.digest)
    assert again.record == program.record
    assert again.to_bytes() == data
    assert flow.compile(FLOWS / "ship-release").digest == program.digest  # deterministic
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF
    for bad in (bytes(damaged), data[:-7], b"", b"\x00" * 40):
        with pytest.raises(AgentGraphError) as caught:
            flow.FlowProgram.from_bytes(bad)
        assert caught.value.code == "ir-corrupt"
    with pytest.raises(AgentGraphError) as caught:
        flow.FlowProgram.from_bytes(data, expected_digest="sha256:" + "0" * 64)
    assert caught.value.code == "ir-corrupt"


def test_a_provider_program_is_not_a_flow_program() -> None:
    import agent_graph

    provider = agent_graph.compile_provider(ROOT / "examples" / "weekly-report" / "provider.yaml")
    with pytest.raises(AgentGraphError) as caught:
        flow.FlowProgram.from_bytes(provider.to_bytes())
    assert caught.value.code == "ir-corrupt"


def test_the_fingerprint_covers_resources_and_children_not_other_files(tmp_path: Path) -> None:
    shutil.copytree(FLOWS, tmp_path / "flows")
    parent = tmp_path / "flows" / "ship-release"
    first = flow.compile(parent)
    assert first.record.fingerprint_version == 1
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", first.fingerprint)
    assert [f.path for f in first.root.files] == ["FLOW.md", "references/notes-template.md"]
    (parent / "README.md").write_text("notes for maintainers\n", encoding="utf-8")
    (parent / "tests").mkdir()
    (parent / "tests" / "case.json").write_text("{}", encoding="utf-8")
    assert flow.compile(parent).fingerprint == first.fingerprint
    helper = tmp_path / "flows" / "preflight" / "scripts" / "lib" / "helper.mjs"
    helper.parent.mkdir()
    helper.write_text("export const x = 1;\n", encoding="utf-8")  # unreferenced: still counted
    second = flow.compile(parent)
    assert second.fingerprint != first.fingerprint
    assert second.root.files == first.root.files  # the parent's own files did not change
    child = second.flow("preflight")
    assert "scripts/lib/helper.mjs" in [f.path for f in child.files]
    script = parent / "references" / "notes-template.md"
    script.write_bytes(script.read_bytes().replace(b"\n", b"\r\n"))  # line endings count
    assert flow.compile(parent).fingerprint != second.fingerprint


def test_the_flows_page_check_command_runs_as_written(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "flows.md").read_text(encoding="utf-8")
    section = text.split("\n## The examples", 1)[1].split("\n## ", 1)[0]
    (command,) = re.findall(r"```bash\n(agc flow .*?)\n```", section, re.S)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    done = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["state"] == "valid"
    assert document["children"] == ["preflight", "repo-stats"]


def _agent_visits(state: Path) -> int:
    """Agent-step visits completed in the Run at ``state`` and in its child Runs (their
    records are ``<stem>.<runId>.json`` beside it)."""
    count = 0
    for record in [state, *state.parent.glob(f"{state.stem}.run-*.json")]:
        document = json.loads(record.read_text(encoding="utf-8"))
        count += sum(
            1
            for visit in document["visits"]
            if visit["status"] == "completed" and visit["kind"] in ("agent-new", "agent-reuse")
        )
    return count


@pytest.mark.parametrize("name", EXAMPLES)
def test_each_example_completes_with_the_answers_it_ships(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = FLOWS / name / "answers.jsonl"
    lines = [line for line in answers.read_text(encoding="utf-8").splitlines() if line.strip()]
    project, runs = tmp_path / "project", tmp_path / "runs"
    project.mkdir()
    runs.mkdir()
    state = runs / "run.json"
    summary = ok_json(
        ["flow", "run", str(FLOWS / name), "--task", "Release 1.4.0", "--cwd", str(project),
         "--agent", f"script:{answers}", "--state", str(state)],
        capsys,
    )  # fmt: skip
    assert summary["state"] == "completed", summary
    assert summary["flow"] == name
    assert _agent_visits(state) == len(lines)  # every answer used, none left over
    program = flow.compile(FLOWS / name)  # its closure: the child Flows' steps too
    kinds = {node.kind for f in program.flows for node in f.nodes}
    assert bool(lines) == bool(kinds & {r.AGENT_NEW, r.AGENT_REUSE})  # empty: no Agent step


def test_the_readme_runs_ship_release_with_its_answers_in_one_command(tmp_path: Path) -> None:
    block = bash_block("Try an Agent Flow without a model", README)
    (command,) = block.strip().splitlines()
    assert "--agent script:examples/flows/ship-release/answers.jsonl" in command
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    done = run_bash(command, tmp_path)  # from the (copied) repository root, as printed
    assert "Run run-" in done.stdout
    assert "of ship-release: completed" in done.stdout
    assert "Result: Version 1.4.0 is out." in done.stdout
    assert (tmp_path / "ship-release-run.json").is_file()
