"""Issue 27, items 9 and 13: every name looked up suggests the one it misspells, a root
cause is one error, and messages say what is wrong in words the author can act on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_graph.cli.render import relative_paths
from cli_support import ROOT, error_of, run

WEEKLY = ROOT / "examples" / "weekly-report"
DRAFT_REVIEW = ROOT / "examples" / "flows" / "draft-review"


@pytest.fixture
def weekly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the weekly-report example, the working directory."""
    root = tmp_path / "weekly"
    shutil.copytree(WEEKLY, root)
    monkeypatch.chdir(root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def diagnostics(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = error_of(list(args), capsys)["diagnostics"]
    return found


# -- item 9: enum values -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "suggested"),
    [
        ("kind: gate", "kind: gaet", '"gate"'),
        ("terminalOutcome: completed", "terminalOutcome: complete", '"completed"'),
        ("outcomes: [unverified]", "outcomes: [unverifed]", '"unverified"'),
    ],
)
def test_a_misspelled_enum_value_names_the_value_it_misspells(
    weekly: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, suggested: str
) -> None:
    edit(weekly / "graphs" / "report.yaml", old, new)
    (found,) = diagnostics(capsys, "validate")
    assert found["code"] == "schema.enum"
    assert str(found["message"]).endswith(f"; did you mean {suggested}?")


def test_an_enum_value_far_from_every_allowed_one_gets_no_guess(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(weekly / "graphs" / "report.yaml", "kind: gate", "kind: zzzzzz")
    (found,) = diagnostics(capsys, "validate")
    assert str(found["message"]).endswith('"subgraph", "terminal"')


def test_an_outcome_value_in_outcomes_and_run_record_is_suggested(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = error_of(["evaluate", "report", "--outcomes", '{"report/draft":"complted"}'], capsys)
    assert error["message"] == (
        'Outcome for report/draft is invalid: "complted"; did you mean completed?'
    )
    code, _, _ = run(["run", "start", "report", "--state", "r.json"], capsys)
    assert code == 0
    error = error_of(["run", "record", "report/draft", "Completed", "--state", "r.json"], capsys)
    assert error["code"] == "outcome-invalid"
    assert str(error["message"]).endswith("; did you mean completed?")


# -- item 9: resource and code ids --------------------------------------------------------


def test_resource_and_code_locate_suggest_the_id_or_path(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = error_of(["resource", "locate", "procedure.report.drft"], capsys)
    assert error["message"] == (
        "Provider example.weekly-report has no resource procedure.report.drft; "
        "did you mean procedure.report.draft?"
    )
    error = error_of(["resource", "locate", "resources/procedures/draft-reprt.md"], capsys)
    assert str(error["message"]).endswith("did you mean resources/procedures/draft-report.md?")
    error = error_of(["code", "locate", "route.report.drft"], capsys)
    assert error["message"] == (
        "Provider example.weekly-report has no catalog entry for route.report.drft; "
        "did you mean route.report.draft?"
    )


# -- item 9 and 13: Flow edge targets, references/ paths, one error a cause ---------------


def test_a_flow_edge_typo_is_one_error_with_the_node_it_misspells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "draft-review"
    shutil.copytree(DRAFT_REVIEW, package)
    flow_md = package / "FLOW.md"
    edit(flow_md, "  review -->|accept| finish", "  review -->|accept| finsh")
    edit(flow_md, "  revise -->|revised| measure", "  revise -->|revised| mesure")
    edit(flow_md, "(references/style-guide.md)", "(references/style-gide.md)")
    found = diagnostics(capsys, "flow", "check", str(package))
    # before: each typo also made `revise` a node with no outgoing edge that cannot finish
    assert [(d["code"], d["message"]) for d in found] == [
        (
            "flow-edge-target-missing",
            "'finsh' is not declared; did you mean finish? (or declare it once with its "
            "shape, as finsh[Node name])",
        ),
        (
            "flow-edge-target-missing",
            "'mesure' is not declared; did you mean measure? (or declare it once with its "
            "shape, as mesure[Node name])",
        ),
        (
            "resource-missing",
            "resource 'references/style-gide.md' does not exist in the package (or is not a "
            "regular file); did you mean references/style-guide.md?",
        ),
    ]


def test_a_node_left_without_edges_is_still_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cascade rule is about broken edges only: a node whose one edge is deleted still
    has no outgoing edge."""
    package = tmp_path / "draft-review"
    shutil.copytree(DRAFT_REVIEW, package)
    edit(package / "FLOW.md", "  revise -->|revised| measure\n", "")
    codes = {d["code"] for d in diagnostics(capsys, "flow", "check", str(package))}
    assert "flow-node-no-outgoing" in codes


def test_deleting_the_terminal_is_one_error_naming_it(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = weekly / "graphs" / "report.yaml"
    text = graph.read_text(encoding="utf-8")
    start = text.index("  - id: done\n")
    graph.write_text(text[:start] + text[text.index("edges:", start) :], encoding="utf-8")
    found = diagnostics(capsys, "validate")
    # before: graph-terminal-missing and one graph-edge-node-missing an edge into `done`
    assert [(d["code"], d["message"]) for d in found] == [
        (
            "graph-terminal-missing",
            "Graph report must declare at least one terminal node; edges lead to done, "
            "which no node declares: add it as a terminal",
        )
    ]


def test_an_edge_typo_without_a_terminal_stays_its_own_error(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = weekly / "graphs" / "report.yaml"
    edit(graph, "    kind: terminal\n", "    kind: action\n    action: actions/draft.yaml\n")
    edit(graph, "    join: any\n    terminalOutcome: completed\n", "    reasonCode: route.x\n")
    edit(graph, "{ from: draft, to: approve }", "{ from: draft, to: aprove }")
    found = [d for d in diagnostics(capsys, "validate") if str(d["code"]).startswith("graph-")]
    assert [d["code"] for d in found] == ["graph-terminal-missing", "graph-edge-node-missing"]
    assert str(found[1]["message"]).endswith("did you mean approve?")
    assert "edges lead to" not in str(found[0]["message"])


# -- item 13: words -----------------------------------------------------------------------


def test_a_missing_gate_prompt_points_at_the_gate_key(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = weekly / "graphs" / "report.yaml"
    edit(graph, "      prompt: Publish this week's report?\n", "")
    line = graph.read_text(encoding="utf-8").splitlines().index("    gate:") + 1
    (found,) = diagnostics(capsys, "validate")
    assert found["message"] == "/nodes/1/gate must have required property 'prompt'"
    assert (found["detail"]["line"], found["detail"]["column"]) == (line, 5)  # type: ignore[index]


def test_frontmatter_names_the_key_missing_and_the_kind_it_misspells(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    procedure = weekly / "resources" / "procedures" / "draft-report.md"
    original = procedure.read_text(encoding="utf-8")
    edit(procedure, "id: procedure.report.draft\n", "")
    (found,) = diagnostics(capsys, "validate")
    assert str(found["message"]).endswith(
        "must declare string id, kind, and media-type; id is missing"
    )
    procedure.write_text(original.replace("kind: procedure", "kind: 3"), encoding="utf-8")
    (found,) = diagnostics(capsys, "validate")
    assert str(found["message"]).endswith("; kind is a number")
    procedure.write_text(original.replace("kind: procedure", "kind: procedur"), encoding="utf-8")
    (found,) = diagnostics(capsys, "validate")
    assert found["code"] == "resource-kind-invalid"
    assert str(found["message"]).endswith("unsupported kind: procedur; did you mean procedure?")


@pytest.mark.parametrize(("written", "shown"), [("1.0", "1.0"), ("1.10  # minor", "1.10")])
def test_a_version_read_as_a_number_says_to_quote_it_as_written(
    weekly: Path, capsys: pytest.CaptureFixture[str], written: str, shown: str
) -> None:
    manifest = weekly / "provider.yaml"
    text = manifest.read_text(encoding="utf-8")
    version = next(line for line in text.splitlines() if line.startswith("version:"))
    manifest.write_text(text.replace(version, f"version: {written}"), encoding="utf-8")
    (found,) = diagnostics(capsys, "validate")
    assert found["message"] == (
        f'/version must be string; {shown} is read as a number: write it in quotes, "{shown}", '
        "to keep it text"
    )


def test_human_output_writes_paths_below_the_working_directory_relative(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(weekly / "graphs" / "report.yaml", "actions/draft.yaml", "actions/drft.yaml")
    code, _, err = run(["validate"], capsys)
    assert code == 1
    assert err.splitlines()[0] == (
        "graphs/report.yaml:11:13: file-missing: action does not exist: actions/drft.yaml; "
        "did you mean actions/draft.yaml?"
    )
    # JSON keeps the message as the library wrote it
    (found,) = diagnostics(capsys, "validate")
    assert f"does not exist: {weekly / 'actions' / 'drft.yaml'};" in str(found["message"])


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("file /w/p/a.yaml is missing.", "file a.yaml is missing."),
        ("see /w/p/a.yaml: here", "see a.yaml: here"),
        ("outside /w/other/a.yaml stays", "outside /w/other/a.yaml stays"),
        ("the root /w/p itself stays", "the root /w/p itself stays"),
        ("'/w/p/a b.md' quoted", "'a b.md' quoted"),
        ("no path at all", "no path at all"),
        ("a/w/p/x is no absolute path", "a/w/p/x is no absolute path"),
    ],
)
def test_relative_paths_rewrites_only_paths_below_here(message: str, shown: str) -> None:
    assert relative_paths(message, "/w/p") == shown


# -- item 9: graphs and entries -----------------------------------------------------------


def test_an_entry_naming_a_missing_node_suggests_the_node(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(weekly / "graphs" / "report.yaml", "  default: draft", "  default: drat")
    (found,) = diagnostics(capsys, "validate")
    assert found["message"] == (
        "Graph report entry default targets missing node drat; did you mean draft?"
    )


@pytest.mark.parametrize(
    ("args", "human", "message"),
    [
        (
            ["evaluate", "reprt"],
            "ERROR graph-missing: Provider example.weekly-report has no graph reprt; "
            "did you mean report?",
            "Provider example.weekly-report has no graph reprt",
        ),
        (
            ["evaluate", "report", "--entry", "defualt"],
            "ERROR entry-missing: Graph report has no entry defualt; did you mean default?",
            None,
        ),
    ],
)
def test_a_misspelled_graph_or_entry_is_suggested_to_people_only(
    weekly: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    human: str,
    message: str | None,
) -> None:
    """The suggestion is in the human line; the JSON keeps the reference's message (and,
    for an entry, its Evaluation document)."""
    code, out, err = run(args, capsys)
    assert (code, out, err) == (1, "", human + "\n")
    code, out, err = run([*args, "--format", "json"], capsys)
    if message is None:
        assert code == 0
        assert "did you mean" not in out
    else:
        assert code == 1
        assert json.loads(err)["error"]["message"] == message


def test_a_name_close_to_nothing_gets_no_guess(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["evaluate", "zzzzzz"], capsys)
    assert code == 1
    assert err == "ERROR graph-missing: Provider example.weekly-report has no graph zzzzzz\n"


def test_a_graph_test_naming_a_missing_graph_is_placed_relative_with_a_guess(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(weekly / "tests" / "01-fresh-week.yaml", "graph: report", "graph: reprt")
    code, _, err = run(["test", "tests"], capsys)
    assert code == 1
    assert err.splitlines()[1] == (
        "tests/01-fresh-week.yaml:3:8: graph-missing: Provider example.weekly-report has no "
        "graph reprt (graph test 'a new week starts with the draft'); did you mean report?"
    )
    error = error_of(["test", "tests"], capsys)
    assert error["message"] == "Provider example.weekly-report has no graph reprt"


def test_one_suggester_for_every_lookup() -> None:
    from agent_graph.spelling import closest, did_you_mean

    assert did_you_mean("drat", ["draft", "approve"]) == "; did you mean draft?"
    assert did_you_mean("zzzz", ["draft", "approve"]) == ""
    assert closest(3, ["3"]) is None  # a name that is no string suggests nothing
    assert closest("a", []) is None
