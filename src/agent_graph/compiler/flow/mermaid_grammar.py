"""The graph block parsed by lark's LALR parser with the grammar in ``mermaid.lark``.

:mod:`.mermaid` sends a block here when a line is not one of the common statement
forms. The block is parsed in one go; when that fails, each statement line is parsed
on its own so every bad line gets its diagnostic (one syntax error must not hide the
next). The parser is built once, on first use.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from .mermaid_graph import Edge, Graph, Occurrence, grammar


class _Build(Transformer[Token, Any]):
    """Turns parse events into occurrences and edges as the LALR parser reduces."""

    def __init__(self, line_offset: int) -> None:
        super().__init__()
        self.offset = line_offset
        self.graph = Graph()

    def _at(self, token: Token) -> tuple[int, int]:
        return (token.line or 1) + self.offset, token.column or 1

    def box(self, children: list[Token]) -> tuple[str, str]:
        return "box", str(children[0]).strip()

    def circle(self, children: list[Token]) -> tuple[str, str]:
        return "circle", str(children[0]).strip()

    def hexagon(self, children: list[Token]) -> tuple[str, str]:
        return "hexagon", str(children[0]).strip()

    def label(self, children: list[Token]) -> str:
        return str(children[0]).strip() if children else ""

    def node(self, children: list[Any]) -> Occurrence:
        ref: Token = children[0]
        shape, text = children[1] if len(children) > 1 else (None, None)
        line, column = self._at(ref)
        found = Occurrence(str(ref), shape, text, line, column)
        self.graph.occurrences.append(found)
        return found

    def edge(self, children: list[Any]) -> None:
        source, arrow = children[0], children[1]
        label = children[2] if len(children) == 4 else None
        line, column = self._at(arrow)
        self.graph.edges.append(Edge(source, children[-1], label, line, column))

    def statement(self, children: list[Any]) -> None:
        return None

    def body(self, children: list[Any]) -> None:
        return None


#: The builder the parser calls as it reduces (lark's inline transformer: no parse
#: tree is built, about 40% faster on a large graph). It holds the graph being built, so
#: parses take turns.
_BUILD = _Build(0)
_TURN = threading.Lock()


@cache
def _parser() -> Lark:
    return Lark(grammar(), parser="lalr", start=["body", "statement"], transformer=_BUILD)


def _message(error: UnexpectedInput, text: str) -> str:
    if isinstance(error, UnexpectedCharacters):
        at = error.pos_in_stream or 0
        found = text[at] if at < len(text) else "end of line"
        return f"unexpected {found!r}"
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type in ("$END", "_NL"):
            return "the statement ends too early"
        return f"unexpected {str(token)!r}"
    return "not a statement of the supported Mermaid subset"


def parse_with_lark(lines: list[str], first_line: int) -> Graph:
    """Parse the statement lines after the header; ``first_line`` is the file line of
    ``lines[0]``."""
    with _TURN:
        _BUILD.offset, _BUILD.graph = first_line - 2, Graph()
        try:
            # The leading newline makes every statement follow one (see the grammar), and
            # makes lines[0] lark's line 2.
            _parser().parse("\n" + "\n".join(lines), start="body")
        except UnexpectedInput:
            return _parse_lines(lines, first_line)
        return _BUILD.graph


def _parse_lines(lines: list[str], first_line: int) -> Graph:
    """Line by line, so each bad statement is reported (the block failed as a whole)."""
    graph = Graph()
    parser = _parser()
    _BUILD.graph = graph
    for offset, raw in enumerate(lines):
        stripped = raw.strip()
        if not stripped or stripped.startswith("%%"):
            continue
        line = first_line + offset
        _BUILD.offset = line - 1
        mark = (len(graph.occurrences), len(graph.edges))
        try:
            parser.parse(raw, start="statement")
        except UnexpectedInput as error:
            # a failed line leaves nothing half-built behind
            del graph.occurrences[mark[0] :], graph.edges[mark[1] :]
            column = error.column if isinstance(error.column, int) and error.column > 0 else 0
            if not column:
                column = len(raw) - len(raw.lstrip()) + 1
            graph.syntax_errors.append((_message(error, raw), line, column))
    return graph
