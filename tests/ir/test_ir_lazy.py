"""Lazily decoded IR: each graph decoded, checked and verified on first use.

A lazy Program must be indistinguishable from an eager one wherever it is used (same
evaluations, same records, same bytes), must refuse damage outside the graphs on load
and damage inside a graph when that graph is first used (``ir-corrupt``, the other
graphs still working), must be safe to share across threads, and must not recurse per
call depth. The fuzz case compares the two decoders on mutated bodies.
"""

from __future__ import annotations

import hashlib
import random
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import msgpack
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import shapes

import agent_graph
import test_ir_fuzz as fuzz
from agent_graph.errors import AgentGraphError
from agent_graph.ir import codec
from agent_graph.ir import records as r
from agent_graph.ir.dump import dump, to_json
from agent_graph.vm import Program, load_program
from test_ir_fuzz import Mutator, _at, states
from tree_support import write_tree

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MANIFESTS = sorted(EXAMPLES.glob("*/provider.yaml"))
FUZZ_CASES = 400


def compiled(manifest: Path) -> tuple[bytes, Path]:
    return agent_graph.compile_provider(manifest).to_bytes(), manifest.parent


def both(data: bytes, root: Path) -> tuple[Program, Program]:
    return load_program(data, root), load_program(data, root, lazy=True)


def same_evaluations(eager: Program, lazy: Program, graph: r.Graph) -> None:
    for entry, _ in graph.entrypoints:
        for state in states(eager.ir, graph):
            expected = _outcome(eager, graph.id, entry, state)
            assert _outcome(lazy, graph.id, entry, state) == expected


def _outcome(program: Program, graph: str, entry: str, state: Any) -> Any:
    try:
        return program.evaluate(graph, entry, state).to_dict()
    except AgentGraphError as exc:
        return ("error", exc.code, exc.message)


# -- body surgery ---------------------------------------------------------------------------


def _split(data: bytes) -> tuple[list[Any], list[Any]]:
    body = msgpack.unpackb(data, raw=False)[3]
    strings, tree = msgpack.unpackb(body, raw=False)
    return strings, tree


def _join(strings: list[Any], tree: list[Any]) -> bytes:
    body = msgpack.packb([strings, tree], use_bin_type=True)
    header = [codec.MAGIC, codec.FORMAT_VERSION, hashlib.sha256(body).digest(), body]
    return bytes(msgpack.packb(header, use_bin_type=True))


GRAPHS = _at(r.ProviderIR, "graphs")
NODES = _at(r.Graph, "nodes")


def _two_graphs(tmp_path: Path) -> tuple[bytes, Path]:
    docs = {
        "a": shapes.graph_yaml(
            "a",
            {"default": "s"},
            [shapes._action("s"), shapes._terminal()],
            [{"from": "s", "to": "end"}],
        ),
        "b": shapes.graph_yaml(
            "b",
            {"default": "s"},
            [shapes._action("s"), shapes._terminal()],
            [{"from": "s", "to": "end"}],
        ),
    }
    return compiled(shapes.write_provider(tmp_path / "two", "two", docs))


# -- equivalence ----------------------------------------------------------------------------


@pytest.mark.parametrize("manifest", MANIFESTS, ids=[m.parent.name for m in MANIFESTS])
def test_lazy_and_eager_agree_on_every_example(manifest: Path) -> None:
    data, root = compiled(manifest)
    eager, lazy = both(data, root)
    assert isinstance(lazy.ir.graphs, codec.LazyGraphs)
    assert lazy.ir.graphs.materialised() == 0  # loading decoded no graph
    for graph in eager.ir.graphs:
        same_evaluations(eager, lazy, graph)
    assert lazy.ir == eager.ir  # every graph materialised equals the eager record
    assert lazy.ir.graphs == eager.ir.graphs
    assert eager.ir.graphs == lazy.ir.graphs
    assert list(lazy.ir.graphs) == list(eager.ir.graphs)
    assert lazy.ir.graphs[-1] == eager.ir.graphs[-1]
    assert lazy.ir.graphs[1:] == eager.ir.graphs[1:]
    assert codec.encode(lazy.ir) == data
    assert lazy.digest == eager.digest
    fresh = load_program(data, root, lazy=True).ir  # the dump decodes what it shows
    assert dump(fresh) == dump(eager.ir)
    assert to_json(fresh) == to_json(eager.ir)


GENERATED = ("chain", "wide", "wide_open", "layered", "nested", "nested_deep", "repeat")


@pytest.mark.parametrize("name", GENERATED)
def test_lazy_and_eager_agree_on_generated_shapes(name: str, tmp_path: Path) -> None:
    shape = getattr(shapes, name)(tmp_path / name, 120)
    data, root = compiled(shape.manifest)
    eager, lazy = both(data, root)
    empty: dict[str, Any] = {}
    for state in (empty, shape.state):
        expected = eager.evaluate(shape.graph, shape.entry, state).to_dict()
        assert lazy.evaluate(shape.graph, shape.entry, state).to_dict() == expected
    assert lazy.evaluate(shape.graph, shape.entry, shape.state).status_code == shape.expect
    for graph in eager.ir.graphs:
        same_evaluations(eager, lazy, graph)


def test_only_the_evaluated_graphs_are_decoded(tmp_path: Path) -> None:
    shape = shapes.nested(tmp_path / "nested", 200)
    data, root = compiled(shape.manifest)
    lazy = load_program(data, root, lazy=True)
    graphs = lazy.ir.graphs
    assert isinstance(graphs, codec.LazyGraphs)
    lazy.evaluate(shape.graph, shape.entry, {})  # a fresh state stops in the first frames
    assert 0 < graphs.materialised() < len(graphs)


def test_open_bundle_decodes_lazily(tmp_path: Path) -> None:
    from agent_graph.bundles import TrustStore
    from agent_graph.compiler import load_provider
    from agent_graph.compiler.provider.builder import build_bundle

    shape = shapes.nested(tmp_path / "nested", 200)
    build_bundle(load_provider(shape.manifest), tmp_path / "bundle")
    manifest = tmp_path / "bundle" / "manifest.json"
    store = TrustStore(tmp_path / "trust")
    eager = agent_graph.compile_provider(manifest, trust=store)  # verifies, remembers
    program = agent_graph.open_bundle(manifest, trust=store)
    assert program is not None
    assert isinstance(program.ir.graphs, codec.LazyGraphs)
    assert program.ir.graphs.materialised() == 0
    assert program.evaluate(shape.graph, shape.entry, shape.state) == eager.evaluate(
        shape.graph, shape.entry, shape.state
    )
    assert program.ir == eager.ir


def test_hand_built_records_and_default_decode_stay_eager() -> None:
    data, root = compiled(MANIFESTS[0])
    assert type(codec.decode(data).graphs) is tuple
    assert type(load_program(data, root).ir.graphs) is tuple
    program = Program(codec.decode(data), root)
    assert type(program.ir.graphs) is tuple


# -- damage ---------------------------------------------------------------------------------


def test_a_damaged_graph_is_refused_when_first_used(tmp_path: Path) -> None:
    data, root = _two_graphs(tmp_path)
    strings, tree = _split(data)
    damaged = next(i for i, g in enumerate(tree[GRAPHS]) if strings[g[0]] == "b")
    edge = tree[GRAPHS][damaged][_at(r.Graph, "edges")][0]
    edge[_at(r.Edge, "target")] = 99  # out of range: an eager decode refuses the whole IR
    data = _join(strings, tree)
    with pytest.raises(AgentGraphError) as eager_error:
        codec.decode(data)
    assert eager_error.value.code == "ir-corrupt"
    lazy = load_program(data, root, lazy=True)  # nothing outside graph b is damaged
    assert lazy.evaluate("a").status_code == "actionable"  # the other graph still works
    for _ in range(2):  # and b is refused every time, not only the first
        with pytest.raises(AgentGraphError) as error:
            lazy.evaluate("b")
        assert error.value.code == "ir-corrupt"
        assert "out of range" in error.value.message
    assert lazy.evaluate("a").status_code == "actionable"


def test_a_lazy_decode_leaves_graph_bodies_unread(tmp_path: Path) -> None:
    from agent_graph.ir.wire import Span

    data, root = _two_graphs(tmp_path)
    strings, tree = _split(data)
    damaged = next(i for i, g in enumerate(tree[GRAPHS]) if strings[g[0]] == "b")
    tree[GRAPHS][damaged][NODES] = 5  # valid msgpack, not a list of nodes
    lazy = load_program(_join(strings, tree), root, lazy=True)
    graphs = lazy.ir.graphs
    assert isinstance(graphs, codec.LazyGraphs)
    assert all(type(item[NODES]) is Span for item in graphs._raw)  # skipped, not built
    assert lazy.evaluate("a").status_code == "actionable"
    with pytest.raises(AgentGraphError) as error:
        lazy.evaluate("b")
    assert error.value.code == "ir-corrupt"


def test_a_truncated_graph_body_is_refused_on_load(tmp_path: Path) -> None:
    data, root = _two_graphs(tmp_path)
    strings, tree = _split(data)
    body = msgpack.packb([strings, tree], use_bin_type=True)[:-3]  # cut inside graph b
    header = [codec.MAGIC, codec.FORMAT_VERSION, hashlib.sha256(body).digest(), body]
    with pytest.raises(AgentGraphError) as error:
        load_program(bytes(msgpack.packb(header, use_bin_type=True)), root, lazy=True)
    assert error.value.code == "ir-corrupt"


def test_a_graph_failing_verify_is_refused_when_first_used(tmp_path: Path) -> None:
    data, root = _two_graphs(tmp_path)
    strings, tree = _split(data)
    damaged = next(i for i, g in enumerate(tree[GRAPHS]) if strings[g[0]] == "b")
    node = tree[GRAPHS][damaged][NODES][0]
    node[_at(r.Node, "incoming")] = [0]  # in range, but not the edges that touch it
    lazy = load_program(_join(strings, tree), root, lazy=True)
    assert lazy.evaluate("a").status_code == "actionable"
    with pytest.raises(AgentGraphError) as error:
        lazy.evaluate("b")
    assert error.value.code == "ir-corrupt"
    assert "adjacency" in error.value.message


def test_a_call_of_a_missing_entry_is_refused_with_the_caller(tmp_path: Path) -> None:
    shape = shapes.nested_deep(tmp_path / "deep", 9)
    data, root = compiled(shape.manifest)
    strings, tree = _split(data)
    strings.append("nowhere")
    for graph in tree[GRAPHS]:
        for node in graph[NODES]:
            if node[_at(r.Node, "entry")] is not None and strings[graph[0]] == "d1":
                node[_at(r.Node, "entry")] = len(strings) - 1
    lazy = load_program(_join(strings, tree), root, lazy=True)
    assert lazy.evaluate("d2").status_code == "actionable"
    with pytest.raises(AgentGraphError) as error:
        lazy.evaluate("d0", "default", shape.state)  # reaches d1, calling a missing entry
    assert error.value.code == "ir-corrupt"
    assert "missing entry nowhere" in error.value.message


def _damage_outside_graphs(strings: list[Any], tree: list[Any]) -> list[tuple[str, list[Any]]]:
    """(what, body) pairs, each damaged outside any graph's own fields."""
    out = []

    def variant(what: str, edit: Callable[[list[Any], list[Any]], None]) -> None:
        s, t = msgpack.unpackb(msgpack.packb([strings, tree]), raw=False)
        edit(s, t)
        out.append((what, [s, t]))

    def graph_id_twice(s: list[Any], t: list[Any]) -> None:
        t[GRAPHS][1][0] = t[GRAPHS][0][0]

    def graph_record_short(s: list[Any], t: list[Any]) -> None:
        t[GRAPHS][1].pop()

    def graph_id_out_of_range(s: list[Any], t: list[Any]) -> None:
        t[GRAPHS][0][0] = len(s) + 5

    def action_runner_unknown(s: list[Any], t: list[Any]) -> None:
        s.append("teleport")
        t[_at(r.ProviderIR, "actions")][0][_at(r.Action, "runner")] = len(s) - 1

    def provider_digest(s: list[Any], t: list[Any]) -> None:
        s.append("not-a-digest")
        t[_at(r.ProviderIR, "provider_digest")] = len(s) - 1

    def string_table(s: list[Any], t: list[Any]) -> None:
        s.append(7)

    def graphs_not_a_list(s: list[Any], t: list[Any]) -> None:
        t[GRAPHS] = {"graphs": 1}

    for edit in (
        graph_id_twice,
        graph_record_short,
        graph_id_out_of_range,
        action_runner_unknown,
        provider_digest,
        string_table,
        graphs_not_a_list,
    ):
        variant(edit.__name__, edit)
    return out


def test_damage_outside_graphs_is_refused_on_load(tmp_path: Path) -> None:
    data, root = _two_graphs(tmp_path)
    strings, tree = _split(data)
    for what, (s, t) in _damage_outside_graphs(strings, tree):
        damaged = _join(s, t)
        for lazy in (False, True):
            with pytest.raises(AgentGraphError) as error:
                load_program(damaged, root, lazy=lazy)
            assert error.value.code == "ir-corrupt", what
    flipped = bytearray(data)
    flipped[-3] ^= 0xFF  # the body digest no longer matches
    with pytest.raises(AgentGraphError) as error:
        load_program(bytes(flipped), root, lazy=True)
    assert error.value.code == "ir-corrupt"
    with pytest.raises(AgentGraphError) as error:
        load_program(data, root, lazy=True, expected_digest="sha256:" + "0" * 64)
    assert error.value.code == "ir-corrupt"


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> list[fuzz.Base]:
    """The fuzzer's bases: every example and its kitchen-sink Provider."""
    out = [fuzz._base(m.parent.name, m) for m in MANIFESTS]
    sink = write_tree(tmp_path_factory.mktemp("lazy-fuzz") / "sink", fuzz._KITCHEN_SINK)
    out.append(fuzz._base("kitchen-sink", sink / "provider.yaml"))
    return out


def test_fuzzed_bodies_lazy_refuses_what_eager_refuses(bases: list[fuzz.Base]) -> None:
    """On mutated bodies: eager refuses, or both give equal Programs; whatever eager
    refuses, lazy refuses too, on load or when the graphs are used, with an
    AgentGraphError (never another exception)."""
    agreed = refused_later = 0
    for case in range(FUZZ_CASES):
        rng = random.Random(f"lazy:{case}")
        base = rng.choice(bases)
        mutator = Mutator(rng, base)
        for _ in range(rng.choice((1, 1, 2))):
            mutator.mutate()
        try:
            data = mutator.encode()
        except (ValueError, OverflowError, TypeError):
            continue
        where = f"case {case} (base {base.name}): {'; '.join(mutator.done)}"
        try:
            eager: r.ProviderIR | None = codec.decode(data)
            eager_code = None
        except AgentGraphError as exc:
            eager, eager_code = None, exc.code
        try:
            lazy = codec.decode(data, lazy=True)
            graphs = tuple(lazy.graphs)  # materialise every graph
            lazy_code = None
        except AgentGraphError as exc:
            lazy_code = exc.code
        if eager is not None:
            assert lazy_code is None, f"lazy refused valid IR: {where}"
            # bytes, not ==: a valid IR may hold NaN, which equals nothing
            assert len(graphs) == len(eager.graphs), where
            assert codec.encode(lazy) == codec.encode(eager), where
            agreed += 1
        else:
            assert lazy_code == eager_code, f"lazy {lazy_code} vs eager {eager_code}: {where}"
            refused_later += 1
    assert agreed, "no mutated body decoded"
    assert refused_later, "no mutated body was refused"


# -- threads and depth ----------------------------------------------------------------------


def test_threads_evaluating_different_graphs(tmp_path: Path) -> None:
    docs = {
        f"g{i}": shapes.graph_yaml(
            f"g{i}",
            {"default": "n0"},
            [shapes._action(f"n{j}") for j in range(20)] + [shapes._terminal()],
            [{"from": f"n{j}", "to": f"n{j + 1}"} for j in range(19)]
            + [{"from": "n19", "to": "end"}],
        )
        for i in range(24)
    }
    data, root = compiled(shapes.write_provider(tmp_path / "many", "many", docs))
    eager = load_program(data, root)
    expected = {gid: eager.evaluate(gid).to_dict() for gid in docs}
    for _ in range(3):  # a fresh lazy Program each round: the threads race to decode
        lazy = load_program(data, root, lazy=True)
        barrier = threading.Barrier(6)
        failures: list[str] = []

        def work(offset: int, program: Program, gate: threading.Barrier, failed: list[str]) -> None:
            gate.wait()
            for n in range(len(docs)):
                gid = f"g{(n + offset) % len(docs)}"
                if program.evaluate(gid).to_dict() != expected[gid]:
                    failed.append(gid)

        threads = [
            threading.Thread(target=work, args=(k * 4, lazy, barrier, failures)) for k in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures
        graphs = lazy.ir.graphs
        assert isinstance(graphs, codec.LazyGraphs)
        assert graphs.materialised() == len(docs)
        # each graph was decoded once: every thread sees the same record object
        assert all(graphs[i] is graphs[i] for i in range(len(docs)))


@pytest.mark.slow
def test_deep_chain_of_calls_does_not_recurse_per_depth(tmp_path: Path) -> None:
    shape = shapes.nested_deep(tmp_path / "deep", 3000)  # 1,000 graphs, each calling the next
    data, root = compiled(shape.manifest)
    eager, lazy = both(data, root)
    limit, depth = sys.getrecursionlimit(), 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    sys.setrecursionlimit(depth + 100)  # far below 1,000: materialising must not recurse
    try:
        graphs = lazy.ir.graphs
        assert isinstance(graphs, codec.LazyGraphs)
        for index in reversed(range(len(graphs))):  # callers first would also do: any order
            graphs[index]
    finally:
        sys.setrecursionlimit(limit)
    fresh = load_program(data, root, lazy=True)
    evaluation = fresh.evaluate(shape.graph, shape.entry, shape.state)
    assert evaluation == eager.evaluate(shape.graph, shape.entry, shape.state)
    assert evaluation.status_code == shape.expect


# -- what keeps the cold start cheap --------------------------------------------------------


def test_records_keep_frozen_dataclass_semantics() -> None:
    import copy
    import dataclasses
    import pickle

    edge = r.Edge(0, 1, r.REPEAT, 1)
    assert dataclasses.is_dataclass(edge)
    assert [f.name for f in dataclasses.fields(edge)] == ["source", "target", "kind", "mask"]
    assert edge == r.Edge(0, 1, r.REPEAT, 1)
    assert hash(edge) == hash(r.Edge(0, 1, r.REPEAT, 1))
    assert edge != r.Edge(0, 2, r.REPEAT, 1)
    assert edge != (0, 1, r.REPEAT, 1)  # type: ignore[comparison-overlap]
    assert repr(edge) == "Edge(source=0, target=1, kind=4, mask=1)"
    assert dataclasses.replace(edge, target=2) == r.Edge(0, 2, r.REPEAT, 1)
    assert copy.deepcopy(edge) == edge
    assert pickle.loads(pickle.dumps(edge)) == edge
    with pytest.raises(dataclasses.FrozenInstanceError):
        edge.source = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del edge.source
    with pytest.raises(AttributeError):
        edge.other = 1  # type: ignore[attr-defined]
    match edge:
        case r.Edge(source, target):
            assert (source, target) == (0, 1)


def test_compiled_code_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_graph import frozen

    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    source = "def f():\n    return 41 + 1\n"
    first = frozen.compile_cached(source, "<test>")
    entries = list(tmp_path.rglob("agent_graph.ir.generated-*.bin"))
    assert len(entries) == 1
    namespace: dict[str, Any] = {}
    exec(frozen.compile_cached(source, "<test>"), namespace)  # read from the cache
    assert namespace["f"]() == 42
    assert first.co_filename == "<test>"
    entries[0].write_bytes(b"\x00damaged")  # unreadable: compiled afresh, never trusted
    namespace = {}
    exec(frozen.compile_cached(source, "<test>"), namespace)
    assert namespace["f"]() == 42
    other = "def f():\n    return 7\n"
    namespace = {}
    exec(frozen.compile_cached(other, "<test>"), namespace)  # another source, another entry
    assert namespace["f"]() == 7
    assert len(list(tmp_path.rglob("agent_graph.ir.generated-*.bin"))) == 2
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    frozen.compile_cached("x = 1\n", "<test>")
    assert len(list(tmp_path.rglob("agent_graph.ir.generated-*.bin"))) == 2
