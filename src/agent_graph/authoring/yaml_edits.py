"""Targeted edits of YAML (and JSON) text: change a few values, keep every other byte.

Importers and ``agc migrate`` change an author's ``provider.yaml``, catalog or
descriptor in place. Re-dumping the parsed value would drop comments, reorder keys
and restyle quotes, so edits are splices into the original text at the spans LibYAML
reports for each node (the event stream our loader, :mod:`..documents.yaml12`, is
built on). Every edit also records what the *data* should become; :meth:`YamlEditor.result`
re-parses the spliced text with the real loader and refuses it (``yaml-edit-failed``)
unless it reads back as exactly that data — an edit that would silently change the
meaning of a file (an anchored value shared by aliases, an unusual layout) fails
instead of being written.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Final

import yaml
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
)

from .. import codes
from ..documents.json_text import parse_json
from ..documents.sourcemap import ParseError, escape_token
from ..documents.yaml12 import LIBYAML, parse_yaml
from ..errors import AgentGraphError, Diagnostic

__all__ = ["YamlEditor", "render_flow", "render_scalar"]

_BOM: Final = "\ufeff"
_PLAIN_SAFE: Final = re.compile(r"[A-Za-z0-9_./^~<>=*+@()$][A-Za-z0-9_./^~<>=*+@()$: -]*")
_BREAKS: Final = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_ORIGINAL: Final = object()  # an item of the sequence as written


@dataclass(slots=True)
class Span:
    """Where one node is written: ``start``/``end`` character offsets (the value only:
    an anchor or tag in front is skipped), its style and, for collections, flow or block."""

    start: int
    end: int
    kind: str  # "scalar" | "mapping" | "sequence" | "alias"
    style: str | None = None  # scalar: "" plain, "'", '"', "|", ">"
    flow: bool = False
    column: int = 0  # 0-based column of ``start`` (a block collection's indentation)
    children: int = 0


def _failure(display: str, message: str, line: int | None = None) -> AgentGraphError:
    diagnostic = Diagnostic(codes.YAML_EDIT_FAILED, message, path=display, line=line)
    return AgentGraphError(codes.YAML_EDIT_FAILED, message, [diagnostic])


def _skip_properties(text: str, start: int, event: Any) -> int:
    """Offset of a node's value after its ``&anchor`` / ``!tag`` properties."""
    if event.anchor is None and getattr(event, "tag", None) is None:
        return start
    index = start
    while index < len(text) and text[index] in "&!":
        while index < len(text) and text[index] not in " \t\r\n":
            index += 1
        while index < len(text) and text[index] in " \t":
            index += 1
    return index


def _index(mark: Any) -> int:
    """A mark's character offset (LibYAML counts characters, not bytes)."""
    if mark is None:
        raise yaml.YAMLError("an event without a position")
    return int(mark.index)


def _spans(text: str) -> dict[str, Span]:
    """Every node's span by JSON pointer (the text already parsed once, so it is valid)."""
    loader = (yaml.CSafeLoader if LIBYAML else yaml.SafeLoader)(text)
    spans: dict[str, Span] = {}
    # open collections: (pointer, is_map, pending key or None, child count)
    stack: list[list[Any]] = []
    try:
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return spans
            if isinstance(event, (ScalarEvent, AliasEvent, CollectionStartEvent)):
                top = stack[-1] if stack else None
                if top is not None and top[1] and top[2] is None:
                    top[2] = event.value if isinstance(event, ScalarEvent) else ""
                    continue
                if top is None:
                    pointer = ""
                elif top[1]:
                    pointer = top[0] + "/" + escape_token(top[2])
                    top[2] = None
                else:
                    pointer = top[0] + "/" + str(top[3])
                if top is not None:
                    top[3] += 1
                start = _skip_properties(text, _index(event.start_mark), event)
                column = start - (text.rfind("\n", 0, start) + 1)
                if isinstance(event, ScalarEvent):
                    span = Span(start, _index(event.end_mark), "scalar", event.style or "")
                elif isinstance(event, AliasEvent):
                    span = Span(start, _index(event.end_mark), "alias")
                else:
                    is_map = isinstance(event, MappingStartEvent)
                    kind = "mapping" if is_map else "sequence"
                    span = Span(start, start, kind, flow=bool(event.flow_style))
                    stack.append([pointer, is_map, None, 0])
                span.column = column
                spans[pointer] = span
                _extend_parents(spans, stack, pointer, span.end)
            elif isinstance(event, (MappingEndEvent, SequenceEndEvent)):
                pointer, _, _, count = stack.pop()
                span = spans[pointer]
                span.children = count
                if span.flow:  # the closing bracket belongs to the collection
                    span.end = _index(event.end_mark)
                    _extend_parents(spans, stack, pointer, span.end)
    finally:
        loader.dispose()


def _extend_parents(spans: dict[str, Span], stack: list[list[Any]], pointer: str, end: int) -> None:
    for frame in stack:
        if frame[0] != pointer:  # every open frame is an ancestor
            parent = spans[frame[0]]
            parent.end = max(parent.end, end)


def render_scalar(value: Any, *, json_text: bool = False, style: str = "") -> str:
    """One scalar as YAML (or JSON) text, in ``style`` ("" plain, "'", '"') if it reads back."""
    if not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if json_text or style == '"':
        return json.dumps(value, ensure_ascii=False)
    if style == "'" and "\n" not in value and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    if _PLAIN_SAFE.fullmatch(value) and not value.endswith(" "):
        try:
            if parse_yaml(f"k: {value}\n")[0] == {"k": value}:
                return value
        except ParseError:
            pass
    return json.dumps(value, ensure_ascii=False)


def render_flow(value: Any, *, json_text: bool = False) -> str:
    """A value on one line: flow collections (JSON objects and arrays in JSON text)."""
    if isinstance(value, dict):
        inner = ", ".join(
            f"{render_scalar(k, json_text=json_text)}: {render_flow(v, json_text=json_text)}"
            for k, v in value.items()
        )
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(render_flow(v, json_text=json_text) for v in value) + "]"
    return render_scalar(value, json_text=json_text)


def _render_block_item(value: Any, indent: str) -> str:
    """``value`` as the body of a block sequence item (the text after ``- ``)."""
    if isinstance(value, dict) and value:
        lines = [f"{render_scalar(k)}: {render_flow(v)}" for k, v in value.items()]
        return ("\n" + indent).join(lines)
    return render_flow(value)


def _line_end(text: str, offset: int) -> int:
    """Offset just after the line break ending the line that holds ``offset - 1``.

    A node ending at a line start (a block scalar swallows its final break) is already there.
    """
    if offset > 0 and text[offset - 1] in "\n\r":
        return offset
    match = _BREAKS.search(text, offset)
    return match.end() if match else len(text)


class YamlEditor:
    """Collects targeted edits of one YAML or JSON text; :meth:`result` applies and checks them."""

    def __init__(self, text: str, *, display: str, is_json: bool = False) -> None:
        self.display = display
        self.is_json = is_json
        self.original = text  # as read: what the file must still hold when it is written
        self.bom = _BOM if text.startswith(_BOM) else ""
        self.text = text[len(self.bom) :]
        first_break = _BREAKS.search(self.text)
        # inserted lines take the file's own line ending: a CRLF file stays CRLF (N14)
        self.newline = (
            first_break.group()
            if first_break
            and first_break.group()
            in (
                "\r\n",
                "\r",
            )
            else "\n"
        )
        try:
            self.value, _ = parse_json(self.text) if is_json else parse_yaml(self.text)
        except ParseError as error:
            message = f"Cannot parse {display}: {error}"
            diagnostic = Diagnostic(
                codes.PARSE_FAILED, message, path=display, line=error.line, column=error.column
            )
            raise AgentGraphError(codes.PARSE_FAILED, message, [diagnostic]) from None
        self.expected = copy.deepcopy(self.value)
        try:
            self.spans = _spans(self.text)
        except yaml.YAMLError as error:  # JSON that LibYAML reads differently
            raise _failure(display, f"Cannot locate values in {display}: {error}") from None
        self.edits: list[tuple[int, int, str]] = []
        self.inserted: dict[str, list[Any]] = {}

    # -- lookups ---------------------------------------------------------------------------

    def span(self, pointer: str) -> Span:
        span = self.spans.get(pointer)
        if span is None:
            raise _failure(self.display, f"{self.display} has no value at {pointer or '/'}")
        return span

    def line_of(self, pointer: str) -> int:
        return self.text.count("\n", 0, self.span(pointer).start) + 1

    def _target(self, pointer: str) -> tuple[Any, str]:
        """The container in ``expected`` holding ``pointer``'s value, and its last token."""
        parent_pointer, _, token = pointer.rpartition("/")
        container = self._resolve(parent_pointer)
        return container, token.replace("~1", "/").replace("~0", "~")

    def _resolve(self, pointer: str) -> Any:
        node = self.expected
        for raw in pointer.split("/")[1:] if pointer else []:
            token = raw.replace("~1", "/").replace("~0", "~")
            node = node[int(token)] if isinstance(node, list) else node[token]
        return node

    # -- edits -----------------------------------------------------------------------------

    def replace_scalar(self, pointer: str, value: Any) -> None:
        """Set the scalar at ``pointer`` to ``value``, in the same quoting style where possible
        (a collection ``value`` is written in flow style)."""
        span = self.span(pointer)
        if span.kind != "scalar" or span.style in ("|", ">"):
            raise _failure(
                self.display,
                f"{self.display}: the value at {pointer} is not a one-line scalar",
                self.line_of(pointer),
            )
        if isinstance(value, (dict, list)):
            text = render_flow(value, json_text=self.is_json)
        else:
            text = render_scalar(value, json_text=self.is_json, style=span.style or "")
        if span.start == span.end:  # an empty (null) value right after "key:"
            text = " " + text
        self.edits.append((span.start, span.end, text))
        container, token = self._target(pointer)
        if isinstance(container, list):
            container[int(token)] = copy.deepcopy(value)
        else:
            container[token] = copy.deepcopy(value)

    def insert_item(self, pointer: str, index: int, value: Any) -> None:
        """Insert ``value`` into the sequence at ``pointer`` before item ``index`` of the
        list as edited so far (its length appends)."""
        span = self.span(pointer)
        items = self._resolve(pointer)
        if span.kind != "sequence" or not isinstance(items, list):
            raise _failure(self.display, f"{self.display}: {pointer} is not a sequence")
        if not span.flow and span.children == 0:
            raise _failure(self.display, f"{self.display}: {pointer} is not a flow sequence")
        # the text is spliced once per gap between original items, in result(): several
        # items inserted into one gap must come out in list order
        slots = self.inserted.setdefault(pointer, [_ORIGINAL] * span.children)
        if not 0 <= index <= len(slots):
            raise _failure(self.display, f"{self.display}: no position {index} in {pointer}")
        items.insert(index, copy.deepcopy(value))
        slots.insert(index, copy.deepcopy(value))

    def _insert_edits(self) -> list[tuple[int, int, str]]:
        edits = []
        for pointer, slots in self.inserted.items():
            span = self.span(pointer)
            gaps: dict[int, list[Any]] = {}
            originals = 0
            for slot in slots:
                if slot is _ORIGINAL:
                    originals += 1
                else:
                    gaps.setdefault(originals, []).append(slot)
            for before, values in gaps.items():
                if span.flow:
                    edits.append(self._flow_gap(pointer, span, before, values))
                else:
                    edits.append(self._block_gap(pointer, span, before, values))
        return edits

    def _flow_gap(
        self, pointer: str, span: Span, before: int, values: list[Any]
    ) -> tuple[int, int, str]:
        rendered = ", ".join(render_flow(v, json_text=self.is_json) for v in values)
        if span.children == 0:
            return (span.start + 1, span.start + 1, rendered)
        if before < span.children:
            at = self.span(f"{pointer}/{before}").start
            return (at, at, rendered + ", ")
        at = self.span(f"{pointer}/{span.children - 1}").end
        return (at, at, ", " + rendered)

    def _block_gap(
        self, pointer: str, span: Span, before: int, values: list[Any]
    ) -> tuple[int, int, str]:
        indent = " " * span.column
        lines = "".join(f"{indent}- {_render_block_item(v, indent + '  ')}\n" for v in values)
        if before < span.children:
            item = self.span(f"{pointer}/{before}")
            dash = self.text.rfind("-", 0, item.start)
            line_start = self.text.rfind("\n", 0, dash) + 1
            if dash < 0 or self.text[line_start:dash].strip():
                raise _failure(self.display, f"{self.display}: cannot place an item in {pointer}")
            return (line_start, line_start, lines)
        at = _line_end(self.text, self.span(f"{pointer}/{span.children - 1}").end)
        prefix = "" if at > 0 and self.text[at - 1] in "\n\r" else "\n"
        return (at, at, prefix + lines)

    def add_key(self, pointer: str, key: str, value: Any) -> None:
        """Add ``key: value`` as the last member of the mapping at ``pointer``."""
        span = self.span(pointer)
        members = self._resolve(pointer)
        if span.kind != "mapping" or not isinstance(members, dict) or key in members:
            raise _failure(self.display, f"{self.display}: cannot add {key!r} to {pointer or '/'}")
        name = render_scalar(key, json_text=self.is_json)
        if span.flow or not members:
            rendered = f"{name}: {render_flow(value, json_text=self.is_json)}"
            if not span.flow:
                raise _failure(self.display, f"{self.display}: {pointer or '/'} is empty")
            closing = span.end - 1
            self.edits.append((closing, closing, (", " if members else "") + rendered))
        else:
            written = [k for k in members if f"{pointer}/{escape_token(k)}" in self.spans]
            last = self.span(f"{pointer}/{escape_token(written[-1])}")
            at = _line_end(self.text, max(last.end, span.end))
            prefix = "" if at > 0 and self.text[at - 1] in "\n\r" else "\n"
            indent = " " * span.column
            if isinstance(value, dict) and value:
                inner = indent + "  "
                body = "".join(
                    f"\n{inner}{render_scalar(k)}: {render_flow(v)}" for k, v in value.items()
                )
                line = f"{indent}{name}:{body}\n"
            else:
                line = f"{indent}{name}: {render_flow(value)}\n"
            self.edits.append((at, at, prefix + line))
        members[key] = copy.deepcopy(value)

    # -- result ----------------------------------------------------------------------------

    @property
    def changed(self) -> bool:
        return bool(self.edits or self.inserted)

    def result(self) -> str:
        """The edited text, checked to read back as the intended data."""
        text = self.text
        ordered = sorted([*self.edits, *self._insert_edits()], key=lambda e: (e[0], e[1]))
        for (_, end, _), (start, _, _) in itertools.pairwise(ordered):
            if start < end:
                raise _failure(self.display, f"{self.display}: two edits overlap")
        for start, end, replacement in reversed(ordered):
            if self.newline != "\n":
                replacement = replacement.replace("\n", self.newline)
            text = text[:start] + replacement + text[end:]
        try:
            value, _ = parse_json(text) if self.is_json else parse_yaml(text)
        except ParseError as error:
            raise _failure(self.display, f"edited {self.display} does not parse: {error}") from None
        if not _same(value, self.expected):
            raise _failure(
                self.display, f"edited {self.display} would not read back as intended; not written"
            )
        return self.bom + text


def _same(left: Any, right: Any) -> bool:
    """Equal as JSON values, with types (``True`` is not ``1``) and key order ignored."""
    if type(left) is not type(right) and not (
        isinstance(left, (int, float)) and isinstance(right, (int, float))
    ):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)
