"""``agc explain``: why each node has its status, from the evaluation's trace.

State options are ``agc evaluate``'s (``--entry``, ``--state``, ``--facts``, ``--outcomes``,
``--authority``) and mean the same, so ``revision`` is the one ``agc evaluate`` prints.
``--node ID`` keeps one node (a node id, in every frame it appears in, or a state key).
A Graph or Entry the Provider lacks is an error (``graph-missing``, ``entry-missing``),
as is a ``--node`` that names no evaluated node (``explain-node-missing``).

``--reach NODE`` asks the other way round: the smallest state, added to the one the state
options give, that makes NODE the primary route (:mod:`agent_graph.testing.reach`); without
``--entry`` every entry of the Graph is tried. It exits 1 when NODE cannot be reached (the
answer says why). ``--write-test FILE`` writes the answer as a graph test, never over an
existing file (``reach-test-exists``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import click

from .. import codes
from ..errors import AgentGraphError
from .context import load, options, select
from .options import evaluation_options, provider_options
from .resource import positive_integer

#: ``--max-states``' default: the search's own bound (testing.reach.DEFAULT_LIMIT, which
#: is not imported to keep ``--help`` light; tests/testing/test_reach.py holds them equal).
DEFAULT_STATES: Final = 5000
WEEKLY: Final = "examples/weekly-report/provider.yaml"

if TYPE_CHECKING:
    from ..vm import Evaluation, Program
    from ..vm.trace import Trace
    from .context import Options
    from .state_input import EvaluationInput


@dataclass(frozen=True, slots=True)
class Traced:
    """An evaluation with its trace, and the Program and Graph it is of."""

    program: Program
    graph: str
    entry: str
    evaluation: Evaluation
    trace: Trace


def _selected(
    opts: Options, graph: str | None, local: dict[str, Any], *, every_entry: bool
) -> tuple[Program, str, str, EvaluationInput]:
    """The Program, the selected Graph and Entry, and the state the options give;
    ``entry-missing`` for an Entry the Graph lacks (unless ``every_entry``: none was
    named, and each of the Graph's is tried)."""
    from .state_input import evaluation_input

    loaded = load(opts)
    program = loaded.runnable
    selected, entry = select(
        loaded.binding, graph, local.get("entry"), program.graph_ids, human=opts.fmt == "human"
    )
    found = program.graph(selected)  # graph-missing
    if not every_entry and not any(name == entry for name, _ in found.entrypoints):
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
    return program, selected, entry, data


def has_state(local: dict[str, Any]) -> bool:
    """Whether any state option was given (``agc graph`` draws an overlay only then)."""
    return any(local.get(k) is not None for k in ("state_path", "facts", "outcomes")) or bool(
        local.get("authorities")
    )


def traced_evaluation(opts: Options, graph: str | None, local: dict[str, Any]) -> Traced:
    """Load the Provider, select Graph and Entry, read the state, evaluate with the trace."""
    program, selected, entry, data = _selected(opts, graph, local, every_entry=False)
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


#: ``agc explain --reach``'s example, printed at the end of the help and run by the tests.
REACH_EXAMPLE: Final = f"agc explain report --reach publish -m {WEEKLY}"


@click.command(
    "explain",
    epilog=f"\b\nTo find the smallest state that routes to a node:\n  {REACH_EXAMPLE}",
)
@click.argument("graph", required=False)
@evaluation_options
@click.option(
    "--node",
    default=None,
    metavar="ID",
    help="Explain one node: a node id (in every frame it appears in) or a state key.",
)
@click.option(
    "--reach",
    "reach_node",
    default=None,
    metavar="NODE",
    help="Find the smallest state (facts, outcomes, authorities) that makes NODE the "
    "primary route, added to the state the options give; a terminal is reached when its "
    "frame completes with it, a subgraph node when the primary route is inside it. NODE is "
    "a node id or a state key through subgraph calls. Exit 1 when it cannot be reached.",
)
@click.option(
    "--write-test",
    "write_test",
    default=None,
    metavar="FILE",
    help="With --reach: write the state found as a graph test (agent-graph.test.v1; JSON "
    "for .json, else YAML) that agc test passes. An existing FILE is never replaced.",
)
@click.option(
    "--max-states",
    "max_states",
    default=DEFAULT_STATES,
    type=str,  # checked by the callback: option-invalid, as every count option of agc
    callback=positive_integer,
    metavar="N",
    help=f"With --reach: evaluate at most N states (default {DEFAULT_STATES}).",
)
@provider_options
@click.pass_context
def explain_command(
    ctx: click.Context,
    /,
    graph: str | None,
    node: str | None,
    reach_node: str | None,
    write_test: str | None,
    max_states: int,
    **local: Any,
) -> None:
    """Why each node has its status for a state: edges, fact checks, repeats, ranking."""
    from ..pictures.explain import explain, explain_lines
    from .render import emit

    opts = options(ctx, **local)
    if reach_node is not None:
        if node is not None:
            raise click.UsageError("--reach and --node cannot be used together", ctx)
        _reach(ctx, opts, graph, reach_node, write_test, max_states, local)
        return
    if write_test is not None:
        raise click.UsageError("--write-test needs --reach NODE", ctx)
    traced = traced_evaluation(opts, graph, local)
    doc = explain(traced.evaluation, traced.trace, node)
    if node is not None and not doc["nodes"]:
        raise _missing_node(node, explain(traced.evaluation, traced.trace))
    emit(opts.fmt, doc, explain_lines(doc))


def _reach(
    ctx: click.Context,
    opts: Options,
    graph: str | None,
    node: str,
    write_test: str | None,
    limit: int,
    local: dict[str, Any],
) -> None:
    from ..testing.reach import State, reach
    from ..testing.reach_case import reach_document, reach_lines, write_reach_case
    from ..vm.state import normalize
    from .render import emit

    entry = local.get("entry")
    program, selected, _, data = _selected(opts, graph, local, every_entry=entry is None)
    given = normalize(data.routing_state())
    start = State(given.facts, dict(given.outcomes), given.authorities)
    answer = reach(program, selected, node, entry, start, limit=limit)
    doc = reach_document(answer)
    if write_test is not None:  # null: nothing to write for a node not reached
        doc["test"] = str(write_reach_case(program, answer, write_test)) if answer.reached else None
    emit(opts.fmt, doc, reach_lines(doc))
    if not answer.reached:
        ctx.exit(1)
