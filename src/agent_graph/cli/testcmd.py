"""``agc test [path]``: run a Provider's graph tests (reference §4, §8.3).

Output is the reference's (JSON ``{"state","total","failed","results"}``; human
"<passed>/<total> graph test(s) passed" then "FAIL <name>" and the failure lines),
with the file, line and column of each unmet expectation added to the human lines.
Exit 1 when any case fails; a missing or empty test path is an error.

A case that cannot be loaded or run (a schema-invalid file, an unknown graph) is a
command error, as in the reference: one ``agent-graph.error.v1`` envelope on stderr with
the first broken case's code and message, exit 1, no report on stdout. Unlike the
reference, every case is still read first, so the envelope's diagnostics name every
broken case (file, line, column), not only the first; a ``--junit-xml`` report is still
written, with an ``<error>`` per broken case. ``-v`` lists every case first
(``PASS|FAIL <name> (<file>:<line>)``); ``-k`` runs only the cases whose name matches
(``test-cases-empty`` when none does).

``--junit-xml FILE`` replaces FILE only when it is a previous report of ours, never a
file the Provider is read from (``junit-target-exists``, before anything is written).

``--coverage`` adds what the cases leave out (:mod:`agent_graph.testing.coverage`): a
table after the human report, a ``coverage`` member in the JSON document (absent without
the option, so the document stays the reference's). ``--fail-under PCT`` implies it and
exits 1 below PCT percent, saying so on stderr; a PCT that is not a number from 0 to 100
is ``option-invalid`` (exit 2).
"""

from __future__ import annotations

import math
import os
from typing import Any, Final

import click

from .. import codes
from ..errors import AgentGraphError
from .context import load, options
from .options import provider_options
from .render import emit

#: ``agc test --coverage``'s example, printed at the end of the help and run by the tests.
COVERAGE_EXAMPLE: Final = (
    "agc test examples/weekly-report/tests -m examples/weekly-report/provider.yaml "
    "--coverage --fail-under 80"
)


def _percentage(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and 0 <= number <= 100):
        raise AgentGraphError(
            codes.OPTION_INVALID,
            f"--fail-under expects a percentage from 0 to 100, received: {value}",
        )
    return number


@click.command(
    "test",
    epilog=f"\b\nTo see what the cases leave out, and fail CI under 80%:\n  {COVERAGE_EXAMPLE}",
)
@click.argument("path", required=False, default="tests", metavar="[PATH]")
@click.option(
    "--junit-xml",
    "junit_xml",
    default=None,
    metavar="FILE",
    help="Also write a JUnit XML report (one testcase per graph test) to FILE; an "
    "existing FILE is replaced only when it is a previous report of agc test.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    default=False,
    help="List every case first: PASS, FAIL or ERROR, its name, file and line.",
)
@click.option(
    "-k",
    "keyword",
    default=None,
    metavar="PATTERN",
    help="Run only the cases whose name contains PATTERN, or matches it as a shell-style "
    "glob over the whole name when it has * ? or [ (case-insensitive). Files that cannot "
    "be loaded are always reported. No matching case is an error (test-cases-empty).",
)
@click.option(
    "--coverage",
    is_flag=True,
    default=False,
    help="Also report what the cases leave out: action and Gate nodes never the primary "
    "route, edges that never fired, outcomes of each node no case gives it, Gates no case "
    "waits at (from the evaluation trace).",
)
@click.option(
    "--fail-under",
    "fail_under",
    default=None,
    metavar="PCT",
    callback=_percentage,
    help="With --coverage (implied): exit 1 when the coverage is under PCT percent.",
)
@provider_options
@click.pass_context
def test_command(
    ctx: click.Context,
    /,
    path: str,
    junit_xml: str | None,
    verbose: bool,
    keyword: str | None,
    coverage: bool,
    fail_under: float | None,
    **local: Any,
) -> None:
    """Evaluate graph test cases (agent-graph.test.v1) under PATH (default: tests).

    Cases are YAML or JSON files, found recursively; nothing is executed. Exit code 1
    when any case fails. A case that cannot be loaded or run is a command error (exit 1)
    whose diagnostics list every such case.
    """
    from ..testing import broken_cases_error, iter_results, report_lines, summary, write_junit

    opts = options(ctx, **local)
    loaded = load(opts, need="both")
    provider, program = loaded.provider, loaded.runnable
    results = list(iter_results(program, path, keyword=keyword))
    if junit_xml is not None:  # checked before anything is written: never over a source file
        keep: list[str | os.PathLike[str]] = [
            *provider.files,
            provider.manifest_path,
            *(r.path for r in results),
        ]
        keep += [given for given in (opts.manifest, opts.skill, opts.registry) if given]
        write_junit(junit_xml, results, suite=provider.id, keep=keep)
    broken = broken_cases_error(results)
    if broken is not None:
        raise broken
    document, lines = summary(results), report_lines(results, verbose=verbose)
    under = False
    if coverage or fail_under is not None:
        from ..testing.coverage import coverage as covered
        from ..testing.coverage import coverage_lines

        found = covered(program, results)
        if fail_under is not None:
            under = found["percent"] < fail_under
            found["failUnder"] = fail_under
        document["coverage"] = found
        lines += ["", *coverage_lines(found)]
    emit(opts.fmt, document, lines)
    if under:
        click.echo(
            f"FAIL coverage {document['coverage']['percent']:.2f}% is under "
            f"--fail-under {fail_under:g}%",
            err=True,
        )
    if under or any(not result.passed for result in results):
        ctx.exit(1)
