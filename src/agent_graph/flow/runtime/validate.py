"""The shape of a Run record, checked before anything trusts it (``run-record-invalid``).

This is the structural check only (members, types, an event log numbered 1, 2, 3 …
without gap or duplicate, visit ids that exist); whether the record still fits its Flow
is the resume's business (fingerprint, node refs).
"""

from __future__ import annotations

from typing import Any, Final

from ...errors import AgentGraphError
from .failures import RECORD_INVALID
from .state import SCHEMA

STATUSES: Final = ("running", "interrupted", "completed", "failed")
VISIT_STATUSES: Final = ("running", "interrupted", "completed", "failed")

_TOP: Final[dict[str, type | tuple[type, ...]]] = {
    "schema": str,
    "runId": str,
    "flow": str,
    "entryPath": str,
    "packageRoot": str,
    "fingerprint": str,
    "fingerprintVersion": int,
    "cwd": str,
    "status": str,
    "revision": int,
    "visits": list,
    "rounds": list,
    "events": list,
    "startedAt": str,
    "checksum": str,
}
_VISIT: Final[dict[str, type | tuple[type, ...]]] = {
    "id": str,
    "node": str,
    "kind": str,
    "status": str,
    "enteredFrom": str,
}


def _fail(display: str, what: str) -> AgentGraphError:
    return AgentGraphError(RECORD_INVALID, f"{display} is not a Flow Run record agc wrote: {what}")


def check_record(document: Any, display: str) -> None:
    if not isinstance(document, dict):
        raise _fail(display, "not a JSON object")
    if document.get("schema") != SCHEMA:
        raise _fail(display, f"`schema` is {document.get('schema')!r}, not {SCHEMA!r}")
    for key, kind in _TOP.items():
        if not isinstance(document.get(key), kind) or isinstance(document.get(key), bool):
            raise _fail(display, f"`{key}` is missing or not a {_name(kind)}")
    if document["status"] not in STATUSES:
        raise _fail(display, f"`status` {document['status']!r} is not one of {STATUSES}")
    ids: set[str] = set()
    for index, visit in enumerate(document["visits"]):
        where = f"visits[{index}]"
        if not isinstance(visit, dict):
            raise _fail(display, f"{where} is not an object")
        for key, kind in _VISIT.items():
            if not isinstance(visit.get(key), kind):
                raise _fail(display, f"{where}.{key} is missing or not a {_name(kind)}")
        if visit["status"] not in VISIT_STATUSES or visit["id"] in ids:
            raise _fail(display, f"{where} has a bad status or a repeated id")
        ids.add(visit["id"])
    for index, event in enumerate(document["events"], start=1):
        if not isinstance(event, dict) or event.get("seq") != index:
            raise _fail(display, f"event {index} is missing or out of sequence (a gap or a repeat)")
        if not isinstance(event.get("type"), str) or event.get("runId") != document["runId"]:
            raise _fail(display, f"event {index} has no type or belongs to another Run")
    for index, round_ in enumerate(document["rounds"]):
        if not isinstance(round_, dict) or not isinstance(round_.get("branches"), dict):
            raise _fail(display, f"rounds[{index}] is not a round")
        for visit_id in round_["branches"].values():
            if visit_id is not None and visit_id not in ids:
                raise _fail(display, f"rounds[{index}] names a visit that does not exist")
    cursor = document.get("cursor")
    if cursor is not None:
        if not isinstance(cursor, dict) or cursor.get("at") not in ("node", "round"):
            raise _fail(display, "`cursor` is not a position")
        visit_id = cursor.get("visit")
        if visit_id is not None and visit_id not in ids:
            raise _fail(display, "`cursor` names a visit that does not exist")
    elif document["status"] in ("running", "interrupted"):
        raise _fail(display, "a Run that has not ended has no `cursor`")
    parent = document.get("parent")
    if parent is not None and not (
        isinstance(parent, dict)
        and isinstance(parent.get("runId"), str)
        and isinstance(parent.get("state"), str)
    ):
        raise _fail(display, "`parent` is not a link to a parent Run")


def _name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "string", int: "integer", list: "array", dict: "object"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)
