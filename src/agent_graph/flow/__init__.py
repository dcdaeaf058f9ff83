"""Flow packages (``FLOW.md``): load, check and compile them (flow-spec §1–§9, Appendix A).

``check(path)`` returns every diagnostic of the package and its closure of child Flows;
``compile(path)`` returns the :class:`FlowProgram` a runtime executes without parsing
Markdown again, or raises :class:`~agent_graph.errors.AgentGraphError` naming the first
error in document order. ``discover(root)`` lists the packages under a directory.

``run(path, task, state=…, agent=…, cwd=…)`` executes a Flow as a durable Run,
``resume(state, agent=…)`` goes on with one, ``status(state)`` and ``events(state)``
read its record (``docs/flow-runs.md``). ``agent`` is an :class:`AgentAdapter` (the
protocol a host implements to bring its own Agent) or an ``--agent`` spec string.
"""

from __future__ import annotations

import os

from ..errors import AgentGraphError, Diagnostic
from .agents.protocol import AgentAdapter, AgentAnswer, AgentFailure, AgentRequest, ResultChoice
from .discover import FlowEntry, discover
from .program import FlowProgram
from .runtime import RunSummary, Stop, events, resume, run, status

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
    "compile",
    "discover",
    "events",
    "resume",
    "run",
    "status",
]


def check(path: str | os.PathLike[str], *, lenient: bool = False) -> list[Diagnostic]:
    """Every error and warning of the Flow at ``path`` and its closure, in document order.

    Never raises for bad input: an entry that is not a package is a diagnostic too.
    ``lenient`` relaxes exactly the two rules Appendix C offers to relax (C.11, C.26).
    """
    from .package import load_closure

    try:
        return load_closure(path, strict=not lenient).diagnostics()
    except AgentGraphError as error:
        return list(error.diagnostics)


def compile(path: str | os.PathLike[str], *, lenient: bool = False) -> FlowProgram:
    """The compiled program of the Flow at ``path``; raises on any error."""
    from .lower import lower
    from .package import load_closure

    closure = load_closure(path, strict=not lenient)
    diagnostics = closure.diagnostics()
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise AgentGraphError(errors[0].code, errors[0].message, diagnostics)
    return FlowProgram(lower(closure), closure.base)
