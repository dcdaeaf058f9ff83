"""``agc explain``: every node of every evaluated frame, with a status and its reasons.

For every graph-test state of every shipped example: the JSON document matches its
packaged schema, lists every node of every frame the evaluation evaluated (each with at
least one reason), its ``revision`` is ``agc evaluate``'s, the statuses are the trace's
outcomes, and the primary route's node (and only it) has ``primary`` true. Golden files
pin the human explanation of a few states; regenerate them after an intended change with
``AGC_UPDATE_GOLDEN=1 pytest tests/pictures/test_explain.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_graph.documents.schema import validate
from agent_graph.pictures.explain import explain
from cli_support import ok_json, run
from picture_support import ExampleState, example_states, program, state_options

STATES = example_states()
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "explain"
GOLDEN_CASES = [
    "weekly-report/01-fresh-week.yaml",
    "weekly-report/02-partial-draft-repeats.yaml",
    "weekly-report/07-unverified-publication.yaml",
    "release-train/02-five-parallel-options.yaml",
    "release-train/05-partial-goes-to-triage.yaml",
    "release-train/06-closed-window-blocks.yaml",
    "review-desk/04-rejected-goes-back.yaml",
]


def _args(example: ExampleState, *extra: str) -> list[str]:
    return [
        "explain",
        example.graph,
        "--entry",
        example.entry,
        *state_options(example.state),
        "-m",
        str(example.manifest),
        *extra,
    ]


@pytest.mark.parametrize("example", STATES, ids=[s.id for s in STATES])
def test_explain_lists_every_evaluated_node(
    example: ExampleState, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = ok_json(_args(example), capsys)
    assert validate("explain", doc, path="explain.json") is None
    evaluated = ok_json(
        [
            "evaluate",
            example.graph,
            "--entry",
            example.entry,
            *state_options(example.state),
            "-m",
            str(example.manifest),
        ],
        capsys,
    )
    assert doc["revision"] == evaluated["revision"]
    assert doc["statusCode"] == evaluated["statusCode"]
    prog = program(example.example)
    traced = prog.evaluate(example.graph, example.entry, example.state, trace=True)
    assert traced.trace is not None
    expected = {
        (frame.prefix + node.id): str(frame.outcome_of(i) or "unreached")
        for frame in traced.trace.frames
        if frame.error is None
        for i, node in enumerate(frame.graph.nodes)
    }
    assert {n["stateKey"]: n["status"] for n in doc["nodes"]} == expected
    assert len(doc["nodes"]) == len(expected)  # each node once
    assert all(n["reasons"] for n in doc["nodes"])
    primary = [n for n in doc["nodes"] if n["primary"]]
    if "primaryRoute" in evaluated:
        (node,) = primary
        assert node["candidate"] is True
        assert node["node"] == evaluated["primaryRoute"]["node"]
        assert node["graph"] == evaluated["primaryRoute"]["graph"]
    else:
        assert primary == []
    candidates = {n["stateKey"] for n in doc["nodes"] if n["candidate"]}
    assert candidates == {c.state_key for c in traced.candidates}


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_human_explanation_golden(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    example = next(s for s in STATES if s.id == case)
    code, out, err = run(_args(example), capsys)
    assert (code, err) == (0, "")
    golden = GOLDEN / (case.replace("/", "--").removesuffix(".yaml") + ".txt")
    if os.environ.get("AGC_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")


def test_explain_one_node_by_id_or_state_key(capsys: pytest.CaptureFixture[str]) -> None:
    example = next(s for s in STATES if s.id == "release-train/06-closed-window-blocks.yaml")
    by_id = ok_json(_args(example, "--node", "ship"), capsys)
    assert [n["stateKey"] for n in by_id["nodes"]] == ["train/ship"]
    assert by_id["nodes"][0]["status"] == "blocked"
    (reason,) = [r for r in by_id["nodes"][0]["reasons"] if r["code"] == "explain-requires-failed"]
    assert reason["fact"]["path"] == "release.window.open"
    by_key = ok_json(_args(example, "--node", "train/ship"), capsys)
    assert by_key["nodes"] == by_id["nodes"]


def test_blocked_reason_names_the_fact_and_its_value(capsys: pytest.CaptureFixture[str]) -> None:
    example = next(s for s in STATES if s.id == "release-train/06-closed-window-blocks.yaml")
    code, out, _ = run(_args(example, "--node", "ship"), capsys)
    assert code == 0
    assert "`ship` is blocked: requiresFacts `release.window.open` equals `true`, but" in out


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        (["--node", "nope"], "explain-node-missing"),
        (["--entry", "nope"], "entry-missing"),
        (["--outcomes", "{"], "json-invalid"),
        (["--outcomes", '{"report/draft":"done"}'], "outcome-invalid"),
        (["--facts", "[]"], "json-object-required"),
        (["--state", "missing-run.json"], "file-read-failed"),
    ],
)
def test_bad_input_is_a_coded_error(
    extra: list[str], code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = str(Path(__file__).resolve().parents[2] / "examples/weekly-report/provider.yaml")
    status, out, err = run(
        ["explain", "report", "-m", manifest, *extra, "--format", "json"], capsys
    )
    assert status == 1
    assert out == ""
    assert json.loads(err)["error"]["code"] == code
    status, out, err = run(["explain", "report", "-m", manifest, *extra], capsys)
    assert status == 1
    assert "Traceback" not in err
    assert f"{code}: " in err


def test_unknown_graph_is_graph_missing(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = str(Path(__file__).resolve().parents[2] / "examples/weekly-report/provider.yaml")
    status, _, err = run(["explain", "nope", "-m", manifest, "--format", "json"], capsys)
    assert status == 1
    assert json.loads(err)["error"]["code"] == "graph-missing"


def test_explain_is_the_library_document() -> None:
    prog = program("weekly-report")
    evaluation = prog.evaluate("report", "default", {}, trace=True)
    assert evaluation.trace is not None
    doc = explain(evaluation, evaluation.trace)
    assert doc["schema"] == "agent-graph.explain.v1"
    assert next(n["node"] for n in doc["nodes"]) == "draft"
