"""Graph tests: ``agc test``, the ``agent_graph.testing`` runner and JUnit reports.

A small Provider written here exercises every expectation key, passing and failing,
with the reference's failure texts. The shipped examples' own tests must pass. With
``AGC_REFERENCE_CLI`` and ``AGC_REFERENCE_DIR`` set, the Node reference runs the same
cases (its public examples, ours, and every expectation key made wrong) and must give
the same JSON document.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_graph import compile_provider
from agent_graph.cli import main
from agent_graph.errors import AgentGraphError
from agent_graph.testing import (
    EVALUATION_KEYS,
    ROUTE_KEYS,
    discover,
    junit_xml,
    load_case,
    run_cases,
    run_tests,
    summary,
)
from slow_support import fast_sample
from tree_support import write_tree

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("context-views", "release-train", "review-desk", "weekly-report")

# -- a Provider with one node for every kind of expectation --------------------------------

MINI: dict[str, str] = {
    "provider.yaml": """
        schema: agent-graph.provider.v1
        id: test.mini
        version: 1.0.0
        name: Mini
        graphs: [graphs/main.yaml, graphs/child.yaml]
        compatibility:
          agentGraph: ^0.3.0
    """,
    "graphs/main.yaml": """
        schema: agent-graph.graph.v1
        id: main
        entrypoints:
          default: write
          options: pick
          nested: call
          sign: sign
        nodes:
          - id: write
            kind: action
            reasonCode: route.main.write
            action: actions/write.yaml
            resources:
              required: [resources/procedure.md]
              recommended: [resources/style.md]
          - id: approve
            kind: gate
            reasonCode: route.main.approve
            gate: {id: approve, prompt: Ship it?, authority: main.owner, delegatable: true}
            inspectionAction: actions/inspect.yaml
            resolutionAction: actions/decide.yaml
          - {id: publish, kind: action, reasonCode: route.main.publish,
             action: actions/publish.yaml}
          - id: sign
            kind: gate
            reasonCode: route.main.sign
            gate: {id: sign, prompt: Sign it?}
            inspectionAction: actions/report.yaml
            resolutionAction: actions/record.yaml
          - {id: done, kind: terminal, join: any, terminalOutcome: completed}
          - {id: pick, kind: action, reasonCode: route.main.pick, action: actions/check.yaml}
          - {id: opt-a, kind: action, priority: 50, reasonCode: route.main.opt,
             action: actions/publish.yaml}
          - {id: opt-b, kind: action, priority: 40, reasonCode: route.main.opt,
             action: actions/publish.yaml}
          - {id: opt-c, kind: action, priority: 30, reasonCode: route.main.opt,
             action: actions/publish.yaml}
          - {id: opt-d, kind: action, priority: 20, reasonCode: route.main.opt,
             action: actions/publish.yaml}
          - {id: opt-e, kind: action, priority: 10, reasonCode: route.main.opt,
             action: actions/check.yaml}
          - {id: call, kind: subgraph, graph: child, entry: default}
        edges:
          - {from: write, to: approve}
          - {from: approve, to: publish}
          - {from: publish, to: done}
          - {from: sign, to: done}
          - {from: call, to: done}
          - {from: pick, to: opt-a}
          - {from: pick, to: opt-b}
          - {from: pick, to: opt-c}
          - {from: pick, to: opt-d}
          - {from: pick, to: opt-e}
          - {from: opt-a, to: done}
          - {from: opt-b, to: done}
          - {from: opt-c, to: done}
          - {from: opt-d, to: done}
          - {from: opt-e, to: done}
    """,
    "graphs/child.yaml": """
        schema: agent-graph.graph.v1
        id: child
        entrypoints: {default: step}
        nodes:
          - {id: step, kind: action, reasonCode: route.child.step, action: actions/check.yaml}
          - {id: end, kind: terminal, terminalOutcome: completed}
        edges:
          - {from: step, to: end}
    """,
    "actions/write.yaml": """
        schema: agent-graph.action.v1
        id: main.write
        runner: agent
        effect: write
        skill: skills/write/SKILL.md
    """,
    "actions/inspect.yaml": """
        schema: agent-graph.action.v1
        id: main.inspect
        runner: agent
        effect: read
        skill: skills/inspect/SKILL.md
    """,
    "actions/decide.yaml": """
        schema: agent-graph.action.v1
        id: main.decide
        runner: agent
        effect: write
        skill: skills/decide/SKILL.md
        inputSchema: schemas/decision.schema.json
    """,
    "actions/publish.yaml": """
        schema: agent-graph.action.v1
        id: main.publish
        runner: command
        effect: external
        command: make publish
    """,
    "actions/report.yaml": """
        schema: agent-graph.action.v1
        id: main.report
        runner: command
        effect: read
        command: make report
    """,
    "actions/record.yaml": """
        schema: agent-graph.action.v1
        id: main.record
        runner: host
        effect: write
        handler: main.record
    """,
    "actions/check.yaml": """
        schema: agent-graph.action.v1
        id: main.check
        runner: host
        effect: read
        handler: main.check
    """,
    "skills/write/SKILL.md": "---\nname: write\ndescription: Write it.\n---\n\n# Write\n",
    "skills/inspect/SKILL.md": "---\nname: inspect\ndescription: Look.\n---\n\n# Inspect\n",
    "skills/decide/SKILL.md": "---\nname: decide\ndescription: Decide.\n---\n\n# Decide\n",
    "resources/procedure.md": (
        "---\nid: procedure.main.write\nkind: procedure\nmedia-type: text/markdown\n---\n\nGo.\n"
    ),
    "resources/style.md": (
        "---\nid: procedure.main.style\nkind: procedure\nmedia-type: text/markdown\n---\n\nOk.\n"
    ),
    "schemas/decision.schema.json": json.dumps(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.test/decision.schema.json",
            "title": "agent-graph.test.mini.decision.v1",
            "type": "object",
        }
    ),
}

# (entry, outcomes, authorities): states of the mini Provider
STATES: dict[str, tuple[str, dict[str, str], list[str]]] = {
    "write": ("default", {}, []),
    "gate": ("default", {"main/write": "completed"}, []),
    "delegated": ("default", {"main/write": "completed"}, ["main.owner"]),
    "publish": ("default", {"main/write": "completed", "main/approve": "completed"}, []),
    "done": (
        "default",
        {"main/write": "completed", "main/approve": "completed", "main/publish": "completed"},
        [],
    ),
    "options": ("options", {"main/pick": "completed"}, []),
    "nested": ("nested", {}, []),
    "sign": ("sign", {}, []),
}

# (state, key, the right value, a wrong value, the reference's failure text for the wrong one)
# fmt: off
ASSERTIONS: list[tuple[str, str, Any, Any, str]] = [
    ("write", "statusCode", "actionable", "blocked",
     "statusCode: expected blocked, received actionable"),
    ("done", "statusCode", "complete", "actionable",
     "statusCode: expected actionable, received complete"),
    ("write", "primaryNode", "write", "approve",
     "primaryNode: expected approve, received write"),
    ("done", "primaryNode", None, "publish",
     "primaryNode: expected publish, received <none>"),
    ("write", "primaryReasonCode", "route.main.write", "route.x",
     "primaryReasonCode: expected route.x, received route.main.write"),
    ("done", "primaryReasonCode", None, "route.x",
     "primaryReasonCode: expected route.x, received <none>"),
    ("options", "alternativeNodes", ["opt-b", "opt-c", "opt-d"], ["opt-b", "opt-d", "opt-c"],
     'alternativeNodes: expected ["opt-b","opt-d","opt-c"], received ["opt-b","opt-c","opt-d"]'),
    ("write", "alternativeNodes", [], ["opt-a"],
     'alternativeNodes: expected ["opt-a"], received []'),
    ("gate", "availability", "requires-user", "immediate",
     "availability: expected immediate, received requires-user"),
    ("done", "availability", None, "blocked",
     "availability: expected blocked, received <none>"),
    ("done", "outcome", "completed", "failed",
     "outcome: expected failed, received completed"),
    ("write", "outcome", None, "completed",
     "outcome: expected completed, received <none>"),
    ("options", "diagnosticsInclude",
     ["route-alternatives-truncated"],
     ["route-alternatives-truncated", "no-such-code"],
     "diagnostic missing: no-such-code"),
    ("publish", "command", "make publish", "make other",
     "command: expected make other, received make publish"),
    ("write", "command", None, "make publish",
     "command: expected make publish, received <none>"),
    ("nested", "handler", "main.check", "main.other",
     "handler: expected main.other, received main.check"),
    ("publish", "handler", None, "main.check",
     "handler: expected main.check, received <none>"),
    ("write", "requiredResources",
     ["skill.write", "procedure.main.write"],
     ["procedure.main.write"],
     'requiredResources: expected ["procedure.main.write"],'
     ' received ["skill.write","procedure.main.write"]'),
    ("write", "recommendedResources", ["procedure.main.style"], [],
     'recommendedResources: expected [], received ["procedure.main.style"]'),
    ("gate", "gateResolution", "user", "session-authority",
     "gateResolution: expected session-authority, received user"),
    ("delegated", "gateResolution", "session-authority", "user",
     "gateResolution: expected user, received session-authority"),
    ("write", "gateResolution", None, "user",
     "gateResolution: expected user, received <none>"),
    ("sign", "inspectionCommand", "make report", "make x",
     "inspectionCommand: expected make x, received make report"),
    ("gate", "inspectionCommand", None, "make report",
     "inspectionCommand: expected make report, received <none>"),
    ("sign", "inspectionHandler", None, "main.report",
     "inspectionHandler: expected main.report, received <none>"),
    ("gate", "inspectionSkill", "skill.inspect", "skill.decide",
     "inspectionSkill: expected skill.decide, received skill.inspect"),
    ("gate", "inspectionInputSchema", None, "schema.x",
     "inspectionInputSchema: expected schema.x, received <none>"),
    ("sign", "resolutionCommand", None, "make record",
     "resolutionCommand: expected make record, received <none>"),
    ("sign", "resolutionHandler", "main.record", "main.other",
     "resolutionHandler: expected main.other, received main.record"),
    ("gate", "resolutionSkill", "skill.decide", "skill.inspect",
     "resolutionSkill: expected skill.inspect, received skill.decide"),
    ("gate", "resolutionInputSchema", "schema.main.decide.input", "schema.other",
     "resolutionInputSchema: expected schema.other, received schema.main.decide.input"),
    ("nested", "recordNode", "main/call>child/step", "child/step",
     "recordNode: expected child/step, received main/call>child/step"),
    ("done", "recordNode", None, "main/done",
     "route assertions require a primary route"),
]
# fmt: on

STATUS = {
    "write": "actionable",
    "gate": "waiting-user",
    "delegated": "actionable",
    "publish": "actionable",
    "done": "complete",
    "options": "actionable",
    "nested": "actionable",
    "sign": "waiting-user",
}


def write_files(root: Path, files: dict[str, str]) -> None:
    write_tree(root, files, dedent=True)


def case_document(name: str, state: str, expect: dict[str, Any]) -> dict[str, Any]:
    entry, outcomes, authorities = STATES[state]
    document: dict[str, Any] = {
        "schema": "agent-graph.test.v1",
        "name": name,
        "graph": "main",
        "entry": entry,
    }
    body: dict[str, Any] = {}
    if outcomes:
        body["outcomes"] = outcomes
    if authorities:
        body["authorities"] = authorities
    if body:
        document["state"] = body
    document["expect"] = {"statusCode": STATUS[state], **expect}
    return document


def write_case(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    root = tmp_path / "mini"
    write_files(root, MINI)
    return root


def agc(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def agc_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code, out, err = agc([*args, "--format", "json"], capsys)
    return code, json.loads(out if out else err)


# -- every expectation key, passing and failing --------------------------------------------


def test_every_expectation_key_is_covered() -> None:
    keys = {key for _, key, *_ in ASSERTIONS}
    assert keys == {*EVALUATION_KEYS, "diagnosticsInclude", *ROUTE_KEYS}


@pytest.mark.parametrize(
    ("state", "key", "right", "wrong", "text"),
    ASSERTIONS,
    ids=[f"{a[1]}-{a[0]}" for a in ASSERTIONS],
)
def test_expectation_passes_and_fails_with_the_reference_text(
    mini: Path, state: str, key: str, right: Any, wrong: Any, text: str
) -> None:
    program = compile_provider(mini / "provider.yaml")
    cases = []
    if right is not None:
        cases.append(
            load_case(
                write_case(mini / "t" / "1-right.yaml", case_document("r", state, {key: right}))
            )
        )
    cases.append(
        load_case(write_case(mini / "t" / "2-wrong.yaml", case_document("w", state, {key: wrong})))
    )
    results = run_cases(program, cases)
    if right is not None:
        assert results[0].passed, results[0].failures
    failed = results[-1]
    assert not failed.passed
    assert [f.message for f in failed.failures] == [text]
    failure = failed.failures[0]
    if text == "route assertions require a primary route":
        assert (failure.expected, failure.received) == ({key: wrong}, None)
    elif key == "diagnosticsInclude":
        assert (failure.expected, failure.received) == (wrong[-1], right)
    else:
        assert (failure.expected, failure.received) == (wrong, right)
    # the failure points at the expectation's value (a block list: its first item)
    lines = failed.path.read_text(encoding="utf-8").splitlines()
    index = failure.line - 1
    while lines[index].strip().startswith("- "):
        index -= 1
    assert lines[index].strip().startswith(f"{key}:")


def test_all_failures_of_a_case_are_kept_in_the_reference_order(
    mini: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = mini / "tests" / "many.yaml"
    path.parent.mkdir()
    path.write_text(
        textwrap.dedent(
            """\
            schema: agent-graph.test.v1
            name: many wrong things
            graph: main
            entry: default
            expect:
              recordNode: main/x
              diagnosticsInclude: [a, b]
              command: make nothing
              primaryNode: approve
              statusCode: blocked
            """
        ),
        encoding="utf-8",
    )
    [result] = run_tests(mini / "provider.yaml", path)
    assert [f.message for f in result.failures] == [
        "statusCode: expected blocked, received actionable",
        "primaryNode: expected approve, received write",
        "diagnostic missing: a",
        "diagnostic missing: b",
        "command: expected make nothing, received <none>",
        "recordNode: expected main/x, received main/write",
    ]
    assert [(f.line, f.column) for f in result.failures] == [
        (10, 15), (9, 16), (7, 24), (7, 27), (8, 12), (6, 15)
    ]  # fmt: skip
    code, out, err = agc(["test", str(path), "-m", str(mini / "provider.yaml")], capsys)
    assert (code, err) == (1, "")
    shown = str(path)
    assert out.splitlines() == [
        "0/1 graph test(s) passed",
        "FAIL many wrong things",
        "  statusCode: expected blocked, received actionable",
        f"    at {shown}:10:15",
        "  primaryNode: expected approve, received write",
        f"    at {shown}:9:16",
        "  diagnostic missing: a",
        f"    at {shown}:7:24",
        "    received diagnostics: []",
        "  diagnostic missing: b",
        f"    at {shown}:7:27",
        "    received diagnostics: []",
        "  command: expected make nothing, received <none>",
        f"    at {shown}:8:12",
        "  recordNode: expected main/x, received main/write",
        f"    at {shown}:6:15",
    ]


def test_route_assertions_without_a_primary_route_fail_once(mini: Path) -> None:
    document = case_document(
        "finished", "done", {"command": "make publish", "handler": "x", "recordNode": "y"}
    )
    [result] = run_tests(mini / "provider.yaml", write_case(mini / "t.yaml", document))
    assert [f.message for f in result.failures] == ["route assertions require a primary route"]
    assert result.failures[0].received is None


def test_outcome_records_and_json_cases_are_accepted(mini: Path) -> None:
    document = case_document("records", "publish", {"primaryNode": "publish"})
    document["state"]["outcomes"]["main/write"] = {
        "outcome": "completed",
        "recordedAt": "2026-01-02T03:04:05Z",
        "detail": {"by": "test"},
    }
    [result] = run_tests(mini / "provider.yaml", write_case(mini / "case.JSON", document))
    assert result.passed
    assert result.to_dict() == {
        "name": "records",
        "path": str(mini / "case.JSON"),
        "passed": True,
        "failures": [],
    }


# -- the CLI: output, exit codes, errors ---------------------------------------------------


def test_cli_json_document_has_the_reference_shape(
    mini: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tests = mini / "tests"
    write_case(tests / "a.yaml", case_document("good", "write", {"primaryNode": "write"}))
    write_case(tests / "b.yaml", case_document("bad", "write", {"primaryNode": "nope"}))
    code, doc = agc_json(["test", str(tests), "-m", str(mini / "provider.yaml")], capsys)
    assert code == 1
    assert doc == {
        "state": "failed",
        "total": 2,
        "failed": 1,
        "results": [
            {"name": "good", "path": str(tests / "a.yaml"), "passed": True, "failures": []},
            {
                "name": "bad",
                "path": str(tests / "b.yaml"),
                "passed": False,
                "failures": ["primaryNode: expected nope, received write"],
            },
        ],
    }


def test_cli_defaults_to_tests_in_the_process_directory(
    mini: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_case(mini / "tests" / "a.yaml", case_document("good", "write", {"primaryNode": "write"}))
    monkeypatch.chdir(mini)
    code, out, err = agc(["test"], capsys)
    assert (code, out, err) == (0, "1/1 graph test(s) passed\n", "")
    code, doc = agc_json(["test"], capsys)
    assert (code, doc["state"], doc["total"], doc["failed"]) == (0, "passed", 1, 0)


def test_human_failure_paths_are_relative_to_the_process_directory(
    mini: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_case(
        mini / "tests" / "sub" / "x.yaml", case_document("x", "write", {"primaryNode": "no"})
    )
    monkeypatch.chdir(mini)
    code, out, _ = agc(["test"], capsys)
    assert code == 1
    assert out.splitlines()[2:4] == [
        "  primaryNode: expected no, received write",
        "    at tests/sub/x.yaml:7:16",
    ]


def test_missing_and_empty_test_paths_are_errors(
    mini: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = str(mini / "provider.yaml")
    missing = mini / "nothing-here"
    code, doc = agc_json(["test", str(missing), "-m", manifest], capsys)
    assert code == 1
    assert doc["error"]["code"] == "test-path-missing"
    assert doc["error"]["message"] == f"Graph test path does not exist: {missing}"
    empty = mini / "empty"
    (empty / "deeper").mkdir(parents=True)
    (empty / "notes.txt").write_text("not a case", encoding="utf-8")
    code, doc = agc_json(["test", str(empty), "-m", manifest], capsys)
    assert code == 1
    assert doc["error"]["code"] == "test-cases-empty"
    assert doc["error"]["message"] == f"No YAML or JSON graph test cases found: {empty}"
    code, out, err = agc(["test", str(empty), "-m", manifest], capsys)
    assert (code, out) == (1, "")
    assert err.startswith("ERROR test-cases-empty: No YAML or JSON graph test cases found")


def test_a_schema_invalid_case_is_a_command_error_with_positions(
    mini: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # as in the reference: one error envelope, no report (issue 23); with every finding placed
    tests = mini / "tests"
    write_case(tests / "a.yaml", case_document("good", "write", {"primaryNode": "write"}))
    bad = tests / "b.yaml"
    bad.write_text(
        "schema: agent-graph.test.v1\nname: bad\ngraph: main\nentry: default\n"
        "expect:\n  statusCode: fine\n  primaryNod: write\n",
        encoding="utf-8",
    )
    code, out, err = agc(
        ["test", str(tests), "-m", str(mini / "provider.yaml"), "--format", "json"], capsys
    )
    assert (code, out) == (1, "")
    error = json.loads(err)["error"]
    assert error["code"] == "schema-invalid"
    assert error["message"] == f"{bad} does not match test-case.schema.json"
    where = {(d["code"], d["detail"]["line"], d["detail"]["column"]) for d in error["diagnostics"]}
    assert ("schema.enum", 6, 15) in where
    assert any(code == "schema.additionalProperties" and line == 7 for code, line, _ in where)


def test_unparsable_case_and_unknown_graph_are_command_errors(
    mini: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = str(mini / "provider.yaml")
    broken = mini / "broken.yaml"
    broken.write_text("schema: agent-graph.test.v1\nname: [unclosed\n", encoding="utf-8")
    code, out, err = agc(["test", str(broken), "-m", manifest, "--format", "json"], capsys)
    error = json.loads(err)["error"]
    assert (code, out, error["code"]) == (1, "", "parse-failed")
    assert error["message"].startswith(f"Cannot parse {broken}:")
    document = case_document("lost", "write", {})
    document["graph"] = "nowhere"
    lost = write_case(mini / "lost.yaml", document)
    code, out, err = agc(["test", str(lost), "-m", manifest, "--format", "json"], capsys)
    error = json.loads(err)["error"]
    assert (code, out, error["code"]) == (1, "", "graph-missing")
    located = error["diagnostics"][-1]
    assert located["path"] == str(lost)
    assert located["detail"]["pointer"] == "/graph"
    assert located["detail"]["line"] == 3


def test_an_unknown_entry_is_an_error_status_not_an_abort(mini: Path) -> None:
    document = case_document("no entry", "write", {"diagnosticsInclude": ["entry-missing"]})
    document["entry"] = "nowhere"
    document["expect"]["statusCode"] = "error"
    [result] = run_tests(mini / "provider.yaml", write_case(mini / "e.yaml", document))
    assert result.passed, result.failures


def test_junit_xml_report(mini: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tests = mini / "tests"
    write_case(tests / "a.yaml", case_document("good <one>", "write", {"primaryNode": "write"}))
    write_case(
        tests / "b.yaml",
        case_document("bad & wrong", "write", {"primaryNode": "x", "command": "make \x01"}),
    )
    write_case(tests / "c.yaml", case_document("also good", "gate", {"gateResolution": "user"}))
    report = tmp_path / "reports" / "graph.xml"
    code, out, _ = agc(
        ["test", str(tests), "-m", str(mini / "provider.yaml"), "--junit-xml", str(report)],
        capsys,
    )
    assert code == 1
    assert out.startswith("2/3 graph test(s) passed\n")
    root = ET.parse(report).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "0")
    [suite] = root.findall("testsuite")
    assert suite.get("name") == "test.mini"
    assert (suite.get("tests"), suite.get("failures")) == ("3", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["good <one>", "bad & wrong", "also good"]
    assert [c.get("file") for c in cases] == [
        str(tests / n) for n in ("a.yaml", "b.yaml", "c.yaml")
    ]
    assert [c.get("line") for c in cases] == ["2", "2", "2"]
    assert all(float(c.get("time") or "nan") >= 0 for c in cases)
    assert [len(c.findall("failure")) for c in cases] == [0, 1, 0]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == "primaryNode: expected x, received write (and 1 more)"
    body = (failure.text or "").splitlines()
    assert body[0] == "primaryNode: expected x, received write"
    assert body[1] == f"  at {tests / 'b.yaml'}:7:16"
    assert body[2] == "command: expected make \\u0001, received <none>"  # not XML 1.0: escaped


def test_junit_xml_is_written_when_everything_passes_and_refuses_a_directory(
    mini: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tests = mini / "tests"
    write_case(tests / "a.yaml", case_document("good", "write", {"primaryNode": "write"}))
    report = tmp_path / "ok.xml"
    args = ["test", str(tests), "-m", str(mini / "provider.yaml"), "--junit-xml"]
    assert agc([*args, str(report)], capsys)[0] == 0
    root = ET.parse(report).getroot()
    assert (root.get("tests"), root.get("failures")) == ("1", "0")
    code, doc = agc_json([*args, str(tmp_path)], capsys)
    assert (code, doc["error"]["code"]) == (1, "file-write-failed")


def test_junit_xml_api_round_trips_through_etree(mini: Path) -> None:
    program = compile_provider(mini / "provider.yaml")
    case = load_case(write_case(mini / "a.yaml", case_document("ü ✓", "write", {})))
    data = junit_xml(run_cases(program, [case]), suite="s", base=mini)
    assert data.startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    [testcase] = ET.fromstring(data).iter("testcase")
    assert (testcase.get("name"), testcase.get("file"), testcase.get("classname")) == (
        "ü ✓",
        "a.yaml",
        "a",
    )


# -- discovery -----------------------------------------------------------------------------


def test_discovery_order_filter_and_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "cases"
    for name in ("b.yaml", "A.yml", "c.JSON", "d.txt", "sub/a.yaml", "Sub2/z.Yaml", "_x.json"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("{}", encoding="utf-8")
    (root / "link.yaml").symlink_to(root / "b.yaml")
    (root / "linkdir").symlink_to(root / "sub", target_is_directory=True)
    found = [p.relative_to(root).as_posix() for p in discover(root)]
    # localeCompare: punctuation first, then case-insensitive letters; dirs walked in place
    assert found == ["_x.json", "A.yml", "b.yaml", "c.JSON", "sub/a.yaml", "Sub2/z.Yaml"]
    assert discover(root / "d.txt") == [root / "d.txt"]  # an explicit file, any extension
    assert discover(root / "linkdir") == [root / "linkdir" / "a.yaml"]


def test_discovery_errors(tmp_path: Path) -> None:
    with pytest.raises(AgentGraphError) as missing:
        discover(tmp_path / "none")
    assert missing.value.code == "test-path-missing"
    with pytest.raises(AgentGraphError) as empty:
        discover(tmp_path)
    assert empty.value.code == "test-cases-empty"
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    with pytest.raises(AgentGraphError) as odd:
        discover(fifo)
    assert odd.value.code == "test-path-invalid"


def test_relative_paths_resolve_against_the_process_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "x.yaml").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert discover() == [tmp_path / "tests" / "x.yaml"]


# -- the shipped examples ------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_tests_pass(example: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ROOT / "examples" / example
    code, doc = agc_json(["test", str(base / "tests"), "-m", str(base / "provider.yaml")], capsys)
    assert code == 0, doc
    assert doc["state"] == "passed"
    assert doc["failed"] == 0
    assert doc["total"] == len(list((base / "tests").glob("*.yaml"))) > 0


def test_runner_api_on_an_example() -> None:
    base = ROOT / "examples" / "weekly-report"
    program = compile_provider(base / "provider.yaml")
    cases = [load_case(path) for path in discover(base / "tests")]
    results = run_cases(program, cases)
    assert [r.name for r in results] == [c.name for c in cases]
    assert all(r.passed for r in results)
    assert summary(results)["state"] == "passed"
    assert [r.to_dict() for r in run_tests(program, base / "tests")] == summary(results)["results"]


# -- the Node reference --------------------------------------------------------------------

REF_CLI = os.environ.get("AGC_REFERENCE_CLI")
REF_DIR = os.environ.get("AGC_REFERENCE_DIR")
needs_reference = pytest.mark.skipif(
    not (REF_CLI and REF_DIR and shutil.which("node")), reason="reference CLI not configured"
)


def _reference_providers() -> list[Path]:
    found = []
    if REF_DIR:
        found += sorted(p.parent for p in Path(REF_DIR, "examples").glob("*/tests"))
    # context-views uses 0.3.1 resource kinds the reference cannot load
    found += [ROOT / "examples" / x for x in EXAMPLES if x != "context-views"]
    return [p for p in found if (p / "provider.yaml").is_file()]


def reference_json(args: list[str], cwd: Path | None = None) -> tuple[int, Any]:
    assert REF_CLI is not None
    done = subprocess.run(
        ["node", REF_CLI, *args, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    return done.returncode, json.loads(done.stdout if done.stdout else done.stderr)


def _wrong(key: str, expect: dict[str, Any]) -> Any:
    """A value for ``key`` that differs from what the case expects (and is schema-valid)."""
    enums = {
        "statusCode": ["actionable", "waiting-user", "blocked", "complete", "error"],
        "availability": ["blocked", "requires-user", "immediate"],
        "gateResolution": ["user", "session-authority"],
        "outcome": ["completed", "partial", "failed"],
    }
    if key in enums:
        return next(v for v in enums[key] if v != expect.get(key))
    if key in ("alternativeNodes", "requiredResources", "recommendedResources"):
        return [*expect.get(key, []), "wrong.id"][::-1] or ["wrong.id"]
    if key == "diagnosticsInclude":
        return ["no-such-diagnostic"]
    return f"wrong-{key.lower()}"


def mutated_cases(source: Path, into: Path) -> int:
    """Every case of ``source/tests`` once as is and once per key with a wrong value."""
    count = 0
    for index, path in enumerate(discover(source / "tests")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        expect = document["expect"]
        variants = [("same", expect)]
        variants += [
            (key, {**expect, key: _wrong(key, expect)})
            for key in (*EVALUATION_KEYS, "diagnosticsInclude", *ROUTE_KEYS)
        ]
        for label, expect in variants:
            write_case(into / f"{index:02d}-{label}.yaml", {**document, "expect": expect})
            count += 1
    return count


@needs_reference
@pytest.mark.reference
@pytest.mark.parametrize("provider", fast_sample(_reference_providers(), 1), ids=lambda p: p.name)
def test_same_results_as_the_reference(provider: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = str(provider / "provider.yaml")
    ref_code, ref_doc = reference_json(["test", str(provider / "tests"), "-m", manifest])
    our_code, our_doc = agc_json(["test", str(provider / "tests"), "-m", manifest], capsys)
    assert ref_doc["state"] == "passed"
    assert (our_code, our_doc) == (ref_code, ref_doc)


@needs_reference
@pytest.mark.reference
@pytest.mark.parametrize("provider", fast_sample(_reference_providers(), 1), ids=lambda p: p.name)
def test_same_failure_texts_as_the_reference(
    provider: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    count = mutated_cases(provider, tmp_path / "cases")
    manifest = str(provider / "provider.yaml")
    ref_code, ref_doc = reference_json(["test", str(tmp_path / "cases"), "-m", manifest])
    our_code, our_doc = agc_json(["test", str(tmp_path / "cases"), "-m", manifest], capsys)
    assert ref_doc["total"] == count
    # the unchanged cases pass and every case with a wrong value fails
    assert [r["passed"] for r in ref_doc["results"]] == [
        r["path"].endswith("-same.yaml") for r in ref_doc["results"]
    ]
    assert (our_code, our_doc) == (ref_code, ref_doc)


@needs_reference
@pytest.mark.reference
def test_mini_provider_failure_texts_match_the_reference(
    mini: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = mini / "cases"
    for index, (state, key, right, wrong, _) in enumerate(ASSERTIONS):
        if right is not None:
            write_case(
                cases / f"{index:02d}-r.yaml", case_document(f"{index}r", state, {key: right})
            )
        write_case(cases / f"{index:02d}-w.yaml", case_document(f"{index}w", state, {key: wrong}))
    manifest = str(mini / "provider.yaml")
    ref = reference_json(["test", str(cases), "-m", manifest])
    ours = agc_json(["test", str(cases), "-m", manifest], capsys)
    assert ours == ref
    assert ref[1]["failed"] == len(ASSERTIONS)
