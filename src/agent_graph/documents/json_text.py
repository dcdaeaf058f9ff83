"""JSON with a position for every value, read as ``JSON.parse`` reads it.

Its own module so that reading a JSON file (a Run, a bundle manifest, state on the
command line) never imports the YAML machinery.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable
from json import JSONDecodeError
from json import decoder as _json_decoder
from pathlib import Path

from agent_graph.documents.files import read_bytes
from agent_graph.documents.sourcemap import MAX_DEPTH, ParseError, SourceMap, escape_token
from agent_graph.documents.surrogates import unpaired_surrogate
from agent_graph.errors import AgentGraphError
from agent_graph.js_numbers import to_js_number

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["JsonError", "parse_json", "read_json"]


class JsonError(ParseError):
    """The text is not JSON as ``JSON.parse`` accepts it."""


# ---------------------------------------------------------------------------
# JSON with positions

_WS: Final = re.compile(r"[ \t\n\r]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_NEWLINE: Final = re.compile("\n")
# The C string decoder behind json.loads (exact JSON string rules); typeshed omits it.
_scanstring: Final[Callable[[str, int, bool], tuple[str, int]]] = _json_decoder.scanstring  # type: ignore[attr-defined]
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")


def _surrogate_message(found: str) -> str:
    if found.startswith("U+"):
        return f"unpaired surrogate {found} (text that was not UTF-8?): text must be Unicode"
    return f"unpaired surrogate escape {found}: text must be Unicode"


def _skip_ws(text: str, index: int) -> int:
    return _WS.match(text, index).end()  # type: ignore[union-attr]  # `*` always matches


class _JsonScanner:
    """Iterative JSON parser: an explicit stack instead of recursion, one pass."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [m.start() for m in _NEWLINE.finditer(text)]

    def position(self, index: int) -> tuple[int, int]:
        row = bisect_right(self.newlines, index - 1)
        start = self.newlines[row - 1] + 1 if row else 0
        return row + 1, index - start + 1

    def error(self, message: str, index: int) -> JsonError:
        line, column = self.position(index)
        return JsonError(message, line, column)

    def unexpected(self, index: int) -> JsonError:
        if index >= len(self.text):
            return self.error("unexpected end of JSON input", index)
        return self.error(f"unexpected character {self.text[index]!r}", index)

    def string(self, index: int) -> tuple[str, int]:
        """Decode the string whose opening quote is at ``index - 1``."""
        try:
            value, end = _scanstring(self.text, index, True)
        except JSONDecodeError as error:
            raise self.error(error.msg.removesuffix(" at").lower(), error.pos) from None
        if _SURROGATE.search(value) is not None:
            found = unpaired_surrogate(self.text, index, end - 1) or (index - 1, "in a string")
            raise self.error(_surrogate_message(found[1]), found[0])
        return value, end

    def key(self, index: int) -> tuple[str, int]:
        """Read ``"name"`` and the ``:`` after it; return the name and where its value starts."""
        text = self.text
        if index >= len(text):
            raise self.unexpected(index)
        if text[index] != '"':
            if text[index] == "}":
                raise self.error("trailing comma before '}'", index)
            raise self.error(
                f"expected a double-quoted property name, found {text[index]!r}", index
            )
        key, index = self.string(index + 1)
        index = _skip_ws(text, index)
        if index >= len(text):
            raise self.unexpected(index)
        if text[index] != ":":
            raise self.error(f"expected ':' after property name, found {text[index]!r}", index)
        return key, _skip_ws(text, index + 1)

    def parse(self) -> tuple[Any, SourceMap]:
        text = self.text
        end = len(text)
        ws = _WS.match
        positions: dict[str, tuple[int, int]] = {}
        # Frames: [container, pointer, is_object, pending key].
        stack: list[list[Any]] = []
        pointer = ""
        i = ws(text, 0).end()  # type: ignore[union-attr]
        while True:
            # A value starts at i.
            if i >= end:
                raise self.unexpected(i)
            positions[pointer] = self.position(i)
            c = text[i]
            value: Any
            if c == "{" or c == "[":
                if len(stack) >= MAX_DEPTH:
                    raise self.error(f"values are nested more than {MAX_DEPTH} levels deep", i)
                is_object = c == "{"
                i = ws(text, i + 1).end()  # type: ignore[union-attr]
                if i < end and text[i] == ("}" if is_object else "]"):
                    value = {} if is_object else []
                    i += 1
                else:
                    if is_object:
                        key, i = self.key(i)
                        stack.append([{}, pointer, True, key])
                        pointer = pointer + "/" + escape_token(key)
                    else:
                        stack.append([[], pointer, False, None])
                        pointer += "/0"
                    continue
            elif c == '"':
                value, i = self.string(i + 1)
            elif c == "t" and text.startswith("true", i):
                value, i = True, i + 4
            elif c == "f" and text.startswith("false", i):
                value, i = False, i + 5
            elif c == "n" and text.startswith("null", i):
                value, i = None, i + 4
            elif c == "-" or "0" <= c <= "9":
                match = _NUMBER.match(text, i)
                if match is None:
                    raise self.error("invalid number", i)
                number = match.group()
                if match.group(1) is None and match.group(2) is None:
                    # int() refuses > 4300 digits; such values are doubles in JS.
                    value = to_js_number(int(number) if len(number) < 40 else float(number))
                    if value == 0 and number.startswith("-"):
                        value = -0.0  # JSON.parse keeps negative zero
                else:
                    value = to_js_number(float(number))
                i = match.end()
            else:
                raise self.unexpected(i)

            # The value is complete: attach it, then read what follows it.
            while True:
                if not stack:
                    i = ws(text, i).end()  # type: ignore[union-attr]
                    if i < end:
                        raise self.error(
                            f"unexpected character {text[i]!r} after the JSON value", i
                        )
                    return value, SourceMap(positions)
                frame = stack[-1]
                container = frame[0]
                if frame[2]:
                    container[frame[3]] = value  # JSON.parse: a repeated key's last value wins
                else:
                    container.append(value)
                i = ws(text, i).end()  # type: ignore[union-attr]
                c = text[i] if i < end else ""
                if c == ",":
                    i = ws(text, i + 1).end()  # type: ignore[union-attr]
                    if frame[2]:
                        key, i = self.key(i)
                        frame[3] = key
                        pointer = frame[1] + "/" + escape_token(key)
                    else:
                        if i < end and text[i] == "]":
                            raise self.error("trailing comma before ']'", i)
                        pointer = frame[1] + "/" + str(len(container))
                    break
                if c == ("}" if frame[2] else "]"):
                    stack.pop()
                    value = container
                    i += 1
                    continue
                if not c:
                    raise self.unexpected(i)
                closer = "'}'" if frame[2] else "']'"
                raise self.error(f"expected ',' or {closer}, found {c!r}", i)


def parse_json(text: str) -> tuple[Any, SourceMap]:
    """Parse JSON as ``JSON.parse`` does, keeping the position of every value.

    Numbers follow the JS number model (``yaml12.to_js_number``); a repeated key
    keeps its last value (in the first one's place; positions recorded inside
    the value it replaced stay in the map, unreferenced); ``NaN``/``Infinity``,
    comments, trailing commas and a byte order mark are errors. Nesting deeper
    than ``MAX_DEPTH`` is refused, and so is an unpaired surrogate (an escape
    such as ``"\\ud800"`` or the character itself), at its position: it is not
    Unicode text, so nothing could print or store it. Raises :class:`JsonError`.
    """
    return _JsonScanner(text).parse()


def read_json(path: Path) -> Any:
    """Strict JSON (``JSON.parse`` rules: no NaN/Infinity), without positions.

    Read through :func:`~agent_graph.documents.files.read_bytes` (never blocks, capped);
    raises ValueError or OSError with a one-line reason. An unpaired surrogate escape
    is refused with its position (:class:`JsonError`, a ValueError), as in :func:`parse_json`.
    """
    try:
        data = read_bytes(path, display=str(path))
    except AgentGraphError as exc:
        raise OSError(exc.message) from None
    text = data.decode("utf-8").removeprefix("\ufeff")
    if "\0" in text:
        raise ValueError("NUL character")
    value = json.loads(text, parse_constant=_no_constant)
    found = unpaired_surrogate(text)
    if found is not None:
        line, column = _JsonScanner(text).position(found[0])
        raise JsonError(_surrogate_message(found[1]), line, column)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
