"""Resuming a Run (docs/flow-runs.md §Resume, §6.4, §8, B.52–B.58, C.10, C.24, C.34).

Recovery turns the record's unfinished position back into something the runner can
drive, recording what it decided (``recoveries`` and a ``recovery`` event):

* an Agent visit left running or interrupted is retried as a new visit of the same
  node with the same input (``retryOf``: the old visit);
* a command visit is not run again (it may have had side effects): the Run fails with
  ``command_interrupted``, unless the host asked for ``rerun_interrupted`` (then it is
  retried like an Agent visit); in a round, finished branches keep their results;
* a ``执行Flow`` visit continues: a terminal child gives its result at once (B.56), a
  running or interrupted child is resumed first, recursively (B.57), a child whose record
  was never created is started;
* the recorded binding is re-attached unless another active Run holds that Agent (C.34).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import AgentGraphError
from ...ir import flow_records as r
from .binding import BINDINGS
from .failures import RECORD_INVALID, RunFailure
from .record import Record, round_of
from .store import RunFile

#: How recovery fails the Run: the runner's own failure path (visit, failure).
Fail = Callable[[dict[str, Any] | None, RunFailure], None]


def read_child(
    file: RunFile, visit: dict[str, Any], parent_id: str, flow_id: str
) -> dict[str, Any]:
    """The child record a parent's 执行Flow visit names, checked to be that child."""
    document = file.read()
    parent = document.get("parent") or {}
    if (
        document["runId"] != visit.get("childRunId")
        or parent.get("runId") != parent_id
        or document["flow"] != flow_id
    ):
        raise AgentGraphError(
            RECORD_INVALID,
            f"{file.path} is not the child Run {visit.get('childRunId')} of {flow_id} that "
            f"visit {visit['id']} of Run {parent_id} started",
        )
    return document


def check_children(file: RunFile, document: dict[str, Any]) -> None:
    """Before anything is committed: every child record the resume will read is whole."""
    cursor = document.get("cursor") or {}
    visit_id = cursor.get("visit")
    if visit_id is None:
        return
    visit = next(v for v in document["visits"] if v["id"] == visit_id)
    name = visit.get("childState")
    if not isinstance(name, str):
        return
    child_file = file.sibling(name)
    if not child_file.exists():
        return
    parent_flow_child = visit.get("childFlow")
    child = child_file.read()
    if parent_flow_child is not None and child["flow"] != parent_flow_child:
        raise AgentGraphError(RECORD_INVALID, f"{child_file.path} is a Run of another Flow")
    if child["runId"] != visit.get("childRunId"):
        raise AgentGraphError(
            RECORD_INVALID, f"{child_file.path} is not the child Run {visit.get('childRunId')}"
        )
    check_children(child_file, child)


def recover(record: Record, flow: r.Flow, rerun: bool, fail: Fail) -> None:
    """Turn the record's unfinished position into one ``flow``'s runner can drive.

    Takes the pieces it needs (``fail`` is the runner's failure path) rather than the
    runner, which calls this: this module never imports the runner.
    """
    doc = record.doc
    refs = {node.ref: i for i, node in enumerate(flow.nodes)}
    record.event("run-resumed", previous=doc["status"])
    doc["status"] = "running"
    binding = doc.get("agentBinding")
    if binding is not None and not BINDINGS.bind(binding, record.run_id):
        record.recovery(
            "binding-dropped",
            f"Agent {binding} is bound to another active Run; the binding is left empty",
        )
        doc["agentBinding"] = None
    cursor = doc["cursor"]
    if cursor["at"] == "node" and cursor.get("visit") is not None:
        visit = record.visit(cursor["visit"])
        node = flow.nodes[refs[visit["node"]]]
        if visit["status"] not in ("running", "interrupted"):
            record.commit()
            return
        if node.kind == r.CALL:
            visit["status"] = "running"
            record.recovery(
                "resume-child",
                f"{node.ref}: continuing child Run {visit['childRunId']}",
                visit=visit["id"],
                childRunId=visit["childRunId"],
            )
        elif node.kind == r.COMMAND and not rerun:
            _settle(record, visit)
            record.recovery(
                "refuse-command",
                f"{node.ref}: the command was interrupted; it is not run again",
                visit=visit["id"],
            )
            fail(None, _interrupted_command(node.ref))
            return
        else:
            _settle(record, visit)
            strategy = "retry-agent" if node.kind != r.COMMAND else "rerun-command"
            record.recovery(strategy, f"{node.ref}: visiting again", visit=visit["id"])
            cursor["visit"] = None
            cursor["retryOf"] = visit["id"]
    elif cursor["at"] == "round":
        current = round_of(doc, cursor["round"])
        stopped = []
        for ref, visit_id in current["branches"].items():
            if visit_id is None:
                continue
            visit = record.visit(visit_id)
            if visit["status"] not in ("running", "interrupted"):
                continue
            _settle(record, visit)
            if rerun:
                current["branches"][ref] = None
                current.setdefault("retry", {})[ref] = visit_id
                record.recovery("rerun-command", f"{ref}: running again", visit=visit_id)
            else:
                stopped.append(ref)
        if stopped:
            record.recovery(
                "refuse-command",
                f"{', '.join(stopped)}: interrupted branch commands are not run again",
            )
            fail(None, _interrupted_command(", ".join(stopped)))
            return
    record.commit()


def _settle(record: Any, visit: dict[str, Any]) -> None:
    if visit["status"] == "running":
        record.end_visit(visit, "interrupted", None)


def _interrupted_command(refs: str) -> RunFailure:
    return RunFailure(
        "command_interrupted",
        f"{refs}: the command was interrupted and may have had effects; resume with "
        "--rerun-interrupted to run it again",
    )
