"""``agc flow graph``: a Flow and the Flows it runs, as Mermaid, DOT or SVG, with a Run.

``--state RUN.json`` overlays a Run record of the entry Flow (its visits per node, the
last result of each, the current or failed node) and the child Run records it names
(``childState``, read beside it through the runtime's reader, their own children
included), which draw the child Flows' visits; a child record that is missing or damaged
is a warning on stderr and its Flow's unvisited nodes are drawn ``unknown``, never a
failure of the picture. A Run of another Flow is refused with
``run-flow-mismatch``, one of another version of this Flow (its fingerprint differs) with
``run-fingerprint-mismatch``, as ``agc flow resume`` refuses them.
A package with errors is refused as ``agc flow check`` reports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .. import codes
from ..errors import AgentGraphError
from .graph import picture_format_option, write_picture

if TYPE_CHECKING:
    from ..flow import FlowProgram
    from ..flow.runtime.store import RunFile
    from ..pictures.flow_overlay import ChildRun, RunOverlay


def _child_runs(file: RunFile, document: dict[str, Any]) -> list[ChildRun]:
    """The child Runs ``document`` names, and theirs, in the order they were started;
    one that cannot be read is kept without its document, with a warning."""
    from ..pictures.flow_overlay import ChildRun

    found: list[ChildRun] = []
    seen = {file.real}
    todo = [(file, document)]
    while todo:
        parent, doc = todo.pop(0)
        for visit in doc.get("visits") or []:
            name, flow = visit.get("childState"), visit.get("childFlow")
            if not isinstance(name, str) or not isinstance(flow, str):
                continue
            run_id = str(visit.get("childRunId") or "?")
            child = parent.sibling(name)
            if child.real in seen:
                continue  # a record that names itself or an ancestor: drawn once
            seen.add(child.real)
            problem = None
            try:
                child_doc = child.read()
            except AgentGraphError as error:
                problem, child_doc = f"{error.code}: {error.message}", None
            if child_doc is not None and (
                child_doc.get("flow") != flow or child_doc.get("runId") != run_id
            ):
                problem = (
                    f"{codes.RUN_FLOW_MISMATCH}: {child.path} holds Run "
                    f"{child_doc.get('runId')} of Flow {child_doc.get('flow')}, not the "
                    f"child Run {run_id} of {flow} that {parent.path} names"
                )
                child_doc = None
            if problem is not None:
                click.echo(
                    f"warning: the child Run {run_id} of Flow {flow} is drawn as unknown: "
                    f"{problem}",
                    err=True,
                )
            found.append(ChildRun(flow, run_id, child_doc, problem))
            if child_doc is not None:
                todo.append((child, child_doc))
    return found


def _overlay(program: FlowProgram, state: str) -> RunOverlay:
    from ..flow.runtime.store import RunFile
    from ..pictures.flow_overlay import run_overlay

    file = RunFile(state)
    document = file.read()
    root = program.root
    if document.get("flow") != root.id:
        raise AgentGraphError(
            codes.RUN_FLOW_MISMATCH,
            f"{state} is a Run of Flow {document.get('flow')}, not of {root.id}",
        )
    if document.get("fingerprint") != program.fingerprint:
        raise AgentGraphError(
            codes.RUN_FINGERPRINT_MISMATCH,
            f"{state} is a Run of another version of Flow {root.id} (its fingerprint "
            f"{document.get('fingerprint')} is not the package's {program.fingerprint}): "
            "the Flow changed since that Run",
        )
    return run_overlay(program.record, document, _child_runs(file, document))


@click.command("graph")
@click.argument("entry", metavar="DIR|FLOW.md")
@click.option(
    "--state",
    "state",
    default=None,
    metavar="RUN.json",
    help="A Run record of this Flow: draw its visits, results and current node.",
)
@picture_format_option
def flow_graph_command(entry: str, state: str | None, picture: str) -> None:
    """Draw a Flow and the Flows it runs (Mermaid, DOT or SVG), with a Run's visits."""
    from ..flow import compile as compile_flow
    from ..pictures import draw
    from ..pictures.flow import flow_picture

    program = compile_flow(entry)
    overlay = _overlay(program, state) if state is not None else None
    write_picture(draw(flow_picture(program.record, overlay), picture))
