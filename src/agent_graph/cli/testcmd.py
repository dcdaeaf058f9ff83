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
"""

from __future__ import annotations

import os
from typing import Any

import click

from .context import load, options
from .options import provider_options
from .render import emit


@click.command("test")
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
@provider_options
@click.pass_context
def test_command(
    ctx: click.Context,
    /,
    path: str,
    junit_xml: str | None,
    verbose: bool,
    keyword: str | None,
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
    emit(opts.fmt, summary(results), report_lines(results, verbose=verbose))
    if any(not result.passed for result in results):
        ctx.exit(1)
