"""Graph semantic checks and the static cross-graph recursion check.

Expected codes, messages and reported cycles were pinned by running the
reference CLI (0.2.6) on small Providers holding the same graphs; they are
written here as plain values so these tests need no Node at run time.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_graph.compiler.provider.graph_checks import check_graph, find_recursion, salvage
from agent_graph.documents.sourcemap import Document, SourceMap, join_pointer
from agent_graph.errors import Diagnostic, ProblemSink

Edge = tuple[Any, ...]


def _node(spec: str) -> dict[str, Any]:
    node_id, kind = spec.split(":")
    node: dict[str, Any] = {"id": node_id, "kind": kind}
    if kind == "action":
        node.update(reasonCode="route.x", action="actions/a.yaml")
    elif kind == "gate":
        node.update(reasonCode="route.x", gate={"id": "g", "prompt": "p"})
    elif kind == "subgraph":
        node.update(graph="child", entry="default")
    else:
        node.update(terminalOutcome="completed")
    return node


def _edge(spec: Edge) -> dict[str, Any]:
    edge: dict[str, Any] = {"from": spec[0], "to": spec[1]}
    if len(spec) > 2 and spec[2] is not None:
        edge["kind"] = spec[2]
    if len(spec) > 3:
        edge["outcomes"] = list(spec[3])
    return edge


def make_doc(
    nodes: Sequence[str],
    edges: Sequence[Edge],
    entrypoints: Mapping[str, str] | None = None,
    *,
    positions: bool = True,
) -> Document:
    """A graph document; node i sits on line 10 + 3i, entry k on 3 + k, edge i on 1000 + 2i."""
    entries = dict(entrypoints or {"default": nodes[0].split(":")[0]})
    value = {
        "schema": "agent-graph.graph.v1",
        "id": "main",
        "entrypoints": entries,
        "nodes": [_node(n) for n in nodes],
        "edges": [_edge(e) for e in edges],
    }
    source = SourceMap()
    if positions:
        source.positions[""] = (1, 1)
        source.positions["/entrypoints"] = (2, 1)
        for k, name in enumerate(entries):
            source.positions[join_pointer("/entrypoints", name)] = (3 + k, 12)
        source.positions["/nodes"] = (9, 1)
        for i in range(len(nodes)):
            source.positions[f"/nodes/{i}"] = (10 + 3 * i, 5)
            source.positions[f"/nodes/{i}/id"] = (10 + 3 * i, 9)
        source.positions["/edges"] = (999, 1)
        for i in range(len(edges)):
            source.positions[f"/edges/{i}"] = (1000 + 2 * i, 5)
    return Document(value, source, Path("g.yaml"))


def run_checks(doc: Document) -> list[tuple[str, str, str | None]]:
    sink = ProblemSink(limit=10_000)
    check_graph(doc, "graphs/g.yaml", sink)
    return [(p.code, p.message, p.diagnostics[0].pointer) for p in sink.problems]


T = "done:terminal"
CYCLE = "Graph main contains an implicit flow cycle; use a repeat edge: "


def test_valid_graph_has_no_problems() -> None:
    doc = make_doc(
        ["a:action", "g:gate", "s:subgraph", T],
        [
            ("a", "g"),
            ("a", "a", "repeat", ["partial"]),
            ("g", "s", "gatedBy"),
            ("s", "done"),
            ("a", "done", "consumes", ["failed"]),
            ("g", "g", "repeat"),
        ],
    )
    assert run_checks(doc) == []


# (nodes, edges, entrypoints, code, message, pointer): each graph fails exactly one check.
SINGLE: dict[str, tuple[list[str], list[Edge], dict[str, str] | None, str, str, str]] = {
    "node-duplicate": (
        ["a:action", "b:action", "a:gate", T],
        [],
        None,
        "graph-node-duplicate",
        "Graph main contains duplicate node id: a",
        "/nodes/2/id",
    ),
    "terminal-missing": (
        ["a:action"],
        [],
        None,
        "graph-terminal-missing",
        "Graph main must declare at least one terminal node",
        "/nodes",
    ),
    "entry-missing": (
        ["a:action", T],
        [],
        {"default": "a", "review": "ghost"},
        "graph-entry-missing",
        "Graph main entry review targets missing node ghost",
        "/entrypoints/review",
    ),
    "edge-target-missing": (
        ["a:action", T],
        [("a", "ghost")],
        None,
        "graph-edge-node-missing",
        "Graph main edge a -> ghost references a missing node",
        "/edges/0",
    ),
    "edge-source-missing": (
        ["a:action", T],
        [("a", "done"), ("ghost", "a")],
        None,
        "graph-edge-node-missing",
        "Graph main edge ghost -> a references a missing node",
        "/edges/1",
    ),
    "terminal-edge": (
        ["a:action", T],
        [("a", "done"), ("done", "a", "repeat")],
        None,
        "graph-terminal-edge-invalid",
        "Graph main terminal node cannot have outgoing edges: done -> a",
        "/edges/1",
    ),
    "edge-duplicate": (
        ["a:action", T],
        [("a", "done"), ("a", "done", "flow", ["completed"])],
        None,
        "graph-edge-duplicate",
        "Graph main contains duplicate edge a -> done",
        "/edges/1",
    ),
    "repeat-target": (
        ["a:action", "s:subgraph", T],
        [("a", "done"), ("a", "done", "repeat")],
        None,
        "graph-repeat-target-invalid",
        "Graph main repeat edge must target an action or gate: a -> done",
        "/edges/1",
    ),
    "repeat-target-subgraph": (
        ["a:action", "s:subgraph", T],
        [("a", "s", "repeat"), ("s", "done")],
        None,
        "graph-repeat-target-invalid",
        "Graph main repeat edge must target an action or gate: a -> s",
        "/edges/0",
    ),
    "gated-by-source": (
        ["a:action", T],
        [("a", "done", "gatedBy")],
        None,
        "graph-gated-by-source-invalid",
        "Graph main gatedBy edge must start at a gate: a -> done",
        "/edges/0",
    ),
    "self-loop": (
        ["a:action", T],
        [("a", "a", None, ["partial"]), ("a", "done")],
        None,
        "graph-flow-cycle",
        CYCLE + "a -> a",
        "/edges/0",
    ),
    "cycle-through-kinds": (
        ["a:action", "g:gate", "sub:action", T],
        [("a", "g"), ("g", "sub", "gatedBy"), ("sub", "a"), ("sub", "done", None, ["failed"])],
        None,
        "graph-flow-cycle",
        CYCLE + "a -> g -> sub -> a",
        "/edges/2",
    ),
}


@pytest.mark.parametrize("name", list(SINGLE))
def test_single_problem_code_message_pointer(name: str) -> None:
    nodes, edges, entries, code, message, pointer = SINGLE[name]
    assert run_checks(make_doc(nodes, edges, entries)) == [(code, message, pointer)]


def test_problem_carries_path_and_position() -> None:
    doc = make_doc(["a:action", "b:action", T], [("a", "b"), ("b", "ghost")])
    sink = ProblemSink()
    check_graph(doc, "graphs/g.yaml", sink)
    [problem] = sink.problems
    [diag] = problem.diagnostics
    assert (diag.code, diag.path, diag.line, diag.column, diag.pointer) == (
        "graph-edge-node-missing",
        "graphs/g.yaml",
        1002,
        5,
        "/edges/1",
    )


def test_positions_of_node_entry_and_terminal_problems() -> None:
    doc = make_doc(["a:action", "a:action"], [], {"default": "a", "x/y": "ghost"})
    sink = ProblemSink()
    check_graph(doc, "g.yaml", sink)
    got = [(d.code, d.line, d.column, d.pointer) for p in sink.problems for d in p.diagnostics]
    assert got == [
        ("graph-node-duplicate", 13, 9, "/nodes/1/id"),
        ("graph-terminal-missing", 9, 1, "/nodes"),
        # Entry names may contain "/" (the id pattern allows it): RFC 6901 escaping.
        ("graph-entry-missing", 4, 12, "/entrypoints/x~1y"),
    ]


def test_missing_position_falls_back_to_nothing_without_a_source_map() -> None:
    doc = make_doc(["a:action"], [], positions=False)
    sink = ProblemSink()
    check_graph(doc, "g.yaml", sink)
    [diag] = sink.problems[0].diagnostics
    assert (diag.line, diag.column, diag.pointer) == (None, None, "/nodes")


@pytest.mark.parametrize(
    "edges",
    [
        # Outcome order is part of the duplicate key.
        [
            ("a", "done", None, ["completed", "failed"]),
            ("a", "done", None, ["failed", "completed"]),
        ],
        # So is the edge kind.
        [("a", "done", "consumes"), ("a", "done", "requires"), ("a", "done")],
    ],
)
def test_edges_differing_in_outcome_order_or_kind_are_not_duplicates(edges: list[Edge]) -> None:
    assert run_checks(make_doc(["a:action", T], edges)) == []


def test_omitted_kind_and_outcomes_equal_flow_and_completed() -> None:
    doc = make_doc(["a:action", T], [("a", "done", "flow", ["completed"]), ("a", "done")])
    assert run_checks(doc) == [
        ("graph-edge-duplicate", "Graph main contains duplicate edge a -> done", "/edges/1")
    ]


def test_gated_by_from_a_gate_is_fine() -> None:
    assert run_checks(make_doc(["g:gate", T], [("g", "done", "gatedBy")])) == []


# Graphs with several cycles: the reference reports the first back edge of its DFS.
MULTI_CYCLE: dict[str, tuple[list[str], list[Edge], str, str]] = {
    "roots-in-declaration-order-not-edge-order": (
        ["a:action", "b:action", "c:action", "d:action", T],
        [("c", "d"), ("d", "c"), ("a", "b"), ("b", "a")],
        "a -> b -> a",
        "/edges/3",
    ),
    "inner-cycle-found-before-outer": (
        ["a:action", "b:action", "c:action", "d:action", T],
        [("a", "b"), ("b", "c"), ("c", "b", None, ["failed"]), ("c", "a"), ("b", "d"), ("d", "a")],
        "b -> c -> b",
        "/edges/2",
    ),
    "first-declared-node-is-first-root": (
        ["d:action", "a:action", "b:action", "c:action", T],
        [("a", "b"), ("b", "a"), ("c", "d"), ("d", "c", "consumes")],
        "d -> c -> d",
        "/edges/2",
    ),
    "finished-branch-is-not-a-cycle": (
        ["a:action", "b:action", "c:action", "d:action", "e:action", T],
        [
            ("a", "b"),
            ("a", "c"),
            ("b", "done"),
            ("c", "b"),
            ("c", "d"),
            ("d", "e"),
            ("e", "c", "requires"),
            ("e", "d"),
        ],
        "c -> d -> e -> c",
        "/edges/6",
    ),
    "repeat-edges-ignored-other-kinds-count": (
        ["a:action", "b:gate", "c:action", T],
        [
            ("a", "b"),
            ("b", "a", "repeat"),
            ("b", "c", "gatedBy"),
            ("c", "b", "requires"),
            ("c", "a"),
        ],
        "b -> c -> b",
        "/edges/3",
    ),
}


@pytest.mark.parametrize("name", list(MULTI_CYCLE))
def test_first_cycle_matches_reference(name: str) -> None:
    nodes, edges, trail, pointer = MULTI_CYCLE[name]
    assert run_checks(make_doc(nodes, edges)) == [("graph-flow-cycle", CYCLE + trail, pointer)]


def test_collects_every_problem_in_reference_order() -> None:
    doc = make_doc(
        ["a:action", "b:action", "a:gate", "g:gate"],
        [
            ("a", "ghost"),  # 0 missing node
            ("a", "b"),  # 1 fine
            ("a", "b"),  # 2 duplicate
            ("b", "g", "gatedBy"),  # 3 gatedBy from an action
            ("b", "a", "repeat"),  # 4 fine: the later "a" (a gate) wins the kind lookup
            ("b", "g"),  # 5 fine
            ("g", "a"),  # 6 closes a -> b -> g -> a
        ],
        {"default": "a", "other": "ghost"},
    )
    assert run_checks(doc) == [
        ("graph-node-duplicate", "Graph main contains duplicate node id: a", "/nodes/2/id"),
        ("graph-terminal-missing", "Graph main must declare at least one terminal node", "/nodes"),
        (
            "graph-entry-missing",
            "Graph main entry other targets missing node ghost",
            "/entrypoints/other",
        ),
        (
            "graph-edge-node-missing",
            "Graph main edge a -> ghost references a missing node",
            "/edges/0",
        ),
        ("graph-edge-duplicate", "Graph main contains duplicate edge a -> b", "/edges/2"),
        (
            "graph-gated-by-source-invalid",
            "Graph main gatedBy edge must start at a gate: b -> g",
            "/edges/3",
        ),
        ("graph-flow-cycle", CYCLE + "a -> b -> g -> a", "/edges/6"),
    ]


def test_edge_failing_one_check_skips_its_later_checks() -> None:
    # A terminal source that is also a duplicate, a non-gate gatedBy source and a
    # bad repeat target: only the first failing check is reported per edge.
    doc = make_doc(
        ["a:action", T],
        [
            ("done", "done", "repeat"),
            ("done", "done", "repeat"),
            ("a", "done", "gatedBy"),
            ("a", "done", "gatedBy"),
        ],
    )
    assert run_checks(doc) == [
        (
            "graph-terminal-edge-invalid",
            "Graph main terminal node cannot have outgoing edges: done -> done",
            "/edges/0",
        ),
        (
            "graph-terminal-edge-invalid",
            "Graph main terminal node cannot have outgoing edges: done -> done",
            "/edges/1",
        ),
        (
            "graph-gated-by-source-invalid",
            "Graph main gatedBy edge must start at a gate: a -> done",
            "/edges/2",
        ),
        ("graph-edge-duplicate", "Graph main contains duplicate edge a -> done", "/edges/3"),
    ]


def test_duplicate_ids_use_the_last_declaration_for_kind_lookups() -> None:
    # The reference's id -> node map keeps the last entry; any declared terminal
    # satisfies the terminal check.
    doc = make_doc(
        ["x:terminal", "x:action", "y:action", "y:terminal"],
        [("x", "y"), ("y", "x"), ("x", "y", "repeat")],
    )
    assert run_checks(doc) == [
        ("graph-node-duplicate", "Graph main contains duplicate node id: x", "/nodes/1/id"),
        ("graph-node-duplicate", "Graph main contains duplicate node id: y", "/nodes/3/id"),
        (
            "graph-terminal-edge-invalid",
            "Graph main terminal node cannot have outgoing edges: y -> x",
            "/edges/1",
        ),
        (
            "graph-repeat-target-invalid",
            "Graph main repeat edge must target an action or gate: x -> y",
            "/edges/2",
        ),
        ("graph-flow-cycle", CYCLE + "x -> y -> x", "/edges/1"),
    ]


def test_edges_with_missing_ends_do_not_form_cycles() -> None:
    doc = make_doc(["a:action", T], [("a", "ghost"), ("ghost", "a")])
    codes = [code for code, _, _ in run_checks(doc)]
    assert codes == ["graph-edge-node-missing", "graph-edge-node-missing"]


def _chain(n: int, *, back_to_start: bool) -> Document:
    nodes = [f"n{i}:action" for i in range(n)] + [T]
    edges: list[Edge] = [(f"n{i}", f"n{i + 1}") for i in range(n - 1)]
    edges.append((f"n{n - 1}", "done"))
    if back_to_start:
        edges.append((f"n{n - 1}", "n0", None, ["failed"]))
    return make_doc(nodes, edges, positions=False)


@pytest.mark.slow
def test_100k_node_chain_passes() -> None:
    doc = _chain(100_000, back_to_start=False)
    start = time.perf_counter()
    problems = run_checks(doc)
    print(f"100k chain: {time.perf_counter() - start:.3f}s")
    assert problems == []


@pytest.mark.slow
def test_100k_node_chain_with_cycle_back_to_start() -> None:
    n = 100_000
    doc = _chain(n, back_to_start=True)
    start = time.perf_counter()
    problems = run_checks(doc)
    print(f"100k chain with cycle: {time.perf_counter() - start:.3f}s")
    [(code, message, pointer)] = problems
    assert code == "graph-flow-cycle"
    assert pointer == f"/edges/{n}"
    trail = message.removeprefix(CYCLE).split(" -> ")
    assert trail == [f"n{i}" for i in range(n)] + ["n0"]


# --- static cross-graph recursion (order, children, expected trail) ---------

RECURSION: dict[str, tuple[list[str], dict[str, list[str]], list[str] | None]] = {
    "mutual": (["a", "b"], {"a": ["b"], "b": ["a"]}, ["a", "b", "a"]),
    "self-call": (["c"], {"c": ["c"]}, ["c", "c"]),
    "same-child-twice": (["top", "x"], {"top": ["x", "x"], "x": []}, None),
    "diamond": (
        ["top", "x", "y", "z"],
        {"top": ["x", "y"], "x": ["z"], "y": ["z"], "z": []},
        None,
    ),
    "long-loop-with-inner-loop-later": (
        ["m", "n", "o", "p"],
        {"m": ["n"], "n": ["o"], "o": ["p", "n"], "p": ["m"]},
        ["m", "n", "o", "p", "m"],
    ),
    "roots-in-manifest-order": (
        ["leaf", "r", "q", "s"],
        {"leaf": [], "r": ["q"], "q": ["s", "r"], "s": ["q"]},
        ["q", "s", "q"],
    ),
}


@pytest.mark.parametrize("name", list(RECURSION))
def test_find_recursion_matches_reference(name: str) -> None:
    order, children, expected = RECURSION[name]
    assert find_recursion(order, children) == expected


def test_find_recursion_skips_missing_children() -> None:
    assert find_recursion(["a"], {"a": ["ghost", "a"]}) == ["a", "a"]
    assert find_recursion(["a", "b"], {"a": ["ghost"], "b": ["a"]}) is None


def test_find_recursion_on_long_chains() -> None:
    n = 100_000
    names = [f"g{i}" for i in range(n)]
    children = {names[i]: [names[i + 1]] for i in range(n - 1)}
    children[names[-1]] = []
    start = time.perf_counter()
    assert find_recursion(names, children) is None
    children[names[-1]] = [names[0]]
    trail = find_recursion(names, children)
    print(f"100k graph chains: {time.perf_counter() - start:.3f}s")
    assert trail == [*names, names[0]]


# -- unreachable nodes (a warning; the reference has none) -------------------------------------


def run_warnings(doc: Document) -> list[tuple[str, str, str | None, int | None]]:
    sink = ProblemSink(limit=10_000)
    check_graph(doc, "graphs/g.yaml", sink)
    return [(w.code, w.severity, w.pointer, w.line) for w in sink.warnings]


def test_an_unreachable_node_is_warned_at_the_node() -> None:
    doc = make_doc(["a:action", "b:action", "orphan:action", T], [("a", "b"), ("b", "done")])
    assert run_checks(doc) == []
    assert run_warnings(doc) == [("node-unreachable", "warning", "/nodes/2", 16)]
    sink = ProblemSink()
    check_graph(doc, "graphs/g.yaml", sink)
    assert (
        sink.warnings[0].message == "Graph main node orphan cannot be reached from any entrypoint"
    )
    assert sink.warnings[0].path == "graphs/g.yaml"


def test_every_edge_kind_reaches_a_node_repeat_edges_too() -> None:
    doc = make_doc(
        ["a:action", "g:gate", "r:action", "q:action", T],
        [
            ("a", "g", "consumes", ["failed"]),
            ("g", "done", "gatedBy"),
            ("a", "r", "repeat", ["partial"]),
            ("r", "q", "requires"),
            ("q", "done"),
        ],
    )
    assert run_checks(doc) == []
    assert run_warnings(doc) == []


def test_an_edge_that_fails_a_check_still_reaches() -> None:
    doc = make_doc(["a:action", "done:terminal", "b:action"], [("a", "done"), ("done", "b")])
    assert [code for code, _, _ in run_checks(doc)] == ["graph-terminal-edge-invalid"]
    assert run_warnings(doc) == []


def test_any_entrypoint_reaches_and_missing_ones_do_not_warn_everything() -> None:
    two = make_doc(
        ["a:action", "b:action", T], [("a", "done"), ("b", "done")], {"x": "a", "y": "b"}
    )
    assert run_warnings(two) == []
    lost = make_doc(["a:action", T], [("a", "done")], {"default": "ghost"})
    assert [code for code, _, _ in run_checks(lost)] == ["graph-entry-missing"]
    assert run_warnings(lost) == []


def test_a_duplicated_id_is_reached_through_its_id() -> None:
    doc = make_doc(["a:action", "a:action", T], [("a", "done")])
    assert [code for code, _, _ in run_checks(doc)] == ["graph-node-duplicate"]
    assert run_warnings(doc) == []


# -- schema-invalid graphs: what is still checked ----------------------------------------------


def finding(pointer: str | None, unknown: str | None = None) -> Diagnostic:
    """A schema finding at ``pointer``; ``unknown`` names an unknown member found there."""
    params = {"additionalProperty": unknown} if unknown else {}
    return Diagnostic("schema.x", "x", pointer=pointer, detail={"params": params})


def test_salvage_keeps_nodes_and_edges_apart_from_their_findings() -> None:
    doc = make_doc(["a:action", "b:action", T], [("a", "b"), ("b", "done")])
    found = salvage(
        doc.value,
        [
            finding("/nodes/0/satisfiedby", "satisfiedby"),
            finding("/nodes/1"),
            finding("/edges/1/outcomes/0"),
            finding("/extra", "extra"),  # an unknown top-level member
            finding("/description"),
        ],
    )
    assert found is not None
    assert found.structure
    assert found.nodes == {0: frozenset({"/satisfiedby"}), 1: frozenset({""})}
    assert found.edges == frozenset({1})
    assert found.clean(0, "action")
    assert not found.clean(0, "satisfiedby")
    assert found.clean(1, "action")  # the node itself failed, not its action member
    assert found.clean(2, "kind")


@pytest.mark.parametrize(
    "pointer", ["/id", "/entrypoints/default", "/nodes", "/edges", "", "/schema", None]
)
def test_salvage_gives_up_on_the_graph_itself(pointer: str | None) -> None:
    doc = make_doc(["a:action", T], [("a", "done")])
    assert salvage(doc.value, [finding(pointer)]) is None


def test_salvage_needs_the_shape_of_a_graph() -> None:
    assert salvage(["not", "a", "graph"], []) is None
    doc = make_doc(["a:action", T], [("a", "done")])
    assert salvage({**doc.value, "nodes": {}}, []) is None
    assert salvage({**doc.value, "entrypoints": {"default": 3}}, []) is None


def test_without_every_node_id_and_kind_the_graph_rules_do_not_run() -> None:
    doc = make_doc(["a:action", "b:action", T], [("a", "b"), ("b", "a"), ("b", "done")])
    for bad in ("/nodes/1/kind", "/nodes/1/id"):
        found = salvage(doc.value, [finding(bad)])
        assert found is not None
        assert not found.structure
        sink = ProblemSink()
        check_graph(doc, "graphs/g.yaml", sink, found)
        assert (sink.problems, sink.warnings) == ([], [])
    found = salvage(doc.value, [finding("/nodes/1/action")])
    assert found is not None
    assert found.structure
    sink = ProblemSink()
    check_graph(doc, "graphs/g.yaml", sink, found)
    assert [p.code for p in sink.problems] == ["graph-flow-cycle"]


def test_a_skipped_edge_is_not_checked_and_silences_the_reachability_warning() -> None:
    doc = make_doc(
        ["a:action", "b:action", T], [("a", "b"), ("a", "b"), ("b", "done"), ("ghost", "a")]
    )
    found = salvage(doc.value, [finding("/edges/1/kind"), finding("/edges/3/from")])
    assert found is not None
    sink = ProblemSink()
    check_graph(doc, "graphs/g.yaml", sink, found)
    assert (sink.problems, sink.warnings) == ([], [])  # no duplicate, no missing node
    unreached = make_doc(["a:action", "b:action", T], [("a", "done"), ("a", "b", "flow", ["x"])])
    found = salvage(unreached.value, [finding("/edges/1/outcomes/0")])
    assert found is not None
    sink = ProblemSink()
    check_graph(unreached, "graphs/g.yaml", sink, found)
    assert sink.warnings == []  # b may be reached through the edge that was skipped


def test_a_top_level_finding_that_is_not_an_unknown_member_gives_up() -> None:
    doc = make_doc(["a:action", T], [("a", "done")])
    assert salvage(doc.value, [finding("/extra")]) is None
    assert salvage(doc.value, [finding("/extra", "extra")]) is not None
