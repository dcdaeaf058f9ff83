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


def test_completion_contexts_from_the_text_before_the_cursor() -> None:
    from agent_graph.lsp.complete import context

    lines = [
        "entrypoints:",
        "  default: dr",
        "nodes:",
        "  - id: draft",
        "    resources:",
        "      required:",
        "        - proc",
        "      recommended: [resources/a.md, ",
        "    reasonCode: route.",
        "  - { from: a, to: ",
    ]
    assert context(lines, 1, len(lines[1])) == "default"
    assert context(lines, 6, len(lines[6])) == "required"
    assert context(lines, 7, len(lines[7])) == "recommended"
    assert context(lines, 8, len(lines[8])) == "reasonCode"
    assert context(lines, 9, len(lines[9])) == "to"
    assert context(lines, 3, 4) == "nodes"  # a new item of nodes: no reference there
    assert context(["name: x"], 0, 2) is None  # inside a key


def test_completion_offers_resource_ids_and_entry_targets(tmp_path: Path) -> None:
    root = Path(shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "weekly"))
    graph = root / "graphs" / "report.yaml"
    lines = graph.read_text(encoding="utf-8").split("\n")
    session = Session()
    entry = lines.index("  default: draft")
    offered = {i.label for i in session.complete(graph, entry, len("  default: "))}
    assert offered == {"draft", "approve", "publish", "check-publication", "done"}
    required = lines.index("        - resources/procedures/draft-report.md")
    items = session.complete(graph, required, len("        - "))
    ids = {i.label for i in items if i.kind == "resource"}
    assert ids == {
        "diagnostic.report.publication-unverified",
        "procedure.report.check-publication",
        "procedure.report.draft",
        "procedure.report.publish",
    }
    assert "resources/procedures/draft-report.md" in {i.label for i in items if i.kind == "file"}


def test_flow_hover_references_and_completion_after_an_arrow() -> None:
    entry = EXAMPLES / "flows" / "ship-release" / "FLOW.md"
    lines = entry.read_text(encoding="utf-8").split("\n")
    session = Session()
    row = next(i for i, line in enumerate(lines) if line.strip().startswith("triage -->|retry|"))
    column = lines[row].index("triage") + 1
    assert session.hover(entry, row, column) == (
        "**triage**: work node, section `## Triage the failed preflight`"
    )
    places = session.references(entry, row, column, True)
    written = sorted({(s.line, lines[s.line][s.start : s.end]) for s in places})
    assert [text for _, text in written].count("triage") == 3  # two edges and its declaration
    assert ("Triage the failed preflight") in [text for _, text in written]
    arrow = lines[row].index("-->") + len("-->|retry| ")
    assert "notes" in {i.label for i in session.complete(entry, row, arrow)}
    assert session.complete(entry, row, 2) == []


def test_hover_on_a_resource_reference_names_its_id_kind_and_file() -> None:
    graph = EXAMPLES / "weekly-report" / "graphs" / "report.yaml"
    lines = graph.read_text(encoding="utf-8").split("\n")
    row = lines.index("        - resources/procedures/draft-report.md")
    shown = Session().hover(graph, row, len("        - r"))
    assert shown == (
        "Resource **procedure.report.draft** (procedure): `resources/procedures/draft-report.md`"
    )


def test_did_you_mean_points_at_the_member_or_the_file_meant(tmp_path: Path) -> None:
    root = Path(shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "weekly"))
    action = root / "actions" / "draft.yaml"
    graph = root / "graphs" / "report.yaml"
    session = Session()
    text = graph.read_text(encoding="utf-8")
    session.update(graph, text.replace("    reasonCode: route.report.draft", "    reasonCod: x"))
    member = next(
        f
        for f in session.diagnostics(graph)[graph]
        if f.diagnostic.code == "schema.additionalProperties"
    )
    row = member.span.line
    assert session.lines(graph)[row][member.span.start : member.span.end] == "reasonCod"
    assert member.related == [(member.span, "did you mean reasonCode?")]
    session.update(graph, text)
    session.update(action, action.read_text(encoding="utf-8").replace("SKILL.md", "SKIL.md"))
    (missing,) = session.diagnostics(action)[action]
    (where, message) = missing.related[0]
    assert message == "did you mean skills/report-drafting/SKILL.md?"
    assert (where.path, where.line) == (root / "skills" / "report-drafting" / "SKILL.md", 0)


def test_a_child_flow_buffer_is_checked_with_the_flow_that_runs_it(tmp_path: Path) -> None:
    flows = Path(shutil.copytree(EXAMPLES / "flows", tmp_path / "flows"))
    parent = flows / "ship-release" / "FLOW.md"
    child = flows / "repo-stats" / "FLOW.md"
    session = Session()
    text = child.read_text(encoding="utf-8")
    session.update(child, text.replace("---\nname:", "---\nnome:", 1))
    found = session.diagnostics(parent)
    assert found[parent] == []
    assert [f.diagnostic.code for f in found[child]] == [
        "flow-name-empty",
        "flow-frontmatter-extra-key",
    ]
    assert found[child][0].diagnostic.path == "repo-stats/FLOW.md"  # as agc flow check says
    assert child.read_text(encoding="utf-8") == text
