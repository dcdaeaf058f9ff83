"""The Run record's vocabulary and typed views of its parts (docs/flow-runs.md).

The enumerations are the values the record's members take (``status``, ``cursor.at``,
``enteredFrom``, event ``type`` …): :class:`enum.StrEnum`, so a member compares equal to
the string read from a file, while the views below always store the plain ``str`` value,
so the document a host receives (``on_event``, ``status``) holds only JSON types.

The views (:class:`RunDoc`, :class:`Cursor`, :class:`Visit`, :class:`Round`,
:class:`Event`) do not copy the document: each holds one of the record's own JSON objects
(``raw``) and reads and writes its members in place. The record carries the checksum of
its compact JSON in member order and is rewritten whole at every commit, so a member the
runtime did not change must come back out exactly as it was read — in the same place,
with the same value — which a copy into other objects and back could not promise for
records written by other versions. New objects are built by the ``new``/``to_*``
constructors, each in the member order the format has always had.

Nothing here checks a record: :func:`.validate.check_record` has done that (schema and
cross-references) before a view is made over a document read from a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from .failures import Category, RunFailure

#: The identity every Flow Run record carries.
SCHEMA: Final = "agent-graph.flow-run.v1"

#: ``routed.to`` of a route to the Flow's end.
FINISH: Final = "finish"

Json = dict[str, Any]


class RunStatus(StrEnum):
    RUNNING = "running"  # being driven, or its driver died
    INTERRUPTED = "interrupted"  # stopped cleanly
    COMPLETED = "completed"
    FAILED = "failed"

    @property
    def ended(self) -> bool:
        return self in (RunStatus.COMPLETED, RunStatus.FAILED)


class VisitStatus(StrEnum):
    RUNNING = "running"
    INTERRUPTED = "interrupted"
    COMPLETED = "completed"
    FAILED = "failed"

    @property
    def ended(self) -> bool:
        return self in (VisitStatus.COMPLETED, VisitStatus.FAILED)


class At(StrEnum):
    """``cursor.at``: what the Run does next."""

    NODE = "node"
    ROUND = "round"


class Entry(StrEnum):
    """How a node was entered: a visit's ``enteredFrom``, a node cursor's ``from``
    (never ``parallel``: branches are started from a round cursor)."""

    START = "start"
    ROUTE = "route"
    PARALLEL = "parallel"
    JOIN = "join"


class RoundStatus(StrEnum):
    RUNNING = "running"
    BRANCHES_DONE = "branches-done"
    JOINED = "joined"


class EventType(StrEnum):
    RUN_STARTED = "run-started"
    VISIT_STARTED = "visit-started"
    VISITED = "visited"
    ANSWER_REJECTED = "answer-rejected"
    AGENT_BOUND = "agent-bound"
    AGENT_RELEASED = "agent-released"
    ROUTED = "routed"
    ROUND_STARTED = "round-started"
    VISIT_FAILED = "visit-failed"
    VISIT_INTERRUPTED = "visit-interrupted"
    RUN_COMPLETED = "run-completed"
    RUN_FAILED = "run-failed"
    RUN_INTERRUPTED = "run-interrupted"
    RUN_RESUMED = "run-resumed"
    RECOVERY = "recovery"


class Strategy(StrEnum):
    """A recovery's ``strategy``: what a resume decided (docs/flow-runs.md §Resume)."""

    RETRY_AGENT = "retry-agent"
    REFUSE_COMMAND = "refuse-command"
    RERUN_COMMAND = "rerun-command"
    RESUME_CHILD = "resume-child"
    BINDING_DROPPED = "binding-dropped"


class ContentStatus(StrEnum):
    """``status`` inside a result's content (a command's ``已执行``, a child's ``已失败``)."""

    SUCCESS = "success"
    FAILURE = "failure"


@dataclass(frozen=True, slots=True)
class ChildLink:
    """The child Run a ``执行Flow`` visit runs: its id, Flow and record's file name."""

    run_id: str
    flow: str
    state: str


@dataclass(frozen=True, slots=True)
class ParentLink:
    """A child Run's ``parent``: the parent Run, its visit and its record's file name."""

    run_id: str
    visit: str | None
    state: str

    def to_json(self) -> Json:
        return {"runId": self.run_id, "visit": self.visit, "state": self.state}


class _View:
    __slots__ = ("raw",)

    def __init__(self, raw: Json) -> None:
        self.raw = raw


class Cursor(_View):
    """Where a Run that has not ended stands: a node (with its input) or a fork round."""

    __slots__ = ()

    @staticmethod
    def to_node(node: str, value: Any, entered_from: Entry, round_id: str | None = None) -> Cursor:
        raw: Json = {"at": At.NODE.value, "node": node, "input": value, "from": entered_from.value}
        if round_id is not None:
            raw["round"] = round_id
        return Cursor(raw)

    @staticmethod
    def to_round(round_id: str) -> Cursor:
        return Cursor({"at": At.ROUND.value, "round": round_id})

    @property
    def at(self) -> At:
        return At(self.raw["at"])

    @property
    def node(self) -> str:
        return str(self.raw["node"])

    @property
    def input(self) -> Any:
        return self.raw["input"]

    @property
    def entered_from(self) -> Entry:
        return Entry(self.raw["from"])

    @property
    def round_id(self) -> str | None:
        return self.raw.get("round")

    @property
    def visit_id(self) -> str | None:
        """The visit of the node under way (set once it is committed as running)."""
        return self.raw.get("visit")

    @visit_id.setter
    def visit_id(self, value: str | None) -> None:
        self.raw["visit"] = value

    def retry(self, visit_id: str) -> None:
        """Visit the node again, as a retry of ``visit_id`` (a resume's decision)."""
        self.raw["visit"] = None
        self.raw["retryOf"] = visit_id

    def take_retry_of(self) -> str | None:
        """The visit the next one retries; the cursor forgets it (the visit records it)."""
        found: str | None = self.raw.pop("retryOf", None)
        return found


class Visit(_View):
    """One visit of a work node (C.3's NodeRun)."""

    __slots__ = ()

    @staticmethod
    def new(
        number: int,
        node: str,
        kind: str,
        value: Any,
        entered_from: Entry,
        started_at: str,
        round_id: str | None,
        retry_of: str | None,
        child: ChildLink | None,
    ) -> Visit:
        raw: Json = {
            "id": f"v{number}",
            "node": node,
            "kind": kind,
            "input": value,
            "status": VisitStatus.RUNNING.value,
            "enteredFrom": entered_from.value,
            "round": round_id,
            "retryOf": retry_of,
            "result": None,
            "error": None,
            "startedAt": started_at,
            "endedAt": None,
        }
        if child is not None:
            raw.update(childRunId=child.run_id, childFlow=child.flow, childState=child.state)
        return Visit(raw)

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def node(self) -> str:
        return str(self.raw["node"])

    @property
    def kind(self) -> str:
        return str(self.raw["kind"])

    @property
    def input(self) -> Any:
        return self.raw.get("input")

    @property
    def status(self) -> VisitStatus:
        return VisitStatus(self.raw["status"])

    @status.setter
    def status(self, value: VisitStatus) -> None:
        self.raw["status"] = value.value

    @property
    def round_id(self) -> str | None:
        return self.raw.get("round")

    @property
    def retry_of(self) -> str | None:
        return self.raw.get("retryOf")

    @property
    def result(self) -> Json | None:
        """``{"result": NAME, "content": ANY}`` once completed."""
        return self.raw.get("result")

    @property
    def child(self) -> ChildLink | None:
        raw = self.raw
        if not all(k in raw for k in ("childRunId", "childFlow", "childState")):
            return None
        return ChildLink(raw["childRunId"], raw["childFlow"], raw["childState"])

    def complete(self, result: str, content: Any, ended_at: str, duration_ms: int | None) -> None:
        self.raw.update(
            status=VisitStatus.COMPLETED.value,
            result={"result": result, "content": content},
            endedAt=ended_at,
            durationMs=duration_ms,
        )

    def end(self, status: VisitStatus, error: Json | None, ended_at: str) -> None:
        self.raw.update(status=status.value, error=error, endedAt=ended_at)


class Round(_View):
    """A fork round: the fork's saved input and the visit of each branch."""

    __slots__ = ()

    @staticmethod
    def new(round_id: str, fork: str, value: Any, branches: list[str]) -> Round:
        return Round(
            {
                "id": round_id,
                "fork": fork,
                "input": value,
                "branches": dict.fromkeys(branches),
                "status": RoundStatus.RUNNING.value,
                "join": None,
            }
        )

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def fork(self) -> str:
        return str(self.raw["fork"])

    @property
    def input(self) -> Any:
        return self.raw.get("input")

    @property
    def branches(self) -> dict[str, str | None]:
        """Branch ref -> its visit (None until started), changed in place."""
        found: dict[str, str | None] = self.raw["branches"]
        return found

    @property
    def join(self) -> str | None:
        return self.raw.get("join")

    @property
    def status(self) -> RoundStatus:
        return RoundStatus(self.raw["status"])

    @status.setter
    def status(self, value: RoundStatus) -> None:
        self.raw["status"] = value.value

    def joined(self, visit_id: str) -> None:
        self.raw.update(status=RoundStatus.JOINED.value, join=visit_id)

    def rerun(self, ref: str, visit_id: str) -> None:
        """Start branch ``ref`` again, as a retry of its interrupted ``visit_id``."""
        self.raw["branches"][ref] = None
        self.raw.setdefault("retry", {})[ref] = visit_id

    def take_retry(self, ref: str) -> str | None:
        """The visit branch ``ref``'s next visit retries, if any (forgotten once taken)."""
        found: str | None = self.raw.get("retry", {}).pop(ref, None)
        return found


class Event(_View):
    """One entry of the numbered, append-only event log."""

    __slots__ = ()

    @staticmethod
    def new(seq: int, kind: EventType, at: str, run_id: str, flow: str, fields: Json) -> Event:
        return Event(
            {"seq": seq, "type": kind.value, "at": at, "runId": run_id, "flow": flow, **fields}
        )

    @property
    def seq(self) -> int:
        return int(self.raw["seq"])

    @property
    def type(self) -> EventType:
        return EventType(self.raw["type"])

    @property
    def run_id(self) -> str:
        return str(self.raw["runId"])


def recovery(strategy: Strategy, summary: str, visit: str | None, child_run_id: str | None) -> Json:
    """A ``recoveries[]`` entry (the ``recovery`` event carries the same members)."""
    out: Json = {"strategy": strategy.value, "summary": summary}
    if visit is not None:
        out["visit"] = visit
    if child_run_id is not None:
        out["childRunId"] = child_run_id
    return out


class RunDoc(_View):
    """A whole Run record (``agent-graph.flow-run.v1``)."""

    __slots__ = ()

    @staticmethod
    def new(
        *,
        run_id: str,
        flow: str,
        entry_path: str,
        package_root: str,
        fingerprint: str,
        fingerprint_version: int,
        package_fingerprint: str,
        program: str | None,
        task: Any,
        cwd: str,
        binding: str | None,
        parent: ParentLink | None,
        first_node: str,
        started_at: str,
        updated_at: str,
    ) -> RunDoc:
        raw: Json = {
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
            "status": RunStatus.RUNNING.value,
            "agentBinding": binding,
            "parent": parent.to_json() if parent is not None else None,
            "cursor": Cursor.to_node(first_node, task, Entry.START).raw,
            "conclusion": None,
            "error": None,
            "startedAt": started_at,
            "updatedAt": updated_at,
            "completedAt": None,
            "revision": 0,
            "visits": [],
            "rounds": [],
            "recoveries": [],
            "events": [],
        }
        return RunDoc(raw)

    # -- identity and place ---------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return str(self.raw["runId"])

    @property
    def flow(self) -> str:
        return str(self.raw["flow"])

    @property
    def entry_path(self) -> str:
        return str(self.raw["entryPath"])

    @property
    def fingerprint(self) -> str:
        return str(self.raw["fingerprint"])

    @property
    def fingerprint_version(self) -> int:
        return int(self.raw["fingerprintVersion"])

    @property
    def program(self) -> str | None:
        """The digest of the kept program (absent in Runs started before programs were kept)."""
        return self.raw.get("program")

    @property
    def cwd(self) -> str:
        return str(self.raw["cwd"])

    @property
    def parent(self) -> ParentLink | None:
        raw = self.raw.get("parent")
        if raw is None:
            return None
        return ParentLink(raw["runId"], raw.get("visit"), raw["state"])

    # -- where the Run stands -------------------------------------------------------------

    @property
    def status(self) -> RunStatus:
        return RunStatus(self.raw["status"])

    @status.setter
    def status(self, value: RunStatus) -> None:
        self.raw["status"] = value.value

    @property
    def agent_binding(self) -> str | None:
        return self.raw.get("agentBinding")

    @agent_binding.setter
    def agent_binding(self, value: str | None) -> None:
        self.raw["agentBinding"] = value

    @property
    def cursor(self) -> Cursor | None:
        raw = self.raw.get("cursor")
        return Cursor(raw) if raw is not None else None

    @cursor.setter
    def cursor(self, value: Cursor | None) -> None:
        self.raw["cursor"] = value.raw if value is not None else None

    @property
    def position(self) -> Cursor:
        """The cursor of a Run that has not ended (the reader refuses one without)."""
        cursor = self.cursor
        assert cursor is not None, "an ended Run has no position"
        return cursor

    @property
    def conclusion(self) -> Any:
        return self.raw.get("conclusion")

    @conclusion.setter
    def conclusion(self, value: Any) -> None:
        self.raw["conclusion"] = value

    @property
    def error(self) -> Json | None:
        return self.raw.get("error")

    @property
    def failure(self) -> RunFailure | None:
        """``error`` as the failure it records."""
        raw = self.error
        if raw is None:
            return None
        return RunFailure(Category(raw["category"]), raw["summary"], raw.get("childRunId"))

    def end(self, status: RunStatus, error: Json | None, completed_at: str) -> None:
        """Completed or failed: no cursor any more."""
        self.status = status
        self.raw["cursor"] = None
        self.raw["completedAt"] = completed_at
        if error is not None:
            self.raw["error"] = error

    @property
    def started_at(self) -> str:
        return str(self.raw["startedAt"])

    @property
    def updated_at(self) -> str | None:
        return self.raw.get("updatedAt")

    def stamp(self, updated_at: str) -> None:
        """One more commit: ``revision`` counts them."""
        self.raw["revision"] += 1
        self.raw["updatedAt"] = updated_at

    # -- the lists --------------------------------------------------------------------------

    @property
    def visits(self) -> list[Visit]:
        return [Visit(v) for v in self.raw["visits"]]

    @property
    def visit_count(self) -> int:
        return len(self.raw["visits"])

    def visit(self, visit_id: str) -> Visit:
        return next(v for v in self.visits if v.id == visit_id)

    def add_visit(self, visit: Visit) -> None:
        self.raw["visits"].append(visit.raw)

    @property
    def rounds(self) -> list[Round]:
        return [Round(x) for x in self.raw["rounds"]]

    def add_round(self, round_: Round) -> None:
        self.raw["rounds"].append(round_.raw)

    def current_round(self) -> Round:
        """The round the cursor names (a round cursor, or a join's node cursor)."""
        round_id = self.position.round_id
        return next(x for x in self.rounds if x.id == round_id)

    @property
    def events(self) -> list[Event]:
        return [Event(e) for e in self.raw["events"]]

    def add_event(self, event: Event) -> None:
        self.raw["events"].append(event.raw)

    @property
    def event_count(self) -> int:
        return len(self.raw["events"])

    def add_recovery(self, entry: Json) -> None:
        self.raw["recoveries"].append(entry)
