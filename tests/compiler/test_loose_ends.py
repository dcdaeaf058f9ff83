"""Warnings for what validates in the reference and fails later (beyond it, issue 23).

A Skill inside the Provider bound to a Graph or Entry the Provider lacks, and a command
Action running a Provider file its ``files:`` does not list (so a bundle leaves it out),
are positioned warnings at ``agc validate`` and ``agc build``; verdicts stay the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import agent_graph
from cli_support import run

WEEKLY = Path(__file__).resolve().parents[2] / "examples" / "weekly-report"
BINDING = "skills/weekly-report/SKILL.md"
PUBLISH = "actions/publish.yaml"


@pytest.fixture
def weekly(tmp_path: Path) -> Path:
    root = tmp_path / "weekly"
    shutil.copytree(WEEKLY, root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def warnings_of(root: Path) -> list[tuple[str, str, int | None, int | None]]:
    found = agent_graph.check_provider(root / "provider.yaml")
    assert all(d.severity == "warning" for d in found), found
    return [(d.code, d.path or "", d.line, d.column) for d in found]


def test_the_shipped_example_has_no_loose_ends(weekly: Path) -> None:
    assert warnings_of(weekly) == []


def test_a_skill_bound_to_a_missing_graph(weekly: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(weekly / BINDING, "agent-graph.graph: report", "agent-graph.graph: reprot")
    assert warnings_of(weekly) == [("skill-graph-missing", BINDING, 6, 22)]
    code, out, _ = run(
        ["validate", "-m", str(weekly / "provider.yaml"), "--format", "json"], capsys
    )
    assert code == 0
    [diagnostic] = json.loads(out)["diagnostics"]
    assert diagnostic["severity"] == "warning"
    assert (
        "selects Graph reprot, which Provider example.weekly-report lacks"
        in (diagnostic["message"])
    )
    assert "(its Graphs: report)" in diagnostic["message"]


def test_a_skill_bound_to_a_missing_entry(weekly: Path) -> None:
    edit(weekly / BINDING, "agent-graph.entry: default", "agent-graph.entry: later")
    assert warnings_of(weekly) == [("skill-entry-missing", BINDING, 7, 22)]


def test_a_skill_bound_by_provider_id(weekly: Path) -> None:
    edit(
        weekly / BINDING,
        "agent-graph: path:../../provider.yaml",
        "agent-graph: provider:example.weekly-report",
    )
    edit(weekly / BINDING, "agent-graph.graph: report", "agent-graph.graph: nope")
    assert [w[0] for w in warnings_of(weekly)] == ["skill-graph-missing"]


def test_a_skill_bound_to_another_provider_is_not_ours_to_check(weekly: Path) -> None:
    edit(weekly / BINDING, "agent-graph: path:../../provider.yaml", "agent-graph: path:../x.yaml")
    edit(weekly / BINDING, "agent-graph.graph: report", "agent-graph.graph: nope")
    assert warnings_of(weekly) == []
    edit(weekly / BINDING, "agent-graph: path:../x.yaml", "agent-graph: provider:someone.else")
    assert warnings_of(weekly) == []


def test_an_unlisted_command_script(weekly: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(weekly / PUBLISH, "files:\n  - scripts/publish-report.sh\n", "")
    assert warnings_of(weekly) == [("action-file-unlisted", PUBLISH, 6, 10)]
    manifest = str(weekly / "provider.yaml")
    code, out, _ = run(["build", str(weekly.parent / "out"), "-m", manifest], capsys)
    assert code == 0
    [line] = [line for line in out.splitlines() if "action-file-unlisted" in line]
    assert line.startswith(f"{PUBLISH}:6:10: warning: action-file-unlisted: Action report.publish")
    assert "add `- scripts/publish-report.sh` under files:" in line
    assert not (weekly.parent / "out" / "scripts" / "publish-report.sh").exists()


@pytest.mark.parametrize(
    ("command", "cwd", "warned"),
    [
        ("sh scripts/publish-report.sh --now", "provider", True),
        ("./scripts/publish-report.sh", "workspace", False),  # the user's workspace's file
        ('"$AGENT_GRAPH_PROVIDER_ROOT/scripts/publish-report.sh"', "workspace", True),
        ("${AGENT_GRAPH_PROVIDER_ROOT}/scripts/publish-report.sh", "workspace", True),
        ("./scripts/not-there.sh", "provider", False),  # no file: nothing to ship
        ("cat ../outside.sh", "provider", False),
        ("echo 'unclosed", "provider", False),
    ],
)
def test_which_command_words_name_provider_files(
    weekly: Path, command: str, cwd: str, warned: bool
) -> None:
    (weekly.parent / "outside.sh").write_text("echo\n", encoding="utf-8")
    edit(weekly / PUBLISH, "files:\n  - scripts/publish-report.sh\n", "")
    edit(
        weekly / PUBLISH, "command: ./scripts/publish-report.sh", f"command: {json.dumps(command)}"
    )
    edit(weekly / PUBLISH, "cwd: provider", f"cwd: {cwd}")
    codes = [w[0] for w in warnings_of(weekly)]
    assert codes == (["action-file-unlisted"] if warned else [])
