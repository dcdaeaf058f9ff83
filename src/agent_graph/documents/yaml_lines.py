"""A line-at-a-time reader for the block-style YAML that Provider files are written in.

LibYAML's event stream costs about 2.8 µs an event in Python objects (each event and its
two marks), before our builder has looked at it: half of compiling a 10,000-node graph.
Most Provider files use a small part of YAML: block mappings and sequences, one entry a
line, plain or simply quoted scalars, one-line flow collections of scalars
(``[a, b]``, ``{ from: a, to: b }``). :func:`read_block_yaml`
reads exactly that part, one line at a time, straight into values and the same
position shadow the event builder makes (see :mod:`.yaml12`), and gives up (``None``)
on anything else, so :func:`.yaml12.parse_yaml` reads the text again through LibYAML.

Giving up is always safe, so the rules here are deliberately narrower than YAML: no
tabs or line breaks other than LF, no anchors, aliases, tags, directives, block scalars,
multi-line scalars, escapes in double quotes, nested or multi-line flow collections,
quoted keys in flow mappings, complex or quoted block keys, empty values that stay null,
and no duplicate keys. Errors are never reported from here: a malformed text is read by LibYAML,
which says what is wrong and where. ``tests/test_yaml_lines.py`` holds the two readers
to the same values and positions.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any, Final

from .sourcemap import MAX_DEPTH, SourceMap
from .yaml_values import LINE, PLAIN_SPECIAL, key_text, pointer_map, resolve_plain
from .yaml_values import NUMBER_START as _NUMBER_START

__all__ = ["read_block_yaml"]

#: Every character a text in the subset may hold: printable ASCII, LF, and the printable
#: non-ASCII ranges LibYAML accepts as content (NEL, U+2028 and U+2029 are line breaks to
#: YAML, and the BOM has its own rules: all four are left to LibYAML).
_SUBSET_TEXT: Final = re.compile(
    "[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*"
)

#: A plain key: a first character that is no indicator and no space, no ``:``, ``#`` or
#: line break inside, no space before the colon.
_KEY_FIRST: Final = r"[^\s\-?:,\[\]{}#&*!|>'\"%@`]"
#: One line: its lead (the indentation, then a sequence entry's dash and the spaces after
#: it), a key and the spaces after its colon, and the rest (a value, a comment, or anything
#: else). Every line matches, so ``findall`` gives one row a line; the key ends at its
#: first colon and its last non-space (an atomic run, not backtracking character by
#: character).
_LINE: Final = re.compile(
    r"^( *(?:- +|-$)?)(?:(" + _KEY_FIRST + r"(?:[^:#\n]*+(?<=[^\s:#]))?):( +|$))?(.*)$",
    re.MULTILINE,
)

#: A plain scalar inside a flow collection: no indicator first, no flow indicator, ``#``
#: or ``:`` anywhere, no space at its end.
_FLOW_ATOM: Final = r"[^\s,\[\]{}#:'\"&*!|>%@`?\-](?:[^,\[\]{}#:]*[^\s,\[\]{}#:])?"
_DOUBLE_TEXT: Final = r'"([^"\\]*)"'
_SINGLE_TEXT: Final = r"'((?:[^']|'')*)'"
#: One item of a flow sequence, then the separator after it.
_FLOW_PLAIN: Final = re.compile("(" + _FLOW_ATOM + r") *([,\]])")
_FLOW_DOUBLE: Final = re.compile(_DOUBLE_TEXT + r" *([,\]])")
_FLOW_SINGLE: Final = re.compile(_SINGLE_TEXT + r" *([,\]])")
#: One ``key: value`` member of a one-line flow mapping (plain key), then the separator.
_FLOW_MEMBER: Final = re.compile(
    " *("
    + _FLOW_ATOM
    + "): +(?:("
    + _FLOW_ATOM
    + ")|"
    + _DOUBLE_TEXT
    + "|"
    + _SINGLE_TEXT
    + r") *([,}])"
)
#: A one-line flow mapping of up to four plain members: the common ``{ from: a, to: b }``,
#: read by one match (anything else goes member by member).
_FLOW_PLAIN_MAPPING: Final = re.compile(
    rf"\{{ *({_FLOW_ATOM}): +({_FLOW_ATOM}) *"
    + rf"(?:, *({_FLOW_ATOM}): +({_FLOW_ATOM}) *)?" * 3
    + r"(?:, *)?\}(?: *| +#.*)"
)
#: A one-line flow sequence of one plain item.
_FLOW_ONE: Final = re.compile(rf"\[ *({_FLOW_ATOM}) *(?:, *)?\](?: *| +#.*)")
#: What may follow a value on its line: spaces, then a comment after at least one.
_AFTER: Final = re.compile(r"(?: *| +#.*)")
#: A double-quoted scalar without escapes, a single-quoted one, then only a comment.
_DOUBLE: Final = re.compile(_DOUBLE_TEXT + "( *(?: #.*)?)")
_SINGLE: Final = re.compile(_SINGLE_TEXT + "( *(?: #.*)?)")
#: First characters of a value that the subset leaves to LibYAML (or that are errors).
_UNSUPPORTED_START: Final = frozenset(",]}#&*!|>%@`")
#: First characters of a value that is not a plain string as written.
_NOT_TEXT_START: Final = frozenset("\"'[{-?:+.0123456789~") | _UNSUPPORTED_START
#: The plain scalars not starting like a number that are not strings (YAML 1.2 core).
_WORDS: Final[dict[str, Any]] = {
    **dict.fromkeys(("~", "null", "Null", "NULL"), None),
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
}
#: LibYAML refuses a plain implicit key longer than this.
_KEY_LIMIT: Final = 1024


class _GiveUp(Exception):
    """The text is outside the subset: read it with LibYAML."""


def _scalar(text: str) -> Any:
    """The value of the scalar ``text`` (no leading space); raises _GiveUp outside the
    subset."""
    first = text[0]
    if first == '"' or first == "'":
        found = (_SINGLE if first == "'" else _DOUBLE).fullmatch(text)
        if found is None:
            raise _GiveUp
        return found.group(1).replace("''", "'") if first == "'" else found.group(1)
    if first in _UNSUPPORTED_START:
        raise _GiveUp
    if first in "-?:" and (len(text) == 1 or text[1] == " "):
        raise _GiveUp  # an indicator: a nested entry, a complex key, an empty key
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut]
    text = text.rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise _GiveUp  # a second mapping on one line: an error LibYAML explains
    return _plain(text)


def _plain(text: str) -> Any:
    """The value of a plain scalar (not empty)."""
    if text[0] in _NUMBER_START:
        return resolve_plain(text)
    return _WORDS.get(text, text)


def _flow_sequence(text: str, column: int, line: int) -> tuple[list[Any], tuple[Any, ...]]:
    """A one-line flow sequence ``[a, 'b', "c"]`` at 0-based ``column`` of its line."""
    one = _FLOW_ONE.fullmatch(text)
    if one is not None:  # the common [item]
        item = one.group(1)
        return [_plain(item)], (
            line * LINE + column + 1,
            False,
            line * LINE + column + 1 + one.start(1),
        )
    values: list[Any] = []
    shadow: list[Any] = [line * LINE + column + 1, False]
    length = len(text)
    position = _skip_spaces(text, 1)
    if position < length and text[position] == "]":
        position += 1
    else:
        while True:
            if position >= length:
                raise _GiveUp  # continues on the next line
            first = text[position]
            found = (
                _FLOW_DOUBLE if first == '"' else _FLOW_SINGLE if first == "'" else _FLOW_PLAIN
            ).match(text, position)
            if found is None:
                raise _GiveUp
            item = found.group(1)
            if first == "'":
                values.append(item.replace("''", "'"))
            elif first == '"':
                values.append(item)
            else:
                values.append(_plain(item))
            shadow.append(line * LINE + column + position + 1)
            position = found.end()
            if found.group(2) == "]":
                break
            position = _skip_spaces(text, position)
            if position < length and text[position] == "]":
                position += 1  # a trailing comma
                break
    if _AFTER.fullmatch(text, position) is None:
        raise _GiveUp
    return values, tuple(shadow)


def _flow_mapping(text: str, column: int, line: int) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """A one-line flow mapping ``{ a: 1, b: 'x' }`` of scalars at 0-based ``column``."""
    values: dict[str, Any] = {}
    shadow: list[Any] = [line * LINE + column + 1, True]
    simple = _FLOW_PLAIN_MAPPING.fullmatch(text)
    if simple is not None:
        groups = simple.groups()
        base = line * LINE + column + 1
        for index in range(0, 8, 2):
            written = groups[index]
            if written is None:
                break
            member = _key(written) if written[0] in PLAIN_SPECIAL else written
            if member in values:
                raise _GiveUp
            values[member] = _plain(groups[index + 1])
            shadow.append(member)
            shadow.append(base + simple.start(index + 2))
        return values, tuple(shadow)
    position = _skip_spaces(text, 1)
    if text.startswith("}", position):
        position += 1
    else:
        while True:
            found = _FLOW_MEMBER.match(text, position)
            if found is None:
                raise _GiveUp
            written, plain, double, single = found.group(1, 2, 3, 4)
            key = _key(written)
            if key in values:
                raise _GiveUp
            if plain is not None:
                value: Any = _plain(plain)
                start = found.start(2)
            elif double is not None:
                value, start = double, found.start(3) - 1
            else:
                value, start = single.replace("''", "'"), found.start(4) - 1
            values[key] = value
            shadow.append(key)
            shadow.append(line * LINE + column + start + 1)
            position = found.end()
            if found.group(5) == "}":
                break
            position = _skip_spaces(text, position)
            if text.startswith("}", position):
                position += 1  # a trailing comma
                break
    if _AFTER.fullmatch(text, position) is None:
        raise _GiveUp
    return values, tuple(shadow)


def _key(written: str) -> str:
    """A plain key as a JS object key."""
    if len(written) >= _KEY_LIMIT:
        raise _GiveUp
    if written[0] in _NUMBER_START:
        return key_text(resolve_plain(written))
    word = _WORDS.get(written, written)
    return written if word is written else key_text(word)


def _skip_spaces(text: str, position: int) -> int:
    while position < len(text) and text[position] == " ":
        position += 1
    return position


def _value(text: str, column: int, line: int) -> tuple[Any, Any]:
    """A value written on its entry's line, at 0-based ``column``: ``(value, shadow)``."""
    first = text[0]
    if first == "[":
        return _flow_sequence(text, column, line)
    if first == "{":
        return _flow_mapping(text, column, line)
    return _scalar(text), line * LINE + column + 1


class _Open:
    """An open block collection: its indentation, values and position shadow (the
    shadow of :mod:`.yaml12`'s builder: position, is-mapping, then its children)."""

    __slots__ = ("awaiting", "container", "indent", "is_map", "key", "shadow")

    def __init__(self, indent: int, is_map: bool, line: int) -> None:
        self.indent = indent
        self.is_map = is_map
        self.container: Any = {} if is_map else []
        self.shadow: list[Any] = [line * LINE + indent + 1, is_map]
        self.key: str | None = None  # the key whose value is awaited
        self.awaiting = False  # an entry's value starts on a later line (``key:``, ``-``)

    def attach(self, value: Any, shadow: Any) -> None:
        if self.is_map:
            self.container[self.key] = value
            self.shadow.append(self.key)
        else:
            self.container.append(value)
        self.shadow.append(shadow)
        self.awaiting = False

    def close(self) -> tuple[Any, tuple[Any, ...]]:
        if self.awaiting:
            raise _GiveUp  # an empty value: LibYAML places its null
        return self.container, tuple(self.shadow)


def read_block_yaml(text: str, line_offset: int = 0) -> tuple[Any, SourceMap] | None:
    """``(value, source_map)`` of ``text`` when it is in the subset, else ``None``.

    ``text`` ends with a line break (as :func:`.yaml12.parse_yaml` hands it over); lines
    are numbered from ``line_offset + 1``, as the event builder numbers them.
    """
    if _SUBSET_TEXT.fullmatch(text) is None:
        return None
    rows = _LINE.findall(text)
    if len(rows) != text.count("\n") + 1:  # pragma: no cover - every line is one row
        return None
    try:
        value, shadow = _read(rows, line_offset + 1)
    except _GiveUp:
        return None
    return value, SourceMap(pending=partial(pointer_map, shadow, line_offset + 1))


_Row = tuple[str, str, str, str]


def _read(rows: list[_Row], first: int) -> tuple[Any, tuple[Any, ...]]:
    # The hot loop of reading a large file. A line that adds an entry with a plain value
    # to the mapping the line before added to takes the short way, inline, with that
    # mapping's parts in locals; a line that opens or closes a collection goes through
    # _structure.
    stack: list[_Open] = []
    top = _Open(-1, True, 0)  # none yet: no line is at indentation -1
    indent, is_map, container, shadows = top.indent, top.is_map, top.container, top.shadow
    started = False
    not_text_start = _NOT_TEXT_START
    words = _WORDS
    special = PLAIN_SPECIAL
    key_limit = _KEY_LIMIT
    for number, (lead, key, after_colon, rest) in enumerate(rows, first):
        dash = "-" in lead
        if not key and not dash:
            if not rest or rest[0] == "#":
                continue  # blank or a comment
            if not started and rest == "---" and not lead:
                started = True
                continue
            raise _GiveUp  # a scalar alone, a document marker, a directive, a quoted key
        started = True
        column = lead.find("-") if dash else len(lead)
        if dash or column != indent or not is_map:
            top = _structure(stack, column, dash, number)
            if dash:
                column = len(lead)  # where the entry's content starts
                if not key:
                    _item(top, rest, column, number)
                    indent, is_map = top.indent, top.is_map
                    continue
                top.awaiting = True
                top = _Open(column, True, number)
                stack.append(top)
            indent, is_map, container, shadows = top.indent, top.is_map, top.container, top.shadow
        elif top.awaiting:
            raise _GiveUp  # the previous entry's value stays empty: a null
        # key: rest, into the mapping ``top``
        column += len(key) + 1 + len(after_colon)  # where ``rest`` starts
        if key[0] in special or len(key) >= key_limit:
            key = _key(key)
        if key in container:
            raise _GiveUp  # a duplicate key: LibYAML's reading reports it
        if not rest or rest[0] == "#":
            top.key = key
            top.awaiting = True
            continue
        if (
            rest[0] not in not_text_start
            and rest[-1] != " "
            and rest[-1] != ":"
            and " #" not in rest
            and ": " not in rest
        ):
            value: Any = words.get(rest, rest)  # a plain scalar as written (or null, a bool)
            shadow: Any = number * LINE + column + 1
        else:
            value, shadow = _value(rest, column, number)
        container[key] = value
        shadows.append(key)
        shadows.append(shadow)
    if not stack:
        raise _GiveUp  # no collection at all: an empty or scalar document
    while len(stack) > 1:
        value, shadow = stack.pop().close()
        stack[-1].attach(value, shadow)
    return stack[0].close()


def _structure(stack: list[_Open], indent: int, is_item: bool, number: int) -> _Open:
    """Close what a line at ``indent`` ends and open what it starts: the collection its
    entry (``is_item``: its sequence entry) goes into."""
    while stack:
        top = stack[-1]
        if indent > top.indent or (indent == top.indent and (top.is_map or is_item)):
            break
        value, shadow = stack.pop().close()
        if not stack:
            raise _GiveUp  # less indented than the document's root
        stack[-1].attach(value, shadow)
    if stack:
        top = stack[-1]
        if indent == top.indent and top.is_map == (not is_item):
            if top.awaiting:
                raise _GiveUp  # the previous entry's value stays empty: a null
            return top
        # a new collection, the value of an entry on an earlier line (a sequence may sit
        # at its key's indentation)
        if not top.awaiting:
            raise _GiveUp  # a continued scalar or an indentation LibYAML refuses
    if len(stack) >= MAX_DEPTH - 2:  # (a mapping in an entry and a flow collection)
        raise _GiveUp  # LibYAML's reading says how deep is too deep
    opened = _Open(indent, not is_item, number)
    stack.append(opened)
    return opened


def _item(sequence: _Open, rest: str, column: int, number: int) -> None:
    """``- rest``, with no key in ``rest``, at 0-based ``column``."""
    if not rest or rest[0] == "#":
        sequence.awaiting = True
    elif rest[0] == "-" and rest[1:2] in ("", " "):
        raise _GiveUp  # - - a nested sequence on one line
    else:
        sequence.attach(*_value(rest, column, number))
