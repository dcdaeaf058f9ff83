"""Fact lookup sees JSON data only, and ``equals`` is JavaScript ``Object.is``."""

from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

import agent_graph
from agent_graph.errors import AgentGraphError
from agent_graph.ir.records import ABSENT, EQUALS, EXISTS, FactCheck
from agent_graph.vm.facts import MISSING, check_matches, get_fact, js_is

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from generate import write_chain_provider


@pytest.mark.parametrize(
    "path",
    ["constructor", "__proto__", "toString", "__class__", "keys", "items", "a.__len__", "a.upper"],
)
def test_attributes_and_prototype_members_are_not_facts(path: str) -> None:
    facts = {"a": "text", "b": {}}
    assert get_fact(facts, path.split(".")) is MISSING


def test_arrays_index_by_canonical_decimal_segments() -> None:
    facts = {"items": [{"digest": "x"}, None]}
    assert get_fact(facts, ["items", "0", "digest"]) == "x"
    assert get_fact(facts, ["items", "1"]) is None  # null is present
    for segment in ("01", "-1", "2", "1.0", "length", "٣"):
        assert get_fact(facts, ["items", segment]) is MISSING


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        (1, 1.0, True),
        (1, True, False),
        (0, False, False),
        ("1", 1, False),
        (None, None, True),
        (0, -0.0, False),
        (-0.0, -0.0, True),
        (math.nan, math.nan, True),
        (2**53 + 1, float(2**53), True),  # both are the same double in JavaScript
        ({}, {}, False),
        ([1], [1], False),
    ],
)
def test_equals_is_object_is(left: Any, right: Any, same: bool) -> None:
    assert js_is(left, right) is same
    assert js_is(right, left) is same


def test_missing_is_not_null() -> None:
    assert not check_matches({}, FactCheck(("a",), EQUALS, None))
    assert check_matches({"a": None}, FactCheck(("a",), EQUALS, None))
    assert check_matches({"a": None}, FactCheck(("a",), EXISTS, None))
    assert check_matches({}, FactCheck(("a",), ABSENT, None))


def test_non_json_facts_are_refused() -> None:
    program = agent_graph.compile_provider(
        Path(__file__).resolve().parents[2] / "examples" / "weekly-report" / "provider.yaml"
    )
    for bad in ({"a": {1, 2}}, {"a": math.inf}, {1: "x"}, {"a": object()}):
        with pytest.raises(AgentGraphError) as caught:
            program.evaluate("report", "default", {"facts": bad})
        assert caught.value.code == "facts-invalid"
    with pytest.raises(AgentGraphError) as caught:
        program.evaluate("report", "default", {"facts": ["not", "an", "object"]})
    assert caught.value.code == "json-object-required"


@pytest.mark.slow
def test_100k_node_chain_compiles_and_evaluates_to_the_end() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        manifest = write_chain_provider(Path(tmp) / "chain", 100_000)
        start = time.perf_counter()
        program = agent_graph.compile_provider(manifest)
        compiled = time.perf_counter()
        facts = {"done": {f"n{i}": True for i in range(99_999)}}
        evaluation = program.evaluate("chain", "default", {"facts": facts})
        done = time.perf_counter()
        half = program.evaluate(
            "chain", "default", {"facts": {"done": {f"n{i}": True for i in range(50_000)}}}
        )
    assert evaluation.status_code == "complete"
    assert evaluation.outcome == "completed"
    assert half.primary is not None
    assert half.primary.node.id == "n50000"
    print(f"100,000-node chain: compile {compiled - start:.1f} s, evaluate {done - compiled:.2f} s")


@pytest.mark.slow
def test_deep_subgraph_nesting_evaluates_without_recursion(tmp_path: Path) -> None:
    """2,000 graphs, each calling the next: frames are driven iteratively, not recursively."""
    depth = 2_000
    (tmp_path / "graphs").mkdir()
    names = [f"g{i}" for i in range(depth)]
    (tmp_path / "provider.yaml").write_text(
        "schema: agent-graph.provider.v1\nid: deep.nesting\nversion: 1.0.0\ngraphs:\n"
        + "".join(f"  - graphs/{n}.yaml\n" for n in names),
        encoding="utf-8",
    )
    (tmp_path / "step.yaml").write_text(
        "schema: agent-graph.action.v1\nid: step\nrunner: host\neffect: write\n"
        "handler: deep.step\n",
        encoding="utf-8",
    )
    for i, name in enumerate(names):
        if i + 1 < depth:
            body = (
                f"  - {{id: call, kind: subgraph, graph: g{i + 1}, entry: default}}\n"
                "  - {id: end, kind: terminal, terminalOutcome: completed}\n"
                "edges:\n  - {from: call, to: end}\n"
            )
            start = "call"
        else:
            body = (
                "  - {id: work, kind: action, action: step.yaml, reasonCode: route.deep.work}\n"
                "  - {id: end, kind: terminal, terminalOutcome: completed}\n"
                "edges:\n  - {from: work, to: end}\n"
            )
            start = "work"
        (tmp_path / "graphs" / f"{name}.yaml").write_text(
            f"schema: agent-graph.graph.v1\nid: {name}\nentrypoints: {{default: {start}}}\n"
            f"nodes:\n{body}",
            encoding="utf-8",
        )
    program = agent_graph.compile_provider(tmp_path / "provider.yaml")
    evaluation = program.evaluate("g0")
    assert evaluation.status_code == "actionable"
    assert evaluation.primary is not None
    assert evaluation.primary.graph.id == f"g{depth - 1}"
    assert len(evaluation.primary.call_path) == depth - 1
    assert evaluation.primary.call_path[0] == "g0/call"
    leaf = ">".join(f"g{i}/call" for i in range(depth - 1)) + f">g{depth - 1}/work"
    done = program.evaluate("g0", "default", {"outcomes": {leaf: "completed"}})
    assert done.status_code == "complete"
    assert done.outcome == "completed"
