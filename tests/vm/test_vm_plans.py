"""Per-graph plans (``agent_graph.vm.plans``): made once per Program and graph, holding
what the graph's records hold, and made only for the graphs a frame reaches (a lazily
decoded Program still decodes a graph only when a frame of it starts)."""

from __future__ import annotations

from pathlib import Path

from agent_graph import compile_provider
from agent_graph.ir import records as r
from agent_graph.vm import load_program
from agent_graph.vm import plans as p
from vm.test_vm_deep_paths import DEPTH, NAME, STEP, _deep_provider


def test_a_plan_is_made_once_and_mirrors_its_graph(tmp_path: Path) -> None:
    prog = compile_provider(_deep_provider(tmp_path))
    plans = prog._plans
    assert plans.made == [None] * DEPTH  # nothing is planned before an evaluation
    prog.evaluate(
        NAME.format(0), "default", {"outcomes": {f"{NAME.format(0)}/{STEP}": "completed"}}
    )
    first = plans.of(0)
    assert plans.of(0) is first
    for index, graph in enumerate(prog.ir.graphs):
        plan = plans.of(index)
        assert plan.id == graph.id
        # where recursion is marked: the first graph of the id (ids are unique here)
        assert plan.slot == [g.id for g in prog.ir.graphs].index(graph.id) == index
        assert plan.entries == dict(graph.entrypoints)
        n = len(graph.nodes)
        # a frame's outcomes, then its nodes' counts of matching edges, then child results
        assert plan.blank == [None] * n + [0] * n + [None] * n
        # a frame's flags: its nodes' (reached), then its edges' (matching)
        assert plan.zeros == bytearray(n + len(graph.edges))
        for index, (node, row) in enumerate(zip(graph.nodes, plan.nodes, strict=True)):
            assert row[p.N_NODE] is node
            assert (row[p.N_KIND], row[p.N_ID], row[p.N_REQUIRES]) == (
                node.kind,
                node.id,
                node.requires,
            )
            edges = graph.edges
            outgoing = [
                (n + e, edges[e].mask, edges[e].target, n + edges[e].target) for e in node.outgoing
            ]
            assert list(row[p.N_OUT]) == outgoing
            assert row[p.N_CHILD] == 2 * n + index
            for outcome, (out, repeats) in row[p.N_MATCHES].items():
                bit = r.OUTCOME_BIT[outcome]
                assert list(out) == [(f, t, c) for f, mask, t, c in outgoing if mask & bit]
                assert list(repeats) == [e for e in node.repeats if edges[e].mask & bit]
            assert row[p.N_INCOMING] == len(node.incoming)
            if node.kind == r.SUBGRAPH:
                child = prog.ir.graphs[node.subgraph].id
                assert row[p.N_SEGMENT] == f"{graph.id}/{node.id}"
                assert row[p.N_SUFFIX] == f"{node.id}>{child}/"
                assert row[p.N_ENTRY] == "default"
            if node.kind == r.TERMINAL:
                assert row[p.N_DEFAULT] == "completed"
                assert row[p.N_SATISFIED] is None


def test_a_lazy_program_plans_and_decodes_only_the_frames_it_reaches(tmp_path: Path) -> None:
    compiled = compile_provider(_deep_provider(tmp_path))
    prog = load_program(compiled.to_bytes(), tmp_path, lazy=True)
    root = NAME.format(0)
    fresh = prog.evaluate(root, "default", {})
    assert fresh.primary is not None
    assert fresh.primary.node.id == STEP
    # the root frame calls nothing yet: one graph planned, its callee not decoded
    assert [plan is not None for plan in prog._plans.made] == [True] + [False] * (DEPTH - 1)
    assert prog.ir.graphs._done[1] is None  # type: ignore[attr-defined]
    deeper = prog.evaluate(root, "default", {"outcomes": {f"{root}/{STEP}": "completed"}})
    assert deeper.primary is not None
    assert deeper.primary.call_path == (f"{root}/call",)
    assert [plan is not None for plan in prog._plans.made][:3] == [True, True, False]
    assert deeper == compiled.evaluate(
        root, "default", {"outcomes": {f"{root}/{STEP}": "completed"}}
    )


def test_graphs_sharing_an_id_share_the_first_ones_slot() -> None:
    """Recursion is by graph id: hand-built IR may repeat one, and every graph of an id
    marks the same place (its first index)."""
    plans = p.Plans([], ("a", "b", "a", "c", "b"))
    assert plans.first == {"a": 0, "b": 1, "c": 3}
