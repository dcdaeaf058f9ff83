"""``agc flow run|resume|status|events``: Flow Runs, recorded in a Run file (``--state``).

``run`` and ``resume`` print each visit as it is recorded (human form: node, result,
duration; branches as they finish; child Runs indented) and end with the summary and the
command that goes on from it, which runs as printed (:mod:`agent_graph.flow.runtime.hints`);
on a terminal, stderr shows the running step (:mod:`.flow_display`). With
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
from .flow_display import Progress, ended_how, result_lines
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
        how = ended_how(event.get("content"))
        line = f"{pad}{event['node']}: {event['result']}{took}{how}"
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


def _finish(ctx: click.Context, fmt: str, summary: Any, more: list[str], task: str | None) -> None:
    """The summary, and the command that goes on from it, repeating ``more`` (the options
    this invocation was given that the next one needs: ``--agent``, the limits)."""
    from ..flow.runtime import hints

    document = summary.to_json()
    path = summary.path
    lines = [f"Run {summary.run_id} of {summary.flow}: {summary.state}"]
    if summary.error is not None:
        lines.append(f"Error ({summary.error['category']}): {summary.error['summary']}")
    if summary.timed_out:
        lines.append(f"Timed out (--command-timeout): {', '.join(summary.timed_out)}")
    if summary.result is not None:
        lines += result_lines(summary.result, _status_words(path))
    if summary.state == "interrupted" and summary.interrupted:
        lines += [
            f"Interrupted command: {', '.join(summary.interrupted)} (it may have had effects;"
            " a plain resume refuses it)",
            f"Run it again: {hints.resume_words(path, hints.RERUN_FLAG, *more)}",
            f"Or fail it (command_interrupted): {hints.resume_words(path, hints.FAIL_FLAG, *more)}",
        ]
    elif summary.state == "interrupted":
        lines.append(f"Resume it: {hints.resume_words(path, *more)}")
    elif summary.state == "failed":
        again = hints.new_run_hint(summary.entry, task, path, summary.cwd, more)
        lines.append(again[0].upper() + again[1:])
    lines.append(f"Record: {path}")
    emit(fmt, document, lines)
    code = {"completed": 0, "failed": 1}.get(summary.state, INTERRUPTED_EXIT)
    ctx.exit(code)


def _status_words(path: str | os.PathLike[str]) -> str:
    """Where a long result is read whole."""
    import shlex  # only for a printed hint

    state = os.path.abspath(os.fspath(path))
    return shlex.join(["agc", "flow", "status", "--state", state, "--format", "json"])


def _events(fmt: str, agent: str | None) -> tuple[Any, Progress | None]:
    """The event printer of this invocation, with the progress line on a terminal (not
    with ``--agent ask``: its questions are on that terminal, and a redraw would hide them)."""
    show = _human_event if fmt == "human" else None
    if not sys.stderr.isatty() or (agent or "").strip() == "ask":
        return show, None
    progress = Progress(sys.stderr)
    return progress.wrap(show), progress


def _task_word(task: str) -> str | None:
    """``--task`` as a new Run repeats it: ``@FILE`` from any directory, else the text
    (when a command line can hold it)."""
    from ..flow.runtime.hints import task_word

    return "@" + os.path.abspath(task[1:]) if task.startswith("@") else task_word(task)


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
    from ..flow.runtime.hints import options as hint_options

    fmt = options(ctx, **local).fmt
    if dry_run:
        from ..flow import compile as compile_flow
        from ..flow.runtime.dry_run import lines, plan

        document = plan(compile_flow(entry), _task(task))
        emit(fmt, document, lines(document))
        return
    if state is None:
        raise click.UsageError("Missing option '--state' (the new Run's record), or --dry-run")
    text = _task(task)
    on_event, progress = _events(fmt, agent)
    try:
        summary = run(
            entry, text, state=state, agent=agent, cwd=cwd, max_parallel=max_parallel,
            max_visits=max_visits, command_timeout=command_timeout, on_event=on_event,
            handle_signals=True,
        )  # fmt: skip
    finally:
        if progress is not None:
            progress.close()
    more = hint_options(agent, max_parallel, max_visits, command_timeout)
    _finish(ctx, fmt, summary, more, _task_word(task))


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
    from ..flow.runtime.hints import options as hint_options
    from ..flow.runtime.hints import task_word

    fmt = options(ctx, **local).fmt
    if rerun_interrupted and fail_interrupted:
        raise click.UsageError("--rerun-interrupted and --fail-interrupted: give one")
    on_event, progress = _events(fmt, agent)
    try:
        summary = resume(
            state, agent=agent, rerun_interrupted=rerun_interrupted,
            fail_interrupted=fail_interrupted, max_parallel=max_parallel, max_visits=max_visits,
            command_timeout=command_timeout, on_event=on_event, handle_signals=True,
        )  # fmt: skip
    finally:
        if progress is not None:
            progress.close()
    more = hint_options(agent, max_parallel, max_visits, command_timeout)
    _finish(ctx, fmt, summary, more, task_word(summary.task))


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
        lines += result_lines(document["result"], _status_words(state))
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
            detail += ended_how(event["content"])
        lines.append(f"{event['seq']:>4}  {event['at']}  {event['type']:<17} {detail}".rstrip())
    emit(fmt, {"events": found}, lines)


COMMANDS = (run_command, resume_command, status_command, events_command)
