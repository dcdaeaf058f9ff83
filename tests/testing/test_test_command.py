"""``agc test``: broken cases are one command error; ``-v`` lists cases; ``-k`` selects them.

A case file that cannot be loaded (schema-invalid, unparsable) or run (an unknown
graph) makes ``agc test`` a command error, as in the reference: one
``agent-graph.error.v1`` envelope on stderr with the first broken case's code, exit 1,
nothing on stdout; its diagnostics name every broken case with file, line and column.
The library (and the pytest plugin) keeps each as an errored result, and the JUnit
report has an ``<error>`` for each.
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

WEEKLY = Path(__file__).resolve().parents[2] / "examples" / "weekly-report"

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
    """What the library's report (the pytest plugin, ``report_lines``) says of the three."""
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
        "    at tests/06-lost.yaml:3:8: graph-missing: Provider example.weekly-report has no "
        "graph nowhere (graph test 'a lost graph')",
    ]


def envelope(err: str) -> dict[str, object]:
    document = json.loads(err)
    assert document["schema"] == "agent-graph.error.v1"
    error: dict[str, object] = document["error"]
    return error


def places(error: dict[str, object]) -> list[tuple[str, str, int, int]]:
    """(file name, code, line, column) of each diagnostic of an envelope."""
    found = error["diagnostics"]
    assert isinstance(found, list)
    return [
        (Path(d["path"]).name, d["code"], d["detail"]["line"], d["detail"]["column"]) for d in found
    ]


FAILED_LINES = [
    "FAIL the week starts with publishing",
    "  primaryNode: expected publish, received draft",
    "    at tests/03-wrong.yaml:7:16",
]


# -- broken cases: one command error, as in the reference, naming every one ---------------------


def test_broken_cases_are_one_command_error_naming_each(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = agc(["test", "--format", "json"], capsys)
    assert (code, out) == (1, "")
    error = envelope(err)
    assert error["code"] == "schema-invalid"  # the first broken case's, as the reference says
    assert error["message"] == (
        f"{project / 'tests' / '04-bad.yaml'} does not match test-case.schema.json "
        "(and 2 more broken graph test case(s), in the diagnostics)"
    )
    assert places(error) == [
        ("04-bad.yaml", "schema.enum", 6, 15),
        ("05-broken.yaml", "parse-failed", 3, 1),
        ("06-lost.yaml", "graph-missing", 3, 8),
    ]
    diagnostics = error["diagnostics"]
    assert isinstance(diagnostics, list)
    assert diagnostics[2]["detail"]["pointer"] == "/graph"
    assert "no graph nowhere" in diagnostics[2]["message"]


def test_broken_cases_in_human_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = agc(["test"], capsys)
    assert (code, out) == (1, "")
    lines = err.splitlines()
    assert lines[0].startswith(f"ERROR schema-invalid: {project / 'tests' / '04-bad.yaml'} ")
    # the locations are below the working directory: written relative to it (issue 27)
    located = [line for line in lines if line.startswith("tests/")]
    assert [line.split(": ", 1)[0] for line in located] == [
        "tests/04-bad.yaml:6:15",
        "tests/05-broken.yaml:3:1",
        "tests/06-lost.yaml:3:8",
    ]


@pytest.mark.parametrize(
    ("name", "code", "message", "place"),
    [
        (
            "04-bad.yaml",
            "schema-invalid",
            "{tests}/04-bad.yaml does not match test-case.schema.json",
            ("04-bad.yaml", "schema.enum", 6, 15),
        ),
        (
            "06-lost.yaml",
            "graph-missing",
            "Provider example.weekly-report has no graph nowhere",
            ("06-lost.yaml", "graph-missing", 3, 8),
        ),
    ],
)
def test_a_single_broken_case_is_the_reference_error(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    code: str,
    message: str,
    place: tuple[str, str, int, int],
) -> None:
    exit_code, out, err = agc(["test", f"tests/{name}", "--format", "json"], capsys)
    assert (exit_code, out) == (1, "")
    error = envelope(err)
    assert (error["code"], error["message"]) == (
        code,
        message.format(tests=project / "tests"),
    )
    assert places(error) == [place]


def test_a_missing_expect_is_schema_invalid(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "tests" / "07-no-expect.yaml").write_text(
        "schema: agent-graph.test.v1\nname: no expect\ngraph: report\nentry: default\n",
        encoding="utf-8",
    )
    exit_code, out, err = agc(["test", "tests/07-no-expect.yaml", "--format", "json"], capsys)
    assert (exit_code, out) == (1, "")
    error = envelope(err)
    assert error["code"] == "schema-invalid"
    diagnostics = error["diagnostics"]
    assert isinstance(diagnostics, list)
    assert [d["detail"]["params"] for d in diagnostics] == [{"missingProperty": "expect"}]


def test_a_run_without_errors_keeps_the_reference_document(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = agc(["test", "tests/01-fresh-week.yaml", "--format", "json"], capsys)
    assert code == 0
    assert list(json.loads(out)) == ["state", "total", "failed", "results"]
    assert list(json.loads(out)["results"][0]) == ["name", "path", "passed", "failures"]


def test_the_library_report_still_shows_errored_cases(project: Path) -> None:
    results = run_tests(project / "provider.yaml", project / "tests")
    assert report_lines(results, project) == [
        "2/6 graph test(s) passed, 3 error(s)",
        *FAILED_LINES,
        *errored_lines(project),
    ]


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
    for name in ("04-bad.yaml", "05-broken.yaml", "06-lost.yaml"):
        (project / "tests" / name).unlink()
    code, out, _ = agc(["test", "-v"], capsys)
    assert code == 1
    assert out.splitlines() == [
        f"PASS {FRESH} (tests/01-fresh-week.yaml:2)",
        f"PASS {PARTIAL} (tests/02-partial-draft-repeats.yaml:2)",
        "FAIL the week starts with publishing (tests/03-wrong.yaml:2)",
        "2/3 graph test(s) passed",
        *FAILED_LINES,
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
    code, out, err = agc(["test", "-v", "-k", "DRAFT", "--format", "json"], capsys)
    assert (code, out) == (1, "")  # 05-broken.yaml has no name to select by: always reported
    assert [place[:2] for place in places(envelope(err))] == [
        ("04-bad.yaml", "schema.enum"),
        ("05-broken.yaml", "parse-failed"),
    ]  # 03-wrong.yaml and 06-lost.yaml load, and their names do not match
    (project / "tests" / "04-bad.yaml").unlink()
    (project / "tests" / "05-broken.yaml").unlink()
    code, out, _ = agc(["test", "-v", "-k", "DRAFT"], capsys)
    assert code == 0
    assert out.splitlines() == [
        f"PASS {FRESH} (tests/01-fresh-week.yaml:2)",
        f"PASS {PARTIAL} (tests/02-partial-draft-repeats.yaml:2)",
        "2/2 graph test(s) passed",
    ]


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
