"""The graph block of a ``FLOW.md``: its statements, read against the grammar in ``mermaid.lark``.

The grammar is the definition of the syntax, and lark's LALR parser
(:mod:`.mermaid_grammar`) parses with it. Nearly every line of a real graph is one
of a few forms (``a[Name]``, ``a --> b``, ``a -->|result| b[Name]``, a comment), so
each line is first tried against one regular expression assembled from the grammar's
own terminals (:func:`line_pattern`): a statement of the grammar whose tokens fall
where lark's contextual lexer puts them. When every line matches, that is the parse,
and lark is not even imported (it costs more than the rest of a cold ``agc flow
check``); when one does not, the whole block goes to lark, which finds every error
with its own messages and positions. So the line pattern decides nothing lark would
decide differently: ``tests/flow/test_flow_mermaid_lines.py`` compares the two on
generated lines.

What comes out is syntax only: node occurrences (a ref, with its shape when the
occurrence declares one) and edges, each with its file position. What the shapes and
refs mean is :mod:`.structure`'s business.
"""

from __future__ import annotations

import re
from functools import cache

from .mermaid_graph import Edge, Graph, Occurrence, grammar, terminals

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["HEADER", "Edge", "Graph", "Occurrence", "line_pattern", "parse_body"]

HEADER: Final = "flowchart TD"


@cache
def line_pattern() -> re.Pattern[str]:
    """One statement line: ``node`` or ``node --> label? node``, each node ``REF shape?``.

    Each terminal is an atomic group, so it matches what lark's lexer would take at that
    point and never gives characters back. Where two terminals could start at one place
    the grammar's lexer prefers the text over the ignored blanks (after ``[``, ``((``,
    ``{{`` and ``|``), and so does this: the text comes right after its delimiter.
    """
    t = terminals(grammar())
    blank = r"[ \t]*+"  # the grammar's %ignore, which may stand between any two tokens

    def node(n: str) -> str:
        return (
            rf"(?P<ref{n}>(?>{t['REF']})){blank}"
            rf"(?:\[(?P<box{n}>(?>{t['BOX_TEXT']}))\]"
            rf"|\(\((?P<circle{n}>(?>{t['ROUND_TEXT']}))\)\)"
            rf"|\{{\{{(?P<hexagon{n}>(?>{t['HEX_TEXT']}))\}}\}})?"
        )

    label = rf"(?P<bar>\|)(?P<label>(?>{t['LABEL_TEXT']}))?\|"
    return re.compile(
        rf"{blank}{node('0')}{blank}"
        rf"(?:(?P<arrow>-->){blank}(?:{label})?{blank}{node('1')}{blank})?"
    )


#: A line the grammar's newline token swallows: blank, or a ``%%`` comment after blanks.
_SKIPPED: Final = re.compile(r"[ \t]*+(?:%%[^\n]*)?")


def parse_body(lines: list[str], first_line: int) -> Graph:
    """Parse the statement lines after the header; ``first_line`` is the file line of
    ``lines[0]``."""
    graph = _by_lines(lines, first_line)
    if graph is not None:
        return graph
    from .mermaid_grammar import parse_with_lark

    return parse_with_lark(lines, first_line)


def _by_lines(lines: list[str], first_line: int) -> Graph | None:
    """The graph when every line is a statement of the line pattern or skipped, else None."""
    statement = line_pattern().fullmatch
    skipped = _SKIPPED.fullmatch
    graph = Graph()
    occurrences, edges = graph.occurrences, graph.edges
    line = first_line - 1
    for raw in lines:
        line += 1
        found = statement(raw)
        if found is None:
            if skipped(raw) is None:
                return None
            continue
        # the source's ref and shape texts, the arrow and label, the target's
        ref, box, circle, hexagon, arrow, bar, label, ref1, box1, circle1, hexagon1 = found.groups()
        source = _node(ref, box, circle, hexagon, line, found.start(1) + 1)
        occurrences.append(source)
        if arrow is None:
            continue
        end = _node(ref1, box1, circle1, hexagon1, line, found.start(8) + 1)
        occurrences.append(end)
        if bar is not None:
            label = label.strip() if label is not None else ""
        edges.append(Edge(source, end, label, line, found.start(5) + 1))
    return graph


def _node(
    ref: str, box: str | None, circle: str | None, hexagon: str | None, line: int, column: int
) -> Occurrence:
    if box is not None:
        return Occurrence(ref, "box", box.strip(), line, column)
    if circle is not None:
        return Occurrence(ref, "circle", circle.strip(), line, column)
    if hexagon is not None:
        return Occurrence(ref, "hexagon", hexagon.strip(), line, column)
    return Occurrence(ref, None, None, line, column)
