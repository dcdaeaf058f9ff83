"""Where a written value is: spans of scalars and keys in a line, and UTF-16 columns.

The compiler places a value by the line and column where it starts (1-based, code
points). An editor wants a range, in UTF-16 units by default; the end is found here by
reading the token as YAML writes it (plain, quoted, or a flow collection on one line).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Span:
    """A range on one line of a file: 0-based line, code-point columns [start, end)."""

    path: Path
    line: int
    start: int
    end: int

    def contains(self, path: Path, line: int, column: int) -> bool:
        return path == self.path and line == self.line and self.start <= column <= self.end


def lines_of(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


def token_end(line: str, start: int) -> int:
    """Where the YAML token starting at ``start`` of ``line`` ends (exclusive)."""
    if start >= len(line):
        return start
    first = line[start]
    if first == '"':
        index = start + 1
        while index < len(line):
            if line[index] == "\\":
                index += 2
                continue
            if line[index] == '"':
                return index + 1
            index += 1
        return len(line)
    if first == "'":
        index = start + 1
        while index < len(line):
            if line[index] == "'":
                if line[index + 1 : index + 2] == "'":
                    index += 2
                    continue
                return index + 1
            index += 1
        return len(line)
    if first in "[{":
        return _bracket_end(line, start)
    index = start
    while index < len(line):
        char = line[index]
        if char in ",]}":
            break
        if char == ":" and (index + 1 == len(line) or line[index + 1] in " \t,]}"):
            break
        if char == "#" and index > start and line[index - 1] in " \t":
            break
        index += 1
    return len(line[start:index].rstrip()) + start


def _bracket_end(line: str, start: int) -> int:
    depth = 0
    quote = ""
    for index in range(start, len(line)):
        char = line[index]
        if quote:
            if char == quote:
                quote = ""
            continue
        if char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(line.rstrip())


def span_at(path: Path, lines: list[str], line: int, column: int) -> Span:
    """The token's span at the compiler's 1-based ``line``/``column``."""
    row = max(line - 1, 0)
    text = lines[row] if row < len(lines) else ""
    start = min(max(column - 1, 0), len(text))
    end = token_end(text, start)
    if end <= start:  # nothing to underline there: the rest of the line, or one column
        end = max(len(text.rstrip()), start + 1)
    return Span(path, row, start, end)


def inner(span: Span, lines: list[str], part: str) -> Span:
    """The part of a scalar token that spells ``part`` (inside quotes, a segment of a key)."""
    text = lines[span.line][span.start : span.end] if span.line < len(lines) else ""
    found = text.find(part)
    if found < 0:
        return span
    return Span(span.path, span.line, span.start + found, span.start + found + len(part))


def to_utf16(line: str, column: int) -> int:
    """A code-point column of ``line`` in UTF-16 units."""
    head = line[:column]
    return column + sum(1 for char in head if ord(char) > 0xFFFF)


def from_utf16(line: str, units: int) -> int:
    """A UTF-16 column of ``line`` as a code-point column."""
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)
