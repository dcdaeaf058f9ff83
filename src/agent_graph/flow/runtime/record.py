"""The Run record in memory: the document of docs/flow-runs.md and the commits that
change it.

Every change the runner makes goes through :class:`Record`: it appends numbered events
(``seq`` 1, 2, 3 … within the Run), adds and settles node visits, and :meth:`commit`
writes the whole document atomically (``store``). One commit is one ``revision``; the
events a commit adds are handed to the host's ``on_event`` only after they are durable.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from .store import RunFile
from .validate import SCHEMA

EventSink = Callable[[dict[str, Any], int], None]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
    parent: dict[str, Any] | None,
    first_node: str,
    program: str | None = None,
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "runId": run_id,
        "flow": flow,
        "entryPath": entry_path,
        "packageRoot": package_root,
        "fingerprint": fingerprint,
        "fingerprintVersion": fingerprint_version,
        "packageFingerprint": package_fingerprint,
        **({"program": program} if program is not None else {}),
        "task": task,
        "cwd": cwd,
        "status": "running",
        "agentBinding": binding,
        "parent": parent,
        "cursor": {"at": "node", "node": first_node, "input": task, "from": "start"},
        "conclusion": None,
        "error": None,
        "startedAt": now(),
        "updatedAt": now(),
        "completedAt": None,
        "revision": 0,
        "visits": [],
        "rounds": [],
        "recoveries": [],
        "events": [],
    }
    return document


def round_of(document: dict[str, Any], round_id: str) -> dict[str, Any]:
    """The round ``round_id`` of a Run document (the cursor names it; it exists)."""
    return next(x for x in document["rounds"] if x["id"] == round_id)


class Record:
    """One Run's document and the file it is committed to."""

    def __init__(
        self, document: dict[str, Any], file: RunFile, sink: EventSink | None, depth: int
    ) -> None:
        self.doc = document
        self.file = file
        self.sink = sink
        self.depth = depth
        self._pending: list[dict[str, Any]] = []
        self._visits = {v["id"]: v for v in document["visits"]}

    @property
    def run_id(self) -> str:
        return str(self.doc["runId"])

    @property
    def flow(self) -> str:
        return str(self.doc["flow"])

    @property
    def status(self) -> str:
        return str(self.doc["status"])

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        events = self.doc["events"]
        entry = {"seq": len(events) + 1, "type": kind, "at": now(), "runId": self.run_id}
        entry["flow"] = self.flow
        entry.update(fields)
        events.append(entry)
        self._pending.append(entry)
        return entry

    def visit(self, visit_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self._visits[visit_id]
        return found

    def new_visit(
        self,
        node: str,
        kind: str,
        value: Any,
        entered_from: str,
        *,
        round_id: str | None = None,
        retry_of: str | None = None,
    ) -> dict[str, Any]:
        visits = self.doc["visits"]
        entry: dict[str, Any] = {
            "id": f"v{len(visits) + 1}",
            "node": node,
            "kind": kind,
            "input": value,
            "status": "running",
            "enteredFrom": entered_from,
            "round": round_id,
            "retryOf": retry_of,
            "result": None,
            "error": None,
            "startedAt": now(),
            "endedAt": None,
            "_t": time.monotonic(),
        }
        visits.append(entry)
        self._visits[entry["id"]] = entry
        fields: dict[str, Any] = {"node": node, "visit": entry["id"]}
        if round_id is not None:
            fields["round"] = round_id
        if retry_of is not None:
            fields["retryOf"] = retry_of
        self.event("visit-started", **fields)
        return entry

    def complete_visit(self, visit: dict[str, Any], result: str, content: Any) -> None:
        visit["status"] = "completed"
        visit["result"] = {"result": result, "content": content}
        visit["endedAt"] = now()
        started = visit.pop("_t", None)
        duration = round((time.monotonic() - started) * 1000) if started is not None else None
        visit["durationMs"] = duration
        self.doc["conclusion"] = content
        fields: dict[str, Any] = {"node": visit["node"], "visit": visit["id"]}
        if visit.get("round") is not None:
            fields["round"] = visit["round"]
        self.event("visited", **fields, result=result, content=content, durationMs=duration)

    def end_visit(self, visit: dict[str, Any], status: str, error: dict[str, Any] | None) -> None:
        visit["status"] = status
        visit["error"] = error
        visit["endedAt"] = now()
        visit.pop("_t", None)
        kind = "visit-failed" if status == "failed" else "visit-interrupted"
        fields: dict[str, Any] = {"node": visit["node"], "visit": visit["id"]}
        if error is not None:
            fields["error"] = error
        self.event(kind, **fields)

    def recovery(self, strategy: str, summary: str, **fields: Any) -> None:
        self.doc["recoveries"].append({"strategy": strategy, "summary": summary, **fields})
        self.event("recovery", strategy=strategy, summary=summary, **fields)

    def create(self) -> None:
        self._stamp()
        self.file.create(self._clean())
        self._flush()

    def commit(self) -> None:
        self._stamp()
        self.file.commit(self._clean())
        self._flush()

    def _stamp(self) -> None:
        self.doc["revision"] += 1
        self.doc["updatedAt"] = now()

    def _clean(self) -> dict[str, Any]:
        """The document without the in-memory timing marks of running visits."""
        if not any("_t" in v for v in self.doc["visits"]):
            return self.doc
        out = dict(self.doc)
        out["visits"] = [{k: x for k, x in v.items() if k != "_t"} for v in self.doc["visits"]]
        return out

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if self.sink is not None:
            for entry in pending:
                self.sink(entry, self.depth)
