"""Is a document a Run record agc wrote? Checked before anything trusts it
(``run-record-invalid``).

Its shape is ``flow-run.schema.json``'s, checked with the project's schema machinery
(:func:`agent_graph.documents.schema.validate`): one diagnostic per finding, with its
JSON pointer. Before it, the identity (an object whose ``schema`` is
``agent-graph.flow-run.v1``), so another tool's file is named as such rather than as a
list of findings; after it, what a schema cannot say: the references between members
(unique visit ids, an event log numbered 1, 2, 3 … of this Run, rounds and a cursor
that name visits and rounds that exist, a cursor while the Run has not ended). Whether
the record still fits its Flow (fingerprint, node refs) is the resume's business.
"""

from __future__ import annotations

import json
from typing import Any

from ... import codes
from ...errors import AgentGraphError, Diagnostic
from .state import SCHEMA, RunDoc


def _fail(display: str, what: str, found: list[Diagnostic] | None = None) -> AgentGraphError:
    return AgentGraphError(
        codes.RUN_RECORD_INVALID, f"{display} is not a Flow Run record agc wrote: {what}", found
    )


def check_record(document: Any, display: str) -> None:
    if not isinstance(document, dict):
        raise _fail(display, "not a JSON object")
    if document.get("schema") != SCHEMA:
        raise _fail(display, f"`schema` is {document.get('schema')!r}, not {SCHEMA!r}")
    from ...documents.schema import validate  # the schema engines load on the first read

    problem = validate("flow-run", document, path=display)
    if problem is not None:
        found = problem.diagnostics
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise _fail(display, _headline(document, found[0]) + more, found)
    record = RunDoc(document)
    ids = _visit_ids(record, display)
    _check_log(record, display)
    _check_positions(record, ids, display)
    _check_names(record, display)


def _headline(document: dict[str, Any], first: Diagnostic) -> str:
    """The first finding, with the value it is about when that is a scalar: the finding
    says what the member must be, the headline also what it is."""
    node: Any = document
    for token in (first.pointer or "").split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return first.message
    from ...documents.schema_findings import MEMBER_KEYWORDS  # loaded with the schema

    # a finding about a member's key (an unknown member) is not about its value
    if isinstance(node, dict | list) or first.code.removeprefix("schema.") in MEMBER_KEYWORDS:
        return first.message
    return f"{first.message} (found {json.dumps(node, ensure_ascii=False)[:80]})"


def _visit_ids(record: RunDoc, display: str) -> set[str]:
    ids: set[str] = set()
    for index, visit in enumerate(record.visits):
        if visit.id in ids:
            raise _fail(display, f"visits[{index}] repeats the id {visit.id!r}")
        ids.add(visit.id)
    return ids


def _check_positions(record: RunDoc, ids: set[str], display: str) -> None:
    """Rounds and the cursor name visits and rounds that exist; only an ended Run has
    no cursor (two members' relation: said here, where the reason can be given)."""
    rounds: set[str | None] = {None}
    for index, round_ in enumerate(record.rounds):
        if not {*round_.branches.values(), round_.join} <= {*ids, None}:
            raise _fail(display, f"rounds[{index}] names a visit that does not exist")
        rounds.add(round_.id)
    cursor = record.cursor
    if cursor is None:
        if not record.status.ended:
            raise _fail(display, "a Run that has not ended has no `cursor`")
    elif cursor.visit_id is not None and cursor.visit_id not in ids:
        raise _fail(display, "`cursor` names a visit that does not exist")
    elif cursor.round_id not in rounds:
        raise _fail(display, "`cursor` names a round that does not exist")


def _bare(name: str) -> bool:
    """A plain file name in the record's own directory: resolving it can reach no other."""
    return bool(name) and name not in (".", "..") and not any(c in name for c in "/\\\0")


def _check_names(record: RunDoc, display: str) -> None:
    """Record names are the bare sibling names the runtime writes: a resume creates the
    child record it names, so a forged ``../x.json`` would be written outside the directory."""
    for index, visit in enumerate(record.visits):
        link = visit.child
        if link is None:
            continue
        suffix = f".{link.run_id}.json"
        name = link.state
        if not (_bare(name) and name.endswith(suffix) and len(name) > len(suffix)):
            pointer = f"/visits/{index}/childState"
            what = (
                f"visits[{index}].childState {json.dumps(name, ensure_ascii=False)[:120]} is "
                f"not a file name beside the record of the form <stem>{suffix}"
            )
            raise _fail(
                display,
                what,
                [Diagnostic(codes.RUN_RECORD_INVALID, what, path=display, pointer=pointer)],
            )
    parent = record.parent
    if parent is not None and not _bare(parent.state):
        what = (
            f"parent.state {json.dumps(parent.state, ensure_ascii=False)[:120]} is not a file "
            "name beside the record"
        )
        raise _fail(
            display,
            what,
            [Diagnostic(codes.RUN_RECORD_INVALID, what, path=display, pointer="/parent/state")],
        )


def _check_log(record: RunDoc, display: str) -> None:
    for index, event in enumerate(record.events, start=1):
        if event.seq != index:
            raise _fail(display, f"event {index} is missing or out of sequence (a gap or a repeat)")
        if event.run_id != record.run_id:
            raise _fail(display, f"event {index} belongs to another Run")
