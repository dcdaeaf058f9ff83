"""The session without the protocol: owners, SKILL.md bindings, stale diagnostics."""

from __future__ import annotations

import shutil
from pathlib import Path

from agent_graph.lsp.owners import owner_of
from agent_graph.lsp.session import Session

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_file_belongs_to_the_nearest_provider_and_a_flow_to_its_package(
    tmp_path: Path,
) -> None:
    outer = Path(shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "outer"))
    inner = Path(shutil.copytree(EXAMPLES / "review-desk", outer / "nested"))
    assert owner_of(outer / "graphs" / "report.yaml") is not None
    assert owner_of(outer / "graphs" / "report.yaml").path == outer / "provider.yaml"  # type: ignore[union-attr]
    assert owner_of(inner / "graphs" / "desk.yaml").path == inner / "provider.yaml"  # type: ignore[union-attr]
    flow = owner_of(EXAMPLES / "flows" / "repo-stats" / "FLOW.md")
    assert flow is not None
    assert (flow.kind, flow.path) == ("flow", EXAMPLES / "flows" / "repo-stats")
    assert owner_of(tmp_path / "loose.yaml") is None


def test_a_skill_outside_the_provider_belongs_to_the_one_its_locator_names(
    tmp_path: Path,
) -> None:
    root = Path(shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "weekly"))
    skill = tmp_path / "skills" / "weekly" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    text = (root / "skills" / "weekly-report" / "SKILL.md").read_text(encoding="utf-8")
    skill.write_text(
        text.replace("path:../../provider.yaml", "path:../../weekly/provider.yaml"),
        encoding="utf-8",
    )
    owner = owner_of(skill)
    assert owner is not None
    assert owner.path == root / "provider.yaml"
    session = Session()
    lines = skill.read_text(encoding="utf-8").split("\n")
    row = next(i for i, line in enumerate(lines) if "agent-graph.graph:" in line)
    found = session.definition(skill, row, lines[row].index("report") + 1)
    assert found is not None
    assert (found.path, found.line) == (root / "graphs" / "report.yaml", 1)


def test_a_file_whose_problem_is_fixed_gets_an_empty_list(tmp_path: Path) -> None:
    root = Path(shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "weekly"))
    graph = root / "graphs" / "report.yaml"
    catalog = root / "codes.yaml"
    text = catalog.read_text(encoding="utf-8")
    session = Session()
    session.update(catalog, text.replace("code: route.report.publish", "code: route.report.pub"))
    first = session.diagnostics(catalog)
    assert [f.diagnostic.code for f in first[graph]] == ["route-reason-code-missing"]
    session.update(catalog, text)
    again = session.diagnostics(catalog)
    assert again == {graph: [], catalog: []}
