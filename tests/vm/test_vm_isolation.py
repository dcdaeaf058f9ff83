"""The VM stands alone: no authoring libraries at run time, safe to share, immutable.

* ``import agent_graph.vm``, loading a Program from IR bytes, evaluating and routing
  never import yaml, jsonschema, jsonschema_rs, lark or click (checked in a fresh
  interpreter, once by looking at ``sys.modules`` and once with those imports blocked);
* one Program evaluated and routed from many threads at once gives exactly the
  sequential answers, and leaves the Program and the callers' states untouched;
* a Program and the records it hands out cannot be changed.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

import agent_graph
from agent_graph.errors import AgentGraphError
from agent_graph.ir import codec
from agent_graph.ir import records as r
from agent_graph.vm import Program, load_program

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from generate import write_chain_provider

TESTS = Path(__file__).resolve().parents[1]
EXAMPLES = TESTS.parent / "examples"
NAMES = sorted(m.parent.name for m in EXAMPLES.glob("*/provider.yaml"))
SRC = Path(agent_graph.__file__).resolve().parent.parent
FORBIDDEN = ("yaml", "jsonschema", "jsonschema_rs", "lark", "click")


def example_states(name: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(graph, entry, state) of every test case shipped with an example."""
    out = []
    for path in sorted((EXAMPLES / name / "tests").glob("*.yaml")):
        case = yaml.safe_load(path.read_text(encoding="utf-8"))
        out.append((case["graph"], case.get("entry", "default"), case.get("state") or {}))
    return out


def answer(program: Program, graph: str, entry: str, state: dict[str, Any]) -> dict[str, Any]:
    """Evaluation plus the route of its primary (or the route's error), as plain JSON."""
    evaluation = program.evaluate(graph, entry, state)
    out: dict[str, Any] = {"evaluation": evaluation.to_dict()}
    if evaluation.primary is not None:
        try:
            route = program.route(graph, entry, evaluation.primary.route_id, state)
            out["route"] = route.to_dict()
        except AgentGraphError as exc:
            out["route"] = {"error": exc.code, "message": exc.message}
    return out


# -- no authoring libraries at run time -------------------------------------------------

_CHILD = """
import importlib.abc, json, sys

FORBIDDEN = {forbidden!r}
attempted = []


class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in FORBIDDEN:
            attempted.append(name)
            raise ImportError(f"{{name}} is blocked in the VM isolation test")
        return None


if sys.argv[1] == "block":
    sys.meta_path.insert(0, Block())
before = sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN)

import agent_graph.vm

after_import = sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN)
request = json.load(open(sys.argv[2], encoding="utf-8"))
with open(request["ir"], "rb") as handle:
    program = agent_graph.vm.load_program(handle.read(), request["root"])
results = []
for graph, entry, state in request["cases"]:
    evaluation = program.evaluate(graph, entry, state)
    result = {{"evaluation": evaluation.to_dict()}}
    if evaluation.primary is not None:
        try:
            route = program.route(graph, entry, evaluation.primary.route_id, state)
            result["route"] = route.to_dict()
        except agent_graph.errors.AgentGraphError as exc:
            result["route"] = {{"error": exc.code, "message": exc.message}}
    results.append(result)
print(json.dumps({{
    "before": before,
    "after_import": after_import,
    "after_run": sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN),
    "compiler": sorted(m for m in sys.modules if m.startswith("agent_graph.compiler")),
    "attempted": attempted,
    "digest": program.digest,
    "results": results,
}}))
"""


def run_child(mode: str, name: str, tmp_path: Path) -> dict[str, Any]:
    program = agent_graph.compile_provider(EXAMPLES / name / "provider.yaml")
    ir_path = tmp_path / f"{name}.agir"
    ir_path.write_bytes(program.to_bytes())
    request = tmp_path / f"{name}.json"
    cases = example_states(name)
    request.write_text(
        json.dumps({"ir": str(ir_path), "root": str(EXAMPLES / name), "cases": cases}),
        encoding="utf-8",
    )
    env = {**os.environ}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(forbidden=FORBIDDEN), mode, str(request)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    # the child really did the work: same answers as this process gives
    assert report["digest"] == program.digest
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)  # routes resolve a default workspace from the cwd
        expected = [answer(program, g, e, s) for g, e, s in cases]
    assert report["results"] == json.loads(json.dumps(expected))
    return report


@pytest.mark.parametrize("name", NAMES)
def test_vm_imports_no_authoring_library(name: str, tmp_path: Path) -> None:
    report = run_child("look", name, tmp_path)
    assert report["before"] == []  # the interpreter itself pulled none of them in
    assert report["after_import"] == []
    assert report["after_run"] == []
    assert report["compiler"] == []
    assert report["results"], "the example has test states"


@pytest.mark.parametrize("name", NAMES)
def test_vm_works_with_authoring_libraries_blocked(name: str, tmp_path: Path) -> None:
    report = run_child("block", name, tmp_path)
    assert report["attempted"] == []


def test_the_check_would_see_a_forbidden_import(tmp_path: Path) -> None:
    """The child's own bookkeeping notices an import (so an empty list means something)."""
    script = _CHILD.replace("import agent_graph.vm\n", "import agent_graph.vm\nimport yaml\n")
    request = tmp_path / "r.json"
    request.write_text(json.dumps({"ir": "", "root": "", "cases": []}), encoding="utf-8")
    env = {**os.environ}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    looked = subprocess.run(
        [sys.executable, "-c", script.format(forbidden=FORBIDDEN), "look", str(request)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    # the request names no IR file, so the child stops after the imports
    assert "FileNotFoundError" in looked.stderr
    blocked = subprocess.run(
        [sys.executable, "-c", script.format(forbidden=FORBIDDEN), "block", str(request)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert "yaml is blocked in the VM isolation test" in blocked.stderr


# -- one Program, many threads ----------------------------------------------------------


@pytest.fixture
def fine_switching() -> Any:
    """Switch threads as often as the interpreter allows, to interleave evaluations."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


@pytest.mark.usefixtures("fine_switching")
@pytest.mark.parametrize("name", NAMES)
def test_threads_share_one_program(name: str) -> None:
    program = agent_graph.compile_provider(EXAMPLES / name / "provider.yaml")
    cases = example_states(name)
    pristine = copy.deepcopy(cases)
    expected = [answer(program, g, e, s) for g, e, s in cases]
    assert len({json.dumps(x["evaluation"], sort_keys=True) for x in expected}) > 1

    jobs = [i for i in range(len(cases)) for _ in range(12)]
    random.Random(name).shuffle(jobs)
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda i: (i, answer(program, *cases[i])), jobs))

    for i, result in results:
        assert result == expected[i], cases[i]
    assert cases == pristine  # nobody's state was changed
    assert codec.encode(program.ir) == program.to_bytes()  # nor the Program


@pytest.mark.usefixtures("fine_switching")
def test_threads_share_one_large_program(tmp_path: Path) -> None:
    """Long evaluations (a 2,000-node chain) overlap for real."""
    manifest = write_chain_provider(tmp_path / "chain", 2000)
    program = load_program(agent_graph.compile_provider(manifest).to_bytes(), manifest.parent)
    states = [
        {"facts": {"done": {f"n{i}": True for i in range(k)}}} for k in (0, 1, 500, 1500, 1998)
    ]
    expected = [program.evaluate("chain", "default", s).to_dict() for s in states]
    assert [e["primaryRoute"]["node"] for e in expected] == ["n0", "n1", "n500", "n1500", "n1998"]
    jobs = [i for i in range(len(states)) for _ in range(8)]
    random.Random(7).shuffle(jobs)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(
            pool.map(lambda i: (i, program.evaluate("chain", "default", states[i])), jobs)
        )
    for i, evaluation in results:
        assert evaluation.to_dict() == expected[i]


# -- immutability -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def train() -> Program:
    return agent_graph.compile_provider(EXAMPLES / "release-train" / "provider.yaml")


@pytest.mark.parametrize("attribute", ["ir", "root", "digest", "_data", "_graph_index"])
def test_program_attributes_cannot_be_set(train: Program, attribute: str) -> None:
    before = getattr(train, attribute)
    with pytest.raises(AttributeError):
        setattr(train, attribute, None)
    assert getattr(train, attribute) is before


def test_program_takes_no_new_attributes(train: Program) -> None:
    with pytest.raises(AttributeError):
        train.cache = {}
    assert not hasattr(train, "cache")


def test_program_attributes_cannot_be_deleted() -> None:
    program = agent_graph.compile_provider(EXAMPLES / "release-train" / "provider.yaml")
    with pytest.raises(AttributeError):
        del program.digest


def test_ir_records_are_frozen(train: Program) -> None:
    graph = train.ir.graphs[0]
    node = graph.nodes[0]
    records: list[tuple[Any, str]] = [
        (train.ir, "provider_id"),
        (graph, "id"),
        (node, "kind"),
        (graph.edges[0], "target"),
        (train.ir.actions[0], "runner"),
    ]
    if train.ir.resources:
        records.append((train.ir.resources[0], "path"))
    for record, name in records:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, name, None)
    # tables are tuples, so their members cannot be swapped either
    for table in (train.ir.graphs, graph.nodes, graph.edges, node.outgoing, train.ir.actions):
        assert isinstance(table, tuple)


def test_results_are_frozen(train: Program) -> None:
    evaluation = train.evaluate("train", "default", {})
    assert evaluation.primary is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        evaluation.status_code = "complete"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        evaluation.primary.availability = "blocked"  # type: ignore[misc]
    assert isinstance(evaluation.candidates, tuple)
    # to_dict hands out copies: editing one does not change the next
    first = evaluation.to_dict()
    first["statusCode"] = "edited"
    first["diagnostics"].append({"code": "edited"})
    assert evaluation.to_dict()["statusCode"] == "actionable"
    assert {"code": "edited"} not in evaluation.to_dict()["diagnostics"]


def _json_containers(program: r.ProviderIR) -> list[Any]:
    values: list[Any] = []
    for graph in program.graphs:
        for node in graph.nodes:
            values += [c.value for c in (node.requires or ()) + (node.satisfied_by or ())]
    values += [res.host.value for res in program.resources if res.host is not None]
    values += [entry.raw for entry in program.catalog or ()]
    return [v for v in values if isinstance(v, (dict, list))]


def test_json_values_in_the_ir_are_read_only() -> None:
    containers = [
        v
        for name in NAMES
        for v in _json_containers(
            agent_graph.compile_provider(EXAMPLES / name / "provider.yaml").ir
        )
    ]
    assert containers, "the examples carry JSON objects in their IR"
    for value in containers:
        with pytest.raises(TypeError):
            _edit(value)


def _edit(value: dict[str, Any] | list[Any]) -> None:
    if isinstance(value, dict):
        value["edited"] = True
    else:
        value.append(True)
