"""``agc import skill|scripts|workflow``: the reference's graphs, written all-or-nothing.

Each import goes into a 0.3.1 Provider (a migrated copy of a committed 0.2 fixture, with
comments in provider.yaml and a catalog) and must validate with no warning; the graph
shape follows the reference rules (docs/import.md), derived here from
the input. With ``AGC_REFERENCE_CLI`` naming the Node CLI's ``dist/bin.js``, the same
imports are run there and the generated files compared as data.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_graph.documents.yaml12 import parse_yaml
from cli_support import error_of, ok_json, run
from tree_support import write_tree

LEGACY = Path(__file__).parents[1] / "legacy"


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def provider(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = shutil.copytree(LEGACY / "release-notes", tmp_path / "provider")
    assert run(["migrate", "-m", str(root), "--write"], capsys)[0] == 0
    (root / "codes.yaml").write_text(
        "# route reasons (kept by importers)\nschema: agent-graph.code-catalog.v1\ncodes:\n"
        "  - code: route.notes.draft  # drafting\n    kind: route-reason\n    summary: Draft.\n"
        "  - code: route.notes.review\n    kind: route-reason\n    summary: Review.\n"
    )
    manifest = (root / "provider.yaml").read_text()
    (root / "provider.yaml").write_text(manifest + "catalogs:\n  codes: codes.yaml\n")
    assert valid(root, capsys)
    return root


def valid(root: Path, capsys: pytest.CaptureFixture[str]) -> bool:
    doc = ok_json(["validate", "-m", str(root)], capsys)
    assert doc.get("diagnostics", []) == []
    return True


def load(path: Path) -> Any:
    return parse_yaml(path.read_text())[0]


WORKFLOW = """\
id: Release Flow
steps:
  - {id: build, command: make, description: Compile}
  - {id: lint, command: make lint, effect: read}
  - {id: test, command: make test, dependsOn: [build, lint]}
  - {id: docs, command: make docs, dependsOn: [build], effect: external}
"""


def expected_workflow_edges(steps: list[dict[str, Any]]) -> list[tuple[str, str]]:
    edges = [(d, s["id"]) for s in steps for d in s.get("dependsOn", [])]
    edges += [("start", s["id"]) for s in steps if not s.get("dependsOn")]
    used = {d for s in steps for d in s.get("dependsOn", [])}
    return edges + [(s["id"], "done") for s in steps if s["id"] not in used]


def test_workflow_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = provider(tmp_path, capsys)
    source = write_tree(tmp_path, {"wf.yaml": WORKFLOW}) / "wf.yaml"
    comments_before = [x for x in (root / "provider.yaml").read_text().splitlines() if "#" in x]
    doc = ok_json(["import", "workflow", str(source), "--into", str(root)], capsys)
    assert doc["state"] == "imported"
    assert doc["kind"] == "workflow"
    graph = load(root / "graphs/release-flow.yaml")
    steps = load(source)["steps"]
    assert graph["entrypoints"] == {"default": "start"}
    assert [n["id"] for n in graph["nodes"]] == ["start", *(s["id"] for s in steps), "done"]
    assert [(e["from"], e["to"]) for e in graph["edges"]] == expected_workflow_edges(steps)
    assert all(e["outcomes"] == ["completed"] for e in graph["edges"])
    assert graph["nodes"][-1] == {
        "id": "done",
        "kind": "terminal",
        "terminalOutcome": "completed",
        "join": "all",
    }
    for node in graph["nodes"][:-1]:
        assert node["reasonCode"] == f"route.release-flow.{node['id']}"
    assert load(root / "actions/release-flow-lint.yaml")["effect"] == "read"
    assert load(root / "actions/release-flow-build.yaml")["effect"] == "write"
    codes = [c["code"] for c in load(root / "codes.yaml")["codes"]]
    assert codes == sorted(codes)
    assert "route.release-flow.start" in codes
    text = (root / "provider.yaml").read_text()
    assert [x for x in text.splitlines() if "#" in x] == comments_before
    assert "graphs: [graphs/notes.yaml, graphs/release-flow.yaml]" in text
    assert "  - code: route.notes.draft  # drafting" in (root / "codes.yaml").read_text()
    assert (
        (root / "IMPORT_REPORT.md")
        .read_text()
        .startswith("# Import report\n\n## Workflow release-flow\n")
    )
    assert valid(root, capsys)


def test_scripts_and_skill_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = provider(tmp_path, capsys)
    src = write_tree(
        tmp_path / "src",
        {
            "a.py": "print(1)\n",
            "b.ts": "1\n",
            "helper/SKILL.md": "---\n# why it exists\ndescription: 'Helps'\n---\nBody.\n",
            "helper/notes.txt": "extra\n",
        },
    )
    ok_json(
        [
            "import",
            "scripts",
            str(src / "a.py"),
            str(src / "b.ts"),
            "--into",
            str(root),
            "--graph",
            "S",
        ],
        capsys,
    )
    graph = load(root / "graphs/s.yaml")
    assert [(e["from"], e["to"]) for e in graph["edges"]] == [
        ("step-1", "step-2"),
        ("step-2", "done"),
    ]
    assert load(root / "actions/s-1.yaml")["runtime"] == "python"
    assert load(root / "actions/s-2.yaml")["entry"] == "scripts/s/02-b.ts"
    assert load(root / "actions/s-2.yaml")["runtime"] == "bun"
    ok_json(["import", "skill", str(src / "helper/SKILL.md"), "--into", str(root)], capsys)
    skill = (root / "skills/helper/SKILL.md").read_text()
    assert skill.startswith("---\n# why it exists\ndescription: 'Helps'\nname: helper\nmetadata:\n")
    assert (root / "skills/helper/notes.txt").read_text() == "extra\n"
    graph = load(root / "graphs/helper.yaml")
    assert graph["nodes"][0]["description"] == "Use helper"
    assert graph["nodes"][0]["reasonCode"] == "route.helper.use-skill"
    assert valid(root, capsys)
    report = (root / "IMPORT_REPORT.md").read_text()
    assert "## Scripts s\n" in report
    assert "## Skill helper\n" in report


BAD_WORKFLOWS = {
    "cycle": (
        "steps:\n  - {id: a, command: x, dependsOn: [b]}\n"
        "  - {id: b, command: y, dependsOn: [a]}\n",
        "workflow-cycle",
        3,
    ),
    "duplicate": (
        "steps:\n  - {id: a, command: x}\n  - {id: a, command: y}\n",
        "workflow-step-duplicate",
        3,
    ),
    "reserved": (
        "steps:\n  - {id: a, command: x}\n  - {id: Start, command: y}\n",
        "workflow-step-id-reserved",
        3,
    ),
    "collision": (
        "steps:\n  - {id: Build, command: x}\n  - {id: build, command: y}\n",
        "workflow-step-id-collision",
        3,
    ),
    "missing": (
        "steps:\n  - {id: a, command: x, dependsOn: [nope]}\n",
        "workflow-dependency-missing",
        2,
    ),
    "invalid": ("steps:\n  - {id: a}\n", "workflow-invalid", 2),
    "empty": ("steps: []\n", "workflow-invalid", 1),
}


@pytest.mark.parametrize("case", sorted(BAD_WORKFLOWS))
def test_bad_workflow_writes_nothing(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, code, line = BAD_WORKFLOWS[case]
    root = provider(tmp_path, capsys)
    source = write_tree(tmp_path, {"wf.yaml": text}) / "wf.yaml"
    before = snapshot(root)
    error = error_of(["import", "workflow", str(source), "--into", str(root)], capsys)
    assert error["code"] == code
    assert error["diagnostics"][0]["detail"]["line"] == line
    assert snapshot(root) == before


def test_refusals_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = provider(tmp_path, capsys)
    src = write_tree(tmp_path / "src", {"plain/SKILL.md": "no frontmatter\n", "wf.yaml": WORKFLOW})
    before = snapshot(root)
    error = error_of(["import", "skill", str(src / "plain/SKILL.md"), "--into", str(root)], capsys)
    assert error["code"] == "frontmatter-missing"
    assert error["diagnostics"][0]["detail"]["line"] == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    error = error_of(["import", "workflow", str(src / "wf.yaml"), "--into", str(empty)], capsys)
    assert error["code"] == "file-read-failed"
    assert list(empty.iterdir()) == []
    (root / "actions/release-flow-docs.yaml").write_text("mine\n")
    before = snapshot(root)
    error = error_of(["import", "workflow", str(src / "wf.yaml"), "--into", str(root)], capsys)
    assert error["code"] == "import-target-exists"
    assert snapshot(root) == before


def test_catalog_code_of_another_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = provider(tmp_path, capsys)
    catalog = root / "codes.yaml"
    catalog.write_text(
        catalog.read_text()
        + "  - code: route.s.step-1\n    kind: diagnostic\n    summary: Taken.\n"
    )
    script = write_tree(tmp_path / "src", {"a.sh": "true\n"}) / "a.sh"
    before = snapshot(root)
    error = error_of(
        ["import", "scripts", str(script), "--into", str(root), "--graph", "s"], capsys
    )
    assert error["code"] == "route-reason-code-kind-invalid"
    assert snapshot(root) == before


def test_same_graphs_as_the_node_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli = os.environ.get("AGC_REFERENCE_CLI")
    if not cli or not Path(cli).is_file() or shutil.which("node") is None:
        pytest.skip("AGC_REFERENCE_CLI (the Node CLI's dist/bin.js) is not set")
    src = write_tree(
        tmp_path / "src",
        {
            "wf.yaml": WORKFLOW,
            "a.py": "print(1)\n",
            "b.sh": "true\n",
            "kit/SKILL.md": "---\nname: kit\ndescription: A kit.\n---\nUse it.\n",
        },
    )
    roots = {}
    for who in ("node", "python"):
        root = tmp_path / who
        subprocess.run(
            ["node", cli, "init", str(root), "--id", "cmp"], check=True, capture_output=True
        )
        for args in (
            ["workflow", str(src / "wf.yaml")],
            ["scripts", str(src / "a.py"), str(src / "b.sh")],
            ["skill", str(src / "kit/SKILL.md")],
        ):
            command = [*args, "--into", str(root)]
            if who == "node":
                subprocess.run(["node", cli, "import", *command], check=True, capture_output=True)
            else:
                assert run(["import", *command], capsys)[0] == 0
        roots[who] = root
    files = sorted(p.relative_to(roots["node"]).as_posix() for p in roots["node"].rglob("*.yaml"))
    assert files == sorted(
        p.relative_to(roots["python"]).as_posix() for p in roots["python"].rglob("*.yaml")
    )
    for rel in files:
        assert load(roots["python"] / rel) == load(roots["node"] / rel), rel
    from agent_graph.documents.sources import read_markdown

    skills = [read_markdown(r / "skills/kit/SKILL.md", display="SKILL.md") for r in roots.values()]
    assert skills[0].value == skills[1].value
    assert skills[0].body == skills[1].body
