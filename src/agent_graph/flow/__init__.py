"""Flow packages (``FLOW.md``): check, compile and run them (§1–§9, Appendices A–C:
docs/flows.md, docs/flow-runs.md).

``check(path)`` returns every diagnostic of the package and its closure of child Flows;
``compile(path)`` returns the :class:`FlowProgram` (Flow IR) the runtime executes, or
raises :class:`~agent_graph.errors.AgentGraphError` naming the first error in document
order. ``discover(root)`` lists the packages under a directory. These run the Flow pass
table of the compiler (``agent_graph.compiler.flow.pipeline``).

``run(path, task, state=…, agent=…, cwd=…)`` compiles once and starts a durable Run of
the program, ``resume(state, agent=…)`` goes on with the program kept beside the Run,
``status(state)`` and ``events(state)`` read its record (``docs/flow-runs.md``). The
runtime itself (``agent_graph.flow.runtime``) runs IR and imports no front end; this
module wires the two. ``agent`` is an :class:`AgentAdapter` (the protocol a host
implements to bring its own Agent) or an ``--agent`` spec string.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AgentGraphError, Diagnostic
from ..ir.flow_program import FlowProgram
from .agents.protocol import AgentAdapter, AgentAnswer, AgentFailure, AgentRequest, ResultChoice
from .runtime import RunSummary, Stop, events, status
from .runtime.api import EventCallback

if TYPE_CHECKING:
    from ..compiler.flow.discover import FlowEntry

__all__ = [
    "AgentAdapter",
    "AgentAnswer",
    "AgentFailure",
    "AgentRequest",
    "FlowEntry",
    "FlowProgram",
    "ResultChoice",
    "RunSummary",
    "Stop",
    "check",
    "checked",
    "compile",
    "discover",
    "events",
    "resume",
    "run",
    "status",
]


def __getattr__(name: str) -> Any:
    if name == "FlowEntry":  # the front end's type, imported when asked for
        from ..compiler.flow.discover import FlowEntry

        return FlowEntry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check(path: str | os.PathLike[str], *, lenient: bool = False) -> list[Diagnostic]:
    """Every error and warning of the Flow at ``path`` and its closure, in document order.

    Never raises for bad input: an entry that is not a package is a diagnostic too.
    ``lenient`` relaxes exactly the two rules Appendix C offers to relax (C.11, C.26)
    and the child-Flow lint C.7 (``flow-child-reuse-first``).
    """
    from ..compiler import compile_flow
    from ..compiler.flow.pipeline import FLOW_CHECKED

    try:
        return compile_flow(path, stop_after=FLOW_CHECKED, lenient=lenient).diagnostics()
    except AgentGraphError as error:
        return list(error.diagnostics)


def compile(path: str | os.PathLike[str], *, lenient: bool = False) -> FlowProgram:
    """The compiled program of the Flow at ``path``; raises on any error."""
    from ..compiler import compile_flow

    return compile_flow(path, lenient=lenient).program()


def checked(
    path: str | os.PathLike[str], *, lenient: bool = False
) -> tuple[list[Diagnostic], FlowProgram | None]:
    """:func:`check` and :func:`compile` in one pass: every diagnostic, and the program
    when none is an error (``None`` otherwise). Never raises for bad input."""
    from ..compiler import compile_flow

    try:
        compiled = compile_flow(path, lenient=lenient)
    except AgentGraphError as error:
        return list(error.diagnostics), None
    return compiled.diagnostics(), compiled.program()


def discover(root: str | os.PathLike[str]) -> list[FlowEntry]:
    """Every Flow package under ``root`` (``flow-id-duplicate`` when two share an id)."""
    from ..compiler.flow.discover import discover as find

    return find(root)


def run(
    path: str | os.PathLike[str],
    task: Any,
    *,
    state: str | os.PathLike[str],
    agent: AgentAdapter | str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    agent_ref: str | None = None,
    max_parallel: int | None = None,
    max_visits: int | None = None,
    command_timeout: float | None = None,
    on_event: EventCallback | None = None,
    stop: Stop | None = None,
    handle_signals: bool = False,
    lenient: bool = False,
) -> RunSummary:
    """Compile the Flow at ``path`` once and start a Run of that program, recorded in the
    new file ``state`` (the options: :func:`agent_graph.flow.runtime.start`)."""
    from .runtime import start

    return start(
        compile(path, lenient=lenient), task, state=state, agent=agent, cwd=cwd,
        agent_ref=agent_ref, max_parallel=max_parallel, max_visits=max_visits,
        command_timeout=command_timeout, on_event=on_event, stop=stop,
        handle_signals=handle_signals,
    )  # fmt: skip


def resume(
    state: str | os.PathLike[str],
    *,
    agent: AgentAdapter | str | None = None,
    rerun_interrupted: bool = False,
    fail_interrupted: bool = False,
    max_parallel: int | None = None,
    max_visits: int | None = None,
    command_timeout: float | None = None,
    on_event: EventCallback | None = None,
    stop: Stop | None = None,
    handle_signals: bool = False,
) -> RunSummary:
    """Go on with the Run in ``state`` on the program it started with (the options:
    :func:`agent_graph.flow.runtime.resume`); a Run that kept none is compiled from its
    files, as Runs were before programs were kept."""
    from .runtime import resume as go_on

    def compile_entry(entry: Path) -> FlowProgram:
        return compile(entry)

    return go_on(
        state, agent=agent, rerun_interrupted=rerun_interrupted,
        fail_interrupted=fail_interrupted, max_parallel=max_parallel,
        max_visits=max_visits, command_timeout=command_timeout, on_event=on_event, stop=stop,
        handle_signals=handle_signals, compile=compile_entry,
    )  # fmt: skip
