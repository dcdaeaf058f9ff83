"""One ``FLOW.md`` read into its parts: front matter, the graph, and the node sections.

Checks here are the ones that need only the file's own structure (A.8–A.11, the
graph-block rules of A.12–A.28, the section layout of A.29–A.37); what the graph means
and how sections match its nodes is :mod:`.structure`.
"""

from __future__ import annotations

from ... import codes
from ...frozen import field, slotted
from . import mermaid
from .findings import Findings
from .markdown import Fence, Heading, Item, Scan, end, scan

_EMPTY = {"name": codes.FLOW_NAME_EMPTY, "description": codes.FLOW_DESCRIPTION_EMPTY}


@slotted
class Result:
    """A level-3 heading of a node section and whether text follows it."""

    heading: Heading
    described: bool
    description: str = ""


@slotted
class Section:
    """A level-2 heading, the fences of its action area, and its result headings."""

    heading: Heading
    fences: list[Fence] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)


@slotted
class Document:
    name: str | None
    description: str | None
    graph: mermaid.Graph | None  # None: no usable graph block
    header_line: int
    header_column: int
    sections: list[Section]


def _front_matter(found: Scan, findings: Findings) -> tuple[str | None, str | None]:
    front = found.front
    if not front.present or front.end is None:
        opened = "is not closed by a line '---'" if front.present else "is missing"
        findings.error(
            codes.FLOW_FRONTMATTER_MISSING,
            f"the front matter {opened}: FLOW.md starts with '---', then name: and "
            "description: lines, then '---'",
        )
        return None, None
    values: dict[str, str] = {}
    for key, value, line in front.entries:
        if key is None:
            findings.error(
                codes.FLOW_FRONTMATTER_EXTRA_KEY,
                f"front matter line {value!r} is not 'key: value' (only name and description)",
                line,
            )
        elif key not in ("name", "description"):
            findings.error(
                codes.FLOW_FRONTMATTER_EXTRA_KEY,
                f"front matter key {key!r} is not allowed: only name and description",
                line,
            )
        elif key in values:
            findings.error(
                codes.FLOW_FRONTMATTER_DUPLICATE_KEY,
                f"front matter key {key!r} appears twice",
                line,
            )
        else:
            values[key] = value
            if not value:
                findings.error(_EMPTY[key], f"front matter {key} is empty", line)
    for key in ("name", "description"):
        if key not in values:
            findings.error(_EMPTY[key], f"front matter has no {key}")
    return values.get("name") or None, values.get("description") or None


def _graph(
    items: list[Item], findings: Findings
) -> tuple[mermaid.Graph | None, int | None, int, int]:
    """The graph, the index of its block among the items, and where its header is."""
    blocks = [
        index
        for index, item in enumerate(items)
        if isinstance(item, Fence) and item.info == "mermaid"
    ]
    if not blocks:
        findings.error(codes.FLOW_GRAPH_COUNT, "FLOW.md has no ```mermaid block with the graph")
        return None, None, 1, 1
    block = items[blocks[0]]
    assert isinstance(block, Fence)
    for index in blocks[1:]:
        extra = items[index]
        findings.error(
            codes.FLOW_GRAPH_COUNT,
            f"a second ```mermaid block (the graph is at line {block.line}); "
            "a FLOW.md has exactly one",
            extra.line,
            extra.column,
        )
    first_heading = None
    for item in items:  # in document order: only those before the block can come before it
        if item.line >= block.line:
            break
        if isinstance(item, Heading) and item.level == 2:
            first_heading = item
            break
    if first_heading is not None:
        findings.error(
            codes.FLOW_GRAPH_MISPLACED,
            f"the graph block comes after the level-2 heading at line {first_heading.line}; "
            "it belongs before the first node section",
            block.line,
            block.column,
        )
    if not block.closed:
        return None, blocks[0], block.line, block.column
    body = block.body
    first = len(body) - len(body.lstrip())  # the first character that is not blank
    if first == len(body):
        findings.error(
            codes.FLOW_GRAPH_DIRECTION,
            "the graph block is empty; it starts with 'flowchart TD'",
            block.line,
            block.column,
        )
        return None, blocks[0], block.line, block.column
    # the header is the line of that character, the statements are the lines after it
    header_start = body.rfind("\n", 0, first) + 1
    header_end = body.find("\n", first)
    if header_end < 0:
        header_end = len(body)
    header_line = block.body_line + body.count("\n", 0, first)
    header = body[header_start:header_end]
    header_column = len(header) - len(header.lstrip()) + 1
    if header.strip() != mermaid.HEADER:
        findings.error(
            codes.FLOW_GRAPH_DIRECTION,
            f"the graph starts with {header.strip()!r}; it must be exactly 'flowchart TD'",
            header_line,
            header_column,
        )
    graph = mermaid.parse_statements(body[header_end:], header_line + 1)
    for message, line, column in graph.syntax_errors:
        findings.error(
            codes.FLOW_GRAPH_SYNTAX,
            f"{message}: not a node or edge of the supported Mermaid subset "
            "(ref[Name], ref{{并行}}, start((开始)), finish((结束)), a --> b, a -->|result| b)",
            line,
            column,
        )
    return graph, blocks[0], header_line, header_column


def _sections(found: Scan, block_index: int | None, findings: Findings) -> list[Section]:
    """The node sections, each result with its description: its text up to the next
    heading, trimmed (C.15). One pass over the items (a second for the descriptions and
    a third for an open fence cost a 1,000-node Flow 0.5 ms more, measured when its
    prose runs were items too); a result is made when its text ends, with every field
    (made at its heading and two fields set later: 0.96 instead of 0.92 ms)."""
    text, items = found.text, found.items
    graph_block = items[block_index] if block_index is not None else None
    block = found.starts[block_index] if block_index is not None else None
    sections: list[Section] = []
    current: Section | None = None
    results: list[Result] = []  # the current section's
    heading: Heading | None = None  # of the result whose text is being read
    fenced = False  # a fence follows that heading
    after = 0  # where the result's text starts: the end of its heading's line
    for item, start in zip(items, found.starts, strict=True):
        if isinstance(item, Heading):
            if heading is not None:
                results.append(_result(heading, fenced, text, after, start, block))
                heading = None
            if item.level == 2:
                current = Section(item, [], [])
                results = current.results
                sections.append(current)
            elif item.level == 3:
                if current is None:
                    findings.warning(
                        codes.FLOW_HEADING_IGNORED,
                        f"level-3 heading {item.text!r} comes before the first node section "
                        "and is ignored",
                        item.line,
                    )
                    continue
                after = text.find("\n", start + 1)
                heading, fenced = item, False
                if after < 0:
                    after = len(text)
            continue
        if item is graph_block or current is None:
            continue
        if heading is not None:
            fenced = True
        else:
            current.fences.append(item)  # prose in the action area is ignored
    if heading is not None:
        results.append(_result(heading, fenced, text, after, len(text), block))
    # a fence left open runs to the end of the document, so only the last item can be one
    last = items[-1] if items else None
    if isinstance(last, Fence) and not last.closed:
        findings.error(
            codes.FLOW_FENCE_UNTERMINATED,
            f"the code block opened here (info {last.info!r}) is never closed; "
            "close it with the same fence characters",
            last.line,
            last.column,
        )
    return sections


def _result(
    heading: Heading, fenced: bool, text: str, start: int, stop: int, block: int | None
) -> Result:
    """The result of ``heading``, its description ``text[start:stop]`` trimmed. It is
    described when a fence or prose follows the heading; prose is whatever is not blank
    outside the fences, and the only fence that can be there besides is the graph block
    (which starts at ``block``)."""
    description = text[start:stop].strip()
    described = fenced or bool(description)
    if described and not fenced and block is not None and start <= block < stop:
        described = bool((text[start:block] + text[end(text, block) : stop]).strip())
    return Result(heading, described, description)


def read_document(text: str, findings: Findings) -> Document:
    """Parse ``text`` (BOM already removed), recording every structural finding."""
    found = scan(text)
    name, description = _front_matter(found, findings)
    graph, block, header_line, header_column = _graph(found.items, findings)
    sections = _sections(found, block, findings)
    return Document(name, description, graph, header_line, header_column, sections)
