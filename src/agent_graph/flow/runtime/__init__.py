"""The Flow runtime: executes a compiled Flow program (flow-spec §3–§8, Appendix B).

Modules: ``render`` (prompts, JSON templates), ``commands`` (command visits through the
exec layer), ``record``/``store``/``validate`` (the durable Run record), ``binding``
(Agent bindings), ``interrupt`` (stop requests), ``runner`` (the coordinator),
``resume`` (recovery), ``api`` (the host's entry points). The record format, events,
resume rules and error categories: ``docs/flow-runs.md``.
"""

from __future__ import annotations

from .api import RunSummary, events, resume, run, status
from .failures import CATEGORIES
from .interrupt import Stop

__all__ = ["CATEGORIES", "RunSummary", "Stop", "events", "resume", "run", "status"]
