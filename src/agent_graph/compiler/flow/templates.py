"""JSON action blocks with ``{outcome}`` and ``{ref.outcome}`` placeholders (C.2, described
in docs/flow-runs.md §Execution).

"Lex, then parse": a lexer walks the block tracking JSON strings (backslash escapes
honoured) and finds every placeholder, in a string or standing alone; standalone ones
are swapped for same-length stand-ins (``null`` for a misplaced ``{outcome}``, a
unique string for ``{ref.outcome}``) so the JSON parser's positions are still the
block's, and the parsed value is walked once to locate every slot. The same lexer
tracks object keys, so a repeated key (which ``JSON.parse`` would silently resolve) is
refused where it stands.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

from ...canonical import to_js_number
from ...documents.json_text import JsonError, parse_json, unpaired_surrogate
from ...documents.sourcemap import MAX_DEPTH

PLACEHOLDER: Final = re.compile(r"\{(?:([A-Za-z][A-Za-z0-9_-]*)\.)?outcome\}")
OUTCOME: Final = "{outcome}"
_WS: Final = " \t\r\n"


@dataclass(frozen=True, slots=True)
class Placeholder:
    """``ref`` None for ``{outcome}``; ``offset`` of its ``{`` in the block;
    ``in_string``; ``standalone``: a whole JSON value (outside strings only)."""

    ref: str | None
    offset: int
    in_string: bool
    standalone: bool


@dataclass(frozen=True, slots=True)
class Key:
    """An object member name: where its opening quote is and its nesting depth (1 = top)."""

    name: str
    offset: int
    depth: int
    value_offset: int


@dataclass(frozen=True, slots=True)
class Slot:
    """A place the runtime fills: ``path`` from the template's root (member names, array
    indexes as text); ``branch``: that branch's full result replaces the value; else
    ``parts``: the string's text around each ``{outcome}``."""

    path: tuple[str, ...]
    branch: str | None
    parts: tuple[str, ...]


@dataclass(slots=True)
class Lexed:
    placeholders: list[Placeholder] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    duplicates: list[Key] = field(default_factory=list)
    text: str = ""  # the block with standalone placeholders swapped for stand-ins
    stand_ins: dict[str, str] = field(default_factory=dict)  # stand-in value -> ref
    top: dict[str, Key] = field(default_factory=dict)  # the first member of each name, depth 1


def _prev_significant(text: str, index: int) -> str:
    index -= 1
    while index >= 0 and text[index] in _WS:
        index -= 1
    return text[index] if index >= 0 else ""


def _next_significant(text: str, index: int) -> str:
    while index < len(text) and text[index] in _WS:
        index += 1
    return text[index] if index < len(text) else ""


#: Where the lexer has something to do: a string, a placeholder or a container opens or
#: closes. Everything between is skipped in one step.
_SIGNIFICANT: Final = re.compile(r'["{}\[\]]')
#: A string's content up to its closing quote (a backslash escapes the next character).
_STRING_BODY: Final = re.compile(r'(?:[^"\\]++|\\.)*+', re.DOTALL)
_BLANKS: Final = re.compile(r"[ \t\r\n]*+")


def lex(text: str) -> Lexed:
    """Placeholders, member names and repeated names of a JSON template."""
    out = Lexed()
    pieces: list[str] = []
    last = 0
    # One frame per open container: the member names seen so far (None for an array).
    frames: list[set[str] | None] = []
    index, end = 0, len(text)
    counter = 0
    significant, string_body, blanks = _SIGNIFICANT.search, _STRING_BODY.match, _BLANKS.match
    while True:
        found = significant(text, index)
        if found is None:
            break
        index = found.start()
        char = text[index]
        if char == '"':
            close = string_body(text, index + 1).end()  # type: ignore[union-attr]  # `*` matches
            if close >= end or text[close] != '"':
                close = end  # unterminated: the rest of the text is the string
            raw = text[index + 1 : close]
            if "{" in raw:
                for inner in PLACEHOLDER.finditer(raw):
                    out.placeholders.append(
                        Placeholder(inner.group(1), index + 1 + inner.start(), True, False)
                    )
            after = close + 1
            seen = frames[-1] if frames else None
            if seen is not None:
                colon = blanks(text, after).end()  # type: ignore[union-attr]
                if colon < end and text[colon] == ":":
                    value_at = blanks(text, colon + 1).end()  # type: ignore[union-attr]
                    key = Key(_decode_key(raw), index, len(frames), value_at)
                    if key.name in seen:
                        out.duplicates.append(key)
                    seen.add(key.name)
                    out.keys.append(key)
                    if key.depth == 1 and key.name not in out.top:
                        out.top[key.name] = key
            index = after
            continue
        if char == "{":
            match = PLACEHOLDER.match(text, index)
            if match is not None:
                ref = match.group(1)
                standalone = _prev_significant(text, index) in ("", ":", ",", "[") and (
                    _next_significant(text, match.end()) in ("", ",", "}", "]")
                )
                out.placeholders.append(Placeholder(ref, index, False, standalone))
                width = match.end() - index
                if ref is None:
                    stand_in = "null".ljust(width)
                else:
                    counter += 1
                    stand_in = '"\\u0000' + str(counter).rjust(width - 8, "0") + '"'
                    out.stand_ins["\0" + str(counter).rjust(width - 8, "0")] = ref
                pieces += [text[last:index], stand_in]
                last = index = match.end()
                continue
            frames.append(set())
        elif char == "[":
            frames.append(None)
        elif frames:  # } or ]
            frames.pop()
        index += 1
    pieces.append(text[last:])
    out.text = "".join(pieces)
    return out


def _decode_key(raw: str) -> str:
    if "\\" not in raw:
        return raw
    try:
        value, _ = parse_json('"' + raw + '"')
    except JsonError:
        return raw
    return str(value)


@dataclass(slots=True)
class Parsed:
    value: Any
    error: JsonError | None
    lexed: Lexed


def parse(text: str) -> Parsed:
    """Lex, then parse the block with its stand-ins (``error`` set when not JSON)."""
    lexed = lex(text)
    try:
        value = _loads(lexed.text)
    except JsonError as error:
        return Parsed(None, error, lexed)
    return Parsed(value, None, lexed)


def _loads(text: str) -> Any:
    """:func:`parse_json`'s value, through the C decoder when that reads it the same.

    ``json.loads`` with the JS number model and no NaN / Infinity gives the same value
    for text both accept; what only :func:`parse_json` refuses (nesting past its depth,
    an unpaired surrogate) and every error (for its message and position) go to it.
    """
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        try:
            value = json.loads(
                text, parse_int=_js_int, parse_float=_js_float, parse_constant=_no_constant
            )
        except (ValueError, RecursionError):
            pass
        else:
            if unpaired_surrogate(text) is None:
                return value
    return parse_json(text)[0]


def _js_int(text: str) -> int | float:
    value = to_js_number(int(text) if len(text) < 40 else float(text))
    return -0.0 if value == 0 and text.startswith("-") else value


def _js_float(text: str) -> int | float:
    return to_js_number(float(text))


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def slots(value: Any, stand_ins: dict[str, str]) -> list[Slot]:
    """Every slot of a parsed template, in document order (iterative: no depth limit)."""
    found: list[Slot] = []
    todo: list[tuple[tuple[str, ...], Any]] = [((), value)]
    while todo:
        path, current = todo.pop()
        if isinstance(current, str):
            ref = stand_ins.get(current)
            if ref is not None:
                found.append(Slot(path, ref, ()))
            elif OUTCOME in current:
                found.append(Slot(path, None, tuple(current.split(OUTCOME))))
        elif isinstance(current, dict):
            todo.extend(((*path, k), v) for k, v in reversed(current.items()))
        elif isinstance(current, list):
            todo.extend(((*path, str(i)), v) for i, v in reversed(list(enumerate(current))))
    return found


def blank_slots(value: Any, found: list[Slot]) -> Any:
    """``value`` with every branch slot set to None (the runtime puts the result there)."""
    for slot in found:
        if slot.branch is None:
            continue
        holder = value
        for step in slot.path[:-1]:
            holder = holder[int(step)] if isinstance(holder, list) else holder[step]
        last = slot.path[-1]
        if isinstance(holder, list):
            holder[int(last)] = None
        else:
            holder[last] = None
    return value
