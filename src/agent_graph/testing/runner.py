"""Running graph tests: one compiled Program, cases evaluated in discovery order.

As in the reference, files are read, checked and run one after the other, and the
first unreadable or schema-invalid file, or unknown graph, aborts the run with its
error (no partial report). :func:`check_case` never executes an Action.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..documents.paths import display_path
from .assertions import NO_PRIMARY_ROUTE, Failure, check_case, show
from .discovery import GraphTestCase, discover, load_case

if TYPE_CHECKING:
    from ..vm import Program


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case; :meth:`to_dict` has the reference's result shape."""

    case: GraphTestCase
    failures: tuple[Failure, ...]
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return self.case.name

    @property
    def path(self) -> Path:
        return self.case.path

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.case.name,
            "path": str(self.case.path),
            "passed": self.passed,
            "failures": [failure.message for failure in self.failures],
        }


def run_case(program: Program, case: GraphTestCase) -> CaseResult:
    start = time.perf_counter()
    failures = check_case(program, case)
    return CaseResult(case, failures, time.perf_counter() - start)


def run_cases(program: Program, cases: Iterable[GraphTestCase]) -> list[CaseResult]:
    return [run_case(program, case) for case in cases]


def iter_results(program: Program, path: str | os.PathLike[str] = "tests") -> Iterator[CaseResult]:
    """Discover, read and run the cases at ``path`` one at a time (the reference's order)."""
    for case_path in discover(path):
        yield run_case(program, load_case(case_path))


def run_tests(
    manifest: Program | str | os.PathLike[str], path: str | os.PathLike[str] = "tests"
) -> list[CaseResult]:
    """Compile ``manifest`` (or use a compiled Program) and run every case at ``path``."""
    from ..vm import Program

    if isinstance(manifest, Program):
        program = manifest
    else:
        from .. import compile_provider

        program = compile_provider(manifest)
    return list(iter_results(program, path))


def summary(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The ``agc test --format json`` document."""
    failed = sum(1 for result in results if not result.passed)
    return {
        "state": "failed" if failed else "passed",
        "total": len(results),
        "failed": failed,
        "results": [result.to_dict() for result in results],
    }


def failure_lines(failure: Failure, path: Path, base: Path | None = None) -> list[str]:
    """The reference's failure text, then where the expectation is written and what was seen."""
    lines = [f"  {failure.message}"]
    lines.append(f"    at {display_path(path, base)}:{failure.line}:{failure.column}")
    if failure.key == "diagnosticsInclude":
        lines.append(f"    received diagnostics: {show(failure.received)}")
    elif failure.message == NO_PRIMARY_ROUTE:
        lines.append("    received: no primary route")
    return lines


def result_lines(result: CaseResult, base: Path | None = None) -> list[str]:
    """``FAIL <name>`` and each failure (nothing for a passed case)."""
    if result.passed:
        return []
    lines = [f"FAIL {result.name}"]
    for failure in result.failures:
        lines += failure_lines(failure, result.path, base)
    return lines


def report_lines(results: Sequence[CaseResult], base: Path | None = None) -> list[str]:
    """The ``agc test`` human output."""
    passed = sum(1 for result in results if result.passed)
    lines = [f"{passed}/{len(results)} graph test(s) passed"]
    for result in results:
        lines += result_lines(result, base)
    return lines
