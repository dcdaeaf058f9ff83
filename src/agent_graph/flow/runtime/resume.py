"""Resuming a Run (docs/flow-runs.md §Resume, §6.4, §8, B.52–B.58, C.10, C.24, C.34).

Recovery turns the record's unfinished position back into something the runner can
drive, recording what it decided (``recoveries`` and a ``recovery`` event):

* an Agent visit left running or interrupted is retried as a new visit of the same
  node with the same input (``retryOf``: the old visit);
* a command visit is not run again on its own (it may have had side effects): a plain
  resume is refused before anything is written (``command-interrupted``,
  :func:`interrupted_commands`), and the host chooses: ``rerun_interrupted`` retries it
  like an Agent visit, ``fail_interrupted`` fails the Run with ``command_interrupted``;
  in a round, finished branches keep their results;
* a ``执行Flow`` visit continues: a terminal child gives its result at once (B.56), a
  running or interrupted child is resumed first, recursively (B.57), a child whose record
  was never created is started;
* the recorded binding is re-attached unless another active Run holds that Agent (C.34).
"""

from __future__ import annotations

from collections.abc import Callable

from ... import codes
from ...errors import AgentGraphError
from ...ir import flow_records as r
from .binding import BINDINGS
from .failures import Category, RunFailure
from .record import Record, read
from .state import At, EventType, RunDoc, RunStatus, Strategy, Visit, VisitStatus
from .store import RunFile

#: How recovery fails the Run: the runner's own failure path (visit, failure).
Fail = Callable[[Visit | None, RunFailure], None]


def read_child(file: RunFile, visit: Visit, parent_id: str, flow_id: str) -> RunDoc:
    """The child record a parent's 执行Flow visit names, checked to be that child."""
    link = visit.child
    assert link is not None, "a 执行Flow visit names its child Run when it is committed"
    document = read(file)
    parent = document.parent
    if (
        document.run_id != link.run_id
        or parent is None
        or parent.run_id != parent_id
        or document.flow != flow_id
    ):
        raise AgentGraphError(
            codes.RUN_RECORD_INVALID,
            f"{file.path} is not the child Run {link.run_id} of {flow_id} that visit "
            f"{visit.id} of Run {parent_id} started",
        )
    return document


def check_children(file: RunFile, document: RunDoc) -> None:
    """Before anything is committed: every child record the resume will read is whole."""
    cursor = document.cursor
    visit_id = cursor.visit_id if cursor is not None else None
    if visit_id is None:
        return
    link = document.visit(visit_id).child
    if link is None:
        return
    child_file = file.sibling(link.state)
    if not child_file.exists():
        return
    child = read(child_file)
    if child.flow != link.flow:
        raise AgentGraphError(
            codes.RUN_RECORD_INVALID, f"{child_file.path} is a Run of another Flow"
        )
    if child.run_id != link.run_id:
        raise AgentGraphError(
            codes.RUN_RECORD_INVALID, f"{child_file.path} is not the child Run {link.run_id}"
        )
    check_children(child_file, child)


def interrupted_commands(file: RunFile, document: RunDoc) -> list[str]:
    """The commands ``recover`` would refuse to run again, in this Run or in the child Run
    it would resume (``c → a``: command ``a`` of the child Run of ``c``); [] when none.

    Read before anything is committed, so a resume can refuse and leave the Run as it was.
    """
    cursor = document.cursor
    if cursor is None or document.status.ended:
        return []
    if cursor.at == At.ROUND:
        current = document.current_round()
        return [
            ref
            for ref, visit_id in current.branches.items()
            if visit_id is not None and not document.visit(visit_id).status.ended
        ]
    if cursor.visit_id is None:
        return []
    visit = document.visit(cursor.visit_id)
    if visit.status.ended:
        return []
    if visit.kind == r.ACTION_KINDS[r.COMMAND]:
        return [visit.node]
    link = visit.child
    if link is None:
        return []
    child_file = file.sibling(link.state)
    if not child_file.exists():
        return []
    return [f"{visit.node} → {ref}" for ref in interrupted_commands(child_file, read(child_file))]


def recover(record: Record, flow: r.Flow, rerun: bool, fail: Fail) -> None:
    """Turn the record's unfinished position into one ``flow``'s runner can drive.

    Takes the pieces it needs (``fail`` is the runner's failure path) rather than the
    runner, which calls this: this module never imports the runner.
    """
    doc = record.doc
    refs = {node.ref: i for i, node in enumerate(flow.nodes)}
    record.event(EventType.RUN_RESUMED, previous=doc.status.value)
    doc.status = RunStatus.RUNNING
    binding = doc.agent_binding
    if binding is not None and not BINDINGS.bind(binding, record.run_id):
        record.recovery(
            Strategy.BINDING_DROPPED,
            f"Agent {binding} is bound to another active Run; the binding is left empty",
        )
        doc.agent_binding = None
    cursor = doc.position
    if cursor.at == At.NODE and cursor.visit_id is not None:
        visit = record.visit(cursor.visit_id)
        node = flow.nodes[refs[visit.node]]
        if visit.status.ended:
            record.commit()
            return
        if node.kind == r.CALL:
            link = visit.child
            assert link is not None, "a 执行Flow visit names its child Run when it is committed"
            visit.status = VisitStatus.RUNNING
            record.recovery(
                Strategy.RESUME_CHILD,
                f"{node.ref}: continuing child Run {link.run_id}",
                visit=visit.id,
                child_run_id=link.run_id,
            )
        elif node.kind == r.COMMAND and not rerun:
            _settle(record, visit)
            record.recovery(
                Strategy.REFUSE_COMMAND,
                f"{node.ref}: the command was interrupted; it is not run again",
                visit=visit.id,
            )
            fail(None, _interrupted_command(node.ref))
            return
        else:
            _settle(record, visit)
            strategy = Strategy.RETRY_AGENT if node.kind != r.COMMAND else Strategy.RERUN_COMMAND
            record.recovery(strategy, f"{node.ref}: visiting again", visit=visit.id)
            cursor.retry(visit.id)
    elif cursor.at == At.ROUND:
        current = doc.current_round()
        stopped = []
        for ref, visit_id in current.branches.items():
            if visit_id is None:
                continue
            visit = record.visit(visit_id)
            if visit.status.ended:
                continue
            _settle(record, visit)
            if rerun:
                current.rerun(ref, visit_id)
                record.recovery(Strategy.RERUN_COMMAND, f"{ref}: running again", visit=visit_id)
            else:
                stopped.append(ref)
        if stopped:
            record.recovery(
                Strategy.REFUSE_COMMAND,
                f"{', '.join(stopped)}: interrupted branch commands are not run again",
            )
            fail(None, _interrupted_command(", ".join(stopped)))
            return
    record.commit()


def _settle(record: Record, visit: Visit) -> None:
    if visit.status == VisitStatus.RUNNING:
        record.end_visit(visit, VisitStatus.INTERRUPTED, None)


def _interrupted_command(refs: str) -> RunFailure:
    return RunFailure(
        Category.COMMAND_INTERRUPTED,
        f"{refs}: the command was interrupted and may have had effects; failed as asked "
        "(--fail-interrupted)",
    )
