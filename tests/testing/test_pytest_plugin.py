"""The pytest plugin: a Provider's graph tests as pytest items, inert unless asked for.

Each test runs pytest in a subprocess with ``pytester`` on a copy of the weekly-report
example. Entry-point autoloading is switched off there and the plugin loaded with
``-p``, so the tests behave the same whether or not this package's entry point is
installed.
"""

from __future__ import annotations

import shutil
import tomllib
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "weekly-report"
CASES = len(list((EXAMPLE / "tests").glob("*.yaml")))


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Python project with a Provider under ``graph/`` and one ordinary test under ``py/``."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    shutil.copytree(EXAMPLE, pytester.path / "graph")
    pytester.makepyfile(**{"py/test_plain": "def test_plain():\n    assert True\n"})
    return pytester.path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # a subprocess: in-process runs would unload and re-import the compiler between runs
    return pytester.runpytest_subprocess(
        "-p", "agent_graph.pytest_plugin", "-p", "no:cacheprovider", *args
    )


def test_the_plugin_is_inert_without_a_provider(pytester: pytest.Pytester, project: Path) -> None:
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1)
    assert "graph" not in "\n".join(result.outlines).replace("graph test", "")


def test_provider_option_collects_every_case_as_an_item(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = run(pytester, "--agc-provider", "graph/provider.yaml", "graph/tests", "-v")
    result.assert_outcomes(passed=CASES)
    result.stdout.fnmatch_lines(
        ["graph/tests/01-fresh-week.yaml::a new week starts with the draft PASSED*"]
    )


def test_a_directory_names_its_provider_yaml(pytester: pytest.Pytester, project: Path) -> None:
    result = run(pytester, "--agc-provider", "graph", "graph/tests")
    result.assert_outcomes(passed=CASES)


def test_a_failing_case_shows_expected_received_and_line(
    pytester: pytest.Pytester, project: Path
) -> None:
    case = project / "graph" / "tests" / "01-fresh-week.yaml"
    case.write_text(
        case.read_text(encoding="utf-8").replace("primaryNode: draft", "primaryNode: publish"),
        encoding="utf-8",
    )
    result = run(pytester, "--agc-provider", "graph/provider.yaml", "graph/tests")
    result.assert_outcomes(passed=CASES - 1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "graph test 'a new week starts with the draft' failed:",
            "  primaryNode: expected publish, received draft",
            "    at graph/tests/01-fresh-week.yaml:7:16",
            "FAILED graph/tests/01-fresh-week.yaml::a new week starts with the draft*",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_plain_pytest_runs_graph_tests_from_the_ini_file(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makeini("[pytest]\ntestpaths = py\nagc_provider = graph/provider.yaml\n")
    result = run(pytester)
    result.assert_outcomes(passed=CASES + 1)
    # explicit paths are respected: the graph tests are not added to them
    result = run(pytester, "py")
    result.assert_outcomes(passed=1)


def test_ini_paths_are_relative_to_the_ini_file(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nagc_provider = graph\nagc_tests = graph/tests\n")
    monkeypatch.chdir(project / "py")
    result = run(pytester, str(project))
    result.assert_outcomes(passed=CASES + 1)


def test_tests_option_and_keyword_selection(pytester: pytest.Pytester, project: Path) -> None:
    (project / "graph" / "tests").rename(project / "cases")
    result = run(
        pytester, "--agc-provider", "graph", "--agc-tests", "cases", "-k", "draft", "cases"
    )
    selected = result.parseoutcomes()["passed"]
    assert 0 < selected < CASES


def test_a_missing_or_empty_tests_directory_is_a_usage_error(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = run(pytester, "--agc-provider", "graph", "--agc-tests", "nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*agent-graph: test-path-missing: Graph test path does not exist*"]
    )
    (project / "empty").mkdir()
    result = run(pytester, "--agc-provider", "graph", "--agc-tests", "empty")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agent-graph: test-cases-empty: *"])


def test_a_schema_invalid_case_is_a_collection_error_with_its_position(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "graph" / "tests" / "99-bad.yaml").write_text(
        "schema: agent-graph.test.v1\nname: bad\ngraph: report\nentry: default\n"
        "expect:\n  statusCode: maybe\n",
        encoding="utf-8",
    )
    result = run(pytester, "--agc-provider", "graph", "graph/tests")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # pytest's rule for broken test files
    result.assert_outcomes(errors=1)
    result = run(
        pytester, "--agc-provider", "graph", "graph/tests", "--continue-on-collection-errors"
    )
    result.assert_outcomes(passed=CASES, errors=1)
    result.stdout.fnmatch_lines(
        [
            "schema-invalid: */99-bad.yaml does not match test-case.schema.json",
            "  */99-bad.yaml:6:15: schema.enum: *",
        ]
    )


def test_a_case_naming_an_unknown_graph_fails_its_item_with_the_error(
    pytester: pytest.Pytester, project: Path
) -> None:
    """``agc test`` reports such a case as errored; under pytest it stays an item failure
    with the positioned error (the plugin runs cases with ``run_case``, which raises)."""
    (project / "graph" / "tests" / "99-lost.yaml").write_text(
        "schema: agent-graph.test.v1\nname: lost\ngraph: nowhere\nentry: default\n"
        "expect:\n  statusCode: actionable\n",
        encoding="utf-8",
    )
    result = run(pytester, "--agc-provider", "graph", "graph/tests")
    result.assert_outcomes(passed=CASES, failed=1)
    result.stdout.fnmatch_lines(
        [
            "graph-missing: Provider example.weekly-report has no graph nowhere",
            "  */99-lost.yaml:3:8: graph-missing: Provider example.weekly-report has no graph "
            "nowhere (graph test 'lost')",
        ]
    )


def test_an_invalid_provider_fails_every_item_with_its_error(
    pytester: pytest.Pytester, project: Path
) -> None:
    manifest = project / "graph" / "provider.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("version: 1.0.0", "version: one"),
        encoding="utf-8",
    )
    result = run(pytester, "--agc-provider", "graph", "graph/tests")
    result.assert_outcomes(failed=CASES)
    result.stdout.fnmatch_lines(["schema-invalid: provider.yaml does not match*"])


def test_pytest_junit_report_has_one_testcase_per_case(
    pytester: pytest.Pytester, project: Path
) -> None:
    run(pytester, "--agc-provider", "graph", "graph/tests", "--junitxml", "report.xml")
    cases = list(ET.parse(project / "report.xml").getroot().iter("testcase"))
    assert len(cases) == CASES
    assert cases[0].get("name") == "a new week starts with the draft"


def test_the_entry_point_names_the_plugin_module() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["pytest11"] == {
        "agent_graph": "agent_graph.pytest_plugin"
    }


@pytest.mark.slow
def test_the_installed_entry_point_loads_the_plugin(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = [e for e in entry_points(group="pytest11") if e.name == "agent_graph"]
    if not installed:
        pytest.skip("the entry point is not installed (pip install -e .)")
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    quiet = ("-p", "no:cacheprovider")
    result = pytester.runpytest_subprocess(*quiet, "--agc-provider", "graph", "graph/tests")
    result.assert_outcomes(passed=CASES)
    result = pytester.runpytest_subprocess(*quiet)
    result.assert_outcomes(passed=1)  # inert: the YAML files are not collected
    result = pytester.runpytest_subprocess(*quiet, "-p", "no:agent_graph", "--agc-provider", "x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # disabled: the option is unknown
