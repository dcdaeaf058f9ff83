"""The node sections read in one pass over the scanned items, against the plain definitions:
a result's description is its text up to the next heading of levels 1–3 (C.15), trimmed;
only a fence the document ends inside is unterminated."""

from __future__ import annotations

import random

from agent_graph import codes
from agent_graph.compiler.flow.document import read_document
from agent_graph.compiler.flow.findings import Findings
from agent_graph.compiler.flow.markdown import Fence, Heading, scan, split_lines

PIECES = [
    "# Title", "## Node", "## Other", "### ok", "### fail", "#### deep", "prose", "", "  ",
    "```执行自定义命令", '{"command": "x"}', "```", "~~~", "   ### three", "    ### code",
    "## Node ##", "### 已执行", "text\r", "\u3000",
]  # fmt: skip


def _expected(text: str) -> tuple[list[str], int]:
    """Each result's description by the definition, and how many fences are left open."""
    lines, items = split_lines(text), scan(text).items
    starts = [item.line for item in items if isinstance(item, Heading)] + [len(lines) + 1]
    descriptions = []
    section = False
    for item in items:
        if isinstance(item, Heading) and item.level == 2:
            section = True
        elif isinstance(item, Heading) and item.level == 3 and section:
            end = min(line for line in starts if line > item.line)
            descriptions.append("\n".join(lines[item.line : end - 1]).strip())
    open_fences = sum(1 for item in items if isinstance(item, Fence) and not item.closed)
    return descriptions, open_fences


def test_descriptions_and_open_fences_match_their_definitions() -> None:
    rng = random.Random(47)
    for _ in range(3000):
        text = "\n".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        findings = Findings("FLOW.md", "x")
        document = read_document(text, findings)
        descriptions, open_fences = _expected(text)
        got = [r.description for s in document.sections for r in s.results]
        assert got == descriptions, text
        unterminated = [d for d in findings.items if d.code == codes.FLOW_FENCE_UNTERMINATED]
        assert len(unterminated) == open_fences, text
