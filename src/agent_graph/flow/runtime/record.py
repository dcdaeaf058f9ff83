"""The Run record in memory: the document of docs/flow-runs.md and the commits that
change it.

Every change the runner makes goes through :class:`Record`: it appends numbered events
(``seq`` 1, 2, 3 … within the Run), adds and settles node visits, and :meth:`commit`
makes the change durable (``store``: one journal line, or a rewritten snapshot). One
commit is one ``revision``; the events a commit adds are handed to the host's
``on_event`` only after they are durable. A commit the record's reader could not read
back (too large) is never made: the Run fails with a ``persistence`` error instead.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from typing import Any

from ... import codes
from ...errors import AgentGraphError
from .failures import Category
from .state import (
    ChildLink,
    Entry,
    Event,
    EventType,
    ParentLink,
    RunDoc,
    RunStatus,
    Strategy,
    Visit,
    VisitStatus,
    recovery,
)
from .store import RecordTooLarge, RunFile

EventSink = Callable[[dict[str, Any], int], None]


_MS = timedelta(milliseconds=1)
#: The millisecond :func:`now` last wrote (its start) and its text.
_last: tuple[datetime, str] | None = None


def now() -> str:
    """This millisecond, ``2026-01-02T03:04:05.678Z``. A visit stamps about seven times,
    most of them within one millisecond: its text is made once (1.3 -> 0.5 us a stamp)."""
    global _last
    moment = datetime.now(UTC)
    last = _last
    if last is not None and timedelta(0) <= moment - last[0] < _MS:
        return last[1]
    start = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    text = start.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    _last = (start, text)
    return text


def new_run_id() -> str:
    return "run-" + secrets.token_hex(5)


def new_document(
    *,
    run_id: str,
    flow: str,
    entry_path: str,
    package_root: str,
    fingerprint: str,
    fingerprint_version: int,
    package_fingerprint: str,
    task: Any,
    cwd: str,
    binding: str | None,
    parent: ParentLink | None,
    first_node: str,
    program: str | None = None,
) -> RunDoc:
    return RunDoc.new(
        run_id=run_id,
        flow=flow,
        entry_path=entry_path,
        package_root=package_root,
        fingerprint=fingerprint,
        fingerprint_version=fingerprint_version,
        package_fingerprint=package_fingerprint,
        program=program,
        task=task,
        cwd=cwd,
        binding=binding,
        parent=parent,
        first_node=first_node,
        started_at=now(),
        updated_at=now(),
    )


def read(file: RunFile) -> RunDoc:
    """The record in ``file``, checked (``RunFile.read``)."""
    return RunDoc(file.read())


class Record:
    """One Run's document and the file it is committed to."""

    def __init__(self, document: RunDoc, file: RunFile, sink: EventSink | None, depth: int) -> None:
        self.doc = document
        self.file = file
        self.sink = sink
        self.depth = depth
        self._pending: list[Event] = []
        self._visits = {v.id: v for v in document.visits}
        # when this process started each visit it made (monotonic), for ``durationMs``;
        # a visit found running in a record has none and gets a null duration
        self._started: dict[str, float] = {}

    @property
    def run_id(self) -> str:
        return self.doc.run_id

    @property
    def flow(self) -> str:
        return self.doc.flow

    @property
    def status(self) -> RunStatus:
        return self.doc.status

    def event(self, kind: EventType, **fields: Any) -> Event:
        doc = self.doc
        entry = Event.new(doc.event_count + 1, kind, now(), self.run_id, self.flow, fields)
        doc.add_event(entry)
        self._pending.append(entry)
        return entry

    def visit(self, visit_id: str) -> Visit:
        return self._visits[visit_id]

    def new_visit(
        self,
        node: str,
        kind: str,
        value: Any,
        entered_from: Entry,
        *,
        round_id: str | None = None,
        retry_of: str | None = None,
        child: ChildLink | None = None,
    ) -> Visit:
        entry = Visit.new(
            self.doc.visit_count + 1,
            node,
            kind,
            value,
            entered_from,
            now(),
            round_id,
            retry_of,
            child,
        )
        self._started[entry.id] = time.monotonic()
        self.doc.add_visit(entry)
        self._visits[entry.id] = entry
        fields: dict[str, Any] = {"node": node, "visit": entry.id}
        if round_id is not None:
            fields["round"] = round_id
        if retry_of is not None:
            fields["retryOf"] = retry_of
        if child is not None:
            fields.update(childRunId=child.run_id, childFlow=child.flow, childState=child.state)
        self.event(EventType.VISIT_STARTED, **fields)
        return entry

    def complete_visit(self, visit: Visit, result: str, content: Any) -> None:
        ended = now()
        started = self._started.pop(visit.id, None)
        duration = round((time.monotonic() - started) * 1000) if started is not None else None
        visit.complete(result, content, ended, duration)
        self.doc.conclusion = content
        fields: dict[str, Any] = {"node": visit.node, "visit": visit.id}
        if visit.round_id is not None:
            fields["round"] = visit.round_id
        self.event(EventType.VISITED, **fields, result=result, content=content, durationMs=duration)

    def end_visit(self, visit: Visit, status: VisitStatus, error: dict[str, Any] | None) -> None:
        visit.end(status, error, now())
        self._started.pop(visit.id, None)
        kind = (
            EventType.VISIT_FAILED if status == VisitStatus.FAILED else EventType.VISIT_INTERRUPTED
        )
        fields: dict[str, Any] = {"node": visit.node, "visit": visit.id}
        if error is not None:
            fields["error"] = error
        self.event(kind, **fields)

    def recovery(
        self,
        strategy: Strategy,
        summary: str,
        *,
        visit: str | None = None,
        child_run_id: str | None = None,
    ) -> None:
        entry = recovery(strategy, summary, visit, child_run_id)
        self.doc.add_recovery(entry)
        self.event(EventType.RECOVERY, **entry)

    def create(self) -> None:
        self.doc.stamp(now())
        try:
            self.file.create(self.doc.raw)
        except RecordTooLarge as error:  # nothing written: no Run to fail
            raise AgentGraphError(
                codes.RUN_RECORD_TOO_LARGE,
                f"{self.file.path}: the Run record cannot hold its start: {error}",
            ) from None
        self._flush()

    def commit(self, *, sync: bool = True) -> None:
        """Make the changes since the last commit one revision. ``sync=False`` is for a
        commit the runner follows with another before it runs anything (a visit's end,
        then the next visit's start): both reach the disk with the second's ``fsync``,
        and the events are handed on then, once durable."""
        self.doc.stamp(now())
        durable = True
        try:
            durable = self.file.commit(self.doc.raw, sync=sync)
        except RecordTooLarge as error:
            self._fail_too_large(str(error))
        if durable:
            self._flush()

    def _fail_too_large(self, reason: str) -> None:
        """Fail the Run with what can be kept (contents too large replaced by null), then
        stop the runner: nothing it does next could be recorded."""
        doc = self.doc
        error: dict[str, Any] = {
            "category": Category.PERSISTENCE.value,
            "summary": f"the Run record cannot hold this commit: {reason}",
        }
        for visit in doc.visits:
            if not visit.status.ended:
                self.end_visit(visit, VisitStatus.FAILED, error)
        doc.end(RunStatus.FAILED, error, now())
        self.event(EventType.RUN_FAILED, error=error)
        # the same revision as the commit that did not fit: it never reached the file
        with suppress(RecordTooLarge):  # not even the failure fits: the last commit stays
            self.file.fail_over(doc.raw)
        self._flush()
        raise AgentGraphError(codes.RUN_RECORD_TOO_LARGE, f"{self.file.path}: {error['summary']}")

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if self.sink is not None:
            for entry in pending:
                self.sink(entry.raw, self.depth)
