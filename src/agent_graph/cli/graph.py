"""``agc graph``: a Provider graph as Mermaid, Graphviz DOT or SVG, with the evaluation.

With any state option (``--state``, ``--facts``, ``--outcomes``, ``--authority``; pass
``--facts '{}'`` for the empty state) the picture is overlaid with the evaluation's
trace: each node's status, the primary and alternative routes, fired edges and each
subgraph frame's status (calls not reached are their node alone; ``--expand`` draws their
graphs too). Without one it is the graph alone, every call expanded. ``--format`` here takes
``mermaid`` (default), ``dot`` or ``svg`` (through Graphviz; ``graphviz-missing`` when
it is not installed); errors are printed as human lines (there is no JSON form).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import codes
from ..errors import AgentGraphError
from ..pictures import PICTURE_FORMATS
from .context import options
from .options import evaluation_options, provider_options


def _picture_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    if value is None:
        return "mermaid"
    if value not in PICTURE_FORMATS:
        shown = value if value else "(empty)"
        raise AgentGraphError(
            codes.FORMAT_INVALID, f"Unsupported format: {shown}; --format takes mermaid, dot or svg"
        )
    return value


def picture_format_option(func: Any) -> Any:
    return click.option(
        "--format",
        "picture",
        default=None,
        metavar="mermaid|dot|svg",
        callback=_picture_format,
        expose_value=True,
        help="Picture format (default: mermaid; svg needs Graphviz).",
    )(func)


def provider_only_options(func: Any) -> Any:
    """``-m``, ``--skill`` and ``--registry`` as every command has them, without the global
    ``--format human|json`` (this command's ``--format`` names a picture format)."""

    @provider_options
    def template() -> None: ...

    # click keeps decorator parameters innermost first; keep that order
    for param in getattr(template, "__click_params__", []):
        if param.name != "fmt":
            func = _attach(func, param)
    return func


def _attach(func: Any, param: click.Parameter) -> Any:
    params = func.__dict__.setdefault("__click_params__", [])
    params.append(param)
    return func


def write_picture(data: bytes) -> None:
    out = sys.stdout.buffer
    out.write(data)
    out.flush()


@click.command("graph")
@click.argument("graph", required=False)
@evaluation_options
@click.option(
    "--expand",
    is_flag=True,
    help="With state: also draw the graphs of subgraph calls the evaluation did not reach.",
)
@picture_format_option
@provider_only_options
@click.pass_context
def graph_command(
    ctx: click.Context, /, graph: str | None, picture: str, expand: bool, **local: Any
) -> None:
    """Draw a graph (Mermaid, DOT or SVG), with the evaluation when state is given."""
    from ..pictures import draw
    from ..pictures.provider import provider_picture
    from .explain import has_state, traced_evaluation

    opts = options(ctx, **{**local, "fmt": None})
    traced = traced_evaluation(opts, graph, local)
    overlay = has_state(local)
    drawn = provider_picture(
        traced.program.ir,
        traced.graph,
        traced.entry,
        evaluation=traced.evaluation if overlay else None,
        trace=traced.trace if overlay else None,
        expand=expand,
    )
    write_picture(draw(drawn, picture))
