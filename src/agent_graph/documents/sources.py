"""Reading definition files into positioned documents.

``.json`` files (extension compared case-insensitively) are parsed with
``JSON.parse`` semantics, everything else as YAML 1.2 (``yaml12``); Markdown
resources carry a YAML frontmatter header. Every failure is an
:class:`AgentGraphError` with one :class:`Diagnostic` naming the file (by its
display path) and, when known, the line and column.

Deliberate differences from the reference, which reads with
``readFile(path, "utf8")``: a file over :data:`MAX_FILE_BYTES` is refused
(``file-too-large``); bytes that are not UTF-8, or text with a NUL character,
are ``parse-failed`` instead of being decoded with replacement characters; a
leading UTF-8 byte order mark is ignored in JSON too (npm ``yaml`` already
ignores it in YAML; ``JSON.parse`` would reject it). Markdown keeps the
reference's rule that the file must begin with ``---``, so a BOM there is
``frontmatter-missing`` (the message names the byte order mark; a hint in the detail).

The source maps of files read here are :class:`TextSourceMap` s: they keep the text,
so the position of a member's *key* (where an unknown member is reported) can be
found when it is needed, at no cost for files that are valid.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import Final

from agent_graph import codes
from agent_graph.documents.files import MAX_FILE_BYTES, read_text
from agent_graph.documents.files import file_error as _fail
from agent_graph.documents.json_text import JsonError, parse_json
from agent_graph.documents.sourcemap import Document, ParseError, SourceMap, join_pointer

__all__ = [
    "MAX_FILE_BYTES",
    "JsonError",
    "TextSourceMap",
    "parse_frontmatter",
    "parse_json",
    "read_markdown",
    "read_structured",
    "read_text",
]

_BOM: Final = "\ufeff"

# Line breaks as each parser counts lines: JSON.parse-style positions count LF only;
# LibYAML also breaks at CR, CRLF, NEL, LS and PS.
_JSON_BREAKS: Final = re.compile("\n")
_YAML_BREAKS: Final = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# What may come right before a plain (unquoted) YAML key, and right after its ``:``.
_PLAIN_BEFORE: Final = frozenset(" \t\r\n{,?")
_PLAIN_AFTER: Final = frozenset(" \t\r\n,}]")


class TextSourceMap(SourceMap):
    """A :class:`SourceMap` that also has the text it was parsed from.

    The loaders place values only; :meth:`key_position` finds where a member's key
    is written (between its object's start and its value's start), for diagnostics
    about the key itself. Line starts are computed on first use.
    """

    __slots__ = ("_starts", "is_json", "text")

    def __init__(
        self,
        positions: dict[str, tuple[int, int]] | None = None,
        *,
        pending: Callable[[], dict[str, tuple[int, int]]] | None = None,
        text: str = "",
        is_json: bool = False,
    ) -> None:
        super().__init__(positions, pending=pending)
        self.text = text
        self.is_json = is_json
        self._starts: list[int] | None = None

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, TextSourceMap)
        return (self.positions, self.text, self.is_json) == (
            other.positions,
            other.text,
            other.is_json,
        )

    def __repr__(self) -> str:
        return f"TextSourceMap(positions={self.positions!r}, is_json={self.is_json!r})"

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            breaks = _JSON_BREAKS if self.is_json else _YAML_BREAKS
            self._starts = [0, *(m.end() for m in breaks.finditer(self.text))]
        return self._starts

    def _offset(self, where: tuple[int, int]) -> int | None:
        starts = self._line_starts()
        line, column = where
        if not 1 <= line <= len(starts) or column < 1:
            return None
        return starts[line - 1] + column - 1

    def _position(self, offset: int) -> tuple[int, int]:
        starts = self._line_starts()
        row = bisect_right(starts, offset)
        return row, offset - starts[row - 1] + 1

    def scalar_text(self, where: tuple[int, int]) -> str | None:
        """A plain scalar as written at ``where``: to the end of its line, without a
        trailing comment or a flow collection's punctuation."""
        start = self._offset(where)
        if start is None:
            return None
        end = self.text.find("\n", start)
        token = self.text[start : end if end >= 0 else len(self.text)]
        return token.split(" #")[0].strip().rstrip(",}] ") or None

    def key_position(self, parent: str, key: str) -> tuple[int, int] | None:
        """Line and column of ``key`` as written in the object at pointer ``parent``.

        ``None`` when the key cannot be found as plain, single- or double-quoted text
        right before its value (an escaped key, a value without a position …).
        """
        start = self.positions.get(parent)
        value = self.positions.get(join_pointer(parent, key))
        if start is None or value is None:
            return None
        low, high = self._offset(start), self._offset(value)
        if low is None or high is None or low > high:
            return None
        forms = [(_json_quoted(key), True)]
        if not self.is_json:
            forms += [("'" + key.replace("'", "''") + "'", True), (key, False)]
        best = -1
        for form, quoted in forms:
            found = self._last_key(form, quoted, low, high)
            best = max(best, found)
        return self._position(best) if best >= 0 else None

    def _last_key(self, form: str, quoted: bool, low: int, high: int) -> int:
        text = self.text
        end = high
        while form:
            index = text.rfind(form, low, end)
            if index < 0:
                return -1
            end = index
            after = index + len(form)
            while after < high and text[after] in " \t":
                after += 1
            if after >= high or text[after] != ":":
                continue
            if not quoted:
                if index > 0 and text[index - 1] not in _PLAIN_BEFORE:
                    continue
                if after + 1 < len(text) and text[after + 1] not in _PLAIN_AFTER:
                    continue
            if not self.is_json and self._in_comment(index):
                continue
            return index
        return -1

    def _in_comment(self, index: int) -> bool:
        """True when a YAML comment starts before ``index`` on its line (roughly)."""
        starts = self._line_starts()
        line_start = starts[bisect_right(starts, index) - 1]
        before = self.text[line_start:index]
        return before.lstrip().startswith("#") or " #" in before or "\t#" in before


def _json_quoted(key: str) -> str:
    """``key`` as JSON (and YAML double-quoted) text writes it without escapes."""
    return json.dumps(key, ensure_ascii=False)


def _with_text(source: SourceMap, text: str, *, is_json: bool) -> TextSourceMap:
    positions, pending = source.share()
    return TextSourceMap(positions, pending=pending, text=text, is_json=is_json)


def read_structured(abs_path: Path, *, display: str) -> Document:
    """Read a ``.json`` (JSON) or any other (YAML 1.2) definition file with positions."""
    text = read_text(abs_path, display=display)
    if text.startswith(_BOM):
        text = text[1:]
    is_json = abs_path.suffix.lower() == ".json"
    try:
        if is_json:
            value, source = parse_json(text)
        else:
            from agent_graph.documents.yaml12 import parse_yaml

            value, source = parse_yaml(text)
    except ParseError as error:
        raise _fail(
            codes.PARSE_FAILED,
            f"Cannot parse {abs_path}: {error}",
            display,
            error.line,
            error.column,
        ) from None
    return Document(value, _with_text(source, text, is_json=is_json), abs_path)


def parse_frontmatter(text: str, abs_path: Path, *, display: str) -> Document:
    """Split Markdown into its YAML frontmatter (the document value) and body.

    The text must begin with ``---`` and a line break; CRLF becomes LF; the header
    ends at the first ``\\n---\\n`` from index 4 on and must be a mapping. Header
    positions are file lines (the header starts on line 2), except that the
    header as a whole (pointer ``""``) is placed on the opening ``---`` (line 1,
    column 1), where a problem with the frontmatter itself is best shown.
    ``Document.body`` is the text after the closing delimiter line.
    """
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        detail = {}
        message = f"Markdown resource requires YAML frontmatter: {abs_path}"
        if text.startswith(_BOM):
            detail["hint"] = "the file starts with a UTF-8 byte order mark; save it without one"
            if text[1:].startswith(("---\n", "---\r\n")):
                message += (
                    " (it starts with an invisible UTF-8 byte order mark, U+FEFF, before"
                    " the opening ---; save the file without one)"
                )
        raise _fail(codes.FRONTMATTER_MISSING, message, display, 1, 1, detail)
    from agent_graph.documents.yaml12 import YamlError, parse_yaml

    normalized = text.replace("\r\n", "\n")
    end = normalized.find("\n---\n", 4)
    if end == -1:
        raise _fail(
            codes.FRONTMATTER_INVALID,
            f"Markdown frontmatter is not closed: {abs_path}",
            display,
            1,
            1,
        )
    try:
        value, source = parse_yaml(normalized[4:end], line_offset=1)
    except YamlError as error:
        raise _fail(
            codes.FRONTMATTER_INVALID,
            f"Markdown frontmatter of {abs_path} is not valid YAML: {error}",
            display,
            error.line,
            error.column,
        ) from None
    if not isinstance(value, dict):
        line, column = source.locate("") or (2, 1)
        raise _fail(
            codes.FRONTMATTER_INVALID,
            f"Markdown frontmatter must be an object: {abs_path}",
            display,
            line,
            column,
        )
    source.positions[""] = (1, 1)
    keyed = _with_text(source, normalized, is_json=False)
    return Document(value, keyed, abs_path, normalized[end + 5 :])


def read_markdown(abs_path: Path, *, display: str) -> Document:
    """Read a Markdown file and parse its frontmatter (see :func:`parse_frontmatter`)."""
    return parse_frontmatter(read_text(abs_path, display=display), abs_path, display=display)
