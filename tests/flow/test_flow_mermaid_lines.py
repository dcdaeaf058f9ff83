"""The graph block's line pattern takes only what lark's parse of the grammar gives alike.

:mod:`agent_graph.compiler.flow.mermaid` reads a block line by line with one regular
expression assembled from ``mermaid.lark``'s terminals, and hands the block to lark
(:mod:`~agent_graph.compiler.flow.mermaid_grammar`) when a line does not match. That
is only right if every line the pattern takes is a statement lark parses into the same
occurrences and edges, at the same positions: checked here on lines built from the
grammar's tokens, the characters between them and the characters its terminals
exclude, and on whole blocks mixing good and bad lines. The pattern must also take the
common forms (else every check would go through lark, slowly, and this would prove
nothing).
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph.compiler.flow import mermaid, mermaid_graph
from agent_graph.compiler.flow.mermaid_grammar import _parser, parse_with_lark

PIECES = [
    "a", "b", "n1", "x_y", "a-b", "a-", "-", "--", "-->", "--->", "->", "start", "finish",
    "über", "1st", "_", "[", "]", "[Name]", "[ ]", "[ a b ]", "[\"q\"]", "[]", "((", "))",
    "((开始))", "((结束))", "(( x ))", "((x)", "{{", "}}", "{{并行}}", "{{ }}", "{x}", "|",
    "||", "|ok|", "| |", "|已执行|", "|a|b|", "%%", "%% note", " ", "  ", "\t", "\r", "\u3000",
    "\xa0", "\x0c", '"', ";", "&", "==>", "-.->", "Step 1", "名字", "#", "\\",
]  # fmt: skip

COMMON = [
    "start((开始)) --> plan[Plan]",
    "  plan -->|ready| fork{{并行}}",
    "fork --> a[Run a]",
    "a -->|已执行| join[Join]",
    "join -->|已执行| finish((结束))",
    "plan[Plan]",
    "    %% a comment",
    "",
    "  n1 -->|next| n2[Step 2]",
    "x-y --> z",
]


def lark_graph(lines: list[str], first_line: int = 7) -> mermaid.Graph:
    return parse_with_lark(lines, first_line)


BLANKS = ["", "", " ", "  ", "\t", " \t"]
REFS = ["a", "n1", "x_y", "a-b", "a-", "über", "1st", "start", "finish", "_"]
SHAPES = ["", "", "[Name]", "[ ]", "[ a b ]", "((开始))", "((结束))", "(( x ))", "{{并行}}"]
LABELS = ["", "", "|ok|", "||", "| |", "|已执行|", "| a b |"]


def line_of(rng: random.Random) -> str:
    """A statement of the grammar's shape, one slot in three swapped for any piece."""

    def slot(choices: list[str]) -> str:
        return rng.choice(PIECES) if rng.random() < 0.08 else rng.choice(choices)

    node = [slot(REFS), slot(BLANKS), slot(SHAPES)]
    if rng.random() < 0.6:
        node += [slot(BLANKS), slot(["-->"]), slot(BLANKS), slot(LABELS), slot(BLANKS)]
        node += [slot(REFS), slot(BLANKS), slot(SHAPES)]
    return slot(BLANKS) + "".join(node) + slot(BLANKS)


def junk_of(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9)))


def test_the_pattern_is_assembled_from_the_grammars_terminals() -> None:
    parser = _parser()
    found = mermaid_graph.terminals(mermaid_graph.grammar())
    assert set(found) >= {"REF", "BOX_TEXT", "ROUND_TEXT", "HEX_TEXT", "LABEL_TEXT"}
    for name, pattern in found.items():
        # lark turns the escapes \n, \r, \t into the characters; to a regex they are one
        for escape, char in (("\\n", "\n"), ("\\r", "\r"), ("\\t", "\t")):
            pattern = pattern.replace(escape, char)
        assert parser.get_terminal(name).pattern.value == pattern


@pytest.mark.parametrize("line", COMMON)
def test_the_common_forms_are_read_without_lark(line: str) -> None:
    graph = mermaid._by_text("\n" + line, 7)
    assert graph is not None
    assert graph == lark_graph([line])


def test_a_line_of_another_form_sends_the_block_to_lark() -> None:
    lines = ["a[A] --> b[B]", "a & b --> c", "b -->|x| c[C] %% no"]
    assert mermaid._by_text("".join("\n" + line for line in lines), 3) is None
    graph = mermaid.parse_body(lines, 3)
    assert graph == lark_graph(lines, 3)
    assert [(line, column) for _, line, column in graph.syntax_errors] == [(4, 3), (5, 15)]


def test_random_lines_the_pattern_takes_parse_alike_in_lark() -> None:
    rng = random.Random(29)
    taken = refused = edges = 0
    for index in range(6000):
        line = line_of(rng) if index % 3 else junk_of(rng)
        fast = mermaid._by_text("\n" + line, 7)
        if fast is None:
            refused += 1
            continue
        taken += 1
        edges += len(fast.edges)
        slow = lark_graph([line])
        assert slow.syntax_errors == [], line
        assert fast == slow, line
    # the generator reaches the pattern's forms, edges among them, and lines it refuses
    assert taken > 1000
    assert edges > 500
    assert refused > 1000


def test_random_blocks_parse_alike_either_way() -> None:
    rng = random.Random(2029)
    for _ in range(400):
        lines = [rng.choice(COMMON) if rng.random() < 0.6 else line_of(rng) for _ in range(6)]
        assert mermaid.parse_body(lines, 11) == lark_graph(lines, 11), lines


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(sorted(set("".join(PIECES)))), max_size=30))
def test_any_line_over_the_grammars_characters(line: str) -> None:
    fast = mermaid._by_text("\n" + line, 2)
    if fast is not None:
        assert fast == lark_graph([line], 2)


def test_the_ref_terminal_takes_what_its_definition_takes() -> None:
    """REF, written as runs of word characters for speed, takes at every position what
    the grammar's comment defines: a word character, then word characters or hyphens not
    followed by another hyphen, as many as there are."""
    pattern = re.compile(mermaid_graph.terminals(mermaid_graph.grammar())["REF"])
    definition = re.compile(r"\w(?:\w|-(?!-))*")
    rng = random.Random(31)
    for _ in range(20000):
        text = "".join(rng.choice("ab1_--->ü. \t|[") for _ in range(rng.randint(0, 12)))
        for at in range(len(text) + 1):
            ours, defined = pattern.match(text, at), definition.match(text, at)
            assert (ours and ours.group()) == (defined and defined.group()), (text, at)


def test_a_block_is_read_without_lark_exactly_when_each_of_its_lines_is() -> None:
    """The pattern reads a whole block in one search: a line it refuses, wherever it
    stands (first, last, blank-looking, between good ones), must still send the whole
    block to lark, and a block it takes must read as lark reads it."""
    rng = random.Random(2031)
    sent = 0
    for _ in range(3000):
        lines = [
            rng.choice(COMMON)
            if rng.random() < 0.7
            else line_of(rng)
            if rng.random() < 0.7
            else junk_of(rng)
            for _ in range(rng.randint(0, 6))
        ]
        alone = [mermaid._by_text("\n" + line, 1) for line in lines]
        fast = mermaid._by_text("".join("\n" + line for line in lines), 7)
        assert (fast is None) == any(graph is None for graph in alone), lines
        if fast is None:
            sent += 1
        else:
            assert fast == lark_graph(lines, 7), lines
    assert sent > 300


def test_a_block_that_does_not_start_at_a_line_break_is_not_read_by_the_pattern() -> None:
    # its first line would have no "\n" before it, and so no match
    assert mermaid._by_text("a --> b\n  c[C]", 1) is None
    assert mermaid._by_text("", 1) == mermaid.Graph()
