"""``agc explain``: why each node has its status, from the evaluation's trace.

State options are ``agc evaluate``'s (``--entry``, ``--state``, ``--facts``, ``--outcomes``,
``--authority``) and mean the same, so ``revision`` is the one ``agc evaluate`` prints.
``--node ID`` keeps one node (a node id, in every frame it appears in, or a state key).
A Graph or Entry the Provider lacks is an error (``graph-missing``, ``entry-missing``),
as is a ``--node`` that names no evaluated node (``explain-node-missing``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from .. import codes
from ..errors import AgentGraphError
from .context import load, options, select
from .options import evaluation_options, provider_options

if TYPE_CHECKING:
    from ..vm import Evaluation, Program
    from ..vm.trace import Trace
    from .context import Options


@dataclass(frozen=True, slots=True)
class Traced:
    """An evaluation with its trace, and the Program and Graph it is of."""

    program: Program
    graph: str
    entry: str
    evaluation: Evaluation
    trace: Trace


def has_state(local: dict[str, Any]) -> bool:
    """Whether any state option was given (``agc graph`` draws an overlay only then)."""
    return any(local.get(k) is not None for k in ("state_path", "facts", "outcomes")) or bool(
        local.get("authorities")
    )


def traced_evaluation(opts: Options, graph: str | None, local: dict[str, Any]) -> Traced:
    """Load the Provider, select Graph and Entry, read the state, evaluate with the trace."""
    from .state_input import evaluation_input

    loaded = load(opts)
    binding, program = loaded.binding, loaded.runnable
    selected, entry = select(
        binding, graph, local.get("entry"), program.graph_ids, human=opts.fmt == "human"
    )
    found = program.graph(selected)  # graph-missing
    if not any(name == entry for name, _ in found.entrypoints):
        names = ", ".join(name for name, _ in found.entrypoints)
        raise AgentGraphError(
            codes.ENTRY_MISSING, f"Graph {selected} has no entry {entry} (its entries: {names})"
        )
    data = evaluation_input(
        state=local.get("state_path"),
        facts=local.get("facts"),
        outcomes=local.get("outcomes"),
        authorities=local.get("authorities") or (),
        provider_id=program.provider_id,
    )
    from .evaluation_report import warn_unknown_outcomes

    warn_unknown_outcomes(opts.fmt, program, selected, data)  # as evaluate and route warn
    evaluation = program.evaluate(selected, entry, data.routing_state(), trace=True)
    assert evaluation.trace is not None
    return Traced(program, selected, entry, evaluation, evaluation.trace)


def _missing_node(node: str, doc: dict[str, Any]) -> AgentGraphError:
    known = sorted({n["node"] for n in doc["nodes"]} | {n["stateKey"] for n in doc["nodes"]})
    near = difflib.get_close_matches(node, known, n=1)
    hint = f"; did you mean {near[0]}?" if near else ""
    return AgentGraphError(
        codes.EXPLAIN_NODE_MISSING,
        f"No node {node} in the evaluated frames of graph {doc['graph']}{hint}",
    )


@click.command("explain")
@click.argument("graph", required=False)
@evaluation_options
@click.option(
    "--node",
    default=None,
    metavar="ID",
    help="Explain one node: a node id (in every frame it appears in) or a state key.",
)
@provider_options
@click.pass_context
def explain_command(
    ctx: click.Context, /, graph: str | None, node: str | None, **local: Any
) -> None:
    """Why each node has its status for a state: edges, fact checks, repeats, ranking."""
    from ..pictures.explain import explain, explain_lines
    from .render import emit

    opts = options(ctx, **local)
    traced = traced_evaluation(opts, graph, local)
    doc = explain(traced.evaluation, traced.trace, node)
    if node is not None and not doc["nodes"]:
        raise _missing_node(node, explain(traced.evaluation, traced.trace))
    emit(opts.fmt, doc, explain_lines(doc))
