"""How many Agent answers a Run has used, counted from its record and its child Runs'.

A ``script:`` adapter continues from that line on resume, so a scripted Run that is
interrupted and resumed uses each line once, in order. The count is derived, not
stored: every answer the runner received is in the record as a completed Agent visit or
an ``answer-rejected`` event; an Agent visit that failed after its answer arrived counts
one more (``agent_execution``: e.g. a line that is not an answer). An answer received
but never committed (the process killed in between) is asked for again, as the visit is.
"""

from __future__ import annotations

from contextlib import suppress

from ...errors import AgentGraphError
from ...ir import flow_records as r
from ..agents.script import EXHAUSTED
from .failures import Category
from .record import read
from .state import EventType, RunDoc, Visit, VisitStatus
from .store import RunFile

_AGENT_KINDS = frozenset({r.ACTION_KINDS[r.AGENT_NEW], r.ACTION_KINDS[r.AGENT_REUSE]})
#: Failures that happen after the adapter answered (a binding refused before the question,
#: ``outcome_validation``'s answers are already counted as its two rejections).
_ANSWERED_FAILURES = frozenset({Category.AGENT_EXECUTION.value})


def answers_used(file: RunFile, document: RunDoc) -> int:
    used = sum(1 for e in document.events if e.type == EventType.ANSWER_REJECTED)
    for visit in document.visits:
        if visit.kind in _AGENT_KINDS and _answer_kept(visit):
            used += 1
        link = visit.child
        if link is not None:
            child = file.sibling(link.state)
            # a damaged child record: its resume refuses it, not this count
            with suppress(AgentGraphError):
                if child.exists():
                    used += answers_used(child, read(child))
    return used


def _answer_kept(visit: Visit) -> bool:
    if visit.status == VisitStatus.COMPLETED:
        return True
    return visit.status == VisitStatus.FAILED and _answered(visit.raw.get("error"))


def _answered(error: object) -> bool:
    if not isinstance(error, dict) or error.get("category") not in _ANSWERED_FAILURES:
        return False
    # a script with no line left gave nothing (and reading past its end changes nothing)
    return EXHAUSTED not in str(error.get("summary", ""))
