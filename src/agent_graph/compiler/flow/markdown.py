"""The Markdown structure of a ``FLOW.md``: front matter, fences, ATX headings.

A fence-aware scanner of the CommonMark subset of C.14–C.15 (docs/flows.md §Parsing),
not a CommonMark parser: the format gives meaning to exactly these constructs, and a
full parser would give meaning to more (an indented ``    ## x`` is code to CommonMark, a
setext underline makes a heading, HTML blocks swallow lines), which would make a
Flow's structure depend on rules its authors never see. Every item keeps its 1-based
line and column; the prose between them is read only as the text of a description.
"""

from __future__ import annotations

import re

from ...frozen import field, make_record, record, slotted

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


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


Item = Fence | Heading


@record
class FrontMatter:
    """The ``---`` block's ``key: value`` lines, as (key, value, line); ``end``: the
    index of the first body line (0-based), or None when the block is missing or open."""

    entries: tuple[tuple[str | None, str, int], ...]
    end: int | None
    present: bool


@slotted
class Scan:
    """What :func:`scan` read. ``text`` is the document as its lines joined by ``\\n``,
    with a ``\\n`` in front, so that every line starts at a ``\\n``; ``starts[i]`` is
    where ``items[i]`` starts in it: at the ``\\n`` before its first line (:func:`end`
    says where it ends)."""

    front: FrontMatter
    text: str
    items: list[Item] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)


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


#: A fence or a heading, at the ``\n`` before its line: the fence with its content (lines
#: up to one that closes it, or to the end) and its closer. Headings of levels 4–6 and a
#: backtick fence whose info holds a backtick are not matched (prose to this format).
#: Groups: indent; hashes, heading text; backticks, info, content, closer; tildes, info,
#: content, closer. The content's repeat is possessive: nothing after it can fail, so it
#: never gives lines back, and the engine keeps no state to (a 300,000-line fence: 63 ms
#: greedy, 6.5 ms so; a 1,000-node Flow's scan 0.08 ms less). The lookahead at the start
#: turns a prose or blank line away at its first character, before the engine tries each
#: alternative (the regular expression alone on a 1,000-node Flow: 1.07 -> 0.80 ms).
_ITEM: Final = re.compile(
    r"\n(?=[ #`~])( {0,3}+)(?:"
    r"(#{1,3}+)(?=[ \t]|$)(.*)"
    r"|(`{3,}+)([^`\n]*)$((?:\n(?! {0,3}+\4`*+[ \t]*$)[^\n]*+)*+)(\n {0,3}+\4`*+[ \t]*$)?"
    r"|(~{3,}+)(.*)((?:\n(?! {0,3}+\8~*+[ \t]*$)[^\n]*+)*+)(\n {0,3}+\8~*+[ \t]*$)?"
    r")",
    re.MULTILINE,
)
#: The line ``---`` that closes the front matter.
_FRONT_END: Final = re.compile(r"\n---$", re.MULTILINE)
_CLOSING_HASHES: Final = re.compile(r"(?:^|[ \t]+)#+$")


def _joined(text: str) -> str:
    """``"\\n"`` and the lines of :func:`split_lines` joined by ``"\\n"``, without the list."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    # the line ending of the last line, or the CR a last line without one loses
    if text.endswith(("\n", "\r")):
        text = text[:-1]
    return "\n" + text


def scan(text: str) -> Scan:
    """Front matter, then every fence and heading of the body in order.

    One regular expression over the whole text instead of a loop over its lines: the
    body's prose lines are never looked at one by one (they matter only as the text of
    a description), and a fence's content is a slice. A 1,000-node Flow (13,600 lines):
    6.8 ms as a line loop, 4.1 ms so (each of its 3,400 items still costs Python work).
    """
    joined = _joined(text)
    body = 0  # the offset of the "\n" before the body's first line
    if joined.startswith("\n---") and joined[4:5] in ("\n", ""):
        close = _FRONT_END.search(joined, 4)
        if close is None:  # read every line, as the open block runs to the end
            front = front_matter(joined[1:].split("\n"))
        else:
            front = front_matter(joined[1 : close.end()].split("\n"))
            body = close.end()
    else:
        front = FrontMatter((), None, False)
    result = Scan(front, joined)
    if body >= len(joined):
        return result
    items, starts = result.items, result.starts
    line = front.end + 1 if front.end is not None else 1  # the line at ``at``
    at = body
    count = joined.count
    for found in _ITEM.finditer(joined, body):
        indent, hashes, rest, ticks, info, content, closer, tildes, t_info, t_content, t_closer = (
            found.groups()
        )
        start = found.start()
        line += count("\n", at, start)
        at = start
        # not the span, a tuple an item made and freed: what reads the items asks where
        # few of them end (read_document of a 1,000-node Flow: 8.28 -> 8.21 ms)
        starts.append(start)
        if hashes is not None:
            title = rest.strip()
            # the heading's own reading takes off blanks, then a closing sequence, then
            # all whitespace: only when this ends in "#" can the two differ
            if title[-1:] == "#":
                title = _title(rest)
            items.append(make_record(Heading, (len(hashes), title, line, len(indent) + 1)))
            continue
        if ticks is None:
            ticks, info, content, closer = tildes, t_info, t_content, t_closer
        if indent:
            items.append(make_record(Fence, _indented(line, indent, ticks, info, content, closer)))
            continue
        # a fence at the margin, read here rather than in a call (1,000 of them in a
        # 1,000-node Flow: scan 4.19 -> 4.07 ms); its content lines are as they stand
        column = len(ticks) + len(info) - len(info.lstrip()) + 1
        fields = (line, 1, info.strip(), column, content[1:], line + 1, closer is not None)
        items.append(make_record(Fence, fields))
    return result


def end(text: str, start: int) -> int:
    """Where the item that starts at ``start`` of a :class:`Scan`'s ``text`` ends: at the
    end of its last line (a heading's one line; a fence's closer, or the document's end)."""
    found = _ITEM.match(text, start)
    assert found is not None  # ``start`` is an item's
    return found.end()


def _title(rest: str) -> str:
    """A heading's text from what follows its hashes, without a closing sequence."""
    title = rest.strip(" \t")
    if title.endswith("#"):
        title = _CLOSING_HASHES.sub("", title)
    return title.strip()


def _indented(
    line: int, indent: str, marks: str, rest: str, content: str, closer: str | None
) -> tuple[int, int, str, int, str, int, bool]:
    """The fields of an indented :class:`Fence` from the groups of its match."""
    width = len(indent)
    body = content[1:]  # each content line comes after its "\n"
    if body:  # and loses up to the fence's indent
        body = "\n".join(
            part[min(width, len(part) - len(part.lstrip(" "))) :] for part in body.split("\n")
        )
    info_column = width + len(marks) + (len(rest) - len(rest.lstrip())) + 1
    return (line, width + 1, rest.strip(), info_column, body, line + 1, closer is not None)
