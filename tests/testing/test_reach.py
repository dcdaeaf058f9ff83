"""``agc explain GRAPH --reach NODE``: the smallest state that routes to NODE.

Every node of every example Graph is either reached, with a graph test written that
``agc test`` passes, or said to be unreachable with the reason; the examples have no
unreachable node, so a Provider built here has two (a contradictory ``requiresFacts``
and a join no state satisfies). The smallest states asserted below are worked out by
hand from the graphs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_graph import compile_provider
from agent_graph.documents.schema import validate
from agent_graph.testing import run_tests
from agent_graph.testing.reach import DEFAULT_LIMIT, State, reach
from agent_graph.testing.reach_case import reach_document, write_reach_case
from cli_support import error_of, run
from tree_support import write_tree

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MANIFESTS = sorted(EXAMPLES.glob("*/provider.yaml"))
WEEKLY = str(EXAMPLES / "weekly-report" / "provider.yaml")
TRAIN = str(EXAMPLES / "release-train" / "provider.yaml")


def _nodes() -> list[tuple[Path, str, str]]:
    out = []
    for manifest in MANIFESTS:
        program = compile_provider(manifest)
        for graph in program.graph_ids:
            out += [(manifest, graph, node.id) for node in program.graph(graph).nodes]
    return out


NODES = _nodes()


def conforming(out: str) -> dict[str, Any]:
    """The ``--format json`` answer, checked against ``reach.schema.json``."""
    doc: dict[str, Any] = json.loads(out)
    assert validate("reach", doc, path="reach.json") is None
    assert doc["schema"] == "agent-graph.reach.v1"
    return doc


def test_the_examples_have_nodes_of_every_kind_to_reach() -> None:
    assert len(NODES) == 38
    kinds = set()
    for manifest, graph, node in NODES:
        program = compile_provider(manifest)
        kinds |= {n.kind for n in program.graph(graph).nodes if n.id == node}
    assert kinds == {0, 1, 2, 3}  # action, gate, subgraph, terminal


@pytest.mark.parametrize(
    ("manifest", "graph", "node"), NODES, ids=[f"{g}/{n}" for _, g, n in NODES]
)
def test_every_example_node_is_reached_and_its_test_passes(
    manifest: Path, graph: str, node: str, tmp_path: Path
) -> None:
    program = compile_provider(manifest)
    answer = reach(program, graph, node)
    assert answer.reached, answer.reason
    assert answer.evaluation is not None
    primary = answer.evaluation.primary
    kind = answer.target.node.kind
    if kind in (0, 1):
        assert primary is not None
        assert primary.state_key == f"{graph}/{node}"
    elif kind == 2:
        assert primary is not None
        assert primary.state_key.startswith(f"{graph}/{node}>")
    else:
        assert answer.evaluation.status_code == "complete"
    written = write_reach_case(program, answer, tmp_path / "case.yaml")
    (result,) = run_tests(program, written)
    assert result.passed, result.failures
    conforming(json.dumps({**reach_document(answer), "test": str(written)}))


@pytest.mark.parametrize(
    ("graph", "node", "facts", "outcomes"),
    [
        ("report", "draft", {}, {}),
        ("report", "approve", {"report": {"digest": True}}, {}),
        ("report", "publish", {"report": {"digest": True, "approved": True}}, {}),
        # publish recorded without its URL is unverified: the host checks it
        (
            "report",
            "check-publication",
            {"report": {"digest": True, "approved": True}},
            {"report/publish": "completed"},
        ),
        (
            "report",
            "done",
            {"report": {"digest": True, "approved": True}, "publication": {"url": True}},
            {},
        ),
    ],
)
def test_weekly_report_smallest_states(
    graph: str, node: str, facts: dict[str, Any], outcomes: dict[str, str]
) -> None:
    answer = reach(compile_provider(WEEKLY), graph, node)
    assert answer.state is not None
    assert answer.state.to_dict() == {"facts": facts, "outcomes": outcomes, "authorities": []}


def test_release_train_smallest_states() -> None:
    program = compile_provider(TRAIN)
    # changelog ranks first of the five (priority 40): only plan must be done
    assert reach(program, "train", "changelog").state == State({}, {"train/plan": "completed"})
    # docs (30) needs changelog settled too, lint (10) also docs and bump-version
    lint = reach(program, "train", "lint")
    assert lint.state is not None
    assert sorted(lint.state.outcomes) == [
        "train/bump-version",
        "train/changelog",
        "train/docs",
        "train/plan",
    ]
    # smoke-test is the start of the verify graph's smoke entry: nothing to record
    smoke = reach(program, "verify", "smoke-test")
    assert (smoke.entry, smoke.size) == ("smoke", 0)
    # the window fact opens ship (requiresFacts), then tag, approve and publish in the
    # child frame, and the smoke test of verify-live: 12 things
    released = reach(program, "train", "released")
    assert released.size == 12
    assert released.state is not None
    assert released.state.facts == {"release": {"window": {"open": True}}}


def test_the_answer_is_the_same_every_time() -> None:
    program = compile_provider(TRAIN)
    first = reach(program, "train", "rollback")
    again = reach(compile_provider(TRAIN), "train", "rollback")
    assert first.state == again.state
    assert first.path == again.path
    assert first.explored == again.explored


def test_a_start_state_is_kept_and_only_the_rest_is_added(
    capsys: pytest.CaptureFixture[str],
) -> None:
    facts = json.dumps({"report": {"digest": "sha256:1f"}})
    args = ["explain", "report", "--reach", "publish", "-m", WEEKLY, "--facts", facts]
    code, out, _ = run([*args, "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["state"]["facts"] == {"report": {"digest": "sha256:1f", "approved": True}}
    assert (doc["size"], doc["added"]) == (2, 1)
    assert [step["node"] for step in doc["path"]] == ["report/approve"]


def test_human_answer_names_the_state_and_the_path(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["explain", "report", "--reach", "check-publication", "-m", WEEKLY], capsys)
    assert code == 0
    *lines, last = out.splitlines()
    assert lines == [
        "report/check-publication is the primary route from entry default with 3 thing(s) "
        "recorded:",
        '  facts: {"report": {"digest": true, "approved": true}}',
        '  outcomes: {"report/publish": "completed"}',
        "Path:",
        "  report/draft: facts report.digest=true -> completed",
        "  report/approve: facts report.approved=true -> completed",
        "  report/publish: recorded completed -> unverified",
    ]
    assert last.startswith(
        "Evaluated: statusCode actionable, primary route check-publication (immediate) ("
    )
    assert last.endswith(" states searched)")


def test_a_node_in_a_called_graph_is_named_by_its_state_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "publish.json"
    code, out, err = run(
        ["explain", "train", "--reach", "train/ship>ship/publish", "-m", TRAIN,
         "--write-test", str(target), "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    doc = conforming(out)
    assert doc["test"] == str(target)
    assert doc["evaluation"]["primaryRoute"]["node"] == "publish"
    case = json.loads(target.read_text(encoding="utf-8"))
    assert case["expect"]["recordNode"] == "train/ship>ship/publish"
    code, out, _ = run(["test", str(target), "-m", TRAIN], capsys)
    assert (code, out) == (0, "1/1 graph test(s) passed\n")


def test_an_unknown_node_suggests_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    error = error_of(["explain", "report", "--reach", "publsh", "-m", WEEKLY], capsys)
    assert error["code"] == "explain-node-missing"
    assert error["message"].endswith("did you mean publish?")


def test_an_existing_test_file_is_never_replaced(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "mine.yaml"
    target.write_text("my own words\n", encoding="utf-8")
    error = error_of(
        ["explain", "report", "--reach", "publish", "-m", WEEKLY, "--write-test", str(target)],
        capsys,
    )
    assert error["code"] == "reach-test-exists"
    assert target.read_text(encoding="utf-8") == "my own words\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.yaml"]


def test_a_file_in_the_way_of_the_folder_is_a_write_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "plain").write_text("x", encoding="utf-8")
    target = tmp_path / "plain" / "case.yaml"
    error = error_of(
        ["explain", "report", "--reach", "publish", "-m", WEEKLY, "--write-test", str(target)],
        capsys,
    )
    assert error["code"] == "file-write-failed"
    assert (tmp_path / "plain").read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize(
    "args",
    [
        ["--reach", "publish", "--node", "draft"],
        ["--write-test", "x.yaml"],
        ["--reach", "publish", "--max-states", "0"],
        ["--reach", "publish", "--max-states", "many"],
    ],
)
def test_bad_option_combinations_and_values_are_usage_errors(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["explain", "report", "-m", WEEKLY, *args], capsys)
    assert (code, out) == (2, "")


def test_the_search_bound_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["explain", "train", "--reach", "released", "-m", TRAIN, "--max-states", "20",
         "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 1
    doc = conforming(out)
    assert (doc["status"], doc["explored"], doc["limit"]) == ("bound", 20, 20)
    assert "search bound was hit" in doc["reason"]
    assert "state" not in doc


BLOCKED = """\
schema: agent-graph.graph.v1
id: stuck
entrypoints:
  default: start
  other: second
nodes:
  - id: start
    kind: action
    reasonCode: route.stuck.work
    action: actions/work.yaml
  - id: contradiction
    kind: action
    reasonCode: route.stuck.work
    action: actions/work.yaml
    requiresFacts:
      - { path: flag, exists: true }
      - { path: flag, exists: false }
  - id: both-ways
    kind: action
    reasonCode: route.stuck.work
    action: actions/work.yaml
  - id: first
    kind: action
    reasonCode: route.stuck.work
    action: actions/work.yaml
    priority: 10
  - id: second
    kind: action
    reasonCode: route.stuck.work
    action: actions/work.yaml
  - id: approve
    kind: gate
    reasonCode: route.stuck.work
    priority: 20
    gate: { id: approve, prompt: Go on?, authority: lead, delegatable: true }
  - id: done
    kind: terminal
    join: any
    terminalOutcome: completed
edges:
  - { from: start, to: approve }
  - { from: approve, to: done }
  - { from: start, to: first }
  - { from: start, to: second }
  - { from: first, to: done }
  - { from: second, to: done }
  - { from: start, to: contradiction }
  - { from: start, to: both-ways }
  - { from: start, to: both-ways, outcomes: [failed] }
  - { from: contradiction, to: done }
  - { from: both-ways, to: done }
"""


@pytest.fixture
def stuck(tmp_path: Path) -> str:
    write_tree(
        tmp_path,
        {
            "provider.yaml": "schema: agent-graph.provider.v1\nid: test.stuck\nversion: 1.0.0\n"
            "graphs: [graphs/stuck.yaml]\n",
            "graphs/stuck.yaml": BLOCKED,
            "actions/work.yaml": "schema: agent-graph.action.v1\nid: stuck.work\n"
            "runner: command\neffect: read\ncommand: 'true'\n",
        },
    )
    return str(tmp_path / "provider.yaml")


def test_a_contradictory_requires_facts_is_the_reason(
    stuck: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["explain", "stuck", "--reach", "contradiction", "--entry", "default", "-m", stuck]
    code, out, _ = run(args, capsys)
    assert code == 1
    assert out.startswith(
        "stuck/contradiction cannot be the primary route: from entry default, its "
        "requiresFacts (flag exists and flag is absent) cannot all hold ("
    )


def test_a_join_no_state_meets_is_the_reason(
    stuck: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "never.yaml"
    code, out, _ = run(
        ["explain", "stuck", "--reach", "both-ways", "--entry", "default", "-m", stuck,
         "--format", "json",
         "--write-test", str(target)],
        capsys,
    )  # fmt: skip
    assert code == 1
    doc = conforming(out)
    assert doc["status"] == "unreachable"
    assert doc["reason"].startswith("from entry default, it is never reached: its join needs all")
    assert "start → both-ways on completed" in doc["reason"]
    assert "start → both-ways on failed" in doc["reason"]
    assert doc["explored"] < DEFAULT_LIMIT  # the whole space was searched, not cut off
    assert doc["test"] is None
    assert not target.exists()
    code, out, _ = run(
        ["explain", "stuck", "--reach", "both-ways", "--entry", "default", "-m", stuck,
         "--write-test", str(target)],
        capsys,
    )  # fmt: skip
    assert (code, out.splitlines()[-1]) == (1, "No graph test written.")
    assert not target.exists()


def test_a_better_ranked_route_is_settled_without_firing_its_edges(stuck: str) -> None:
    # completing first would reach done and end the frame: only an outcome none of its
    # edges takes gets it out of second's way
    answer = reach(compile_provider(stuck), "stuck", "second", "default")
    assert answer.state is not None
    assert answer.state.outcomes == {"stuck/start": "completed", "stuck/first": "skipped"}


def test_a_gate_behind_an_immediate_route_is_ranked_first_by_its_authority(
    stuck: str, tmp_path: Path
) -> None:
    # waiting for a user, approve ranks after first and second; with the authority in the
    # session it is immediate, and its priority puts it first: two things, not three
    program = compile_provider(stuck)
    answer = reach(program, "stuck", "approve", "default")
    assert answer.state == State({}, {"stuck/start": "completed"}, ("lead",))
    (result,) = run_tests(program, write_reach_case(program, answer, tmp_path / "g.yaml"))
    assert result.passed
    assert result.case.expect["gateResolution"] == "session-authority"


def test_every_entry_says_why(stuck: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explain", "stuck", "--reach", "contradiction", "-m", stuck, "--format", "json"]
    code, out, _ = run(args, capsys)
    assert code == 1
    assert conforming(out)["reason"] == (
        "from entry default, its requiresFacts (flag exists and flag is absent) cannot all "
        "hold; from entry other, it is never reached: its join needs all of: "
        "start → contradiction on completed (start is unreached)"
    )


def test_a_node_no_edge_leads_to_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explain", "verify", "--reach", "smoke-test", "--entry", "default", "-m", TRAIN]
    code, out, _ = run([*args, "--format", "json"], capsys)
    assert code == 1
    assert conforming(out)["reason"] == (
        "from entry default, it is never reached: no edge leads to it and it is not this "
        "entry's start"
    )


def test_the_help_example_runs_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from agent_graph.cli.explain import DEFAULT_STATES, REACH_EXAMPLE
    from cli_support import run_bash

    assert DEFAULT_STATES == DEFAULT_LIMIT
    _, text, _ = run(["explain", "--help"], capsys)
    assert REACH_EXAMPLE in text
    shutil.copytree(EXAMPLES, tmp_path / "examples", symlinks=True)
    done = run_bash(REACH_EXAMPLE, tmp_path)
    assert done.stdout.startswith("report/publish is the primary route from entry default")
