"""The closed string sets of evaluation and routing, as ``Literal`` types.

Each alias is the exact enum of the published schema (``agent-graph.evaluation.v1``,
``agent-graph.route.v1``); they are plain strings at run time, so every document stays
byte-identical, while mypy rejects a misspelt value (``status = "compelted"``).
"""

from __future__ import annotations

from typing import Literal, TypeGuard

from ..ir.records import OUTCOMES

#: A node outcome, recorded by the host or derived by evaluation: the eight of
#: :data:`agent_graph.ir.records.OUTCOMES`, in the same (bit) order.
Outcome = Literal[
    "completed",
    "partial",
    "failed",
    "unverified",
    "skipped",
    "pending",
    "blocked",
    "waiting-user",
]

#: An evaluation's ``statusCode`` (and a route's: ``actionable`` or ``waiting-user``).
StatusCode = Literal["actionable", "waiting-user", "blocked", "complete", "error"]

#: How a route may be taken: now, only by the user, or not at all.
Availability = Literal["immediate", "requires-user", "blocked"]

#: How a gate route resolves: by the user, or by an authority of the session.
GateResolution = Literal["user", "session-authority"]


def is_outcome(value: object) -> TypeGuard[Outcome]:
    """Whether ``value`` is one of the eight outcome strings."""
    return isinstance(value, str) and value in OUTCOMES


__all__ = ["Availability", "GateResolution", "Outcome", "StatusCode", "is_outcome"]
