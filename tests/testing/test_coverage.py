"""``agc test --coverage``: what the graph tests of the examples leave out.

The expected lists are worked out by hand from the graphs and their tests. Weekly report:
its nine cases route to each of draft (01), approve (03, waiting for a user), publish (06)
and check-publication (07), repeat a partial draft (02), and reach done both from publish
(08) and after the check (09), so nothing is left out. Release train (three graphs, 13
route nodes, 30 edges, 26 edge outcomes, one Gate): no case has docs, bump-version or
lint first (changelog outranks them, and 03 has them all done), nor ship's publish (10
and 11 record it); no case fails triage or the release approval, so neither
``triage → abandoned`` nor ``approve → not-shipped`` fires.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_graph import compile_provider
from agent_graph.testing import run_tests
from agent_graph.testing.coverage import coverage
from cli_support import run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _paths(name: str) -> tuple[str, str]:
    return str(EXAMPLES / name / "provider.yaml"), str(EXAMPLES / name / "tests")


def _coverage(name: str, keyword: str | None = None) -> dict[str, Any]:
    manifest, tests = _paths(name)
    program = compile_provider(manifest)
    return coverage(program, run_tests(program, tests, keyword=keyword))


def test_weekly_report_tests_leave_nothing_out() -> None:
    doc = _coverage("weekly-report")
    assert doc["counts"] == {
        "routes": {"covered": 4, "total": 4},
        "edges": {"covered": 6, "total": 6},
        "outcomes": {"covered": 6, "total": 6},
        "gates": {"covered": 1, "total": 1},
    }
    assert (doc["neverPrimary"], doc["edgesNeverFired"]) == ([], [])
    assert (doc["outcomesNeverSeen"], doc["gatesNeverWaited"]) == ({}, [])
    assert (doc["percent"], doc["cases"]) == (100.0, 9)


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        # collect, editorial-review, legal-signoff, merge, return-to-author; 7 edges; the
        # two Gates' completed and failed, one completed each for the three actions
        ("review-desk", {"routes": (5, 5), "edges": (7, 7), "outcomes": (7, 7), "gates": (2, 2)}),
        # summarize and check-note; check-note's failed is the repeat back to summarize
        ("context-views", {"routes": (2, 2), "edges": (3, 3), "outcomes": (3, 3), "gates": (0, 0)}),
    ],
)
def test_the_other_examples_leave_nothing_out(
    name: str, counts: dict[str, tuple[int, int]]
) -> None:
    doc = _coverage(name)
    assert {k: (v["covered"], v["total"]) for k, v in doc["counts"].items()} == counts
    assert (doc["neverPrimary"], doc["edgesNeverFired"]) == ([], [])
    assert (doc["outcomesNeverSeen"], doc["gatesNeverWaited"]) == ({}, [])


def test_release_train_lists_exactly_what_its_tests_leave_out() -> None:
    doc = _coverage("release-train")
    assert doc["neverPrimary"] == ["train/docs", "train/bump-version", "train/lint", "ship/publish"]
    assert doc["edgesNeverFired"] == [
        {"graph": "train", "from": "triage", "to": "abandoned", "kind": "flow",
         "outcomes": ["failed"]},
        {"graph": "ship", "from": "approve", "to": "not-shipped", "kind": "flow",
         "outcomes": ["failed"]},
    ]  # fmt: skip
    assert doc["outcomesNeverSeen"] == {"train/triage": ["failed"], "ship/approve": ["failed"]}
    assert doc["gatesNeverWaited"] == []
    assert doc["counts"] == {
        "routes": {"covered": 9, "total": 13},
        "edges": {"covered": 28, "total": 30},
        "outcomes": {"covered": 24, "total": 26},
        "gates": {"covered": 1, "total": 1},
    }
    assert (doc["covered"], doc["total"], doc["percent"]) == (62, 70, 88.57)


def test_a_partial_draft_fires_the_repeat_edge_its_reset_leaves_pending() -> None:
    # after the reset the draft is pending again, so the edge's final match says nothing:
    # the trace's repeat-reset step is what shows it fired
    doc = _coverage("weekly-report", keyword="partial draft")
    assert doc["cases"] == 1
    fired = {(e["from"], e["to"]) for e in doc["edgesNeverFired"]}
    assert ("draft", "draft") not in fired
    assert "partial" not in doc["outcomesNeverSeen"].get("report/draft", [])
    assert doc["gatesNeverWaited"] == ["report/approve"]


def test_json_has_coverage_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    manifest, tests = _paths("weekly-report")
    code, plain, _ = run(["test", tests, "-m", manifest, "--format", "json"], capsys)
    assert code == 0
    assert "coverage" not in json.loads(plain)
    code, out, _ = run(["test", tests, "-m", manifest, "--coverage", "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc.pop("coverage")["percent"] == 100.0
    assert doc == json.loads(plain)


def test_the_table_and_the_lists_in_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    manifest, tests = _paths("release-train")
    code, out, err = run(["test", tests, "-m", manifest, "--coverage"], capsys)
    assert (code, err) == (0, "")
    assert out.split("\n\n", 1)[1].splitlines() == [
        "Coverage: 88.57% (62/70) over 16 graph test(s)",
        "  kind       covered total  percent",
        "  routes           9    13   69.23%",
        "  edges           28    30   93.33%",
        "  outcomes        24    26   92.31%",
        "  gates            1     1  100.00%",
        "Never the primary route: train/docs, train/bump-version, train/lint, ship/publish",
        "Edge never fired: train: triage → abandoned on failed",
        "Edge never fired: ship: approve → not-shipped on failed",
        "Outcome never seen: train/triage: failed",
        "Outcome never seen: ship/approve: failed",
    ]


@pytest.mark.parametrize(("threshold", "code"), [("88", 0), ("88.57", 0), ("90", 1)])
def test_fail_under_exits_1_below_the_threshold(
    threshold: str, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest, tests = _paths("release-train")
    args = ["test", tests, "-m", manifest, "--fail-under", threshold, "--format", "json"]
    got, out, err = run(args, capsys)
    assert got == code
    assert json.loads(out)["coverage"]["failUnder"] == float(threshold)
    if code:
        assert err == "FAIL coverage 88.57% is under --fail-under 90%\n"
    else:
        assert err == ""


@pytest.mark.parametrize("value", ["abc", "-1", "100.5", "nan", "inf", ""])
def test_fail_under_value_is_checked(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    manifest, tests = _paths("weekly-report")
    args = ["test", tests, "-m", manifest, "--fail-under", value, "--format", "json"]
    code, out, err = run(args, capsys)
    assert (code, out) == (2, "")
    assert json.loads(err)["error"]["code"] == "option-invalid"


def test_the_help_example_runs_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from agent_graph.cli.testcmd import COVERAGE_EXAMPLE
    from cli_support import run_bash

    _, text, _ = run(["test", "--help"], capsys)
    assert COVERAGE_EXAMPLE in text
    shutil.copytree(EXAMPLES, tmp_path / "examples", symlinks=True)
    done = run_bash(COVERAGE_EXAMPLE, tmp_path)
    assert "Coverage: 100.00% (17/17) over 9 graph test(s)" in done.stdout
