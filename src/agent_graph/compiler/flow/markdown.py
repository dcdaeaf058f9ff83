"""The Markdown structure of a ``FLOW.md``: front matter, fences, ATX headings, text lines.

A fence-aware scanner of the CommonMark subset of C.14–C.15 (docs/flows.md §Parsing),
not a CommonMark parser: the format gives meaning to exactly these constructs, and a
full parser would give meaning to more (an indented ``    ## x`` is code to CommonMark, a
setext underline makes a heading, HTML blocks swallow lines), which would make a
Flow's structure depend on rules its authors never see. One pass over the lines,
every item keeps its 1-based line and column.
"""

from __future__ import annotations

import re

from ...frozen import field, record, slotted

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

_FENCE_OPEN: Final = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_HEADING: Final = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES: Final = re.compile(r"(?:^|[ \t]+)#+$")


@record
class Fence:
    """A fenced code block: where it opens, its info string and its content.

    ``column``: of the first fence character; ``info_column``: of the info string's
    first character; ``body_line``: the file line of the content's first line;
    ``closed``: False when the document ended inside it.
    """

    line: int
    column: int
    info: str
    info_column: int
    body: str
    body_line: int
    closed: bool


@record
class Heading:
    """An ATX heading (levels 1–3 matter; 4–6 are text to this format)."""

    level: int
    text: str
    line: int
    column: int


@record
class Text:
    """Prose outside fences and headings: ``line`` is the first non-blank line of a run
    of prose lines (blank lines between them included), one item per run: what reads
    the items asks only whether prose stands somewhere, never line by line."""

    line: int


Item = Fence | Heading | Text


@record
class FrontMatter:
    """The ``---`` block's ``key: value`` lines, as (key, value, line); ``end``: the
    index of the first body line (0-based), or None when the block is missing or open."""

    entries: tuple[tuple[str | None, str, int], ...]
    end: int | None
    present: bool


@slotted
class Scan:
    front: FrontMatter
    lines: list[str]
    items: list[Item] = field(default_factory=list)


def split_lines(text: str) -> list[str]:
    """Lines without their endings (LF or CRLF; a lone CR is not a line break here)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines  # nothing to take off (13,000 lines of a 1,000-node Flow: 0.6 ms)
    return [line.removesuffix("\r") for line in lines]


def front_matter(lines: list[str]) -> FrontMatter:
    """C.14: line one is exactly ``---``, the block ends at the next line that is ``---``.

    Each non-blank line is ``key: value``; a line without a colon has key None. YAML
    (quotes, comments, multi-line values) is deliberately not interpreted.
    """
    if not lines or lines[0] != "---":
        return FrontMatter((), None, False)
    entries: list[tuple[str | None, str, int]] = []
    for index in range(1, len(lines)):
        line = lines[index]
        if line == "---":
            return FrontMatter(tuple(entries), index + 1, True)
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if colon:
            entries.append((key.strip(), value.strip(), index + 1))
        else:
            entries.append((None, line.strip(), index + 1))
    return FrontMatter(tuple(entries), None, True)


#: The characters that may start a fence or a heading (after at most three spaces).
_MARKS: Final = frozenset("`~#")


def scan(text: str) -> Scan:
    """Front matter, then every fence, heading and run of prose of the body in order."""
    lines = split_lines(text)
    front = front_matter(lines)
    result = Scan(front, lines)
    items = result.items
    index = front.end if front.end is not None else 0
    total = len(lines)
    prose = False  # the last item is Text: more prose joins its run
    while index < total:
        line = lines[index]
        number = index + 1
        rest = line.lstrip(" ")
        if rest[:1] not in _MARKS or len(line) - len(rest) > 3:
            # neither a fence nor a heading can start here (both need one of the marks
            # after at most three spaces): a prose line, or a blank one
            if not prose and rest.strip():
                items.append(Text(number))
                prose = True
            index += 1
            continue
        # a line whose mark is # is no fence, and one whose mark is ` or ~ no heading
        opening = _FENCE_OPEN.match(line) if rest[0] != "#" else None
        if opening is not None and not (
            opening.group(2)[0] == "`" and "`" in opening.group(3)  # CommonMark: not a fence
        ):
            index = _fence(lines, index, opening, items)
            prose = False
            continue
        # a heading, read here rather than in a call (2,400 of them in a 1,000-node Flow)
        heading = _HEADING.match(line) if rest[0] == "#" else None
        if heading is not None and len(heading.group(1)) <= 3:
            hashes, title = heading.groups()
            if title is None:
                title = ""
            elif title.endswith("#"):  # the closing sequence cannot match otherwise
                title = _CLOSING_HASHES.sub("", title)
            items.append(Heading(len(hashes), title.strip(), number, heading.start(1) + 1))
            prose = False
        elif not prose and line.strip():
            items.append(Text(number))
            prose = True
        index += 1
    return result


_CLOSERS: dict[tuple[str, int], re.Pattern[str]] = {}


def _closer(mark: str, count: int) -> re.Pattern[str]:
    """What closes a fence of ``count`` ``mark`` characters (made once per kind of fence,
    not per fence: a 1,000-node Flow has a thousand fences and a few kinds)."""
    found = _CLOSERS.get((mark, count))
    if found is None:
        found = _CLOSERS[mark, count] = re.compile(
            rf"^ {{0,3}}{re.escape(mark)}{{{count},}}[ \t]*$"
        )
    return found


def _fence(lines: list[str], index: int, opening: re.Match[str], items: list[Item]) -> int:
    """Read the fence opened at ``lines[index]`` into ``items``; the index after it."""
    indent, marks, rest = opening.groups()
    number = index + 1
    mark = marks[0]
    closer = _closer(mark, len(marks))
    width = len(indent)
    body: list[str] = []
    index += 1
    total = len(lines)
    closed = False
    while index < total:
        content = lines[index]
        if mark in content[:4] and closer.match(content):
            closed = True
            break
        if width:
            body.append(content[min(width, len(content) - len(content.lstrip(" "))) :])
        else:
            body.append(content)
        index += 1
    info = rest.strip()
    info_column = width + len(marks) + (len(rest) - len(rest.lstrip())) + 1
    items.append(Fence(number, width + 1, info, info_column, "\n".join(body), number + 1, closed))
    return index + 1
