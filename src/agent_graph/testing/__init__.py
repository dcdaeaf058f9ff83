"""Graph tests (``agent-graph.test.v1``): discovery, checking, reports.

The same runner serves ``agc test``, the pytest plugin and host code::

    from agent_graph import compile_provider
    from agent_graph.testing import discover, load_case, run_cases, summary

    program = compile_provider("provider.yaml")
    results = run_cases(program, [load_case(p) for p in discover("tests")])
    assert all(r.passed for r in results), summary(results)

or in one call ``run_tests("provider.yaml", "tests")``. Nothing is executed: each
case is an evaluation (and, for route expectations, a route resolution) of a state.
"""

from __future__ import annotations

from .assertions import EVALUATION_KEYS, ROUTE_KEYS, Failure, check_case
from .discovery import TEST_SCHEMA, GraphTestCase, discover, load_case
from .junit import junit_xml, write_junit
from .runner import (
    CaseResult,
    failure_lines,
    iter_results,
    report_lines,
    result_lines,
    run_case,
    run_cases,
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
    "check_case",
    "discover",
    "failure_lines",
    "iter_results",
    "junit_xml",
    "load_case",
    "report_lines",
    "result_lines",
    "run_case",
    "run_cases",
    "run_tests",
    "summary",
    "write_junit",
]
