"""Every picture explains itself (issue 27 item 14): a legend of the shapes it uses and,
with a state, of what fill, border and edge colours say (a Mermaid comment; a note in
DOT/SVG); DOT asks for fonts that hold CJK glyphs, since Flow labels are often Chinese."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_graph.pictures.style import FONTS, SHAPE_MEANINGS
from cli_support import run

ROOT = Path(__file__).resolve().parents[2]
WEEKLY = str(ROOT / "examples" / "weekly-report" / "provider.yaml")
DRAFTED = json.dumps({"report": {"digest": "sha256:1f"}})


def test_a_mermaid_picture_has_a_legend_of_what_it_draws(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["graph", "report", "-m", WEEKLY], capsys)
    assert code == 0
    legend = [line.strip() for line in out.splitlines() if line.strip().startswith("%% legend:")]
    assert legend == [
        f"%% legend: {SHAPE_MEANINGS[shape]}" for shape in ("action", "gate", "terminal")
    ]
    code, out, _ = run(["graph", "report", "-m", WEEKLY, "--facts", DRAFTED], capsys)
    with_state = [line for line in out.splitlines() if "%% legend:" in line]
    assert any("fill: the status each label names (completed, pending" in x for x in with_state)
    assert any("thick blue border: the primary route" in line for line in with_state)


def test_dot_draws_the_legend_as_a_note_and_names_cjk_fonts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["graph", "report", "-m", WEEKLY, "--format", "dot"], capsys)
    assert code == 0
    assert out.count(f'fontname="{FONTS}"') == 3  # graph, node, edge
    assert "Noto Sans CJK SC" in FONTS
    (note,) = [line for line in out.splitlines() if line.strip().startswith("legend__ [")]
    assert "shape=note" in note
    assert "diamond: a Gate (a user decides)" in note
    assert "{ rank=sink; legend__; }" in out


def test_a_flow_picture_names_its_own_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["flow", "graph", str(ROOT / "examples" / "flows" / "ship-release")], capsys)
    assert code == 0
    legend = " ".join(line for line in out.splitlines() if "%% legend:" in line)
    for shape in ("start", "finish", "fork", "call"):
        assert SHAPE_MEANINGS[shape] in legend


def test_a_gate_diamond_wraps_its_label_to_stay_near_its_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 27 item 14: a diamond is about twice its label's width, so the Gate's long
    description is wrapped (at spaces, never inside a word) in DOT and in Mermaid."""
    code, dot, _ = run(["graph", "report", "-m", WEEKLY, "--format", "dot"], capsys)
    assert code == 0
    (gate,) = [line for line in dot.splitlines() if "shape=diamond" in line]
    assert 'label="approve\\ngate · report.publish\\nApprove the draft for\\npublication"' in gate
    (box,) = [line for line in dot.splitlines() if 'label="publish\\n' in line]
    assert "Publish the approved report" in box  # other shapes keep their lines
    code, mermaid, _ = run(["graph", "report", "-m", WEEKLY], capsys)
    assert '{"approve<br/>gate · report.publish<br/>Approve the draft for<br/>publication"}' in (
        mermaid
    )


def test_diamond_lines_never_break_a_word() -> None:
    from agent_graph.pictures.style import DIAMOND_LINE, diamond_lines

    word = "x" * (DIAMOND_LINE + 5)
    assert diamond_lines([word, "a b", ""]) == [word, "a b", ""]
    wrapped = diamond_lines(["one two three four five six seven eight"])
    assert all(len(line) <= DIAMOND_LINE for line in wrapped)
    assert " ".join(wrapped) == "one two three four five six seven eight"
