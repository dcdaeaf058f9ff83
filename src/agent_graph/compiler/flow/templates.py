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
from functools import cache

from ...documents.sourcemap import MAX_DEPTH
from ...documents.surrogates import unpaired_surrogate
from ...frozen import field, record, slotted
from ...js_numbers import to_js_number

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from ...documents.json_text import JsonError

# The positioned JSON reader (documents.json_text) is imported where a block needs it:
# one that is JSON as written never does, and a cold agc flow check of such a package
# is 1.2 ms of CPU (of about 35) the cheaper for not loading it.

PLACEHOLDER: Final = re.compile(r"\{(?:([A-Za-z][A-Za-z0-9_-]*)\.)?outcome\}")
OUTCOME: Final = "{outcome}"
_WS: Final = " \t\r\n"


@record
class Placeholder:
    """``ref`` None for ``{outcome}``; ``offset`` of its ``{`` in the block;
    ``in_string``; ``standalone``: a whole JSON value (outside strings only)."""

    ref: str | None
    offset: int
    in_string: bool
    standalone: bool


@record
class Key:
    """An object member name: where its opening quote is and its nesting depth (1 = top)."""

    name: str
    offset: int
    depth: int
    value_offset: int


@record
class Slot:
    """A place the runtime fills: ``path`` from the template's root (member names, array
    indexes as text); ``branch``: that branch's full result replaces the value; else
    ``parts``: the string's text around each ``{outcome}``."""

    path: tuple[str, ...]
    branch: str | None
    parts: tuple[str, ...]


@slotted
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


@cache
def _lexer() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """What the lexer acts on, in one pass: a string (its content, then a ``:`` when one
    follows, so it may be a member name), a placeholder, a container opening or closing;
    whatever lies between is skipped, and an unterminated string runs to the end of the
    text. Then the blanks before a member's value. Compiled when a block is first lexed
    (0.55 ms), which a package whose blocks are JSON as written never is."""
    token = re.compile(
        r'"(?P<string>(?:[^"\\]++|\\.)*+)(?:"(?P<colon>[ \t\r\n]*+:)?|\\?\Z)'
        rf"|(?P<placeholder>{PLACEHOLDER.pattern})"
        r"|(?P<object>\{)|(?P<array>\[)|(?P<close>[}\]])",
        re.DOTALL,
    )
    return token, re.compile(r"[ \t\r\n]*+")


def lex(text: str) -> Lexed:
    """Placeholders, member names and repeated names of a JSON template."""
    out = Lexed()
    pieces: list[str] = []
    last = 0
    # One frame per open container: the member names seen so far (None for an array).
    frames: list[set[str] | None] = []
    counter = 0
    tokens, blanks = _lexer()
    for token in tokens.finditer(text):
        kind = token.lastgroup
        if kind == "string" or kind == "colon":
            start = token.start()
            raw = token.group(1)
            if "{" in raw:
                for inner in PLACEHOLDER.finditer(raw):
                    out.placeholders.append(
                        Placeholder(inner.group(1), start + 1 + inner.start(), True, False)
                    )
            seen = frames[-1] if frames else None
            if kind == "colon" and seen is not None:
                value_at = blanks.match(text, token.end()).end()  # type: ignore[union-attr]
                key = Key(_decode_key(raw), start, len(frames), value_at)
                if key.name in seen:
                    out.duplicates.append(key)
                seen.add(key.name)
                out.keys.append(key)
                if key.depth == 1 and key.name not in out.top:
                    out.top[key.name] = key
        elif kind == "object":
            frames.append(set())
        elif kind == "array":
            frames.append(None)
        elif kind == "close":
            if frames:
                frames.pop()
        else:  # a placeholder outside strings
            ref = token.group(4)  # its branch ref, when it has one
            index, after = token.span()
            standalone = _prev_significant(text, index) in ("", ":", ",", "[") and (
                _next_significant(text, after) in ("", ",", "}", "]")
            )
            out.placeholders.append(Placeholder(ref, index, False, standalone))
            width = after - index
            if ref is None:
                stand_in = "null".ljust(width)
            else:
                counter += 1
                stand_in = '"\\u0000' + str(counter).rjust(width - 8, "0") + '"'
                out.stand_ins["\0" + str(counter).rjust(width - 8, "0")] = ref
            pieces += [text[last:index], stand_in]
            last = after
    pieces.append(text[last:])
    out.text = "".join(pieces)
    return out


def _decode_key(raw: str) -> str:
    if "\\" not in raw:
        return raw
    from ...documents.json_text import JsonError, parse_json

    try:
        value, _ = parse_json('"' + raw + '"')
    except JsonError:
        return raw
    return str(value)


class Parsed:
    """A parsed block. ``names``: its top-level member names, in order, when it was read
    whole by the C decoder (a JSON object, no name repeated, every ``{ref.outcome}`` a
    whole value: ``refs``, each ref and offset in order, swapped for the lexer's
    stand-ins); then nothing needs the lexer unless a finding asks where something
    stands, and ``lexed`` lexes on first use (the same :class:`Lexed` as ever)."""

    __slots__ = ("_lexed", "_stand_ins", "error", "names", "refs", "text", "value")

    def __init__(
        self,
        value: Any,
        error: JsonError | None,
        lexed: Lexed | None,
        text: str = "",
        names: tuple[str, ...] | None = None,
        refs: tuple[tuple[str, int], ...] = (),
        stand_ins: dict[str, str] | None = None,
    ) -> None:
        self.value, self.error, self._lexed = value, error, lexed
        self.text, self.names, self.refs, self._stand_ins = text, names, refs, stand_ins

    @property
    def lexed(self) -> Lexed:
        if self._lexed is None:
            self._lexed = lex(self.text)
        return self._lexed

    @property
    def stand_ins(self) -> dict[str, str]:
        if self._stand_ins is not None:
            return self._stand_ins
        return self._lexed.stand_ins if self._lexed is not None else {}


def parse(text: str) -> Parsed:
    """Lex, then parse the block with its stand-ins (``error`` set when not JSON).

    A block that is a JSON object as written skips the lexer: a placeholder outside a
    string is no JSON (``{`` opens an object, and a name is quoted), so its text needs no
    stand-ins, and the decoder's member hook sees every repeated name. Of a 1,000-node
    Flow's 600 command blocks, lexing took 5.6 ms of the 17 ms their checks took.
    """
    if ".outcome}" not in text:  # a {ref.outcome} in a string is a finding, at its place
        names = _names(text)
        if names is not None:
            return Parsed(names[0], None, None, text, names[1])
    elif "\\" not in text:
        quick = _whole_values(text)
        if quick is not None:
            return quick
    lexed = lex(text)
    from ...documents.json_text import JsonError

    try:
        value = _loads(lexed.text)
    except JsonError as error:
        return Parsed(None, error, lexed)
    return Parsed(value, None, lexed)


class _Repeated(ValueError):
    """A member name repeated in one object: the lexer says where."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Repeated
    return found


def _whole_values(text: str) -> Parsed | None:
    """A block whose every ``{ref.outcome}`` stands as a whole value outside strings, read
    as the lexer would read it, without the lexer (reading a join's block: 23.7 -> 12.7 us); None
    when one may not be that.

    Each one is swapped for the lexer's stand-in (the same numbering: they are all
    outside strings). One that was inside a string makes the text no JSON, so the
    decoder refuses it: the stand-in's quote ends that string, and the backslash after
    it stands outside any string. The text holds no backslash of its own, so no escaped
    quote keeps a string open: the lexer's strings and the decoder's are the same.
    """
    pieces: list[str] = []
    stand_ins: dict[str, str] = {}
    refs: list[tuple[str, int]] = []
    last = 0
    for found in PLACEHOLDER.finditer(text):
        ref = found.group(1)
        if ref is None:
            continue  # an {outcome}: inside a string, or the text is no JSON
        index, after = found.span()
        if _prev_significant(text, index) not in ("", ":", ",", "[") or (
            _next_significant(text, after) not in ("", ",", "}", "]")
        ):
            return None  # not a whole value: a finding, at its place
        digits = str(len(refs) + 1).rjust(after - index - 8, "0")
        pieces += [text[last:index], '"\\u0000' + digits + '"']
        stand_ins["\0" + digits] = ref
        refs.append((ref, index))
        last = after
    pieces.append(text[last:])
    names = _names("".join(pieces))
    if names is None:
        return None
    return Parsed(names[0], None, None, text, names[1], tuple(refs), stand_ins)


def _names(text: str) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """The object ``text`` is and its member names, when :func:`_loads` gives exactly it
    and the lexer would find no repeated name; else None."""
    if text.count("{") + text.count("[") > MAX_DEPTH:
        return None
    try:
        value = _OBJECTS.decode(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or unpaired_surrogate(text) is not None:
        return None
    return value, tuple(value)


def _loads(text: str) -> Any:
    """:func:`parse_json`'s value, through the C decoder when that reads it the same.

    ``json.loads`` with the JS number model and no NaN / Infinity gives the same value
    for text both accept; what only :func:`parse_json` refuses (nesting past its depth,
    an unpaired surrogate) and every error (for its message and position) go to it.
    """
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        try:
            value = _DECODER.decode(text)
        except (ValueError, RecursionError):
            pass
        else:
            if unpaired_surrogate(text) is None:
                return value
    from ...documents.json_text import parse_json

    return parse_json(text)[0]


def _js_int(text: str) -> int | float:
    value = to_js_number(int(text) if len(text) < 40 else float(text))
    return -0.0 if value == 0 and text.startswith("-") else value


def _js_float(text: str) -> int | float:
    return to_js_number(float(text))


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


#: ``json.loads`` with these hooks makes a decoder per call; one serves every call.
_DECODER: Final = json.JSONDecoder(
    parse_int=_js_int, parse_float=_js_float, parse_constant=_no_constant
)
_OBJECTS: Final = json.JSONDecoder(
    parse_int=_js_int, parse_float=_js_float, parse_constant=_no_constant, object_pairs_hook=_unique
)


def slots(value: Any, stand_ins: dict[str, str], text: str | None = None) -> list[Slot]:
    """Every slot of a parsed template, in document order (iterative: no depth limit).

    ``text``, the block's own text, spares the walk when it cannot find anything: with
    no stand-ins, a string holds ``{outcome}`` only if the text does, literally or through
    a ``\\u`` escape (no other escape makes its characters).
    """
    if text is not None and not stand_ins and OUTCOME not in text and "\\u" not in text:
        return []
    found: list[Slot] = []
    # depth first, one iterator per open container: document order, and a path is made
    # only for a container entered or a slot found (a command block of three members:
    # 2.6 -> 1.6 us)
    stack: list[tuple[tuple[str, ...], Any]] = []
    if isinstance(value, dict):
        stack.append(((), iter(value.items())))
    elif isinstance(value, list):
        stack.append(((), zip(map(str, range(len(value))), value, strict=True)))
    elif isinstance(value, str):
        ref = stand_ins.get(value)
        if ref is not None:
            found.append(Slot((), ref, ()))
        elif OUTCOME in value:
            found.append(Slot((), None, tuple(value.split(OUTCOME))))
    while stack:
        path, members = stack[-1]
        for key, item in members:
            if isinstance(item, str):
                ref = stand_ins.get(item)
                if ref is not None:
                    found.append(Slot((*path, key), ref, ()))
                elif OUTCOME in item:
                    found.append(Slot((*path, key), None, tuple(item.split(OUTCOME))))
            elif isinstance(item, dict):
                stack.append(((*path, key), iter(item.items())))
                break
            elif isinstance(item, list):
                stack.append(((*path, key), zip(map(str, range(len(item))), item, strict=True)))
                break
        else:
            stack.pop()
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
