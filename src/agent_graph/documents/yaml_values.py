"""YAML 1.2 core-schema values for the LibYAML event builder (:mod:`.yaml12`): implicit
typing of plain scalars, the JS number model, keys as JS strings, and the pointer map
made from a document's position shadow."""

from __future__ import annotations

import math
import re
from typing import Any, Final

from agent_graph.canonical import js_number, to_js_number
from agent_graph.documents.sourcemap import Positions, escape_token

__all__ = [
    "BOOL_RE",
    "FLOAT_RE",
    "INT_RE",
    "LINE",
    "NULL_RE",
    "NUMBER_START",
    "PLAIN_SPECIAL",
    "core_float",
    "core_int",
    "key_text",
    "pointer_map",
    "resolve_plain",
]

# The YAML 1.2 core schema, as npm `yaml` spells it.
NULL_RE: Final = re.compile(r"(?:~|null|Null|NULL)?")
BOOL_RE: Final = re.compile(r"true|True|TRUE|false|False|FALSE")
INT_RE: Final = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
FLOAT_RE: Final = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
NUMBER_START: Final = frozenset("-+.0123456789")
#: First characters of every plain scalar that may resolve to something other than a
#: string (null, a bool, a number); any other plain scalar is a string as written.
PLAIN_SPECIAL: Final = frozenset("~nNtTfF") | NUMBER_START


def _decimal_int(text: str) -> int | float:
    # int() refuses more than 4300 digits; such numbers are doubles in JS anyway.
    if len(text) > 40:
        return to_js_number(float(text))
    number = int(text, 10)
    if number == 0 and text.startswith("-"):
        return -0.0  # JS parses "-0" to negative zero
    return to_js_number(number)


def core_int(text: str) -> int | float:
    if text.startswith("0o"):
        return to_js_number(int(text[2:], 8))
    if text.startswith("0x"):
        return to_js_number(int(text[2:], 16))
    return _decimal_int(text)


def core_float(text: str) -> int | float:
    lower = text.lower()
    if lower.endswith(".inf"):
        return -math.inf if lower.startswith("-") else math.inf
    if lower == ".nan":
        return math.nan
    return to_js_number(float(text))


def resolve_plain(text: str) -> Any:
    """Implicit typing of an untagged plain scalar (YAML 1.2 core schema)."""
    if not text:
        return None
    first = text[0]
    if first in "~nN" and NULL_RE.fullmatch(text):
        return None
    if first in "tTfF" and BOOL_RE.fullmatch(text):
        return first in "tT"
    if first in NUMBER_START:
        if INT_RE.fullmatch(text):
            return core_int(text)
        if FLOAT_RE.fullmatch(text):
            return core_float(text)
    return text


def key_text(value: Any) -> str:
    """A scalar mapping key as a JS object key: its JS string form."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return js_number(value)


#: A position in a shadow is one int, ``line * LINE + column`` (both 1-based): an int
#: costs no tuple and nothing for the garbage collector to track (a document has a
#: position for every value, so a 10,000-node graph has hundreds of thousands).
LINE: Final = 1 << 32


def pointer_map(root: Any, offset: int) -> Positions:
    """The ``pointer -> (line, column)`` map of a document from its root's shadow, in
    document order; an empty document is placed at its start.

    A shadow records where a collection and each of its children start, without spelling
    any pointer: ``(position, False, *children)`` for a sequence, ``(position, True, key,
    child, key, child, ...)`` for a mapping, where a position is an int (see
    :data:`LINE`; None without a mark) and a child is a position (a scalar: nothing
    below it is placed) or the shadow of a nested collection.
    """
    positions: Positions = {}

    def place(pointer: str, entry: Any) -> None:
        if entry is None or type(entry) is int:  # a value placed, nothing below
            if entry is not None:
                positions[pointer] = divmod(entry, LINE)
            return
        if entry[0] is not None:
            positions[pointer] = divmod(entry[0], LINE)
        if entry[1]:  # a mapping: key, child, key, child, ...
            items = iter(entry)
            next(items)
            next(items)
            for key, child in zip(items, items, strict=True):
                place(pointer + "/" + escape_token(key), child)
        else:
            for index in range(2, len(entry)):
                place(pointer + "/" + str(index - 2), entry[index])

    place("", root)
    if not positions:  # an empty document: None, "at" the start
        positions[""] = (offset, 1)
    return positions
