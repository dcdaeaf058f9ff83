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

from ...frozen import make_record
from .mermaid_graph import Edge, Graph, Occurrence, grammar, terminals

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "HEADER",
    "Edge",
    "Graph",
    "Occurrence",
    "line_pattern",
    "parse_body",
    "parse_statements",
]

HEADER: Final = "flowchart TD"


#: A line the grammar's newline token swallows: blank, or a ``%%`` comment after blanks.
_SKIPPED: Final = r"[ \t]*+(?:%%[^\n]*)?"


@cache
def line_pattern() -> re.Pattern[str]:
    """One line of a block, at the ``\\n`` before it, up to the line's end: a statement,
    ``node`` or ``node --> label? node`` with each node ``REF shape?``, or a skipped line.

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
    statement = (
        rf"{blank}{node('0')}{blank}"
        rf"(?:(?P<arrow>-->){blank}(?:{label})?{blank}{node('1')}{blank})?"
    )
    return re.compile(rf"\n(?:{statement}|{_SKIPPED})$", re.MULTILINE)


def parse_body(lines: list[str], first_line: int) -> Graph:
    """Parse the statement lines after the header; ``first_line`` is the file line of
    ``lines[0]``."""
    return parse_statements("".join(["\n" + line for line in lines]), first_line)


def parse_statements(text: str, first_line: int) -> Graph:
    """Parse the statement lines after the header, each after a ``\\n`` (a graph block's
    content from the end of its header line); ``first_line``: the file line of the first."""
    graph = _by_text(text, first_line)
    if graph is not None:
        return graph
    from .mermaid_grammar import parse_with_lark

    return parse_with_lark(text.split("\n")[1:], first_line)


def _by_text(text: str, first_line: int) -> Graph | None:
    """The graph when every line is a statement of the line pattern or skipped, else None.

    One search over the block rather than a match per line (1,600 lines of a 1,000-node
    Flow: 3.3 ms with a ``fullmatch`` and two calls a line, 2.7 ms so; 2.45 ms with REF
    as the grammar spells it now). The two ends' occurrences come from one function: made
    inline, twice over, they saved 0.08 ms of the 22.8 ms check. The lines' matches
    follow one another exactly when every line matched.
    """
    graph = Graph()
    occurrences, edges = graph.occurrences, graph.edges
    line = first_line - 1
    at = 0  # where the next line's match must start
    for found in line_pattern().finditer(text):
        start = found.start()
        if start != at:
            return None  # the line at ``at`` is neither a statement nor skipped
        at = found.end()
        line += 1
        # the source's ref and shape texts, the arrow and label, the target's
        ref, box, circle, hexagon, arrow, bar, label, ref1, box1, circle1, hexagon1 = found.groups()
        if ref is None:
            continue  # a skipped line
        source = _occurrence(ref, box, circle, hexagon, line, found.start(1) - start)
        occurrences.append(source)
        if arrow is None:
            continue
        end = _occurrence(ref1, box1, circle1, hexagon1, line, found.start(8) - start)
        occurrences.append(end)
        if bar is not None:
            label = label.strip() if label is not None else ""
        edges.append(make_record(Edge, (source, end, label, line, found.start(5) - start)))
    return graph if at == len(text) else None


def _occurrence(
    ref: str, box: str | None, circle: str | None, hexagon: str | None, line: int, column: int
) -> Occurrence:
    """A node occurrence from its groups of the line pattern (its shape's text, if any)."""
    if box is not None:
        return make_record(Occurrence, (ref, "box", box.strip(), line, column))
    if circle is not None:
        return make_record(Occurrence, (ref, "circle", circle.strip(), line, column))
    if hexagon is not None:
        return make_record(Occurrence, (ref, "hexagon", hexagon.strip(), line, column))
    return make_record(Occurrence, (ref, None, None, line, column))
