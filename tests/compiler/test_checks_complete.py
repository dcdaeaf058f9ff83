"""One run reports every problem (issue 10): across stages, Skills, unreachable nodes, hints.

* A schema-invalid graph is still checked where it is sound, and the files its nodes
  name are still loaded, so a typo does not hide a cycle, a missing Action file or an
  Action's own schema errors until it is fixed. The first problem (the envelope's
  ``error.code``) stays the one the reference throws first.
* A SKILL.md an agent Action names is read at load time (``check-skills``), positioned
  at the Action's ``/skill`` and in the SKILL.md.
* A node no edge path reaches from an entrypoint is a ``node-unreachable`` warning.
* A missing file close to an existing one, and a reason code close to a catalog code,
  say "did you mean …" in the message and the diagnostic's ``detail.hint``.
* An outcome key that names no node of the evaluated graph has a ``outcome-key-unknown``
  warning (:func:`agent_graph.vm.evaluate.outcome_key_warnings`), kept out of the
  reference's Evaluation document.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import agent_graph
from agent_graph.canonical import digest_bytes, digest_value
from agent_graph.cli import main
from agent_graph.compiler import compile_manifest, load_provider, pass_names
from agent_graph.compiler.provider.builder import build_bundle
from agent_graph.errors import AgentGraphError
from agent_graph.vm.evaluate import outcome_key_warnings
from tree_support import write_tree

PLACED = re.compile(r"^[^ :]+:\d+:\d+: ")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WEEKLY = EXAMPLES / "weekly-report"
RELEASE = EXAMPLES / "release-train"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def failure(manifest: Path) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as caught:
        load_provider(manifest)
    return caught.value


def located(error: AgentGraphError) -> list[tuple[str, str | None, str | None]]:
    """(code, path, pointer) of every diagnostic, in order."""
    return [(d.code, d.path, d.pointer) for d in error.diagnostics]


def placed(text: str) -> list[str]:
    """The ``path:line:column: code: message`` lines of human error output, in order."""
    return [line for line in text.splitlines() if PLACED.match(line)]


def copy_example(source: Path, into: Path) -> Path:
    shutil.copytree(source, into)
    return into


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# -- every stage in one run ---------------------------------------------------------------------

MANIFEST = """\
schema: agent-graph.provider.v1
id: issue.ten
version: 1.0.0
graphs:
  - graphs/main.yaml
catalogs:
  codes: codes.yaml
compatibility:
  agentGraph: ^0.3.0
"""

CODES = """\
schema: agent-graph.code-catalog.v1
codes:
  - code: route.main.draft
    kind: route-reason
    summary: Draft it.
  - code: route.main.publish
    kind: route-reason
    summary: Publish it.
"""

# node 0 has a misspelled satisfiedBy and names an Action without effect; node 1 names
# an Action file that does not exist; edges 0 and 1 close a flow cycle
GRAPH = """\
schema: agent-graph.graph.v1
id: main
entrypoints:
  default: draft
nodes:
  - id: draft
    kind: action
    reasonCode: route.main.draft
    action: actions/draft.yaml
    satisfiedby:
      - path: draft.digest
        exists: true
  - id: publish
    kind: action
    reasonCode: route.main.publish
    action: actions/publish.yaml
  - id: done
    kind: terminal
    terminalOutcome: completed
edges:
  - from: draft
    to: publish
  - from: publish
    to: draft
  - from: publish
    to: done
"""

DRAFT = """\
schema: agent-graph.action.v1
id: main.draft
runner: host
handler: main.draft
"""


@pytest.fixture
def staged(tmp_path: Path) -> Path:
    """The new user's Provider: problems the reference would find in four stages."""
    files = {
        "provider.yaml": MANIFEST,
        "codes.yaml": CODES,
        "graphs/main.yaml": GRAPH,
        "actions/draft.yaml": DRAFT,
    }
    return write_tree(tmp_path / "p", files) / "provider.yaml"


THE_OTHER_THREE = [
    ("graph-flow-cycle", "graphs/main.yaml", "/edges/1"),
    ("schema.required", "actions/draft.yaml", ""),
    ("file-missing", "graphs/main.yaml", "/nodes/1/action"),
]


def test_a_multi_stage_provider_shows_every_problem_in_one_run(staged: Path) -> None:
    error = failure(staged)
    # the first problem is still the graph's schema problem, exactly as before
    assert (error.code, error.message) == (
        "schema-invalid",
        "graphs/main.yaml does not match graph.schema.json",
    )
    assert located(error) == [
        ("schema.additionalProperties", "graphs/main.yaml", "/nodes/0/satisfiedby"),
        *THE_OTHER_THREE,
    ]
    # fixing the typo takes away its problem and nothing else
    graph = staged.parent / "graphs" / "main.yaml"
    edit(graph, "satisfiedby:", "satisfiedBy:")
    fixed = failure(staged)
    assert fixed.code == "graph-flow-cycle"
    assert located(fixed) == THE_OTHER_THREE


def test_the_first_problem_is_the_one_the_earliest_check_records(staged: Path) -> None:
    early = compile_manifest(staged, stop_after="load-graphs")
    first = early.sink.problems[0]
    error = failure(staged)
    assert (error.code, error.message) == (first.code, first.message)
    assert error.diagnostics[: len(first.diagnostics)] == first.diagnostics


def test_the_multi_stage_run_on_the_command_line(
    staged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["validate", "-m", str(staged), "--format", "json"], capsys)
    assert (code, out) == (1, "")
    envelope = json.loads(err)["error"]
    assert envelope["code"] == "schema-invalid"
    assert [d["code"] for d in envelope["diagnostics"]] == [
        "schema.additionalProperties",
        "graph-flow-cycle",
        "schema.required",
        "file-missing",
    ]
    code, out, err = run(["validate", "-m", str(staged)], capsys)
    assert (code, out) == (1, "")
    lines = placed(err)
    assert lines[0].startswith("graphs/main.yaml:10:5: schema.additionalProperties: ")
    assert lines[1:] == [
        "graphs/main.yaml:23:5: graph-flow-cycle: Graph main contains an implicit flow cycle; "
        "use a repeat edge: draft -> publish -> draft",
        lines[2],  # the Action's schema finding (its wording belongs to the schema module)
        "graphs/main.yaml:16:13: file-missing: action does not exist: "
        f"{staged.parent / 'actions' / 'publish.yaml'}",
    ]
    assert lines[2].startswith("actions/draft.yaml:1:1: schema.required: ")


def test_a_schema_invalid_node_still_has_its_reason_code_checked(staged: Path) -> None:
    edit(staged.parent / "graphs" / "main.yaml", "route.main.draft", "route.main.drafting")
    error = failure(staged)
    assert error.code == "schema-invalid"
    assert ("route-reason-code-missing", "graphs/main.yaml", "/nodes/0/reasonCode") in located(
        error
    )


def test_a_schema_invalid_edge_is_skipped_and_the_others_checked(tmp_path: Path) -> None:
    graph = GRAPH.replace(
        "  - from: publish\n    to: done\n",
        "  - from: publish\n    to: done\n    outcomes: [finished]\n"
        "  - from: done\n    to: draft\n",
    ).replace("satisfiedby", "satisfiedBy")
    files = {
        "provider.yaml": MANIFEST,
        "codes.yaml": CODES,
        "graphs/main.yaml": graph,
        "actions/draft.yaml": DRAFT.replace("runner: host", "runner: host\neffect: read"),
        "actions/publish.yaml": DRAFT.replace("draft", "publish").replace(
            "runner: host", "runner: host\neffect: write"
        ),
    }
    error = failure(write_tree(tmp_path / "p", files) / "provider.yaml")
    assert error.code == "schema-invalid"
    assert located(error) == [
        ("schema.enum", "graphs/main.yaml", "/edges/2/outcomes/0"),
        ("graph-terminal-edge-invalid", "graphs/main.yaml", "/edges/3"),
        ("graph-flow-cycle", "graphs/main.yaml", "/edges/1"),
    ]  # and no node-unreachable warning: the skipped edge may be the only way to a node


def test_a_graph_whose_ids_are_unknown_is_not_checked_and_not_called_missing(
    tmp_path: Path,
) -> None:
    manifest = MANIFEST.replace(
        "  - graphs/main.yaml\n", "  - graphs/main.yaml\n  - graphs/child.yaml\n"
    )
    graph = GRAPH.replace("satisfiedby", "satisfiedBy").replace(
        "  - id: publish\n    kind: action\n    reasonCode: route.main.publish\n"
        "    action: actions/publish.yaml\n",
        "  - id: publish\n    kind: subgraph\n    graph: child\n    entry: default\n",
    )
    child = "schema: agent-graph.graph.v1\nid: child\nentrypoints: {default: Start}\nnodes: []\n"
    files = {
        "provider.yaml": manifest,
        "codes.yaml": CODES,
        "graphs/main.yaml": graph,
        "graphs/child.yaml": child,
        "actions/draft.yaml": DRAFT.replace("runner: host", "runner: host\neffect: read"),
    }
    error = failure(write_tree(tmp_path / "p", files) / "provider.yaml")
    assert error.code == "graph-flow-cycle"  # main's, found before child.yaml is read
    codes = [code for code, _, _ in located(error)]
    assert codes[0] == "graph-flow-cycle"
    assert codes[1:], codes
    assert all(code.startswith("schema.") for code in codes[1:]), codes
    assert "subgraph-missing" not in codes  # child.yaml exists: it failed its schema


def test_a_bundle_keeps_checking_after_an_identity_mismatch(tmp_path: Path) -> None:
    source = copy_example(WEEKLY, tmp_path / "src")
    out = tmp_path / "bundle"
    build_bundle(load_provider(source / "provider.yaml"), out)
    shutil.rmtree(out / "ir")  # checked and compiled as it loads, like a Node-built bundle
    manifest = out / "manifest.json"
    edit(out / "provider.yaml", "version: 1.0.0", "version: 1.0.1")
    edit(out / "graphs" / "report.yaml", "to: approve }", "to: approvex }")
    value: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8"))
    for name in ("provider.yaml", "graphs/report.yaml"):
        digest = digest_bytes((out / name).read_bytes())
        for group in value.values():
            for entry in group if isinstance(group, list) else ():
                if isinstance(entry, dict) and entry.get("path") == name:
                    entry["digest"] = digest
    value["digest"] = digest_value({k: v for k, v in value.items() if k != "digest"})
    manifest.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    error = failure(manifest)
    assert error.code == "bundle-provider-mismatch"
    assert [d.code for d in error.diagnostics if d.severity == "error"] == [
        "bundle-provider-mismatch",
        "graph-edge-node-missing",
    ]


# -- Skills are read at load time -----------------------------------------------------------------


@pytest.fixture
def weekly(tmp_path: Path) -> Path:
    return copy_example(WEEKLY, tmp_path / "weekly") / "provider.yaml"


def test_a_skill_without_frontmatter_fails_validate_positioned(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = weekly.parent / "skills" / "report-drafting" / "SKILL.md"
    skill.write_text("# Drafting\n\nNo frontmatter here.\n", encoding="utf-8")
    error = failure(weekly)
    assert error.code == "frontmatter-missing"
    assert error.message == (
        "Action report.draft skill skills/report-drafting/SKILL.md cannot be read: "
        f"Markdown resource requires YAML frontmatter: {skill}"
    )
    assert [(d.code, d.path, d.line, d.column, d.pointer) for d in error.diagnostics] == [
        ("frontmatter-missing", "actions/draft.yaml", 8, 8, "/skill"),
        ("frontmatter-missing", "skills/report-drafting/SKILL.md", 1, 1, None),
    ]
    code, out, err = run(["validate", "-m", str(weekly)], capsys)
    assert (code, out) == (1, "")
    start = err.splitlines().index(
        "actions/draft.yaml:8:8: frontmatter-missing: Action report.draft skill "
        "skills/report-drafting/SKILL.md cannot be read: Markdown resource requires YAML "
        f"frontmatter: {skill}"
    )
    assert err.splitlines()[start + 1 : start + 6] == [
        "    8 | skill: skills/report-drafting/SKILL.md",
        "      |        ^",
        "skills/report-drafting/SKILL.md:1:1: frontmatter-missing: Markdown resource requires "
        f"YAML frontmatter: {skill}",
        "    1 | # Drafting",
        "      | ^",
    ]


def test_a_skill_without_frontmatter_fails_build_too(
    weekly: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (weekly.parent / "skills" / "report-drafting" / "SKILL.md").write_text("x\n", "utf-8")
    code, out, err = run(
        ["build", str(tmp_path / "out"), "-m", str(weekly), "--format", "json"], capsys
    )
    assert (code, out) == (1, "")
    assert json.loads(err)["error"]["code"] == "frontmatter-missing"
    assert not (tmp_path / "out").exists()


def test_skills_are_checked_after_every_check_of_the_reference(weekly: Path) -> None:
    names = pass_names()
    assert names.index("check-materializers") < names.index("check-skills")
    assert names.index("check-skills") + 1 == names.index("check-loose-ends")
    assert names.index("check-loose-ends") + 1 == names.index("raise-collected")
    (weekly.parent / "skills" / "report-drafting" / "SKILL.md").write_text("x\n", "utf-8")
    edit(weekly.parent / "graphs" / "report.yaml", "draft-report.md", "draft-reprot.md")
    error = failure(weekly)
    assert error.code == "file-missing"  # what the reference throws first
    assert [d.code for d in error.diagnostics] == ["file-missing", *["frontmatter-missing"] * 2]


# -- unreachable nodes ---------------------------------------------------------------------------


def test_an_unreachable_node_is_a_warning_in_validate_and_check_provider(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = weekly.parent / "graphs" / "report.yaml"
    edit(
        graph,
        "  - id: done\n",
        "  - id: orphan\n    kind: terminal\n    terminalOutcome: failed\n  - id: done\n",
    )
    found = agent_graph.check_provider(weekly)
    assert [(d.code, d.severity, d.path, d.line, d.pointer) for d in found] == [
        ("node-unreachable", "warning", "graphs/report.yaml", 49, "/nodes/4")
    ]
    assert found[0].message == "Graph report node orphan cannot be reached from any entrypoint"
    agent_graph.compile_provider(weekly)  # a warning never fails a Provider
    code, out, err = run(["validate", "-m", str(weekly)], capsys)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Valid provider example.weekly-report@1.0.0",
        "1 graph(s), 3 action(s), 4 resource(s), 5 code(s)",
        "graphs/report.yaml:49:5: warning: node-unreachable: Graph report node orphan cannot "
        "be reached from any entrypoint",
        "   49 |   - id: orphan",
        "      |     ^",
    ]
    code, out, _ = run(["validate", "-m", str(weekly), "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["diagnostics"] == [
        {
            "code": "node-unreachable",
            "severity": "warning",
            "message": "Graph report node orphan cannot be reached from any entrypoint",
            "path": "graphs/report.yaml",
            "detail": {"line": 49, "column": 5, "pointer": "/nodes/4"},
        }
    ]


@pytest.mark.parametrize("example", sorted(p.parent.name for p in EXAMPLES.glob("*/provider.yaml")))
def test_the_examples_have_no_unreachable_nodes(example: str) -> None:
    assert agent_graph.check_provider(EXAMPLES / example / "provider.yaml") == []


# -- did you mean -------------------------------------------------------------------------------


def test_a_missing_file_near_an_existing_one_says_did_you_mean(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(weekly.parent / "graphs" / "report.yaml", "actions/publish.yaml", "actions/publsh.yaml")
    error = failure(weekly)
    missing = weekly.parent / "actions" / "publsh.yaml"
    assert error.code == "file-missing"
    assert error.message == (
        f"action does not exist: {missing}; did you mean actions/publish.yaml?"
    )
    [diagnostic] = error.diagnostics
    assert diagnostic.message == error.message
    assert diagnostic.detail == {
        "hint": "did you mean actions/publish.yaml?",
        "suggestion": "actions/publish.yaml",
    }
    code, _, err = run(["validate", "-m", str(weekly)], capsys)
    assert code == 1
    assert placed(err) == [
        f"graphs/report.yaml:34:13: file-missing: action does not exist: {missing}; "
        "did you mean actions/publish.yaml?"
    ]


@pytest.mark.parametrize(
    ("written", "suggested"),
    [
        ("action/publish.yaml", "actions/publish.yaml"),  # a folder segment
        ("actions/Publish.yaml", "actions/publish.yaml"),
        ("actions/publish.yml", "actions/publish.yaml"),  # the extension
        ("actions/chek-publication.yaml", "actions/check-publication.yaml"),
        ("actions/unpublish-everything.yaml", None),
        ("actions/missing.yaml", None),  # a shared .yaml does not make it near main.yaml
        ("nowhere/publish.yaml", None),
    ],
)
def test_did_you_mean_for_files(weekly: Path, written: str, suggested: str | None) -> None:
    edit(weekly.parent / "graphs" / "report.yaml", "actions/publish.yaml", written)
    error = failure(weekly)
    assert error.code == "file-missing"
    assert error.diagnostics[0].detail.get("suggestion") == suggested
    assert error.message.endswith(f"; did you mean {suggested}?" if suggested else ".yaml")


def test_a_reason_code_near_a_catalog_code_says_did_you_mean(weekly: Path) -> None:
    edit(
        weekly.parent / "graphs" / "report.yaml", "route.report.draft\n", "route.report.drafting\n"
    )
    error = failure(weekly)
    assert error.code == "route-reason-code-missing"
    assert error.message == (
        "Graph report node draft reasonCode is not declared by the Provider code catalog: "
        "route.report.drafting; did you mean route.report.draft?"
    )
    assert error.diagnostics[0].detail == {
        "hint": "did you mean route.report.draft?",
        "suggestion": "route.report.draft",
    }


def test_a_reason_code_sharing_only_a_prefix_gets_no_hint(weekly: Path) -> None:
    edit(weekly.parent / "graphs" / "report.yaml", "route.report.draft\n", "route.report.zzz\n")
    error = failure(weekly)
    assert error.code == "route-reason-code-missing"
    assert error.message.endswith(": route.report.zzz")
    assert "hint" not in error.diagnostics[0].detail


# -- outcome keys that name no node --------------------------------------------------------------


def test_an_unknown_outcome_key_is_warned_with_the_key_it_meant() -> None:
    program = agent_graph.compile_provider(WEEKLY / "provider.yaml")
    keys = ["draft", "report/draft", "report/publsh", "zz/unknown"]
    assert [w.to_dict() for w in outcome_key_warnings(program.ir, "report", keys)] == [
        {
            "code": "outcome-key-unknown",
            "severity": "warning",
            "message": "Outcome key 'draft' names no node of graph report or of a graph it "
            "calls; it is ignored; did you mean report/draft?",
            "detail": {
                "key": "draft",
                "hint": "did you mean report/draft?",
                "suggestion": "report/draft",
            },
        },
        {
            "code": "outcome-key-unknown",
            "severity": "warning",
            "message": "Outcome key 'report/publsh' names no node of graph report or of a "
            "graph it calls; it is ignored; did you mean report/publish?",
            "detail": {
                "key": "report/publsh",
                "hint": "did you mean report/publish?",
                "suggestion": "report/publish",
            },
        },
        {
            "code": "outcome-key-unknown",
            "severity": "warning",
            "message": "Outcome key 'zz/unknown' names no node of graph report or of a graph "
            "it calls; it is ignored",
            "detail": {"key": "zz/unknown"},
        },
    ]
    assert outcome_key_warnings(program.ir, "nowhere", keys) == []


def test_subgraph_call_paths_are_known_outcome_keys() -> None:
    program = agent_graph.compile_provider(RELEASE / "provider.yaml")
    known = [
        "train/plan",
        "train/verify-candidate",
        "train/verify-candidate>verify/unit-tests",
        "train/verify-live>verify/smoke-test",
        "train/ship>ship/approve",
    ]
    assert outcome_key_warnings(program.ir, "train", known) == []
    unknown = [
        "verify/unit-tests",  # a child node under its bare key
        "train/plan>verify/unit-tests",  # plan is not a subgraph node
        "train/ship>verify/unit-tests",  # ship calls ship, not verify
        "train/verify-candidate>verify/nope",
    ]
    warned = outcome_key_warnings(program.ir, "train", unknown)
    assert [w.detail["key"] for w in warned] == unknown
    assert warned[0].detail["suggestion"] in {
        "train/verify-candidate>verify/unit-tests",
        "train/verify-live>verify/unit-tests",
    }
    # evaluating a child graph itself: its own keys are the bare ones
    assert outcome_key_warnings(program.ir, "verify", ["verify/unit-tests"]) == []


def test_the_evaluation_document_stays_the_references() -> None:
    program = agent_graph.compile_provider(WEEKLY / "provider.yaml")
    evaluation = program.evaluate("report", "default", {"outcomes": {"draft": "completed"}})
    assert evaluation.diagnostics == ()
    assert evaluation.primary is not None
    assert evaluation.primary.node.id == "draft"
