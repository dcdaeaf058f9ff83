"""The Flow runtime: executes a compiled Flow program (docs/flow-runs.md, §3–§8, B.1–B.58).

It runs IR: :func:`start` takes a :class:`~agent_graph.ir.flow_program.FlowProgram`
(decoded from bytes or just compiled) and keeps its bytes beside the Run; :func:`resume`
runs the kept bytes again once the files still match their fingerprint. It imports no
front-end module (``agent_graph.compiler``): ``agent_graph.flow`` wires the two.

Modules: ``render`` (prompts, JSON templates), ``commands`` (command visits through the
exec layer), ``state`` (the Run record's vocabulary and typed views of its parts),
``record``/``store``/``validate`` (the durable Run record), ``binding``
(Agent bindings), ``interrupt`` (stop requests), ``runner`` (the coordinator),
``resume`` (recovery), ``api`` (the host's entry points). The record format, events,
resume rules and error categories: ``docs/flow-runs.md``.
"""

from __future__ import annotations

from .api import Compile, RunSummary, events, resume, start, status
from .failures import CATEGORIES
from .interrupt import Stop

__all__ = ["CATEGORIES", "Compile", "RunSummary", "Stop", "events", "resume", "start", "status"]
