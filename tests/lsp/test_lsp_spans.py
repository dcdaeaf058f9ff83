"""Ranges of written tokens and UTF-16 columns (no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_graph.lsp.spans import from_utf16, span_at, to_utf16, token_end


@pytest.mark.parametrize(
    ("line", "start", "token"),
    [
        ("  - { from: a, to: dnoe }", 19, "dnoe"),
        ("    action: actions/x.yaml # why", 12, "actions/x.yaml"),
        ('  to: "quoted \\" value", x', 6, '"quoted \\" value"'),
        ("  to: 'it''s'", 6, "'it''s'"),
        ("  - { from: a, to: b }", 4, "{ from: a, to: b }"),
        ("  train/ship>ship/tag: completed", 2, "train/ship>ship/tag"),
    ],
)
def test_token_end(line: str, start: int, token: str) -> None:
    assert line[start : token_end(line, start)] == token


def test_a_position_past_the_text_still_gets_a_range() -> None:
    span = span_at(Path("f"), ["abc"], 1, 10)
    assert (span.line, span.start, span.end) == (0, 3, 4)


def test_utf16_columns_count_astral_characters_twice() -> None:
    line = "a😀b 开始"
    assert to_utf16(line, 2) == 3
    assert from_utf16(line, 3) == 2
    assert to_utf16(line, len(line)) == len(line) + 1
    assert from_utf16(line, to_utf16(line, 5)) == 5
