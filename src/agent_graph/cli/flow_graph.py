"""``agc flow graph``: a Flow and the Flows it runs, as Mermaid, DOT or SVG, with a Run.

``--state RUN.json`` overlays a Run record of the entry Flow (its visits per node, the
last result of each, the current or failed node); a Run of another Flow is refused with
``run-flow-mismatch``, one of another version of this Flow (its fingerprint differs) with
``run-fingerprint-mismatch``, as ``agc flow resume`` refuses them.
A package with errors is refused as ``agc flow check`` reports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .. import codes
from ..errors import AgentGraphError
from .graph import picture_format_option, write_picture

if TYPE_CHECKING:
    from ..flow import FlowProgram
    from ..pictures.flow import RunOverlay


def _overlay(program: FlowProgram, state: str) -> RunOverlay:
    from ..flow.runtime.store import RunFile
    from ..pictures.flow import run_overlay

    document = RunFile(state).read()
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
    return run_overlay(program.record, document)


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
