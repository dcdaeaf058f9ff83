"""Differential test: the fast VM against a slow, plain transcription of the round algorithm.

Random Providers and states come from ``provider_gen`` (seeded, so failures replay);
``oracle_eval`` rescans every node and edge every round exactly as the reference does.
Every field of the evaluation document and the full ranked candidate list must agree.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from agent_graph import program_of
from agent_graph.compiler import CHECKED, compile_manifest
from oracle_eval import oracle_run
from provider_gen import generate_case

SEEDS = int(os.environ.get("AGC_DIFF_SEEDS", "150"))


def _candidate_view(c: object) -> dict[str, object]:
    from agent_graph.vm.evaluate import Candidate

    assert isinstance(c, Candidate)
    return {
        "routeId": c.route_id,
        "graph": c.graph.id,
        "node": c.node.id,
        "callPath": list(c.call_path),
        "stateKey": c.state_key,
        "availability": c.availability,
        "gateResolution": c.gate_resolution,
    }


@pytest.mark.parametrize("seed", range(SEEDS))
def test_vm_agrees_with_the_oracle(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    case = generate_case(rng, tmp_path / "provider", negative_zero_checks=seed % 2 == 1)
    compilation = compile_manifest(case.manifest, stop_after=CHECKED)
    provider = compilation.provider
    assert provider is not None
    program = program_of(compilation)
    assert case.states
    for state in case.states:
        expected = oracle_run(provider, state.graph, state.entry, **state.kwargs())
        actual = program.evaluate(
            state.graph,
            state.entry,
            {"facts": state.facts, "outcomes": state.outcomes, "authorities": state.authorities},
        )
        assert actual.to_dict() == expected.evaluation, (seed, state)
        assert [_candidate_view(c) for c in actual.candidates] == expected.candidates, (seed, state)
