"""The scanner against the line scanner it replaced, kept here as the oracle.

``markdown.scan`` reads the document with one regular expression over the whole text;
the line scanner below (the previous implementation, unchanged but for its Text items
being a plain class) reads it a line at a time, which is the plain reading of C.14–C.15.
``read_document`` is compared with the previous one built on it: every fence, heading,
section, result (``described`` came from the line scanner's prose items, now from the
text between headings) and diagnostic, in order, on the repository's Flows, generated
ones, random documents of the constructs' edge cases and mutations of real Flows.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Final

import pytest

from agent_graph import codes
from agent_graph.compiler.flow import document, mermaid
from agent_graph.compiler.flow.document import Document, Result, Section, read_document
from agent_graph.compiler.flow.findings import Findings
from agent_graph.compiler.flow.markdown import (
    Fence,
    FrontMatter,
    Heading,
    end,
    front_matter,
    scan,
    split_lines,
)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from flow_bench import flow_text  # noqa: E402

# --- the oracle: the line scanner and the document reading built on it -----------------

_FENCE_OPEN: Final = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_HEADING: Final = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES: Final = re.compile(r"(?:^|[ \t]+)#+$")
_MARKS: Final = frozenset("`~#")


class Text:
    """A run of prose lines, at its first one."""

    __slots__ = ("line",)

    def __init__(self, line: int) -> None:
        self.line = line


Item = Fence | Heading | Text


def line_scan(
    text: str, last_lines: dict[int, int] | None = None
) -> tuple[FrontMatter, list[str], list[Item]]:
    """The front matter, lines and items; ``last_lines``, when given, gets each fence's
    last line (its closer's, or the document's), by its first."""
    lines = split_lines(text)
    front = front_matter(lines)
    items: list[Item] = []
    index = front.end if front.end is not None else 0
    total = len(lines)
    prose = False
    while index < total:
        line = lines[index]
        number = index + 1
        rest = line.lstrip(" ")
        if rest[:1] not in _MARKS or len(line) - len(rest) > 3:
            if not prose and rest.strip():
                items.append(Text(number))
                prose = True
            index += 1
            continue
        opening = _FENCE_OPEN.match(line) if rest[0] != "#" else None
        if opening is not None and not (opening.group(2)[0] == "`" and "`" in opening.group(3)):
            index = _fence(lines, index, opening, items)
            if last_lines is not None:
                last_lines[items[-1].line] = min(index, len(lines))
            prose = False
            continue
        heading = _HEADING.match(line) if rest[0] == "#" else None
        if heading is not None and len(heading.group(1)) <= 3:
            hashes, title = heading.groups()
            if title is None:
                title = ""
            elif title.endswith("#"):
                title = _CLOSING_HASHES.sub("", title)
            items.append(Heading(len(hashes), title.strip(), number, heading.start(1) + 1))
            prose = False
        elif not prose and line.strip():
            items.append(Text(number))
            prose = True
        index += 1
    return front, lines, items


def _fence(lines: list[str], index: int, opening: re.Match[str], items: list[Item]) -> int:
    indent, marks, rest = opening.groups()
    number = index + 1
    mark = marks[0]
    closer = re.compile(rf"^ {{0,3}}{re.escape(mark)}{{{len(marks)},}}[ \t]*$")
    width = len(indent)
    body: list[str] = []
    index += 1
    closed = False
    while index < len(lines):
        content = lines[index]
        if closer.match(content):
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


def _old_graph(
    items: list[Item], findings: Findings
) -> tuple[mermaid.Graph | None, Fence | None, int, int]:
    blocks = [item for item in items if isinstance(item, Fence) and item.info == "mermaid"]
    if not blocks:
        findings.error(codes.FLOW_GRAPH_COUNT, "FLOW.md has no ```mermaid block with the graph")
        return None, None, 1, 1
    for extra in blocks[1:]:
        findings.error(
            codes.FLOW_GRAPH_COUNT,
            f"a second ```mermaid block (the graph is at line {blocks[0].line}); "
            "a FLOW.md has exactly one",
            extra.line,
            extra.column,
        )
    block = blocks[0]
    first_heading = next(
        (
            item
            for item in items
            if isinstance(item, Heading) and item.level == 2 and item.line < block.line
        ),
        None,
    )
    if first_heading is not None:
        findings.error(
            codes.FLOW_GRAPH_MISPLACED,
            f"the graph block comes after the level-2 heading at line {first_heading.line}; "
            "it belongs before the first node section",
            block.line,
            block.column,
        )
    if not block.closed:
        return None, block, block.line, block.column
    body = block.body.split("\n") if block.body else []
    start = next((i for i, text in enumerate(body) if text.strip()), None)
    if start is None:
        findings.error(
            codes.FLOW_GRAPH_DIRECTION,
            "the graph block is empty; it starts with 'flowchart TD'",
            block.line,
            block.column,
        )
        return None, block, block.line, block.column
    header_line = block.body_line + start
    header = body[start]
    header_column = len(header) - len(header.lstrip()) + 1
    if header.strip() != mermaid.HEADER:
        findings.error(
            codes.FLOW_GRAPH_DIRECTION,
            f"the graph starts with {header.strip()!r}; it must be exactly 'flowchart TD'",
            header_line,
            header_column,
        )
    graph = mermaid.parse_body(body[start + 1 :], header_line + 1)
    for message, line, column in graph.syntax_errors:
        findings.error(
            codes.FLOW_GRAPH_SYNTAX,
            f"{message}: not a node or edge of the supported Mermaid subset "
            "(ref[Name], ref{{并行}}, start((开始)), finish((结束)), a --> b, a -->|result| b)",
            line,
            column,
        )
    return graph, block, header_line, header_column


def _old_sections(
    items: list[Item], lines: list[str], graph_block: Fence | None, findings: Findings
) -> list[Section]:
    sections: list[Section] = []
    current: Section | None = None
    result: Result | None = None
    for item in items:
        if isinstance(item, Heading):
            if result is not None:
                result.description = "\n".join(lines[result.heading.line : item.line - 1]).strip()
            if item.level == 2:
                current, result = Section(item), None
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
                result = Result(item, False)
                current.results.append(result)
            else:
                result = None
            continue
        if item is graph_block or current is None:
            continue
        if result is not None:
            result.described = True
        elif isinstance(item, Fence):
            current.fences.append(item)
    if result is not None:
        result.description = "\n".join(lines[result.heading.line :]).strip()
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


def old_read_document(text: str, findings: Findings) -> Document:
    _, lines, items = line_scan(text)
    scanned = scan(text)  # only its front matter, compared on its own below
    name, description = document._front_matter(scanned, findings)
    graph, block, header_line, header_column = _old_graph(items, findings)
    sections = _old_sections(items, lines, block, findings)
    return Document(name, description, graph, header_line, header_column, sections)


# --- the comparison ------------------------------------------------------------------------


def check_alike(text: str) -> None:
    last_lines: dict[int, int] = {}
    front, lines, items = line_scan(text, last_lines)
    found = scan(text)
    assert found.front == front, text
    assert found.items == [item for item in items if not isinstance(item, Text)], text
    # the text and offsets _sections reads descriptions from
    assert found.text == "\n" + "\n".join(lines) or (not lines and found.text == "\n"), text
    assert len(found.starts) == len(found.items)
    for item, start in zip(found.items, found.starts, strict=True):
        assert found.text[start] == "\n"
        assert found.text.count("\n", 0, start + 1) == item.line
        stop = end(found.text, start)
        assert stop == len(found.text) or found.text[stop] == "\n"
        last = last_lines[item.line] if isinstance(item, Fence) else item.line
        assert found.text.count("\n", 0, stop) == last, text
    expected, got = Findings("FLOW.md", "x"), Findings("FLOW.md", "x")
    assert read_document(text, got) == old_read_document(text, expected), text
    assert got.items == expected.items, text


def repository_flows() -> list[Path]:
    return sorted(p for p in ROOT.rglob("FLOW.md") if ".git" not in p.parts)


def test_the_repositorys_flows_read_alike() -> None:
    flows = repository_flows()
    assert len(flows) > 50
    for path in flows:
        check_alike(path.read_text(encoding="utf-8").removeprefix("\ufeff"))


@pytest.mark.parametrize("nodes", [1, 10, 100, 1000])
def test_generated_flows_read_alike(nodes: int) -> None:
    text = flow_text(nodes)
    check_alike(text)
    check_alike(text.replace("\n", "\r\n"))


#: Lines at the edges of each construct: indents of 0–4, fences of both marks and of
#: other lengths, closers with trailing blanks or text, info strings with a backtick,
#: headings of every level with and without closing sequences, whitespace that is
#: not a blank to ``str.strip`` alone, lone CRs, front matter lines.
PIECES: Final = [
    "# Title", "## Node", "## Other", "### ok", "### fail", "#### deep", "###### six",
    "####### seven", "#", "##", "###", "##x", "## #", "## a #", "## a#", "## a ##  ",
    "##\t#", "## a \\#", "### 已执行", "   ### three", "    ### code", "\t## tab",
    "prose", "", "  ", "\t", "\u3000", "\x0c", "\x1c", "\x85", "text\r", "\r", "x\ry",
    "```", "````", "`````", "```mermaid", "``` mermaid ", "```执行自定义命令", "``` a`b",
    "```` x", " ```", "  ```", "   ```", "    ```", "```  ", "``` ``", "``", "~~~",
    "~~~~", "~~~~~", "~~~ `x`", "   ~~~~ x", "  ~~~", "~~", "```\t", "~~~ \t", "```x\r",
    "flowchart TD", "  a --> b", "  start((开始)) --> n0[Step]", "  n0 -->|ok| finish((结束))",
    '{"command": "x"}', "---", "name: x", "description: y", "key: v", "no colon",
]  # fmt: skip


def random_text(rng: random.Random) -> str:
    parts: list[str] = []
    if rng.random() < 0.5:
        parts += ["---", "name: n", "description: d"]
        if rng.random() < 0.9:
            parts.append("---")
    parts += [rng.choice(PIECES) for _ in range(rng.randint(0, 30))]
    ending = rng.choice(["\n", "\n", "\n", "\r\n", "\r", "\r\r\n"])
    text = ""
    for part in parts:
        text += part + (rng.choice(["\n", "\r\n", "\r"]) if rng.random() < 0.1 else ending)
    return text[: -rng.randint(0, 2)] if rng.random() < 0.5 and text else text


def test_random_documents_read_alike() -> None:
    rng = random.Random(2026)
    for _ in range(6000):
        check_alike(random_text(rng))


def test_mutated_flows_read_alike() -> None:
    rng = random.Random(7)
    flows = [p.read_text(encoding="utf-8") for p in repository_flows()[:40]]
    flows.append(flow_text(30))
    for _ in range(1500):
        lines = rng.choice(flows).split("\n")
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(lines) + 1)
            edit = rng.random()
            if edit < 0.3 and lines:
                del lines[min(at, len(lines) - 1)]
            elif edit < 0.6:
                lines.insert(at, rng.choice(PIECES))
            elif lines:
                at = min(at, len(lines) - 1)
                lines[at] = " " * rng.randint(1, 4) + lines[at]
        check_alike("\n".join(lines))


def test_edge_cases_read_alike() -> None:
    for text in [
        "", "\n", "\r", "\r\n", "\n\r", "a\n\r", "a\r\r", "---", "---\n", "---\n---",
        "---\n---\n", "---\r\n---\r\n```", "```", "```\n", "```\n\n", "```\nx\n",
        "---\nname: a\n---\n### r\n\n```mermaid\nflowchart TD\n  a\n```\n",
        "---\nname: a\n---\n## s\n### r\n```mermaid\nflowchart TD\n```\nx\n",
        "## s\n### r\n```mermaid\nflowchart TD\n",
        "## s\n### r\n\n```mermaid\nflowchart TD\n```\n\n## t\n### r\n```mermaid\n```\nx",
        "## s\n   ```\n   a\n  b\n c\nd\n      e\n   ```\n### r\n  ```\n\n",
    ]:  # fmt: skip
        check_alike(text)
