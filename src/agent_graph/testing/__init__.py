"""Graph tests (``agent-graph.test.v1``): discovery, checking, reports.

The same runner serves ``agc test``, the pytest plugin and host code::

    from agent_graph import compile_provider
    from agent_graph.testing import discover, load_case, run_cases, summary

    program = compile_provider("provider.yaml")
    results = run_cases(program, [load_case(p) for p in discover("tests")])
    assert all(r.passed for r in results), summary(results)

or in one call ``run_tests("provider.yaml", "tests")`` (``keyword=`` selects cases by
name, as ``agc test -k``). Nothing is executed: each case is an evaluation (and, for
route expectations, a route resolution) of a state. A case that cannot be loaded or
run is an errored result (``CaseResult.error``); the other cases still run.
"""

from __future__ import annotations

from .assertions import EVALUATION_KEYS, ROUTE_KEYS, Failure, check_case
from .discovery import TEST_SCHEMA, GraphTestCase, discover, load_case, try_load_case
from .junit import junit_xml, write_junit
from .runner import (
    CaseResult,
    broken_cases_error,
    case_line,
    error_lines,
    failure_lines,
    iter_results,
    name_matches,
    report_lines,
    result_lines,
    run_case,
    run_cases,
    run_or_error,
    run_tests,
    summary,
)

__all__ = [
    "EVALUATION_KEYS",
    "ROUTE_KEYS",
    "TEST_SCHEMA",
    "CaseResult",
    "Failure",
    "GraphTestCase",
    "broken_cases_error",
    "case_line",
    "check_case",
    "discover",
    "error_lines",
    "failure_lines",
    "iter_results",
    "junit_xml",
    "load_case",
    "name_matches",
    "report_lines",
    "result_lines",
    "run_case",
    "run_cases",
    "run_or_error",
    "run_tests",
    "summary",
    "try_load_case",
    "write_junit",
]
