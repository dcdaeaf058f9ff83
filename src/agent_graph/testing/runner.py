"""Running graph tests: one compiled Program, cases evaluated in discovery order.

Files are read, checked and run one after the other, as in the reference. A case that
cannot run (an unreadable or schema-invalid file, an unknown graph, an unusable state)
is an *errored* result with its error and the other cases still run, so one pass finds
every broken case: the pytest plugin reports each as its own error, and ``agc test``
turns them into one command error, as the reference does, whose diagnostics name every
broken case (:func:`broken_cases_error`). :func:`check_case` never executes an Action.

Cases can be selected by name (``agc test -k``, :func:`name_matches`): a pattern
with ``*``, ``?`` or ``[`` is a shell-style glob over the whole name, any other
pattern a substring; both ignore case. A file that cannot be loaded has no
trustworthy name and is always reported, like a collection error in pytest.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import codes
from ..documents.paths import display_path
from ..errors import AgentGraphError, Diagnostic
from .assertions import NO_PRIMARY_ROUTE, Failure, check_case, show
from .discovery import GraphTestCase, _absolute, discover, try_load_case

if TYPE_CHECKING:
    from ..vm import Program


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case; :meth:`to_dict` has the reference's result shape.

    ``error`` is set when the case could not run (then ``case`` may be a stand-in
    named after the file, see :func:`~agent_graph.testing.discovery.try_load_case`).
    """

    case: GraphTestCase
    failures: tuple[Failure, ...]
    seconds: float = 0.0
    error: AgentGraphError | None = None
    #: ``outcome-key-unknown`` for each outcome key of the case's state that names no
    #: node (a misspelled key is silently no outcome: the FAIL alone would mislead).
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def name(self) -> str:
        return self.case.name

    @property
    def path(self) -> Path:
        return self.case.path

    @property
    def passed(self) -> bool:
        return not self.failures and self.error is None

    @property
    def errored(self) -> bool:
        return self.error is not None

    @property
    def status(self) -> str:
        """``PASS``, ``FAIL`` or ``ERROR``."""
        return "ERROR" if self.errored else "PASS" if self.passed else "FAIL"

    def to_dict(self) -> dict[str, Any]:
        """The reference's member set; an errored case adds ``error`` (the error
        envelope's ``error`` member) and lists "<code>: <message>" as its failure."""
        out: dict[str, Any] = {
            "name": self.case.name,
            "path": str(self.case.path),
            "passed": self.passed,
            "failures": [failure.message for failure in self.failures],
        }
        if self.error is not None:
            out["failures"].append(f"{self.error.code}: {self.error.message}")
            out["error"] = self.error.to_dict()["error"]
        return out  # warnings are human output only: the JSON stays the reference's


def run_case(program: Program, case: GraphTestCase) -> CaseResult:
    """Run one case; an error the case causes (unknown graph, bad state) is raised."""
    start = time.perf_counter()
    failures = check_case(program, case)
    return CaseResult(case, failures, time.perf_counter() - start, None, _warnings(program, case))


def _warnings(program: Program, case: GraphTestCase) -> tuple[Diagnostic, ...]:
    from ..vm.evaluate import outcome_key_warnings

    outcomes = case.state.get("outcomes")
    if not isinstance(outcomes, dict) or case.graph not in program.graph_ids:
        return ()
    found = outcome_key_warnings(program.ir, case.graph, outcomes)
    placed = []
    for warning in found:
        key = warning.detail["key"]
        pointer = "/state/outcomes/" + key.replace("~", "~0").replace("/", "~1")
        line, column = case.position(pointer)
        placed.append(replace(warning, path=str(case.path), line=line, column=column))
    return tuple(placed)


def run_or_error(program: Program, case: GraphTestCase) -> CaseResult:
    """:func:`run_case`, with an error the case causes kept as an errored result."""
    start = time.perf_counter()
    try:
        return run_case(program, case)
    except AgentGraphError as error:
        return CaseResult(case, (), time.perf_counter() - start, error)


def run_cases(program: Program, cases: Iterable[GraphTestCase]) -> list[CaseResult]:
    return [run_case(program, case) for case in cases]


def name_matches(name: str, pattern: str) -> bool:
    """``agc test -k``: a glob over the whole name when ``pattern`` has ``*``, ``?`` or
    ``[``, else a substring of it; case is ignored either way."""
    name, pattern = name.casefold(), pattern.casefold()
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


def iter_results(
    program: Program, path: str | os.PathLike[str] = "tests", *, keyword: str | None = None
) -> Iterator[CaseResult]:
    """Discover, read and run the cases at ``path`` one at a time (the reference's order).

    A case that cannot be loaded or run is an errored result; the others still run.
    With ``keyword`` only cases whose name matches it (:func:`name_matches`) run;
    files that cannot be loaded are reported whatever their name. Nothing to report
    at all is ``test-cases-empty``, naming the pattern.
    """
    reported = 0
    for case_path in discover(path):
        case, error = try_load_case(case_path)
        if error is not None:
            reported += 1
            yield CaseResult(case, (), 0.0, error)
            continue
        if keyword is not None and not name_matches(case.name, keyword):
            continue
        reported += 1
        yield run_or_error(program, case)
    if keyword is not None and not reported:
        raise AgentGraphError(
            codes.TEST_CASES_EMPTY,
            f"No graph test case name matches -k {keyword!r}: {_absolute(path)}",
        )


def run_tests(
    manifest: Program | str | os.PathLike[str],
    path: str | os.PathLike[str] = "tests",
    *,
    keyword: str | None = None,
) -> list[CaseResult]:
    """Compile ``manifest`` (or use a compiled Program) and run every case at ``path``."""
    from ..vm import Program

    if isinstance(manifest, Program):
        program = manifest
    else:
        from .. import compile_provider

        program = compile_provider(manifest)
    return list(iter_results(program, path, keyword=keyword))


def broken_cases_error(results: Sequence[CaseResult]) -> AgentGraphError | None:
    """One error for every case that could not run, or None when all could.

    The reference aborts ``agc test`` at the first broken case with that case's error
    (``schema-invalid``, ``graph-missing`` …); so does this, by code and message, but its
    diagnostics hold every broken case's findings (file, line, column), first case
    first, so one run shows all there is to mend.
    """
    broken = [(result, result.error) for result in results if result.error is not None]
    if not broken:
        return None
    diagnostics: list[Diagnostic] = []
    for result, error in broken:
        where = str(result.path)
        found = error.diagnostics or [
            Diagnostic(error.code, error.message, path=where, line=result.case.line)
        ]
        diagnostics += [d if d.path is not None else replace(d, path=where) for d in found]
    first = broken[0][1]
    message = first.message
    if len(broken) > 1:
        message += f" (and {len(broken) - 1} more broken graph test case(s), in the diagnostics)"
    return AgentGraphError(first.code, message, diagnostics)


def summary(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The ``agc test --format json`` document.

    The reference's members; ``failed`` counts every case that did not pass, errored
    ones included, and ``errors`` (only present when there are some) those that errored.
    """
    failed = sum(1 for result in results if not result.passed)
    errors = sum(1 for result in results if result.errored)
    out: dict[str, Any] = {
        "state": "failed" if failed else "passed",
        "total": len(results),
        "failed": failed,
    }
    if errors:
        out["errors"] = errors
    out["results"] = [result.to_dict() for result in results]
    return out


def failure_lines(failure: Failure, path: Path, base: Path | None = None) -> list[str]:
    """The reference's failure text, then where the expectation is written and what was seen."""
    lines = [f"  {failure.message}"]
    lines.append(f"    at {display_path(path, base)}:{failure.line}:{failure.column}")
    if failure.key == "diagnosticsInclude":
        lines.append(f"    received diagnostics: {show(failure.received)}")
    elif failure.message == NO_PRIMARY_ROUTE:
        lines.append("    received: no primary route")
    return lines


def error_lines(error: AgentGraphError, base: Path | None = None) -> list[str]:
    """Why a case could not run: ``<code>: <message>``, then each positioned finding."""
    lines = [f"  {error.code}: {error.message}"]
    for diagnostic in error.diagnostics:
        where = display_path(Path(diagnostic.path), base) if diagnostic.path else "<input>"
        if diagnostic.line is not None:
            where += f":{diagnostic.line}"
            if diagnostic.column is not None:
                where += f":{diagnostic.column}"
        same = (diagnostic.code, diagnostic.message) == (error.code, error.message)
        lines.append(
            f"    at {where}"
            if same
            else f"    at {where}: {diagnostic.code}: {diagnostic.message}"
        )
    return lines


def result_lines(result: CaseResult, base: Path | None = None) -> list[str]:
    """``FAIL <name>`` and each failure, or ``ERROR <name>`` and the error (nothing for
    a passed case)."""
    if result.passed:
        return [f"PASS {result.name}", *warning_lines(result, base)] if result.warnings else []
    lines = [f"{result.status} {result.name}"]
    for failure in result.failures:
        lines += failure_lines(failure, result.path, base)
    if result.error is not None:
        lines += error_lines(result.error, base)
    lines += warning_lines(result, base)
    return lines


def warning_lines(result: CaseResult, base: Path | None = None) -> list[str]:
    """Each warning of a case, where it is written (under its FAIL, or alone for a pass)."""
    lines: list[str] = []
    for w in result.warnings:
        lines.append(f"  WARNING {w.code}: {w.message}")
        where = display_path(Path(w.path or result.path), base)
        lines.append(f"    at {where}:{w.line}:{w.column}")
    return lines


def case_line(result: CaseResult, base: Path | None = None) -> str:
    """``agc test -v``: ``PASS|FAIL|ERROR <name> (<file>:<line>)``."""
    return f"{result.status} {result.name} ({display_path(result.path, base)}:{result.case.line})"


def report_lines(
    results: Sequence[CaseResult], base: Path | None = None, *, verbose: bool = False
) -> list[str]:
    """The ``agc test`` human output; ``verbose`` puts one :func:`case_line` per case first."""
    passed = sum(1 for result in results if result.passed)
    errors = sum(1 for result in results if result.errored)
    lines = [case_line(result, base) for result in results] if verbose else []
    count = f"{passed}/{len(results)} graph test(s) passed"
    lines.append(f"{count}, {errors} error(s)" if errors else count)
    for result in results:
        lines += result_lines(result, base)
    return lines
