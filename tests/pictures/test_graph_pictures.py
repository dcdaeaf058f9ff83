"""``agc graph`` and ``agc flow graph``: Mermaid that parses, DOT that Graphviz reads, SVG.

Every graph of every shipped example Provider is drawn alone and with the state of each
of its graph tests; every shipped Flow alone and with a Run made here (the ``script:``
Agent adapter, no model). Mermaid output must pass ``mermaid_syntax.check`` (our grammar
of the flowchart subset we write); DOT must be read by Graphviz ``dot`` and SVG must
render. Graphviz is installed by ``.ci/run``; without it locally those checks skip
(under ``CI`` they fail instead). Bad input gets a coded error, never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_support import run
from mermaid_syntax import MermaidError, check
from picture_support import (
    EXAMPLES,
    ExampleState,
    example_providers,
    example_states,
    program,
    state_options,
)

STATES = example_states()
FLOWS = sorted(p.parent.name for p in (EXAMPLES / "flows").glob("*/FLOW.md"))
WEEKLY = str(EXAMPLES / "weekly-report" / "provider.yaml")


def _dot() -> str:
    found = shutil.which("dot")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("Graphviz dot is missing in CI: .ci/run installs it")
        pytest.skip("Graphviz dot is not installed")
    return found


def _dot_reads(text: str) -> None:
    done = subprocess.run(
        [_dot(), "-Tcanon"], input=text.encode(), capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b"", done.stderr.decode()  # no warnings either


def _graph(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run(["graph", *args], capsys)
    assert (code, err) == (0, "")
    return out


def _graphs(example: str) -> list[str]:
    return [g.id for g in program(example).ir.graphs]


CASES = [(e, g) for e in example_providers() for g in _graphs(e)]


@pytest.mark.parametrize(("example", "graph"), CASES, ids=[f"{e}-{g}" for e, g in CASES])
def test_every_example_graph_draws(
    example: str, graph: str, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = str(EXAMPLES / example / "provider.yaml")
    entries = [name for name, _ in program(example).graph(graph).entrypoints]
    for entry in entries:
        mermaid = _graph(capsys, graph, "--entry", entry, "-m", manifest)
        check(mermaid)
        assert "classDef" not in mermaid  # no overlay without state
        _dot_reads(_graph(capsys, graph, "--entry", entry, "-m", manifest, "--format", "dot"))


@pytest.mark.parametrize("example", STATES, ids=[s.id for s in STATES])
def test_every_example_state_draws_its_overlay(
    example: ExampleState, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [example.graph, "--entry", example.entry, *state_options(example.state)]
    args += ["-m", str(example.manifest)]
    mermaid = _graph(capsys, *args)
    check(mermaid)
    evaluation = program(example.example).evaluate(example.graph, example.entry, example.state)
    if evaluation.primary is not None:
        assert "▶ next (primary route" in mermaid
        assert "class " in mermaid
        assert " primary" in mermaid
    check(_graph(capsys, *args, "--expand"))
    dot = _graph(capsys, *args, "--format", "dot")
    _dot_reads(dot)
    _dot_reads(_graph(capsys, *args, "--expand", "--format", "dot"))
    assert "penwidth=4" in dot if evaluation.primary is not None else True


def test_svg_renders(capsys: pytest.CaptureFixture[str]) -> None:
    _dot()
    out = _graph(capsys, "report", "-m", WEEKLY, "--facts", "{}", "--format", "svg")
    assert out.startswith("<?xml")
    assert "<svg" in out
    assert "▶ next" in out


def _flow(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run(["flow", "graph", *args], capsys)
    assert (code, err) == (0, "")
    return out


@pytest.mark.parametrize("flow", FLOWS)
def test_every_example_flow_draws(flow: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "flows" / flow)
    check(_flow(capsys, path))
    _dot_reads(_flow(capsys, path, "--format", "dot"))


def test_a_parent_flow_links_its_children(capsys: pytest.CaptureFixture[str]) -> None:
    out = _flow(capsys, str(EXAMPLES / "flows" / "ship-release"))
    assert 'subgraph c0["Flow repo-stats"]' in out
    assert 'subgraph c1["Flow preflight"]' in out
    assert out.count('-.->|"runs"|') == 2
    assert '{{"checks<br/>parallel"}}' in out  # the fork inside preflight
    assert "joins checks" in out


@pytest.fixture
def failed_run(tmp_path: Path) -> Path:
    """A Run of draft-review that went draft → measure → review → revise → measure and
    failed at the second review (the scripted Agent ran out of answers)."""
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        '{"result":"drafted","content":"a draft"}\n'
        '{"result":"revise","content":"too long"}\n'
        '{"result":"revised","content":"shorter"}\n',
        encoding="utf-8",
    )
    (tmp_path / "DRAFT.md").write_text("A short draft.\n", encoding="utf-8")
    state = tmp_path / "run.json"
    subprocess.run(
        [
            "agc", "flow", "run", str(EXAMPLES / "flows" / "draft-review"),
            "--task", "a note", "--state", str(state), "--cwd", str(tmp_path),
            "--agent", f"script:{answers}",
        ],
        capture_output=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(state.read_text(encoding="utf-8"))["status"] == "failed"
    return state


def test_a_run_overlays_its_visits(failed_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flow = str(EXAMPLES / "flows" / "draft-review")
    out = _flow(capsys, flow, "--state", str(failed_run))
    check(out)
    assert "Run run-" in out
    assert ": failed" in out
    assert "2 runs · last: revise<br/>▶ failed (agent_execution)" in out
    assert "1 run · last: drafted" in out
    assert "1 run · last: revised" in out
    assert "2 runs · last: 已执行" in out
    _dot_reads(_flow(capsys, flow, "--state", str(failed_run), "--format", "dot"))


def test_a_run_of_another_flow_is_refused(
    failed_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["flow", "graph", str(EXAMPLES / "flows" / "repo-stats"), "--state", str(failed_run)],
        capsys,
    )
    assert code == 1
    assert out == ""
    assert "run-flow-mismatch" in err
    assert "draft-review" in err


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["nope", "-m", WEEKLY], "graph-missing"),
        (["report", "--entry", "nope", "-m", WEEKLY], "entry-missing"),
        (["report", "--outcomes", '{"report/draft":"done"}', "-m", WEEKLY], "outcome-invalid"),
        (["report", "--facts", "{", "-m", WEEKLY], "json-invalid"),
        (["report", "-m", str(EXAMPLES / "nope.yaml")], "file-missing"),
    ],
)
def test_bad_input_is_a_coded_error(
    args: list[str], code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(["graph", *args], capsys)
    assert status == 1
    assert out == ""
    assert code in err
    assert "Traceback" not in err


def test_an_unknown_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["graph", "report", "-m", WEEKLY, "--format", "png"], capsys)
    assert status == 2
    assert out == ""
    assert "format-invalid" in err
    assert "mermaid, dot or svg" in err


def test_svg_without_graphviz_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGC_GRAPHVIZ_DOT", "no-such-dot-program")
    status, out, err = run(["graph", "report", "-m", WEEKLY, "--format", "svg"], capsys)
    assert status == 1
    assert out == ""
    assert "graphviz-missing" in err
    assert "apt-get install graphviz" in err
    # the other formats need nothing
    assert run(["graph", "report", "-m", WEEKLY, "--format", "dot"], capsys)[0] == 0


def test_graphviz_failing_is_a_coded_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: syntax error in line 1' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("AGC_GRAPHVIZ_DOT", str(fake))
    status, out, err = run(["graph", "report", "-m", WEEKLY, "--format", "svg"], capsys)
    assert status == 1
    assert out == ""
    assert "graphviz-failed" in err
    assert "exit code 3" in err
    assert "syntax error" in err


def test_labels_cannot_break_the_syntax() -> None:
    from agent_graph.pictures import dot, mermaid
    from agent_graph.pictures.model import Edge, Node, Picture

    evil = 'a"b]<br>c|d#e;`f\\g\n%%{init}%%'
    picture = Picture(title=evil, overlay=True, notes=[evil])
    picture.add(Node("n0", [evil, "end"], "action", status="failed", emphasis="primary"))
    picture.add(Node("n1", ["end"], "gate"))
    picture.edges.append(Edge("n0", "n1", evil, "repeat", True))
    check(mermaid.render(picture))
    if shutil.which("dot"):
        _dot_reads(dot.render(picture))
    with pytest.raises(MermaidError):
        check('flowchart TD\n  n0("a"b")\n')


def test_a_run_of_an_older_version_is_refused(
    failed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy" / "draft-review"
    shutil.copytree(EXAMPLES / "flows" / "draft-review", copy)
    assert run(["flow", "graph", str(copy), "--state", str(failed_run)], capsys)[0] == 0
    flow_md = copy / "FLOW.md"
    flow_md.write_text(flow_md.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    code, out, err = run(["flow", "graph", str(copy), "--state", str(failed_run)], capsys)
    assert code == 1
    assert out == ""
    assert "run-fingerprint-mismatch" in err


def test_graphviz_taking_too_long_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_graph.pictures import svg

    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("AGC_GRAPHVIZ_DOT", str(fake))
    monkeypatch.setattr(svg, "TIMEOUT_S", 0.5)
    status, out, err = run(["graph", "report", "-m", WEEKLY, "--format", "svg"], capsys)
    assert status == 1
    assert out == ""
    assert "graphviz-timeout" in err
