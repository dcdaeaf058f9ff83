"""``agc flow run|resume|status|events``: Flow Runs, recorded in a Run file (``--state``).

``run`` and ``resume`` print each visit as it is recorded (human form: node, result,
duration; branches as they finish; child Runs indented) and end with the summary; with
``--format json`` stdout is exactly one line, the summary
``{"state","runId","flow","result","error"?}``. Exit 0 completed, 1 failed (or refused:
the ``agent-graph.error.v1`` envelope on stderr), 130 interrupted (SIGINT/SIGTERM; the
Run resumes). The record format: ``docs/flow-runs.md``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from .. import codes
from ..errors import AgentGraphError
from .context import options
from .options import format_option
from .render import emit

INTERRUPTED_EXIT = 130


def _task(text: str) -> str:
    """``--task``: the text itself, or ``@FILE``'s text verbatim."""
    if not text.startswith("@"):
        return text
    from ..documents.files import read_bytes

    path = Path(text[1:])
    if not os.path.lexists(path):
        raise AgentGraphError(codes.FILE_MISSING, f"The task file {path} does not exist")
    # non-blocking, regular files only, capped: @FIFO must not hang, @/dev/zero not fill memory
    data = read_bytes(Path(os.path.abspath(path)), str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AgentGraphError(
            codes.FILE_READ_FAILED,
            f"Cannot read the task file {path}: not UTF-8 text (byte {error.start})",
        ) from None


def _short(value: Any, width: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _human_event(event: dict[str, Any], depth: int) -> None:
    pad = "  " * depth
    kind = event["type"]
    line = None
    if kind == "visited":
        ms = event.get("durationMs")
        took = f" ({ms / 1000:.2f} s)" if isinstance(ms, int) else ""
        line = f"{pad}{event['node']}: {event['result']}{took}"
    elif kind == "run-started" and depth > 0:
        line = f"{pad}child Run {event['runId']} of {event['flow']}"
    elif kind == "run-resumed":
        line = f"{pad}resuming Run {event['runId']} ({event['previous']})"
    elif kind == "answer-rejected":
        line = f"{pad}{event['node']}: the Agent answered undeclared {event['rejected']!r}"
    elif kind == "visit-failed":
        line = f"{pad}{event['node']}: failed: {event['error']['summary']}"
    elif kind == "recovery":
        line = f"{pad}recovery ({event['strategy']}): {event['summary']}"
    elif kind == "round-started":
        line = f"{pad}{event['fork']}: {', '.join(event['branches'])} in parallel"
    elif kind in ("run-completed", "run-failed", "run-interrupted") and depth > 0:
        line = f"{pad}child Run {event['runId']}: {kind.removeprefix('run-')}"
    if line is not None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _finish(ctx: click.Context, fmt: str, summary: Any) -> None:
    document = summary.to_json()
    lines = [f"Run {summary.run_id} of {summary.flow}: {summary.state}"]
    if summary.error is not None:
        lines.append(f"Error ({summary.error['category']}): {summary.error['summary']}")
    if summary.result is not None:
        lines.append(f"Result: {_short(summary.result, 400)}")
    if summary.state == "interrupted" and summary.interrupted:
        from ..flow.runtime.api import FAIL_FLAG, RERUN_FLAG
        from .words import shell_command

        resume = ["agc", "flow", "resume", "--state", str(summary.path)]
        lines += [
            f"Interrupted command: {', '.join(summary.interrupted)} (it may have had effects;"
            " a plain resume refuses it)",
            f"Run it again: {shell_command([*resume, RERUN_FLAG])}",
            f"Or fail it (command_interrupted): {shell_command([*resume, FAIL_FLAG])}",
        ]
    elif summary.state == "interrupted":
        from .words import shell_command

        lines.append(
            f"Resume it: {shell_command(['agc', 'flow', 'resume', '--state', str(summary.path)])}"
        )
    lines.append(f"Record: {summary.path}")
    emit(fmt, document, lines)
    code = {"completed": 0, "failed": 1}.get(summary.state, INTERRUPTED_EXIT)
    ctx.exit(code)


def _limits(func: Any) -> Any:
    for option in reversed(
        [
            click.option(
                "--agent",
                "agent",
                metavar="SPEC",
                help="Agent adapter: script:FILE, command:[argv…], claude[:…], codex[:…], ask.",
            ),
            click.option(
                "--max-parallel",
                type=click.IntRange(min=1),
                default=None,
                help="At most N branches of a fork run at once (default: all).",
            ),
            click.option(
                "--max-visits",
                type=click.IntRange(min=1),
                default=None,
                help="Fail the Run (loop_limit) rather than make more than N visits.",
            ),
            click.option(
                "--command-timeout",
                type=click.FloatRange(min=0, min_open=True),
                default=None,
                metavar="SECONDS",
                help="Stop a command after SECONDS (default: no limit).",
            ),
        ]
    ):
        func = option(func)
    return func


@click.command("run")
@click.argument("entry", metavar="DIR|FLOW.md")
@click.option(
    "--task", required=True, metavar="TEXT|@FILE", help="The Run's task (@FILE: its text)."
)
@click.option("--cwd", "cwd", default=None, metavar="DIR", help="The project the Run works on.")
@click.option("--state", metavar="RUN.json", help="The new Run record (none with --dry-run).")
@click.option(
    "--dry-run", is_flag=True, help="Print every prompt and command argv; run and write nothing."
)
@_limits
@format_option
@click.pass_context
def run_command(
    ctx: click.Context,
    /,
    entry: str,
    task: str,
    cwd: str | None,
    state: str | None,
    dry_run: bool,
    agent: str | None,
    max_parallel: int | None,
    max_visits: int | None,
    command_timeout: float | None,
    **local: Any,
) -> None:
    """Run a Flow: every visit is recorded in RUN.json, which `flow resume` continues."""
    from ..flow import run

    fmt = options(ctx, **local).fmt
    if dry_run:
        from ..flow import compile as compile_flow
        from ..flow.runtime.dry_run import lines, plan

        document = plan(compile_flow(entry), _task(task))
        emit(fmt, document, lines(document))
        return
    if state is None:
        raise click.UsageError("Missing option '--state' (the new Run's record), or --dry-run")
    summary = run(
        entry,
        _task(task),
        state=state,
        agent=agent,
        cwd=cwd,
        max_parallel=max_parallel,
        max_visits=max_visits,
        command_timeout=command_timeout,
        on_event=_human_event if fmt == "human" else None,
        handle_signals=True,
    )
    _finish(ctx, fmt, summary)


@click.command("resume")
@click.option("--state", required=True, metavar="RUN.json", help="The Run record.")
@click.option("--rerun-interrupted", is_flag=True, help="Run an interrupted command again.")
@click.option(
    "--fail-interrupted",
    is_flag=True,
    help="Fail the Run (or child Run) of an interrupted command (command_interrupted).",
)
@_limits
@format_option
@click.pass_context
def resume_command(
    ctx: click.Context,
    /,
    state: str,
    rerun_interrupted: bool,
    fail_interrupted: bool,
    agent: str | None,
    max_parallel: int | None,
    max_visits: int | None,
    command_timeout: float | None,
    **local: Any,
) -> None:
    """Resume an interrupted Run (its Flow's files must be unchanged)."""
    from ..flow import resume

    fmt = options(ctx, **local).fmt
    if rerun_interrupted and fail_interrupted:
        raise click.UsageError("--rerun-interrupted and --fail-interrupted: give one")
    summary = resume(
        state,
        agent=agent,
        rerun_interrupted=rerun_interrupted,
        fail_interrupted=fail_interrupted,
        max_parallel=max_parallel,
        max_visits=max_visits,
        command_timeout=command_timeout,
        on_event=_human_event if fmt == "human" else None,
        handle_signals=True,
    )
    _finish(ctx, fmt, summary)


@click.command("status")
@click.option("--state", required=True, metavar="RUN.json", help="The Run record.")
@format_option
@click.pass_context
def status_command(ctx: click.Context, /, state: str, **local: Any) -> None:
    """Where a Run stands: its state, current node, result or error."""
    from ..flow.runtime import status

    fmt = options(ctx, **local).fmt
    document = status(state)
    lines = [f"Run {document['runId']} of {document['flow']}: {document['state']}"]
    current = document.get("current")
    if current is not None:
        where = current.get("node") or f"{current['fork']} ({current['round']})"
        lines.append(f"Current: {where}")
    lines.append(f"Visits: {document['visits']}")
    if document.get("error") is not None:
        lines.append(f"Error ({document['error']['category']}): {document['error']['summary']}")
    if document.get("result") is not None:
        lines.append(f"Result: {_short(document['result'], 400)}")
    lines += [
        f"Child Run {c['runId']} ({c['flow']}): {c['state']}, {c['record']}"
        for c in document["children"]
    ]
    emit(fmt, document, lines)


@click.command("events")
@click.option("--state", required=True, metavar="RUN.json", help="The Run record.")
@format_option
@click.pass_context
def events_command(ctx: click.Context, /, state: str, **local: Any) -> None:
    """A Run's event log: one `visited` event per node visit, with its result."""
    from ..flow.runtime import events

    fmt = options(ctx, **local).fmt
    found = events(state)
    lines = []
    for event in found:
        detail = event.get("node", "")
        if "result" in event:
            detail += f" → {event['result']}: {_short(event['content'], 60)}"
        lines.append(f"{event['seq']:>4}  {event['at']}  {event['type']:<17} {detail}".rstrip())
    emit(fmt, {"events": found}, lines)


COMMANDS = (run_command, resume_command, status_command, events_command)
