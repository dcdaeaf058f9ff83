"""``agc test``: errored cases do not stop the run; ``-v`` lists cases; ``-k`` selects them.

A case file that cannot be loaded (schema-invalid, unparsable) or run (an unknown
graph) is an errored case: ``ERROR <name>`` and its positioned error in the human
output, an ``error`` member in its JSON result (and ``errors`` in the document), a
JUnit ``<error>``. The other cases still run and the exit code is 1.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import agent_graph
from agent_graph.cli import main
from agent_graph.errors import AgentGraphError
from agent_graph.testing import iter_results, name_matches, report_lines, run_tests
from tree_support import write_tree

WEEKLY = Path(__file__).resolve().parent.parent / "examples" / "weekly-report"

FRESH = "a new week starts with the draft"
PARTIAL = "a partial draft hands the same step back"
WRONG = """\
schema: agent-graph.test.v1
name: the week starts with publishing
graph: report
entry: default
expect:
  statusCode: actionable
  primaryNode: publish
"""
BAD = """\
schema: agent-graph.test.v1
name: a bad status
graph: report
entry: default
expect:
  statusCode: fine
"""
BROKEN = "schema: agent-graph.test.v1\nname: [unclosed\n"
LOST = """\
schema: agent-graph.test.v1
name: a lost graph
graph: nowhere
entry: default
expect:
  statusCode: actionable
"""
STATUSES = '"actionable", "waiting-user", "blocked", "complete", "error"'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The weekly report with two of its cases, a failing one and three that error."""
    root = tmp_path / "weekly"
    shutil.copytree(WEEKLY, root, ignore=shutil.ignore_patterns("tests"))
    tests = root / "tests"
    tests.mkdir()
    for name in ("01-fresh-week.yaml", "02-partial-draft-repeats.yaml"):
        shutil.copy(WEEKLY / "tests" / name, tests / name)
    write_tree(
        tests,
        {
            "03-wrong.yaml": WRONG,
            "04-bad.yaml": BAD,
            "05-broken.yaml": BROKEN,
            "06-lost.yaml": LOST,
        },
    )
    monkeypatch.chdir(root)
    return root


def agc(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def errored_lines(root: Path) -> list[str]:
    tests = root / "tests"
    return [
        "ERROR a bad status",
        f"  schema-invalid: {tests / '04-bad.yaml'} does not match test-case.schema.json",
        "    at tests/04-bad.yaml:6:15: schema.enum: /expect/statusCode must be equal to one "
        f"of the allowed values: {STATUSES}",
        "ERROR 05-broken.yaml",
        f"  parse-failed: Cannot parse {tests / '05-broken.yaml'}: while parsing a flow "
        "sequence: did not find expected ',' or ']' at line 3, column 1",
        "    at tests/05-broken.yaml:3:1",
        "ERROR a lost graph",
        "  graph-missing: Provider example.weekly-report has no graph nowhere",
        "    at tests/06-lost.yaml:3:8: graph-missing: in graph test 'a lost graph'",
    ]


FAILED_LINES = [
    "FAIL the week starts with publishing",
    "  primaryNode: expected publish, received draft",
    "    at tests/03-wrong.yaml:7:16",
]


# -- errored cases -------------------------------------------------------------------------------


def test_an_invalid_case_file_is_an_errored_case_and_the_rest_run(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = agc(["test"], capsys)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "2/6 graph test(s) passed, 3 error(s)",
        *FAILED_LINES,
        *errored_lines(project),
    ]


def test_errored_cases_in_the_json_document(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = agc(["test", "--format", "json"], capsys)
    assert (code, err) == (1, "")
    document = json.loads(out)
    assert {k: document[k] for k in ("state", "total", "failed", "errors")} == {
        "state": "failed",
        "total": 6,
        "failed": 4,
        "errors": 3,
    }
    results = document["results"]
    assert [(r["name"], r["passed"], "error" in r) for r in results] == [
        (FRESH, True, False),
        (PARTIAL, True, False),
        ("the week starts with publishing", False, False),
        ("a bad status", False, True),
        ("05-broken.yaml", False, True),
        ("a lost graph", False, True),
    ]
    bad = results[3]
    assert bad["path"] == str(project / "tests" / "04-bad.yaml")
    assert bad["failures"] == [
        f"schema-invalid: {project / 'tests' / '04-bad.yaml'} does not match test-case.schema.json"
    ]
    assert bad["error"]["code"] == "schema-invalid"
    [finding] = bad["error"]["diagnostics"]
    assert (finding["code"], finding["detail"]["line"], finding["detail"]["column"]) == (
        "schema.enum",
        6,
        15,
    )
    assert results[5]["error"]["diagnostics"][-1]["detail"]["pointer"] == "/graph"


def test_a_run_without_errors_keeps_the_reference_document(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = agc(["test", "tests/01-fresh-week.yaml", "--format", "json"], capsys)
    assert code == 0
    assert list(json.loads(out)) == ["state", "total", "failed", "results"]
    assert list(json.loads(out)["results"][0]) == ["name", "path", "passed", "failures"]


def test_a_single_invalid_file_is_one_errored_case(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = agc(["test", "tests/04-bad.yaml"], capsys)
    assert (code, err) == (1, "")
    assert out.splitlines() == ["0/1 graph test(s) passed, 1 error(s)", *errored_lines(project)[:3]]


def test_errored_cases_in_the_junit_report(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = project / "report.xml"
    code, _, _ = agc(["test", "--junit-xml", str(report)], capsys)
    assert code == 1
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert {k: suite.get(k) for k in ("tests", "failures", "errors")} == {
        "tests": "6",
        "failures": "1",
        "errors": "3",
    }
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        FRESH,
        PARTIAL,
        "the week starts with publishing",
        "a bad status",
        "05-broken.yaml",
        "a lost graph",
    ]
    assert [(c.find("failure") is not None, c.find("error") is not None) for c in cases] == [
        (False, False),
        (False, False),
        (True, False),
        (False, True),
        (False, True),
        (False, True),
    ]
    error = cases[3].find("error")
    assert error is not None
    assert error.get("type") == "schema-invalid"
    assert error.get("message") == (
        f"schema-invalid: {project / 'tests' / '04-bad.yaml'} does not match test-case.schema.json"
    )
    assert (error.text or "").splitlines() == [
        line.removeprefix("  ") for line in errored_lines(project)[1:3]
    ]
    assert (cases[3].get("file"), cases[3].get("line")) == ("tests/04-bad.yaml", "2")
    assert (cases[4].get("file"), cases[4].get("line")) == ("tests/05-broken.yaml", "1")


def test_the_api_reports_errored_results_too(project: Path) -> None:
    results = run_tests(project / "provider.yaml", project / "tests")
    assert [(r.status, r.errored) for r in results] == [
        ("PASS", False),
        ("PASS", False),
        ("FAIL", False),
        ("ERROR", True),
        ("ERROR", True),
        ("ERROR", True),
    ]
    assert [r.error.code for r in results if r.error is not None] == [
        "schema-invalid",
        "parse-failed",
        "graph-missing",
    ]


# -- -v ------------------------------------------------------------------------------------------


def test_verbose_lists_every_case_first(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = agc(["test", "-v"], capsys)
    assert code == 1
    assert out.splitlines() == [
        f"PASS {FRESH} (tests/01-fresh-week.yaml:2)",
        f"PASS {PARTIAL} (tests/02-partial-draft-repeats.yaml:2)",
        "FAIL the week starts with publishing (tests/03-wrong.yaml:2)",
        "ERROR a bad status (tests/04-bad.yaml:2)",
        "ERROR 05-broken.yaml (tests/05-broken.yaml:1)",
        "ERROR a lost graph (tests/06-lost.yaml:2)",
        "2/6 graph test(s) passed, 3 error(s)",
        *FAILED_LINES,
        *errored_lines(project),
    ]
    code, verbose, _ = agc(["test", "--verbose"], capsys)
    assert (code, verbose) == (1, out)


def test_verbose_when_everything_passes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = agc(["test", "-v", "tests/01-fresh-week.yaml"], capsys)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"PASS {FRESH} (tests/01-fresh-week.yaml:2)",
        "1/1 graph test(s) passed",
    ]
    code, out, _ = agc(["test", "-v", "tests/01-fresh-week.yaml", "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["total"] == 1  # -v changes the human lines only


# -- -k ------------------------------------------------------------------------------------------


def test_k_selects_by_substring_and_keeps_unloadable_files(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = agc(["test", "-v", "-k", "DRAFT"], capsys)
    assert code == 1  # 05-broken.yaml has no name to select by: it is always reported
    assert out.splitlines()[:5] == [
        f"PASS {FRESH} (tests/01-fresh-week.yaml:2)",
        f"PASS {PARTIAL} (tests/02-partial-draft-repeats.yaml:2)",
        "ERROR a bad status (tests/04-bad.yaml:2)",
        "ERROR 05-broken.yaml (tests/05-broken.yaml:1)",
        "2/4 graph test(s) passed, 2 error(s)",
    ]  # 03-wrong.yaml and 06-lost.yaml load, and their names do not match


def test_k_selects_by_glob(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(project / "tests")
    shutil.copytree(WEEKLY / "tests", project / "tests")
    code, out, _ = agc(["test", "-v", "-k", "A*draft"], capsys)  # the whole name: ends in draft
    assert code == 0
    assert out.splitlines() == [
        f"PASS {FRESH} (tests/01-fresh-week.yaml:2)",
        "1/1 graph test(s) passed",
    ]
    code, out, _ = agc(["test", "-k", "*publish?d*", "--format", "json"], capsys)
    assert code == 0
    assert [r["name"] for r in json.loads(out)["results"]] == [
        "an approved report is published by the command"
    ]


def test_k_matching_nothing_is_an_error_naming_the_pattern(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(project / "tests")
    shutil.copytree(WEEKLY / "tests", project / "tests")
    code, out, err = agc(["test", "-k", "zebra", "--format", "json"], capsys)
    assert (code, out) == (1, "")
    error = json.loads(err)["error"]
    assert error["code"] == "test-cases-empty"
    assert error["message"] == f"No graph test case name matches -k 'zebra': {project / 'tests'}"
    code, out, err = agc(["test", "-k", "zeb*"], capsys)
    assert (code, out) == (1, "")
    assert err.startswith("ERROR test-cases-empty: No graph test case name matches -k 'zeb*': ")


def test_the_help_says_how_k_matches(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = agc(["test", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "-k PATTERN Run only the cases whose name contains PATTERN, or matches it as a " in text
    assert "shell-style glob over the whole name when it has * ? or [ (case-insensitive)" in text
    assert "-v, --verbose List every case first" in text


@pytest.mark.parametrize(
    ("name", "pattern", "matched"),
    [
        ("a new week starts with the draft", "draft", True),
        ("a new week starts with the draft", "DRAFT", True),
        ("a new week starts with the draft", "week*", False),  # a glob covers the whole name
        ("a new week starts with the draft", "*week*", True),
        ("a new week starts with the draft", "a new wee? *", True),
        ("a new week starts with the draft", "[ab] new*", True),
        ("a new week starts with the draft", "publish", False),
        ("x", "", True),
    ],
)
def test_name_matches(name: str, pattern: str, matched: bool) -> None:
    assert name_matches(name, pattern) is matched


def test_the_api_takes_the_keyword(project: Path) -> None:
    program = agent_graph.compile_provider(project / "provider.yaml")
    results = list(iter_results(program, project / "tests", keyword="partial"))
    assert [r.name for r in results] == [PARTIAL, "a bad status", "05-broken.yaml"]
    assert report_lines(results[:1], project, verbose=True) == [
        f"PASS {PARTIAL} (tests/02-partial-draft-repeats.yaml:2)",
        "1/1 graph test(s) passed",
    ]
    with pytest.raises(AgentGraphError) as caught:
        list(iter_results(program, project / "tests" / "01-fresh-week.yaml", keyword="zebra"))
    assert caught.value.code == "test-cases-empty"
