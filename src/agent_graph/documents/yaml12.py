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

from collections.abc import Callable
from functools import partial
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

from agent_graph.canonical import to_js_number
from agent_graph.collector import collector_paused
from agent_graph.documents.sourcemap import MAX_DEPTH, ParseError, SourceMap
from agent_graph.documents.yaml_values import (
    BOOL_RE,
    FLOAT_RE,
    INT_RE,
    LINE,
    NULL_RE,
    PLAIN_SPECIAL,
    core_float,
    core_int,
    key_text,
    pointer_map,
    resolve_plain,
)

__all__ = [
    "ALIAS_EXPANSION_LIMIT",
    "LIBYAML",
    "MAX_DEPTH",
    "ParseError",
    "YamlError",
    "parse_yaml",
    "to_js_number",
]


#: Nodes aliases may add beyond the document's own nodes, in total (a budget measured
#: against npm yaml, case by case in tests/documents/test_yaml12.py). Each alias is charged the
#: full expanded size of the value it repeats, so nested aliases multiply. Provider files rarely use
#: aliases at all; npm yaml instead stops nested alias chains past 100 aliases.
ALIAS_EXPANSION_LIMIT: Final = 10_000

#: True when PyYAML's LibYAML binding is present (the supported configuration:
#: the pure-Python parser rejects tabs after ``:`` that LibYAML and npm accept).
LIBYAML: Final[bool] = bool(getattr(yaml, "__with_libyaml__", False))

_TAG: Final = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = (_TAG + t for t in ("str", "null", "bool", "int", "float"))
_MAP, _SEQ = _TAG + "map", _TAG + "seq"


class YamlError(ParseError):
    """The YAML text is malformed or uses something outside the supported subset."""


# ---------------------------------------------------------------------------
# Event-driven builder


# The builder keeps the open collection in local variables and each enclosing one as
# a saved tuple ``(container, shadow, is_map, key, size, anchor)`` on a stack:
# ``container`` is the dict or list being filled, ``key`` the mapping key awaiting its
# value (None: a key comes next), ``size`` the nodes in the value once aliases are
# expanded, ``anchor`` its anchor name. ``shadow`` is the collection's position shadow
# (see :func:`.yaml_values.pointer_map`), a list while it is open and a tuple once it is
# closed; an alias's child is a position (nothing below it is placed).
_Saved = tuple[Any, list[Any], bool, str | None, int, str | None]


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
            return resolve_plain(text) if event.implicit[0] else text
        if tag == _STR:
            return text
        if tag == _NULL and NULL_RE.fullmatch(text):
            return None
        if tag == _BOOL and BOOL_RE.fullmatch(text):
            return text[0] in "tT"
        if tag == _INT and INT_RE.fullmatch(text):
            return core_int(text)
        if tag == _FLOAT:
            if FLOAT_RE.fullmatch(text):
                return core_float(text)
            if INT_RE.fullmatch(text):
                return to_js_number(float(core_int(text)))
        if tag in (_NULL, _BOOL, _INT, _FLOAT):
            raise self.error(f"{_short(text)} is not a valid {_tag_name(tag)}", event)
        raise self.error(f"unsupported tag {_tag_name(tag)} on a scalar", event)

    def key_text(self, value: Any, event: Event) -> str:
        """Object keys are strings in JS; scalar keys take their JS string form."""
        if isinstance(value, dict | list):
            raise self.error("a mapping key must be a scalar, not a collection", event)
        return key_text(value)

    def build(self, source: Any) -> tuple[Any, SourceMap]:
        # One loop over the event stream with the open collection in locals: this is
        # the hot path of loading a large file (see the comment above _Saved).
        offset = self.line_offset + 1
        stack: list[_Saved] = []
        container: Any = None  # None: at the document's root
        shadow: list[Any] = []
        is_map = False
        key: str | None = None
        size_sum = 0
        anchor: str | None = None
        root: Any = None
        root_shadow: Any = None
        documents = 0
        get_event = source.get_event
        anchors = self.anchors
        open_anchors = self.open_anchors
        plain_start = PLAIN_SPECIAL
        scalar_kind, alias_kind = ScalarEvent, AliasEvent
        map_start, seq_start = MappingStartEvent, SequenceStartEvent
        map_end, seq_end = MappingEndEvent, SequenceEndEvent

        while True:
            event = get_event()
            kind = type(event)
            if kind is scalar_kind:
                text = event.value
                if event.tag is not None:
                    value = self.scalar_value(event)
                elif not event.implicit[0]:
                    value = text  # quoted (or a block scalar): a string
                elif text and text[0] not in plain_start:
                    value = text  # cannot be null, a bool or a number
                else:
                    value = resolve_plain(text)
                size = 1
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1)
            elif kind is alias_kind:
                value, size = self.resolve_alias(event)
            elif kind is map_start or kind is seq_start:
                opens_map = kind is map_start
                if is_map and key is None:
                    raise self.error("a mapping key must be a scalar, not a collection", event)
                tag = event.tag
                if tag is not None and tag != (_MAP if opens_map else _SEQ):
                    noun = "mapping" if opens_map else "sequence"
                    raise self.error(f"unsupported tag {_tag_name(tag)} on a {noun}", event)
                if len(stack) >= MAX_DEPTH:
                    raise self.error(
                        f"collections are nested more than {MAX_DEPTH} levels deep", event
                    )
                mark = event.start_mark
                stack.append((container, shadow, is_map, key, size_sum, anchor))
                anchor = event.anchor
                if anchor is not None:
                    open_anchors.add(anchor)
                container = {} if opens_map else []
                shadow = [
                    None if mark is None else (mark.line + offset) * LINE + mark.column + 1,
                    opens_map,
                ]
                is_map, key, size_sum = opens_map, None, 1
                continue
            elif kind is map_end or kind is seq_end:
                value, size = container, size_sum
                if anchor is not None:
                    open_anchors.discard(anchor)
                    anchors[anchor] = (value, size)
                # a tuple of atoms and tuples: the garbage collector stops tracking it
                finished = tuple(shadow)
                container, shadow, is_map, key, size_sum, anchor = stack.pop()
                # A closed collection: attach it and its shadow.
                if container is None:
                    root = value
                    root_shadow = finished
                elif is_map:
                    container[key] = value
                    shadow.append(key)
                    shadow.append(finished)
                    key = None
                    size_sum += size
                else:
                    container.append(value)
                    shadow.append(finished)
                    size_sum += size
                continue
            elif kind is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self.error("a file may hold only one YAML document", event)
                if event.version is not None or event.tags:
                    raise self.error("%YAML and %TAG directives are not supported", event)
                continue
            elif event is None or kind is yaml.StreamEndEvent:
                return root, SourceMap(pending=partial(pointer_map, root_shadow, offset))
            else:  # stream start, document end
                continue

            # A finished scalar or alias: a key, or a value to attach with its position.
            mark = event.start_mark
            where = None if mark is None else (mark.line + offset) * LINE + mark.column + 1
            if container is None:
                root = value
                root_shadow = where
            elif is_map:
                if key is None:
                    key = value if type(value) is str else self.key_text(value, event)
                    if key in container:
                        raise self.error(f"duplicate mapping key {_short(key)}", event)
                    continue
                container[key] = value
                shadow.append(key)
                shadow.append(where)
                key = None
                size_sum += size
            else:
                container.append(value)
                shadow.append(where)
                size_sum += size

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
        with collector_paused():  # the builder makes no reference cycles
            return _Builder(line_offset).build(source)
    except YamlError:
        raise
    except (yaml.YAMLError, UnicodeError) as error:
        raise _convert(error, text, line_offset, counts_bytes) from None
    finally:
        if source is not None:
            source.dispose()
