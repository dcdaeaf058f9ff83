"""Colour in human output: only for terminals, never with NO_COLOR, forced by --color.

Colour is added to finished lines when they are written, so with it off (pipes, files,
test captures) every byte is what it was; ``--color always`` adds ANSI escapes to the
severity word, statuses and carets and changes nothing else.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from agent_graph.cli import colour
from cli_support import run

WEEKLY = str(Path(__file__).resolve().parents[2] / "examples/weekly-report/provider.yaml")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_auto_colours_only_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    token = colour.CHOICE.set("auto")
    try:
        assert colour.enabled(_Terminal())
        assert not colour.enabled(io.StringIO())
        monkeypatch.setenv("NO_COLOR", "1")
        assert not colour.enabled(_Terminal())
        monkeypatch.setenv("NO_COLOR", "")  # empty means unset (no-color.org)
        assert colour.enabled(_Terminal())
        monkeypatch.setenv("TERM", "dumb")
        assert not colour.enabled(_Terminal())
    finally:
        colour.CHOICE.reset(token)


def test_always_and_never_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    for choice, expected in (("always", True), ("never", False)):
        token = colour.CHOICE.set(choice)
        try:
            assert colour.enabled(_Terminal()) is expected
            assert colour.enabled(io.StringIO()) is expected
        finally:
            colour.CHOICE.reset(token)


@pytest.mark.parametrize("where", ["before", "after"])
def test_color_always_only_adds_escapes(where: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["evaluate", "report", "-m", WEEKLY]
    plain = run(args, capsys)
    forced = ["--color", "always", *args] if where == "before" else [*args, "--color", "always"]
    code, out, _err = run(forced, capsys)
    assert code == 0
    assert "\x1b[32mactionable\x1b[0m" in out  # State: actionable
    assert ANSI.sub("", out) == plain[1]
    assert run([*args, "--color", "never"], capsys) == plain
    assert run(args, capsys) == plain  # the next invocation starts from auto again


def test_errors_warnings_and_carets_are_coloured() -> None:
    lines = [
        "ERROR graph-missing: Provider p has no graph x",
        "WARNING outcome-key-unknown: …",
        "graphs/report.yaml:60:5: graph-flow-cycle: a cycle",
        "   60 |   - { from: publish, to: draft }",
        "      |     ^",
        "report/publish is blocked (a candidate)",
        "nothing to see",
    ]
    painted = [colour.paint_line(line) for line in lines]
    assert painted[0].startswith("\x1b[31m\x1b[1mERROR\x1b[0m graph-missing")
    assert painted[1].startswith("\x1b[33m\x1b[1mWARNING\x1b[0m")
    assert "\x1b[31mgraph-flow-cycle\x1b[0m" in painted[2]
    assert painted[3] == lines[3]
    assert painted[4].endswith("\x1b[31m\x1b[1m^\x1b[0m")
    assert "\x1b[35mblocked\x1b[0m" in painted[5]
    assert painted[6] == lines[6]
    assert [ANSI.sub("", p) for p in painted] == lines


def test_an_error_in_a_pipe_stays_plain(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["evaluate", "nope", "-m", WEEKLY], capsys)
    assert code == 1
    assert not ANSI.search(err)
    code, _out, err = run(["evaluate", "nope", "-m", WEEKLY, "--color", "always"], capsys)
    assert code == 1
    assert err.startswith("\x1b[31m\x1b[1mERROR\x1b[0m graph-missing")


def test_a_bad_color_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["evaluate", "report", "-m", WEEKLY, "--color", "sometimes"], capsys)
    assert code == 2
    assert "sometimes" in err
