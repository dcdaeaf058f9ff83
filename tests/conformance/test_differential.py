"""Differential test: the fast VM against a slow, plain transcription of the round algorithm.

Random Providers and states come from ``provider_gen`` (seeded, so failures replay);
``oracle_eval`` rescans every node and edge every round exactly as the reference does.
Every field of the evaluation document and the full ranked candidate list must agree.

Two seeds in three also write resources whose path-like ids collide with other resources'
paths (``provider_gen``'s ``resources=True``); there the Route ``resources`` of the first
candidates, the ``requiredResources``/``recommendedResources`` a graph test compares, and
every catalog entry's ``document`` must match the oracle's transcription of the
reference's lookup (``locateResource``: id first, then path; catalog documents by path).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from agent_graph import program_of
from agent_graph.compiler import CHECKED, compile_manifest
from agent_graph.compiler.provider.model import LoadedProvider
from agent_graph.ir import records as r
from agent_graph.testing import GraphTestCase, check_case
from agent_graph.vm import Program
from agent_graph.vm.locations import Location, locate_resource
from oracle_eval import OracleResult, oracle_code_document, oracle_route_resources, oracle_run
from provider_gen import State, generate_case

SEEDS = int(os.environ.get("AGC_DIFF_SEEDS", "150"))
#: Routes resolved per state (the primary first); each one evaluates the state again.
ROUTES_PER_STATE = 4


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


def _location_view(location: Location) -> dict[str, object]:
    """A location as the oracle writes it: without the schema identity and read state."""
    return {k: v for k, v in location.to_dict().items() if k not in ("schema", "readState")}


def _state_dict(state: State) -> dict[str, object]:
    return {"facts": state.facts, "outcomes": state.outcomes, "authorities": state.authorities}


def _check_resources(
    program: Program,
    provider: LoadedProvider,
    state: State,
    revision: str,
    candidates: list[dict[str, object]],
) -> None:
    for candidate in candidates[:ROUTES_PER_STATE]:
        expected = oracle_route_resources(provider, candidate, revision)
        route_id = str(candidate["routeId"])
        route = program.route(state.graph, state.entry, route_id, _state_dict(state), revision)
        actual = {
            "required": [_location_view(x) for x in route.resources.required],
            "recommended": [_location_view(x) for x in route.resources.recommended],
        }
        assert actual == expected, (state, candidate["node"])
    if not candidates:
        return
    # a graph test's resource expectations are the primary Route's location ids
    primary = oracle_route_resources(provider, candidates[0], revision)
    authorities = list(dict.fromkeys(state.authorities))  # the test schema wants them unique
    graph_test = GraphTestCase(
        path=Path("generated.yaml"),
        name="generated",
        graph=state.graph,
        entry=state.entry,
        state={"facts": state.facts, "outcomes": state.outcomes, "authorities": authorities},
        expect={
            "statusCode": "actionable",
            "requiredResources": [x["id"] for x in primary["required"]],
            "recommendedResources": [x["id"] for x in primary["recommended"]],
        },
    )
    failures = check_case(program, graph_test)
    assert [f.key for f in failures if f.key != "statusCode"] == [], (state, failures)


def _check_catalog_documents(program: Program, provider: LoadedProvider) -> None:
    entries = program.ir.catalog or ()
    assert provider.catalog is not None or not entries
    for entry in entries:
        assert provider.catalog is not None
        expected = oracle_code_document(provider, entry.code)
        actual = None
        if entry.document != r.NONE:
            resource = program.ir.resources[entry.document]
            actual = _location_view(locate_resource(program.root, resource, None))
        assert actual == expected, entry.code


def _agrees(program: Program, provider: LoadedProvider, state: State, seed: int) -> OracleResult:
    """The oracle's run of ``state``, after checking the VM's evaluation equals it."""
    expected = oracle_run(provider, state.graph, state.entry, **state.kwargs())
    actual = program.evaluate(
        state.graph,
        state.entry,
        {"facts": state.facts, "outcomes": state.outcomes, "authorities": state.authorities},
    )
    assert actual.to_dict() == expected.evaluation, (seed, state)
    assert [_candidate_view(c) for c in actual.candidates] == expected.candidates, (seed, state)
    return expected


@pytest.mark.parametrize("seed", range(SEEDS))
def test_vm_agrees_with_the_oracle(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    resources = seed % 3 != 0
    case = generate_case(
        rng, tmp_path / "provider", negative_zero_checks=seed % 2 == 1, resources=resources
    )
    compilation = compile_manifest(case.manifest, stop_after=CHECKED)
    provider = compilation.provider
    assert provider is not None
    program = program_of(compilation)
    assert case.states
    for state in case.states:
        expected = _agrees(program, provider, state, seed)
        if resources:
            revision = expected.evaluation["revision"]
            _check_resources(program, provider, state, revision, expected.candidates)
    if resources:
        _check_catalog_documents(program, provider)


#: Seeds evaluated again with every state key found through the long-path index and
#: every revision hashed member by member (the paths a deep call chain takes).
LONG_PATH_SEEDS = max(SEEDS // 5, 10)


@pytest.mark.parametrize("seed", range(LONG_PATH_SEEDS))
def test_long_path_lookups_agree_with_the_oracle(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_graph.vm import evaluate

    monkeypatch.setattr(evaluate, "_LONG_PREFIX", 0)
    monkeypatch.setattr(evaluate, "_LONG_OUTCOMES", 0)
    case = generate_case(random.Random(seed), tmp_path / "provider", resources=False)
    compilation = compile_manifest(case.manifest, stop_after=CHECKED)
    provider = compilation.provider
    assert provider is not None
    program = program_of(compilation)
    for state in case.states:
        _agrees(program, provider, state, seed)


def test_generated_resources_reach_every_lookup_case(tmp_path: Path) -> None:
    """The generated Providers exercise each way a reference can name a resource."""
    features: set[str] = set()
    for seed in range(60):
        case = generate_case(random.Random(seed), tmp_path / f"case-{seed}", resources=True)
        provider = compile_manifest(case.manifest, stop_after=CHECKED).provider
        assert provider is not None
        for state in case.states:
            result = oracle_run(provider, state.graph, state.entry, **state.kwargs())
            revision = result.evaluation["revision"]
            for candidate in result.candidates:
                oracle_route_resources(provider, candidate, revision, features)
    assert features >= {
        "id-over-path",  # an id spelled like another resource's path wins (issue 10)
        "id-own-path",
        "id-spelled",  # a "./" reference matched by a frontmatter id spelled the same
        "id-of-catalog-document",
        "path",
        "path-spelled",
        "path-over-id-spelled-otherwise",  # ids compare exactly, not as paths
        "delegated-resources",
    }
