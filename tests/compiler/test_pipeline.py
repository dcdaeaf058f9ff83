"""The pass table and the two host entry points, ``check_provider`` and ``compile_provider``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import agent_graph
from agent_graph.compiler import CHECKED, PROVIDER_PASSES, compile_manifest, pass_names
from agent_graph.errors import AgentGraphError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WEEKLY = EXAMPLES / "weekly-report" / "provider.yaml"


def test_the_table_lists_the_passes_in_the_order_they_run() -> None:
    assert pass_names() == [
        "read-manifest",
        "verify-bundle",
        "check-manifest",
        "load-catalog",
        "load-graphs",
        "resolve-references",
        "check-recursion",
        "check-reason-codes",
        "check-materializers",
        "check-skills",
        "check-loose-ends",
        "raise-collected",
        "digests",
        "verify-bundle-sources",
        "verify-bundle-ir",
        "lower",
        "encode",
    ]
    assert all(step.needs for step in PROVIDER_PASSES)
    assert CHECKED in pass_names()


def test_stop_after_leaves_the_state_of_that_pass_and_run_carries_on() -> None:
    state = compile_manifest(WEEKLY, stop_after="load-graphs")
    assert state.done == pass_names()[: pass_names().index("load-graphs") + 1]
    assert list(state.provider_loader.graphs) == ["report"]
    assert state.provider_loader.actions == {}  # resolve-references has not run
    assert state.provider is None
    assert state.ir is None
    compile_manifest(state)  # the rest of the table
    assert state.done == pass_names()
    assert state.data == agent_graph.compile_provider(WEEKLY).to_bytes()


def test_an_unknown_pass_name_is_refused() -> None:
    with pytest.raises(ValueError, match="no pass named 'lowering'"):
        compile_manifest(WEEKLY, stop_after="lowering")


def test_problems_are_raised_once_after_the_checks(tmp_path: Path) -> None:
    root = tmp_path / "weekly"
    shutil.copytree(WEEKLY.parent, root)
    graph = root / "graphs" / "report.yaml"
    graph.write_text(
        graph.read_text(encoding="utf-8").replace("actions/publish.yaml", "actions/publsh.yaml"),
        encoding="utf-8",
    )
    state = compile_manifest(root / "provider.yaml", stop_after="check-materializers")
    assert [p.code for p in state.sink.problems] == ["file-missing"]  # recorded, not raised
    with pytest.raises(AgentGraphError) as info:
        compile_manifest(state)
    assert info.value.code == "file-missing"
    assert state.done[-1] == "check-loose-ends"  # raise-collected stopped the run


def test_check_provider_returns_diagnostics_and_never_raises(tmp_path: Path) -> None:
    assert agent_graph.check_provider(WEEKLY) == []
    root = tmp_path / "weekly"
    shutil.copytree(WEEKLY.parent, root)
    graph = root / "graphs" / "report.yaml"
    graph.write_text(
        graph.read_text(encoding="utf-8").replace("to: approve }", "to: approveX }"),
        encoding="utf-8",
    )
    found = agent_graph.check_provider(root / "provider.yaml")
    assert found
    assert all(d.path == "graphs/report.yaml" for d in found)
    assert all(d.line is not None for d in found)
    missing = agent_graph.check_provider(tmp_path / "nowhere" / "provider.yaml")
    assert [d.code for d in missing] == ["file-missing"]


def test_check_provider_reports_warnings_of_a_valid_provider(tmp_path: Path) -> None:
    root = tmp_path / "weekly"
    shutil.copytree(WEEKLY.parent, root)
    manifest = root / "provider.yaml"
    text = manifest.read_text(encoding="utf-8")
    assert "agentGraph:" in text
    manifest.write_text(
        "\n".join(
            '  agentGraph: "^0.2.0"' if line.strip().startswith("agentGraph:") else line
            for line in text.splitlines()
        )
        + "\n",
        encoding="utf-8",
    )
    found = agent_graph.check_provider(manifest)
    assert [(d.code, d.severity) for d in found] == [("compatibility-range-excludes", "warning")]
    agent_graph.compile_provider(manifest)  # a warning does not stop compiling
