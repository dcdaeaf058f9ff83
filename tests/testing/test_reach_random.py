"""``explain --reach`` on seeded random Providers (``provider_gen``): every answer it gives
is a graph test that passes, and a node that a generated state routes to (a walk of
recorded outcomes, or random assignments) is never called unreachable. A state that only
routes there by recording a terminal's outcome is left out: the search records outcomes
of the steps a host runs (actions and Gates), not of terminals."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agent_graph import compile_provider
from agent_graph.errors import AgentGraphError
from agent_graph.testing.assertions import check_case
from agent_graph.testing.discovery import GraphTestCase
from agent_graph.testing.reach import reach
from agent_graph.testing.reach_case import reach_case
from agent_graph.testing.reach_target import target_of
from agent_graph.vm import Program
from provider_gen import generate_case
from slow_support import fast_sample

SEEDS = fast_sample(range(40), 3)
LIMIT = 1000  # random graphs are wide: a smaller bound keeps each case short


def _is_terminal(program: Program, graph: str, key: str) -> bool:
    try:
        return target_of(program, graph, key).node.kind == 3
    except AgentGraphError:
        return False


@pytest.mark.parametrize("seed", SEEDS)
def test_answers_pass_and_routed_nodes_are_reached(seed: int, tmp_path: Path) -> None:
    case = generate_case(random.Random(seed), tmp_path / "p")
    program = compile_provider(case.manifest)
    for graph in program.graph_ids:
        for node in program.graph(graph).nodes:
            answer = reach(program, graph, node.id, limit=LIMIT)
            if not answer.reached:
                assert answer.reason
                continue
            written = reach_case(answer)
            test = GraphTestCase(
                tmp_path / "case.yaml", written["name"], written["graph"], written["entry"],
                written.get("state", {}), written["expect"],
            )  # fmt: skip
            assert check_case(program, test) == (), (graph, node.id)
    for state in case.states:
        given = {"facts": state.facts, "outcomes": state.outcomes, "authorities": state.authorities}
        try:
            primary = program.evaluate(state.graph, state.entry, given).primary
        except AgentGraphError:
            continue  # a state the VM refuses is no evidence
        if primary is None:
            continue
        outcomes = {
            k: v for k, v in state.outcomes.items() if not _is_terminal(program, state.graph, k)
        }
        again = program.evaluate(state.graph, state.entry, {**given, "outcomes": outcomes})
        if again.primary is None or again.primary.state_key != primary.state_key:
            continue  # it takes a terminal's recorded outcome
        answer = reach(program, state.graph, primary.state_key, limit=LIMIT)
        assert answer.status != "unreachable", (state.graph, primary.state_key, answer.reason)
