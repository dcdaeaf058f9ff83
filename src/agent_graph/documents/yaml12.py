"""YAML 1.2 core-schema loader with source positions.

The reference toolchain reads YAML with npm ``yaml`` (YAML 1.2, core schema,
unique keys, no merge keys). PyYAML implements YAML 1.1, so its resolver and
constructor are not used at all: we take LibYAML's event stream (through
``yaml.CSafeLoader``; the pure-Python ``yaml.SafeLoader`` only when PyYAML was
built without LibYAML) and build plain Python values ourselves in one iterative
pass. Doing our own composition buys four things the node-based loaders cannot
give safely:

* a position for every value (the ``SourceMap``), with no second walk;
* no recursion, so deep nesting cannot overflow the C stack. PyYAML's C
  composer is recursive and segfaults on ~100,000 nested ``[``; we stop at
  ``MAX_DEPTH`` while the parser is still at the start of the input (LibYAML's
  scanner is also quadratic in flow depth, so stopping early matters for time);
* alias expansion accounting at the moment an alias is met (billion laughs is
  rejected after a handful of events);
* exact control of tags, directives, keys and numbers (the JS number model).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from agent_graph.canonical import js_number, to_js_number
from agent_graph.documents.sourcemap import MAX_DEPTH, ParseError, SourceMap, escape_token

__all__ = [
    "ALIAS_EXPANSION_LIMIT",
    "LIBYAML",
    "MAX_DEPTH",
    "ParseError",
    "YamlError",
    "parse_yaml",
    "to_js_number",
]


#: Nodes aliases may add beyond the document's own nodes, in total (the budget of
#: docs/ecosystem.md §1). Each alias is charged the full expanded size of the
#: value it repeats, so nested aliases multiply. Provider files rarely use
#: aliases at all; npm yaml instead stops nested alias chains past 100 aliases.
ALIAS_EXPANSION_LIMIT: Final = 10_000

#: True when PyYAML's LibYAML binding is present (the supported configuration:
#: the pure-Python parser rejects tabs after ``:`` that LibYAML and npm accept).
LIBYAML: Final[bool] = bool(getattr(yaml, "__with_libyaml__", False))

_TAG: Final = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = (_TAG + t for t in ("str", "null", "bool", "int", "float"))
_MAP, _SEQ = _TAG + "map", _TAG + "seq"

# The YAML 1.2 core schema, as npm `yaml` spells it.
_NULL_RE: Final = re.compile(r"(?:~|null|Null|NULL)?")
_BOOL_RE: Final = re.compile(r"true|True|TRUE|false|False|FALSE")
_INT_RE: Final = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT_RE: Final = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_NUMBER_START: Final = frozenset("-+.0123456789")


class YamlError(ParseError):
    """The YAML text is malformed or uses something outside the supported subset."""


# ---------------------------------------------------------------------------
# JavaScript number model


def _decimal_int(text: str) -> int | float:
    # int() refuses more than 4300 digits; such numbers are doubles in JS anyway.
    if len(text) > 40:
        return to_js_number(float(text))
    number = int(text, 10)
    if number == 0 and text.startswith("-"):
        return -0.0  # JS parses "-0" to negative zero
    return to_js_number(number)


def _core_int(text: str) -> int | float:
    if text.startswith("0o"):
        return to_js_number(int(text[2:], 8))
    if text.startswith("0x"):
        return to_js_number(int(text[2:], 16))
    return _decimal_int(text)


def _core_float(text: str) -> int | float:
    lower = text.lower()
    if lower.endswith(".inf"):
        return -math.inf if lower.startswith("-") else math.inf
    if lower == ".nan":
        return math.nan
    return to_js_number(float(text))


def _resolve_plain(text: str) -> Any:
    """Implicit typing of an untagged plain scalar (YAML 1.2 core schema)."""
    if not text:
        return None
    first = text[0]
    if first in "~nN" and _NULL_RE.fullmatch(text):
        return None
    if first in "tTfF" and _BOOL_RE.fullmatch(text):
        return first in "tT"
    if first in _NUMBER_START:
        if _INT_RE.fullmatch(text):
            return _core_int(text)
        if _FLOAT_RE.fullmatch(text):
            return _core_float(text)
    return text


# ---------------------------------------------------------------------------
# Event-driven builder


class _Frame:
    """An open collection: the container being filled and what its next child is."""

    __slots__ = ("anchor", "container", "is_map", "key", "pointer", "size")

    def __init__(self, container: Any, pointer: str, anchor: str | None, is_map: bool) -> None:
        self.container = container
        self.pointer = pointer
        self.anchor = anchor
        self.is_map = is_map
        self.key: str | None = None  # mapping: the key awaiting its value
        self.size = 1  # nodes in this value once aliases are expanded

    def child_pointer(self) -> str:
        """JSON pointer of the value about to be added to this collection."""
        if self.is_map:
            return self.pointer + "/" + escape_token(self.key)  # type: ignore[arg-type]
        return self.pointer + "/" + str(len(self.container))


def _mark_error(message: str, event: Event, line_offset: int) -> YamlError:
    mark = event.start_mark
    if mark is None:
        return YamlError(message)
    return YamlError(message, mark.line + 1 + line_offset, mark.column + 1)


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


class _Builder:
    def __init__(self, line_offset: int) -> None:
        self.line_offset = line_offset
        self.positions: dict[str, tuple[int, int]] = {}
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.open_anchors: set[str] = set()
        self.alias_budget = ALIAS_EXPANSION_LIMIT

    def error(self, message: str, event: Event) -> YamlError:
        return _mark_error(message, event, self.line_offset)

    def scalar_value(self, event: ScalarEvent) -> Any:
        tag = event.tag
        text = event.value
        if tag is None:
            return _resolve_plain(text) if event.implicit[0] else text
        if tag == _STR:
            return text
        if tag == _NULL and _NULL_RE.fullmatch(text):
            return None
        if tag == _BOOL and _BOOL_RE.fullmatch(text):
            return text[0] in "tT"
        if tag == _INT and _INT_RE.fullmatch(text):
            return _core_int(text)
        if tag == _FLOAT:
            if _FLOAT_RE.fullmatch(text):
                return _core_float(text)
            if _INT_RE.fullmatch(text):
                return to_js_number(float(_core_int(text)))
        if tag in (_NULL, _BOOL, _INT, _FLOAT):
            raise self.error(f"{_short(text)} is not a valid {_tag_name(tag)}", event)
        raise self.error(f"unsupported tag {_tag_name(tag)} on a scalar", event)

    def key_text(self, value: Any, event: Event) -> str:
        """Object keys are strings in JS; scalar keys take their JS string form."""
        if isinstance(value, str):
            return value
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return js_number(value)
        raise self.error("a mapping key must be a scalar, not a collection", event)

    def build(self, source: Any) -> tuple[Any, SourceMap]:
        positions = self.positions
        offset = self.line_offset + 1
        stack: list[_Frame] = []
        top: _Frame | None = None
        root: Any = None
        documents = 0
        get_event = source.get_event

        while True:
            event = get_event()
            kind = type(event)
            if kind is ScalarEvent or kind is AliasEvent:
                if kind is ScalarEvent:
                    value = self.scalar_value(event)
                    size = 1
                    if event.anchor is not None:
                        self.anchors[event.anchor] = (value, 1)
                else:
                    value, size = self.resolve_alias(event)
                if top is not None and top.is_map and top.key is None:
                    key = self.key_text(value, event)
                    if key in top.container:
                        raise self.error(f"duplicate mapping key {_short(key)}", event)
                    top.key = key
                    continue
                mark = event.start_mark
                pointer = "" if top is None else top.child_pointer()
                if mark is not None:
                    positions[pointer] = (mark.line + offset, mark.column + 1)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                is_map = kind is MappingStartEvent
                if top is not None and top.is_map and top.key is None:
                    raise self.error("a mapping key must be a scalar, not a collection", event)
                tag = event.tag
                if tag is not None and tag != (_MAP if is_map else _SEQ):
                    noun = "mapping" if is_map else "sequence"
                    raise self.error(f"unsupported tag {_tag_name(tag)} on a {noun}", event)
                if len(stack) >= MAX_DEPTH:
                    raise self.error(
                        f"collections are nested more than {MAX_DEPTH} levels deep", event
                    )
                pointer = "" if top is None else top.child_pointer()
                mark = event.start_mark
                if mark is not None:
                    positions[pointer] = (mark.line + offset, mark.column + 1)
                anchor = event.anchor
                if anchor is not None:
                    self.open_anchors.add(anchor)
                top = _Frame({} if is_map else [], pointer, anchor, is_map)
                stack.append(top)
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                frame = stack.pop()
                value, size = frame.container, frame.size
                if frame.anchor is not None:
                    self.open_anchors.discard(frame.anchor)
                    self.anchors[frame.anchor] = (value, size)
                top = stack[-1] if stack else None
            elif kind is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self.error("a file may hold only one YAML document", event)
                if event.version is not None or event.tags:
                    raise self.error("%YAML and %TAG directives are not supported", event)
                continue
            elif event is None or kind is yaml.StreamEndEvent:
                if not positions:  # an empty document: None, "at" the start
                    positions[""] = (offset, 1)
                return root, SourceMap(positions)
            else:  # stream start, document end
                continue

            # A finished value (scalar, alias or closed collection): attach it.
            if top is None:
                root = value
            elif top.is_map:
                top.container[top.key] = value
                top.key = None
                top.size += size
            else:
                top.container.append(value)
                top.size += size

    def resolve_alias(self, event: AliasEvent) -> tuple[Any, int]:
        name = event.anchor or ""
        if name in self.open_anchors:
            raise self.error(f"alias *{name} refers to a collection that contains it", event)
        found = self.anchors.get(name)
        if found is None:
            raise self.error(f"alias *{name} has no anchor before it", event)
        self.alias_budget -= found[1]
        if self.alias_budget < 0:
            raise self.error(f"aliases expand to more than {ALIAS_EXPANSION_LIMIT} nodes", event)
        return found


def _tag_name(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


# ---------------------------------------------------------------------------
# Entry point


# A PyYAML loader used only for its event stream (its constructor never runs),
# and whether its reader errors count UTF-8 bytes (LibYAML) or characters.
_EVENT_SOURCE: tuple[Callable[[str], Any], bool] = (
    (yaml.CSafeLoader, True) if LIBYAML else (yaml.SafeLoader, False)
)


def _position_of(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - text.rfind("\n", 0, index)


def _convert(error: Exception, text: str, line_offset: int, counts_bytes: bool) -> YamlError:
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        parts = [p for p in (error.context, error.problem) if p]
        message = ": ".join(parts) or "invalid YAML"
        if mark is None:
            return YamlError(message)
        # LibYAML places "end of stream" on the line after the last one; point at
        # the end of the text the user wrote instead.
        line, column = min((mark.line + 1, mark.column + 1), _position_of(text, len(text)))
        return YamlError(message, line + line_offset, column)
    if isinstance(error, yaml.reader.ReaderError):
        index = error.position
        if counts_bytes:
            prefix = text.encode("utf-8", "surrogatepass")[:index]
            index = len(prefix.decode("utf-8", "ignore"))
        line, column = _position_of(text, index)
        return YamlError(
            f"character U+{error.character:04X} is not allowed in YAML: {error.reason}",
            line + line_offset,
            column,
        )
    if isinstance(error, UnicodeError):
        start = getattr(error, "start", 0)
        line, column = _position_of(text, start)
        return YamlError("text contains an unpaired surrogate", line + line_offset, column)
    return YamlError(f"{type(error).__name__}: {error}")


def parse_yaml(text: str, *, line_offset: int = 0) -> tuple[Any, SourceMap]:
    """Parse one YAML 1.2 document (core schema) into plain values and their positions.

    Returns ``(value, source_map)``; an empty document is ``None``. Mappings are
    ``dict[str, Any]``, sequences ``list``; numbers follow the JS number model
    (:func:`to_js_number`). A value reached through an alias is the anchored object
    itself (shared, as in the reference); its position is the alias's.
    ``line_offset`` is added to every line number (a frontmatter header starts
    on line 2 of its file). Raises :class:`YamlError` for anything else.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    # npm yaml ends a block scalar cut off by the end of input with a line break
    # (`a: |` + `  x` -> "x\n"); LibYAML does not. A frontmatter header always
    # ends this way, so the difference would be common there.
    complete = text if not text or text.endswith(("\n", "\r")) else text + "\n"
    source = None
    new_source, counts_bytes = _EVENT_SOURCE
    try:
        source = new_source(complete)
        return _Builder(line_offset).build(source)
    except YamlError:
        raise
    except (yaml.YAMLError, UnicodeError) as error:
        raise _convert(error, text, line_offset, counts_bytes) from None
    finally:
        if source is not None:
            source.dispose()
