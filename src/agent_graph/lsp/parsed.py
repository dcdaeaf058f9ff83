"""Definition files parsed with positions, each parse kept while its text is unchanged.

The index reads every file of a Provider on each request; a file the author is not
editing has the same text as last time, so its parse is taken from the cache (keyed by
path and text) instead of being parsed again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..documents.sourcemap import ParseError
from ..documents.sources import TextSourceMap, parse_frontmatter, parse_json, read_text
from ..errors import AgentGraphError
from .spans import Span, lines_of, span_at

#: Parses kept (a Provider of a few hundred files fits several times over).
_KEPT: Final = 2048
_STRUCTURED: Final = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class Parsed:
    """A file's value, its positions and its lines."""

    path: Path
    value: Any
    source: TextSourceMap
    lines: list[str]

    def span(self, pointer: str) -> Span | None:
        """The written token of the value at ``pointer`` (None when it has no position)."""
        where = self.source.positions.get(pointer)
        if where is None:
            return None
        return span_at(self.path, self.lines, *where)

    def key_span(self, parent: str, key: str) -> Span | None:
        """The written key ``key`` of the object at ``parent``."""
        where = self.source.key_position(parent, key)
        if where is None:
            return None
        return span_at(self.path, self.lines, *where)


_cache: OrderedDict[Path, tuple[str, Parsed | None]] = OrderedDict()


def parse_text(path: Path, text: str) -> Parsed | None:
    """``text`` as the file at ``path`` (YAML, JSON, or Markdown frontmatter); None when it
    does not parse (the checks report why)."""
    kept = _cache.get(path)
    if kept is not None and kept[0] == text:
        _cache.move_to_end(path)
        return kept[1]
    parsed = _parse(path, text)
    _cache[path] = (text, parsed)
    if len(_cache) > _KEPT:
        _cache.popitem(last=False)
    return parsed


_good: OrderedDict[Path, Parsed] = OrderedDict()


def parse_file(path: Path, *, last_good: bool = False) -> Parsed | None:
    """The file at ``path`` (an editor's buffer for it inside ``buffers``), parsed.

    ``last_good``: when the text does not parse (a value half typed), the last parse of
    that file that did, or the saved file's, so names stay findable while typing.
    """
    try:
        text = read_text(path, display=path.name)
    except AgentGraphError:
        return None
    parsed = parse_text(path, text)
    if parsed is not None:
        _good[path] = parsed
        _good.move_to_end(path)
        if len(_good) > _KEPT:
            _good.popitem(last=False)
        return parsed
    if not last_good:
        return None
    kept = _good.get(path)
    if kept is not None:
        return kept
    from ..documents.files import read_bytes

    try:
        saved = read_bytes(path, path.name).decode("utf-8")
    except (AgentGraphError, UnicodeDecodeError):
        return None
    return parse_text(path, saved)


def _parse(path: Path, text: str) -> Parsed | None:
    text = text.removeprefix("\ufeff")
    suffix = path.suffix.lower()
    try:
        if suffix == ".md":
            if not text.startswith("---"):
                return None
            doc = parse_frontmatter(text, path, display=path.name)
            source = doc.source
            assert isinstance(source, TextSourceMap)
            return Parsed(path, doc.value, source, lines_of(text))
        if suffix not in _STRUCTURED:
            return None
        if suffix == ".json":
            value, plain = parse_json(text)
        else:
            from ..documents.yaml12 import parse_yaml

            value, plain = parse_yaml(text)
    except (ParseError, AgentGraphError):
        return None
    positions, pending = plain.share()
    source = TextSourceMap(positions, pending=pending, text=text, is_json=suffix == ".json")
    return Parsed(path, value, source, lines_of(text))
