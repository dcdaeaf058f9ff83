"""The ``agent-graph.run.v1`` document: building it, changing it, checking what goes in.

Every function here is pure: it takes a document (a plain JSON mapping in the key
order the reference writes; docs/runs.md) and returns a new one, so both stores share one
implementation of each operation and a failed check never leaves half a change.
Imports nothing heavier than the standard library.
"""

from __future__ import annotations

import copy
import enum
import json
import os
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from .. import codes
from ..canonical import js_sorted
from ..errors import AgentGraphError, Diagnostic
from ..ir.records import OUTCOMES
from ..vm.state import check_json

RUN_SCHEMA: Final = "agent-graph.run.v1"
RUN_SCHEMA_VERSION: Final = 1
_SCHEMA_IDENTITY: Final = re.compile(r"^agent-graph\.run\.v([0-9]+)\Z")
#: ``flow.runtime.state.SCHEMA`` (runs may not import flow; a test keeps the two equal).
FLOW_RECORD_SCHEMA: Final = "agent-graph.flow-run.v1"

# Event types written by the stores (docs/runs.md).
RUN_STARTED: Final = "run.started"
OUTCOME_RECORDED: Final = "node.outcome-recorded"
FACTS_UPDATED: Final = "facts.updated"
FACTS_REPLACED: Final = "facts.replaced"
AUTHORITIES_UPDATED: Final = "authorities.updated"
RUN_CHECKPOINTED: Final = "run.checkpointed"
RUN_RESUMED: Final = "run.resumed"
# Written by hosts that decide Gates (``agc mcp serve``, ``agc run decide``; docs/mcp.md).
GATE_DECIDED: Final = "gate.decided"

_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")


class _Missing(enum.Enum):
    """Marks "no detail": ``None`` is a detail of its own (JSON ``null``)."""

    NO_DETAIL = "no detail"


NO_DETAIL: Final = _Missing.NO_DETAIL


class _Unset(enum.Enum):
    """Marks a Fact path to remove: ``None`` is a Fact value of its own (JSON ``null``)."""

    UNSET = "unset"


UNSET: Final = _Unset.UNSET

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def timestamp(moment: datetime) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``, as JavaScript's ``toISOString``."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def new_run_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class Run:
    """A snapshot of one Run. ``document`` is the ``agent-graph.run.v1`` JSON object.

    The snapshot is the caller's own copy: changing it changes nothing stored; use a
    store's operations for that.
    """

    document: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.document["id"])

    @property
    def provider(self) -> str:
        return str(self.document["provider"])

    @property
    def graph(self) -> str:
        return str(self.document["graph"])

    @property
    def entry(self) -> str:
        return str(self.document["entry"])

    @property
    def workspace(self) -> str | None:
        value = self.document.get("workspace")
        return None if value is None else str(value)

    @property
    def created_at(self) -> str:
        return str(self.document["createdAt"])

    @property
    def updated_at(self) -> str:
        return str(self.document["updatedAt"])

    @property
    def facts(self) -> dict[str, Any]:
        value: dict[str, Any] = self.document["facts"]
        return value

    @property
    def outcomes(self) -> dict[str, dict[str, Any]]:
        """State key -> ``{"outcome", "recordedAt", "detail"?}`` (the latest record)."""
        value: dict[str, dict[str, Any]] = self.document["outcomes"]
        return value

    @property
    def authorities(self) -> list[str]:
        value: list[str] = self.document["authorities"]
        return value

    @property
    def events(self) -> list[dict[str, Any]]:
        value: list[dict[str, Any]] = self.document["events"]
        return value

    def outcome(self, key: str) -> str | None:
        """The latest recorded outcome of a state key, if any."""
        record = self.outcomes.get(key)
        return None if record is None else str(record["outcome"])

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.document)


# -- checks on what a host passes in ------------------------------------------------------


def not_unicode(value: Any) -> tuple[list[str | int], str] | None:
    """Where plain JSON data holds a string (or key) that is not Unicode text, if anywhere.

    Returns the path to it (object keys and array indices) and its first surrogate
    code point (``U+D800``): a surrogate in a ``str`` is no character, so UTF-8 cannot
    encode it, a Run holding one could never be written or printed whole, and the
    JSON readers refuse it. One C-speed encode when all is well (the usual case).
    """
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError):
        pass
    else:
        return None
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found is not None:
                return path, f"U+{ord(found.group()):04X}"
        elif isinstance(item, Mapping):
            children = list(item.items())
            for key, _ in children:
                found = _SURROGATE.search(key) if isinstance(key, str) else None
                if found is not None:
                    return [*path, key], f"U+{ord(found.group()):04X}"
            stack.extend((child, [*path, key]) for key, child in reversed(children))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, [*path, i]) for i, child in reversed(list(enumerate(item))))
    return None


def printable(text: str) -> str:
    """``text`` with each surrogate written as ``\\udcff``, so a message can always be printed."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _dotted(label: str, path: Sequence[str | int]) -> str:
    """``facts.a[0]``, as :func:`~agent_graph.vm.state.check_json` names a place."""
    steps = (f"[{part}]" if isinstance(part, int) else f".{printable(part)}" for part in path)
    return label + "".join(steps)


def check_unicode(value: Any, label: str, code: str) -> None:
    """Refuse JSON data with text that is not Unicode (see :func:`not_unicode`)."""
    problem = not_unicode(value)
    if problem is not None:
        path, point = problem
        raise AgentGraphError(
            code,
            f"{_dotted(label, path)} holds an unpaired surrogate ({point}), "
            "which is not Unicode text",
        )


def _plain(value: Any) -> Any:
    """A private deep copy with tuples as lists and mappings as dicts (checked JSON)."""
    if isinstance(value, Mapping):
        return {key: _plain(child) for key, child in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(child) for child in value]
    return value


def check_facts(facts: Any) -> dict[str, Any]:
    if not isinstance(facts, Mapping):
        raise AgentGraphError(codes.JSON_OBJECT_REQUIRED, "facts must be a JSON object")
    check_json(facts, "facts", codes.FACTS_INVALID)
    plain: dict[str, Any] = _plain(facts)
    check_unicode(plain, "facts", codes.FACTS_INVALID)
    return plain


def check_outcome(outcome: Any) -> str:
    if not isinstance(outcome, str) or outcome not in OUTCOMES:
        shown = outcome if isinstance(outcome, str) else repr(outcome)
        raise AgentGraphError(
            codes.OUTCOME_INVALID,
            f"Unsupported outcome: {shown} (expected one of: {', '.join(OUTCOMES)})"
            + nearest_outcome(outcome),
        )
    return outcome


def nearest_outcome(outcome: Any) -> str:
    """``; did you mean completed?`` for a misspelled outcome (case too), else ``""``."""
    from ..documents.schema_findings import closest_member  # a failure's path only

    near = closest_member(outcome, OUTCOMES) if isinstance(outcome, str) else None
    return f"; did you mean {near}?" if near is not None else ""


def check_authorities(authorities: Iterable[str]) -> list[str]:
    """De-duplicated and sorted as JavaScript's default ``sort()`` would."""
    if isinstance(authorities, (str, bytes)):
        raise AgentGraphError(codes.AUTHORITY_INVALID, "authorities must be a list of strings")
    values = list(authorities)
    if not all(isinstance(a, str) for a in values):
        raise AgentGraphError(codes.AUTHORITY_INVALID, "authorities must be a list of strings")
    check_unicode(values, "authorities", codes.AUTHORITY_INVALID)
    return js_sorted(set(values))


def check_state_key(run: Mapping[str, Any], key: Any) -> str:
    """A state key of the Run's own Graph: ``<graph>/<node>`` or ``<graph>/<sub>><…>/<node>``.

    The reference accepts any string, so a bare node id (``draft`` for
    ``report/draft``) was recorded and then silently never matched anything.
    """
    graph = run["graph"]
    if isinstance(key, str) and _SURROGATE.search(key) is not None:
        raise AgentGraphError(
            codes.STATE_KEY_INVALID,
            f"{key!r} is not a state key: it holds an unpaired surrogate, "
            "which is not Unicode text",
        )
    if not isinstance(key, str) or not key.startswith(f"{graph}/") or key.endswith("/"):
        raise AgentGraphError(
            codes.STATE_KEY_INVALID,
            f"{key!r} is not a state key of Graph {graph}: record the route's "
            f"afterAction.recordNode exactly (for example {graph}/<node>)",
        )
    return key


# -- building and changing documents ------------------------------------------------------


def _event(
    document: Mapping[str, Any], at: str, type_: str, detail: Any = NO_DETAIL, **members: Any
) -> dict[str, Any]:
    events: list[dict[str, Any]] = document["events"]
    event: dict[str, Any] = {
        "sequence": (events[-1]["sequence"] if events else 0) + 1,
        "at": at,
        "type": type_,
        **members,
    }
    if detail is not NO_DETAIL:
        event["detail"] = detail
    return event


def _appended(document: Mapping[str, Any], at: str, event: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(document))
    out["events"].append(event)
    out["updatedAt"] = at
    return out


def new_document(
    *,
    run_id: str,
    provider: str,
    graph: str,
    at: str,
    entry: str = "default",
    workspace: str | os.PathLike[str] | None = None,
    facts: Mapping[str, Any] | None = None,
    authorities: Iterable[str] = (),
) -> dict[str, Any]:
    """A fresh Run with its ``run.started`` event (``createdAt = updatedAt =`` its time)."""
    document: dict[str, Any] = {
        "schema": RUN_SCHEMA,
        "id": run_id,
        "provider": provider,
        "graph": graph,
        "entry": entry,
    }
    if workspace:
        document["workspace"] = os.path.abspath(workspace)
    document.update(
        {
            "createdAt": at,
            "updatedAt": at,
            "facts": check_facts(facts if facts is not None else {}),
            "outcomes": {},
            "authorities": check_authorities(authorities),
            "events": [{"sequence": 1, "at": at, "type": RUN_STARTED}],
        }
    )
    return document


def recorded(
    document: Mapping[str, Any], key: str, outcome: str, at: str, detail: Any = NO_DETAIL
) -> dict[str, Any]:
    check_state_key(document, key)
    check_outcome(outcome)
    if detail is not NO_DETAIL:
        check_json(detail, "detail", codes.DETAIL_INVALID)
        detail = _plain(detail)
        check_unicode(detail, "detail", codes.DETAIL_INVALID)
    record: dict[str, Any] = {"outcome": outcome, "recordedAt": at}
    if detail is not NO_DETAIL:
        record["detail"] = detail
    event = _event(document, at, OUTCOME_RECORDED, _plain(detail), node=key, outcome=outcome)
    out = _appended(document, at, event)
    out["outcomes"][key] = record
    return out


def with_facts(
    document: Mapping[str, Any], facts: Mapping[str, Any], at: str, *, replace: bool = False
) -> dict[str, Any]:
    """Shallow merge (top-level members replace old ones), or replace all Facts."""
    supplied = check_facts(facts)
    kind = FACTS_REPLACED if replace else FACTS_UPDATED
    out = _appended(document, at, _event(document, at, kind, {"keys": js_sorted(supplied)}))
    out["facts"] = supplied if replace else {**out["facts"], **supplied}
    return out


def _put(facts: dict[str, Any], path: Sequence[str], value: Any) -> bool:
    """Set (or, for :data:`UNSET`, remove) one nested member; whether anything changed.

    A member on the way that is not an object is replaced by one: the path's owner said
    what lives there, and a stale scalar must not make an observation impossible.
    """
    *parents, last = path
    node = facts
    for name in parents:
        child = node.get(name)
        if not isinstance(child, dict):
            if value is UNSET:
                return False
            child = {}
            node[name] = child
        node = child
    if value is UNSET:
        if last not in node:
            return False
        del node[last]
        return True
    if last in node and _same(node[last], value):
        return False
    node[last] = copy.deepcopy(value)
    return True


def _same(a: Any, b: Any) -> bool:
    # 1 and True differ as Facts (the VM compares with Object.is), so compare as JSON text
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def with_fact_paths(
    document: Mapping[str, Any],
    updates: Mapping[tuple[str, ...], Any],
    at: str,
    source: Mapping[str, Any],
) -> dict[str, Any] | None:
    """Set or remove Facts by path (``("report", "digest")``), recording who said so.

    Unlike :func:`with_facts` this changes only the named members, so two writers of
    different members of one object never undo each other. ``None`` when no value changed:
    an unchanged observation writes no event (each Fact feeds the revision).
    """
    facts = copy.deepcopy(dict(document["facts"]))
    changed = [".".join(path) for path, value in updates.items() if _put(facts, path, value)]
    if not changed:
        return None
    check_facts(facts)
    check_json(dict(source), "source", codes.FACTS_INVALID)
    detail = {
        "keys": js_sorted({path.split(".", 1)[0] for path in changed}),
        "paths": changed,
        "source": _plain(dict(source)),
    }
    out = _appended(document, at, _event(document, at, FACTS_UPDATED, detail))
    out["facts"] = facts
    return out


def with_event(document: Mapping[str, Any], at: str, type_: str, detail: Any) -> dict[str, Any]:
    """Append one host event (``gate.decided`` …) without changing any state."""
    check_json(detail, "detail", codes.DETAIL_INVALID)
    plain = _plain(detail)
    check_unicode(plain, "detail", codes.DETAIL_INVALID)
    return _appended(document, at, _event(document, at, type_, plain))


def with_authorities(
    document: Mapping[str, Any], authorities: Iterable[str], at: str
) -> dict[str, Any]:
    """Replace the session authorities (an empty list clears them)."""
    values = check_authorities(authorities)
    detail = {"authorities": list(values)}
    out = _appended(document, at, _event(document, at, AUTHORITIES_UPDATED, detail))
    out["authorities"] = values
    return out


def checkpointed(
    document: Mapping[str, Any], checkpoint_name: str, at: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The source with its ``run.checkpointed`` event, and the checkpoint copy.

    The copy has the same event (both files say where the checkpoint went) and no
    authorities: a session's delegated authority never outlives the session.
    """
    detail = {"checkpoint": checkpoint_name}
    source = _appended(document, at, _event(document, at, RUN_CHECKPOINTED, detail))
    copy_ = copy.deepcopy(source)
    copy_["authorities"] = []
    return source, copy_


def resumed(document: Mapping[str, Any], checkpoint_name: str, at: str) -> dict[str, Any]:
    """A new Run from a checkpoint: same id, authorities cleared, ``run.resumed`` appended."""
    detail = {"checkpoint": checkpoint_name}
    out = _appended(document, at, _event(document, at, RUN_RESUMED, detail))
    out["authorities"] = []
    return out


# -- reading documents back ---------------------------------------------------------------


def check_version(value: Any, display: str) -> None:
    """A Run written by a newer toolchain, or a Flow Run record, is refused by name, not
    as a list of schema findings."""
    if not isinstance(value, Mapping):
        return
    identity = value.get("schema")
    if identity == FLOW_RECORD_SCHEMA:
        # said in one line: a Flow record is no Run with 184 schema findings
        import shlex

        message = (
            f"{display} is a Flow Run record ({identity}), not a Graph Run; "
            f"read it with: agc flow status --state {shlex.quote(display)}"
        )
        raise AgentGraphError(
            codes.RUN_INVALID,
            message,
            [Diagnostic(codes.RUN_INVALID, message, path=display, pointer="/schema")],
        )
    match = _SCHEMA_IDENTITY.match(identity) if isinstance(identity, str) else None
    if match is not None and int(match.group(1)) > RUN_SCHEMA_VERSION:
        raise AgentGraphError(
            codes.RUN_VERSION_UNSUPPORTED,
            f"{display} is an {identity} Run; this toolchain reads {RUN_SCHEMA} "
            "(upgrade agent-graph to use it)",
            [
                Diagnostic(
                    codes.RUN_VERSION_UNSUPPORTED,
                    f"schema {identity} is newer than {RUN_SCHEMA}",
                    path=display,
                    pointer="/schema",
                )
            ],
        )


def check_integrity(document: Mapping[str, Any], display: str) -> None:
    """What the schema cannot say: the log's numbers rise by one, without gaps or repeats.

    Every schema-valid Run is read, as the reference reads it: a log may be empty or
    begin with any event at any sequence (a host may keep its own start, or prune old
    events); a write continues from the last sequence (or 1). What no host can mean is
    refused: a gap, a repeated number or a number that goes down.
    """
    events: Sequence[Mapping[str, Any]] = document["events"]
    for index in range(1, len(events)):
        previous, current = events[index - 1]["sequence"], events[index]["sequence"]
        if current == previous + 1:
            continue
        if current == previous:
            what = "repeats the sequence of the event before it"
        elif current < previous:
            what = f"goes down from {previous}"
        else:
            what = f"skips {previous + 1}" + ("" if current == previous + 2 else f"–{current - 1}")
        pointer = f"/events/{index}/sequence"
        message = (
            f"event {index + 1} has sequence {current}, which {what}; "
            "each event's sequence is the one before it plus 1"
        )
        raise AgentGraphError(
            codes.RUN_INVALID,
            f"{display} is not a consistent Run: {message}",
            [Diagnostic(codes.RUN_INVALID, message, path=display, pointer=pointer)],
        )
