"""Issue 27, errors that teach: a Flow Run record given to the Graph Run commands says
what it is in one line, and a source excerpt is a window around the caret."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from agent_graph import flow
from agent_graph.cli.render import EXCERPT_WIDTH, describe, window
from agent_graph.errors import Diagnostic
from agent_graph.flow.runtime.state import SCHEMA
from agent_graph.runs.document import FLOW_RECORD_SCHEMA
from cli_support import run

FLOW = """---
name: tiny
description: One command.
---

```mermaid
flowchart TD
  start((开始)) --> a[a]
  a -->|已执行| finish((结束))
```

## a

```执行自定义命令
{"command": "true"}
```

### 已执行

Ran.
"""


def test_the_runs_layer_names_the_flow_record_identity_the_runtime_writes() -> None:
    assert FLOW_RECORD_SCHEMA == SCHEMA


@pytest.mark.parametrize("command", ["status", "events"])
def test_a_flow_record_given_to_agc_run_is_named_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    package = tmp_path / "tiny"
    package.mkdir()
    (package / "FLOW.md").write_text(FLOW, encoding="utf-8")
    record = tmp_path / "r.json"
    assert flow.run(package, "t", state=record).state == "completed"

    code, out, err = run(["run", command, "--state", str(record)], capsys)
    assert code == 1
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 2, err  # the finding and the count, not one per schema finding
    assert "run-invalid" in lines[0]
    assert "is a Flow Run record (agent-graph.flow-run.v1), not a Graph Run" in lines[0]
    hint = lines[0].split("read it with: ", 1)[1]
    code, out, _ = run(shlex.split(hint)[1:], capsys)  # runs as printed
    assert code == 0
    assert "completed" in out

    code, out, err = run(["run", command, "--state", str(record), "--format", "json"], capsys)
    assert code == 1
    error = json.loads(out or err)["error"]
    assert error["code"] == "run-invalid"
    assert [d["detail"]["pointer"] for d in error["diagnostics"]] == ["/schema"]


def test_a_minified_document_is_shown_as_a_window_around_the_caret(tmp_path: Path) -> None:
    members = ", ".join(f'"key{n}": {n}' for n in range(600))
    source = tmp_path / "one-line.json"
    source.write_text("{" + members + "}", encoding="utf-8")
    target = members.index('"key300"') + 2  # 1-based column of the member, after "{"
    finding = Diagnostic("schema-invalid", "not allowed", path=source.name, line=1, column=target)
    _, excerpt, caret = describe(finding, [tmp_path])
    gutter = len("    1 | ")
    assert len(excerpt) <= gutter + EXCERPT_WIDTH + 2  # the window and its two ellipses
    assert excerpt[gutter] == "…"
    assert excerpt.endswith("…")
    assert excerpt[caret.index("^")] == '"'
    assert excerpt[caret.index("^") :].startswith('"key300"')


@pytest.mark.parametrize(
    ("length", "column"), [(10, 3), (500, 0), (500, 499), (500, 250), (500, 700)]
)
def test_the_window_keeps_the_caret_on_its_character(length: int, column: int) -> None:
    line = "".join(chr(ord("a") + n % 26) for n in range(length))
    excerpt, caret = window(line, column)
    assert len(excerpt) <= EXCERPT_WIDTH + 2
    if column < length:
        assert excerpt[caret] == line[column]
    else:
        assert caret >= len(excerpt.rstrip("…"))


WEEKLY = "examples/weekly-report/provider.yaml"
REPO_STATS = "examples/flows/repo-stats"


@pytest.mark.parametrize(
    "args",
    [
        ["resource", "materialize", "x", "--revision", "r", "--cache", "c", "--timeout-ms", "abc"],
        ["resource", "materialize", "x", "--revision", "r", "--cache", "c", "--timeout-ms", "0"],
        ["flow", "run", REPO_STATS, "--task", "t", "--state", "s.json", "--command-timeout", "x"],
        ["flow", "run", REPO_STATS, "--task", "t", "--state", "s.json", "--max-visits", "abc"],
        ["flow", "run", REPO_STATS, "--task", "t", "--state", "s.json", "--max-parallel", "0"],
        ["validate", "-m", WEEKLY, "--format", "xml"],
        ["graph", "-m", WEEKLY, "--format", "bad"],
        ["evaluate", "-m", WEEKLY, "--colour", "bad"],
        ["mcp", "config", "nope"],
    ],
    ids=lambda args: " ".join(args[:2] + args[-2:]),
)
def test_a_bad_option_value_exits_2_everywhere(
    args: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    args = [str(tmp_path / a) if a in ("c", "s.json") else a for a in args]
    if args[0] == "resource":
        args += ["-m", WEEKLY]
    code, out, err = run(args, capsys)
    assert code == 2, err
    assert out == ""
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (["validat"], "(Did you mean one of: 'validate', 'evaluate'?)"),
        (["buidl"], "Did you mean 'build'?"),
        (["help", "run", "recrod"], "Did you mean 'record'?"),
        (["help", "flwo"], "Did you mean 'flow'?"),
    ],
)
def test_a_mistyped_command_suggests_the_command(
    args: list[str], suggestion: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(args, capsys)
    assert code == 2
    assert out == ""
    assert err.rstrip().endswith(suggestion)


@pytest.mark.parametrize("words", [[], ["run"], ["run", "record"], ["flow", "run"], ["help"]])
def test_agc_help_prints_the_help_of_any_command(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["help", *words], capsys)
    assert code == 0
    _, expected, _ = run([*words, "--help"], capsys)
    assert out == expected
    assert out.startswith(f"Usage: agc {' '.join(words)}".rstrip())


def test_a_dotted_fact_key_is_a_warning_with_the_nested_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    facts = json.dumps({"report.digest": "sha256:1f", "a": {"b.c": 1}})
    for command in ("evaluate", "route"):
        code, out, err = run([command, "report", "-m", WEEKLY, "--facts", facts], capsys)
        assert code == 0
        warnings = [line for line in err.splitlines() if line.startswith("WARNING")]
        assert warnings == [
            "WARNING fact-key-dotted: Fact key 'report.digest' is one key with dots in it, "
            "not a path, and no condition reads it; write the nested form: "
            '{"report": {"digest": "…"}}',
            "WARNING fact-key-dotted: Fact key 'b.c' is one key with dots in it, not a path, "
            'and no condition reads it; write the nested form: {"a": {"b": {"c": "…"}}}',
        ]
        # the JSON document stays the reference's: no warning in it, none on stderr
        code, out, err = run(
            [command, "report", "-m", WEEKLY, "--facts", facts, "--format", "json"], capsys
        )
        assert code == 0
        assert "fact-key-dotted" not in out + err


def test_ir_dump_names_its_two_digests_and_refuses_a_missing_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ir_file = tmp_path / "p.agir"
    code, _, err = run(["ir", "build", "-m", WEEKLY, "-o", str(ir_file)], capsys)
    assert code == 0, err
    code, out, _ = run(["ir", "dump", str(ir_file), "--root", "examples/weekly-report"], capsys)
    assert code == 0
    first, second = out.splitlines()[:2]
    assert re.fullmatch(r"ir irDigest=sha256:[0-9a-f]{64} bytes=[0-9]+", first)
    assert re.fullmatch(
        r"program example\.weekly-report \S+ providerDigest=sha256:[0-9a-f]{64}", second
    )
    code, out, err = run(["ir", "dump", str(ir_file), "--root", str(tmp_path / "nope")], capsys)
    assert code == 2
    assert err == f"ERROR option-invalid: --root is not a directory: {tmp_path / 'nope'}\n"


def _next_command(out: str) -> list[str]:
    hints = [line for line in out.splitlines() if line.startswith("Next: agc explain ")]
    assert len(hints) == 1, out
    return shlex.split(hints[0].removeprefix("Next: "))[1:]


def test_a_blocked_evaluation_points_at_agc_explain_runnable_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    failed = json.dumps({"report/draft": "failed"})
    code, out, _ = run(["evaluate", "report", "-m", WEEKLY, "--outcomes", failed], capsys)
    assert code == 0
    assert "State: blocked" in out
    code, explained, _ = run(_next_command(out), capsys)
    assert code == 0
    assert "report/draft is failed" in explained

    state = str(tmp_path / "run.json")
    assert run(["run", "start", "report", "-m", WEEKLY, "--state", state], capsys)[0] == 0
    record = ["run", "record", "report/draft", "failed", "--state", state, "-m", WEEKLY]
    assert run(record, capsys)[0] == 0
    manifest = str(Path(WEEKLY).resolve())
    monkeypatch.chdir(tmp_path)  # the printed command holds absolute paths
    code, out, _ = run(["run", "status", "--state", state, "-m", manifest], capsys)
    assert code == 0
    assert "State: blocked" in out
    code, explained, _ = run(_next_command(out), capsys)
    assert code == 0
    assert "report/draft is failed" in explained


CASE = """schema: agent-graph.test.v1
name: the published report is complete
graph: report
entry: default
state:
  facts:
    report: {digest: sha256:1f, approved: true}
    publication: {url: u}
  outcomes:
    report/publsh: completed
expect:
  statusCode: complete
"""


def test_a_misspelled_outcome_key_is_named_by_test_explain_and_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.yaml").write_text(CASE, encoding="utf-8")
    code, out, _ = run(["test", str(tmp_path), "-m", WEEKLY], capsys)
    lines = out.splitlines()
    warning = (
        "  WARNING outcome-key-unknown: Outcome key 'report/publsh' names no node of graph "
        "report or of a graph it calls; it is ignored; did you mean report/publish?"
    )
    assert warning in lines
    assert lines[lines.index(warning) + 1] == f"    at {tmp_path / 't.yaml'}:10:20"
    code, out, _ = run(["test", str(tmp_path), "-m", WEEKLY, "--format", "json"], capsys)
    (result,) = json.loads(out)["results"]
    assert set(result) == {"name", "path", "passed", "failures"}  # the reference's result

    outcomes = json.dumps({"report/publsh": "completed"})
    for command in (["explain", "report"], ["graph", "report"]):
        code, _, err = run([*command, "-m", WEEKLY, "--outcomes", outcomes], capsys)
        assert code == 0
        assert "WARNING outcome-key-unknown: Outcome key 'report/publsh'" in err
        assert "did you mean report/publish?" in err


def test_help_lists_commands_in_workflow_order_and_global_options_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agent_graph.cli.app import COMMANDS, EXAMPLES, WORKFLOW

    assert sorted(WORKFLOW) == sorted([*COMMANDS, "help"]) == sorted(EXAMPLES)
    _, top, _ = run(["--help"], capsys)
    listed = [
        line.split()[0] for line in top.split("Commands:\n", 1)[1].splitlines() if line[2:3] != " "
    ]
    assert listed == list(WORKFLOW)
    assert "--manifest" in top
    for command in ("validate", "evaluate", "run", "flow"):
        _, text, _ = run([command, "--help"], capsys)
        assert "--manifest" not in text
        assert "Global options (agc --help): " in text
        assert f"Example:\n    {EXAMPLES[command]}\n" in text
    _, sub, _ = run(["run", "record", "--help"], capsys)
    assert "--manifest" not in sub
    assert "Global options (agc --help): -m, --skill, --registry, --format, --colour." in sub


def test_every_help_example_runs_as_printed(tmp_path: Path) -> None:
    """In one copy of the examples, in workflow order (import needs init's Provider)."""
    import shutil

    from agent_graph.cli.app import EXAMPLES, WORKFLOW
    from cli_support import run_bash

    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "examples", tmp_path / "examples", symlinks=True)
    shutil.copytree(root / "tests" / "legacy", tmp_path / "tests" / "legacy")
    for name in WORKFLOW:
        done = run_bash(EXAMPLES[name], tmp_path)
        assert done.returncode == 0, (name, done.stderr)


def test_a_dotted_key_deep_in_the_facts_is_found_without_recursion() -> None:
    from agent_graph.cli.evaluation_report import dotted_fact_warnings

    facts: dict[str, object] = {}
    inner = facts
    for _ in range(3000):  # deeper than Python's recursion limit
        inner["a"] = {}
        inner = inner["a"]  # type: ignore[assignment]
    inner["x.y"] = 1
    (warning,) = dotted_fact_warnings(facts)
    assert warning.startswith("Fact key 'x.y' is one key with dots in it")
    assert warning.endswith('{"x": {"y": "…"' + "}" * 3002)
