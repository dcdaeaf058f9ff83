"""The evaluation trace (``Program.evaluate(..., trace=True)``) changes nothing and is true.

* Differential: for every graph-test state of every shipped example and for the
  generated Providers and states of ``provider_gen``, the traced evaluation equals the
  plain one (the document and the full ranked candidate list).
* Truth: every frame the oracle (``oracle_eval``, the plain transcription of the
  reference) evaluates appears in the trace with the same reached nodes, in the same
  order, and the same outcome for each; every reached node says how it was reached.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from pathlib import Path

import pytest

from agent_graph import program_of
from agent_graph.compiler import CHECKED, compile_manifest
from agent_graph.documents.schema import validate
from agent_graph.ir import records as r
from agent_graph.pictures.explain import explain
from agent_graph.vm import Evaluation, Program
from agent_graph.vm.trace import Trace
from oracle_eval import oracle_run
from picture_support import ExampleState, example_states, program
from provider_gen import generate_case

SEEDS = int(os.environ.get("AGC_TRACE_SEEDS", "150"))
STATES = example_states()


def _view(evaluation: Evaluation) -> tuple[object, ...]:
    return (
        evaluation.to_dict(),
        [
            (c.route_id, c.state_key, c.availability, c.gate_resolution)
            for c in evaluation.candidates
        ],
    )


def _frames(trace: Trace) -> list[tuple[str, list[str], dict[str, str]]]:
    out = []
    for frame in trace.frames:
        if frame.error is not None:
            continue
        nodes = frame.graph.nodes
        order = [nodes[i].id for i in frame.order]
        outcomes = {
            nodes[i].id: str(frame.outcome_of(i)) for i in frame.order if frame.outcome_of(i)
        }
        out.append((frame.key, order, outcomes))
    return out


def _check_reach(trace: Trace) -> None:
    for frame in trace.frames:
        for index in frame.order:
            seen = frame.nodes[index]
            assert seen.outcome == frame.outcome_of(index)
            if seen.reach.kind == "entry":
                assert index == frame.order[0]
            elif seen.reach.kind == "join":
                node = frame.graph.nodes[index]
                assert seen.reach.edges, (frame.key, node.id)
                if not node.join_any:
                    assert len(seen.reach.edges) == len(node.incoming)
            else:
                (edge,) = seen.reach.edges
                assert frame.graph.edges[edge].kind == r.REPEAT


def _compare(prog: Program, graph: str, entry: str, state: Mapping[str, object]) -> Evaluation:
    plain = prog.evaluate(graph, entry, state)
    traced = prog.evaluate(graph, entry, state, trace=True)
    assert plain.trace is None
    assert traced.trace is not None
    assert _view(traced) == _view(plain)
    assert traced == plain  # the trace is not part of the result
    _check_reach(traced.trace)
    return traced


@pytest.mark.parametrize("example", STATES, ids=[s.id for s in STATES])
def test_trace_changes_no_example_evaluation(example: ExampleState) -> None:
    _compare(program(example.example), example.graph, example.entry, example.state)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_trace_matches_the_oracle_frame_by_frame(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    case = generate_case(rng, tmp_path / "provider", resources=False)
    compilation = compile_manifest(case.manifest, stop_after=CHECKED)
    provider = compilation.provider
    assert provider is not None
    prog = program_of(compilation)
    for state in case.states:
        data = {"facts": state.facts, "outcomes": state.outcomes, "authorities": state.authorities}
        traced = _compare(prog, state.graph, state.entry, data)
        expected = oracle_run(provider, state.graph, state.entry, **state.kwargs())
        assert traced.trace is not None
        assert sorted(_frames(traced.trace)) == sorted(expected.frames), (seed, state)
        _check_explanation(traced)


def _check_explanation(traced: Evaluation) -> None:
    """Every node of every evaluated frame is explained, in words the schema accepts."""
    assert traced.trace is not None
    doc = explain(traced, traced.trace)
    assert validate("explain", doc, path="explain.json") is None
    frames = [f for f in traced.trace.frames if f.error is None]
    assert len(doc["nodes"]) == sum(len(f.graph.nodes) for f in frames)
    assert all(node["reasons"] for node in doc["nodes"])
    by_key = {node["stateKey"]: node for node in doc["nodes"]}
    for frame in frames:
        for index, node in enumerate(frame.graph.nodes):
            entry = by_key[frame.prefix + node.id]
            codes = {reason["code"] for reason in entry["reasons"]}
            offerable = node.kind in (r.ACTION, r.GATE) and entry["status"] == "pending"
            # a pending action or gate is either offered or says why not
            if offerable:
                assert ("explain-candidate" in codes) == entry["candidate"], entry
                assert entry["candidate"] or "explain-not-offered" in codes, entry
            if index not in frame.nodes:
                assert codes <= {"explain-join-unmet", "explain-unreached"}, entry


def test_a_repeat_reset_is_recorded(tmp_path: Path) -> None:
    """A two-node loop (reference §2.5): `b` failed re-arms `a` by its repeat edge."""
    root = tmp_path / "loop"
    (root / "graphs").mkdir(parents=True)
    (root / "actions").mkdir()
    (root / "provider.yaml").write_text(
        "schema: agent-graph.provider.v1\nid: loop\nversion: 1.0.0\n"
        "graphs: [graphs/g.yaml]\ncompatibility:\n  agentGraph: ^0.3.0\n",
        encoding="utf-8",
    )
    (root / "actions" / "a.yaml").write_text(
        "schema: agent-graph.action.v1\nid: a\nrunner: host\neffect: write\nhandler: x.a\n",
        encoding="utf-8",
    )
    (root / "graphs" / "g.yaml").write_text(
        "schema: agent-graph.graph.v1\nid: g\nentrypoints: {default: a}\nnodes:\n"
        "  - {id: a, kind: action, reasonCode: route.g.a, action: actions/a.yaml}\n"
        "  - {id: b, kind: action, reasonCode: route.g.b, action: actions/a.yaml}\n"
        "  - {id: done, kind: terminal, terminalOutcome: completed}\n"
        "edges:\n  - {from: a, to: b}\n  - {from: b, to: done}\n"
        "  - {from: b, to: a, kind: repeat, outcomes: [failed]}\n",
        encoding="utf-8",
    )
    import agent_graph

    prog = agent_graph.compile_provider(root / "provider.yaml")
    state = {"outcomes": {"g/a": "completed", "g/b": "failed"}}
    traced = _compare(prog, "g", "default", state)
    assert traced.trace is not None
    frame = traced.trace.frames[0]
    steps = frame.nodes[0].steps
    assert [s.kind for s in steps] == ["recorded", "repeat-reset"]
    assert steps[1].previous == "completed"
    assert steps[1].source_outcome == "failed"
    assert traced.primary is not None
    assert traced.primary.node.id == "a"


def test_generated_states_reach_every_reason(tmp_path: Path) -> None:
    """Every reason code of the catalogue is given for some generated state."""
    from agent_graph.error_codes import AREAS

    wanted = {c for c in AREAS[next(a for a in AREAS if a.startswith("Pictures"))] if
              c.startswith("explain-") and c != "explain-node-missing"}  # fmt: skip
    seen: set[str] = set()
    for seed in range(60):
        case = generate_case(random.Random(seed), tmp_path / str(seed))
        prog = program_of(compile_manifest(case.manifest, stop_after=CHECKED))
        for state in case.states:
            data = {
                "facts": state.facts,
                "outcomes": state.outcomes,
                "authorities": state.authorities,
            }
            traced = prog.evaluate(state.graph, state.entry, data, trace=True)
            assert traced.trace is not None
            doc = explain(traced, traced.trace)
            seen |= {reason["code"] for node in doc["nodes"] for reason in node["reasons"]}
    assert wanted - seen == set()
