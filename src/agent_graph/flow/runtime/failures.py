"""How a Flow Run fails or stops.

Run-level failures have an error *category* (docs/flow-runs.md §Error categories, C.31),
a fixed enumeration that ends up in the Run record and in a parent's ``已失败`` content;
they are not error codes. Refusals (a Run that cannot be started or resumed, a damaged
record) are :class:`~agent_graph.errors.AgentGraphError` with a code of
:mod:`agent_graph.codes`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Category(StrEnum):
    """C.31: the values of a Run's ``error.category``."""

    AGENT_EXECUTION = "agent_execution"
    AGENT_BINDING = "agent_binding"
    OUTCOME_VALIDATION = "outcome_validation"
    COMMAND_EXECUTION = "command_execution"
    COMMAND_INTERRUPTED = "command_interrupted"
    FLOW_REFERENCE = "flow_reference"
    ROUTE_NOT_FOUND = "route_not_found"
    RECOVERY = "recovery"
    PERSISTENCE = "persistence"
    LOOP_LIMIT = "loop_limit"
    UNKNOWN = "unknown"


#: The same values as plain strings (the package's public tuple).
CATEGORIES: Final = tuple(c.value for c in Category)


class RunFailure(Exception):
    """The current node (and with it the Run) fails: ``category`` (C.31) and ``summary``;
    ``child_run_id`` when a child Run's failure failed a single-edge 执行Flow (C.25)."""

    def __init__(self, category: str, summary: str, child_run_id: str | None = None) -> None:
        super().__init__(summary)
        assert category in CATEGORIES, category
        self.category = Category(category)
        self.summary = summary
        self.child_run_id = child_run_id

    def to_json(self) -> dict[str, str]:
        out = {"category": self.category.value, "summary": self.summary}
        if self.child_run_id is not None:
            out["childRunId"] = self.child_run_id
        return out


class Interrupted(Exception):
    """SIGINT/SIGTERM (or the host's stop request) arrived while a step ran: the step is
    left unfinished in the record, to be retried or refused on resume (C.10)."""
