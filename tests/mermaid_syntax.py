"""A checker for the Mermaid flowchart syntax that ``agc graph`` and ``agc flow graph`` write.

No maintained Python package parses Mermaid, and the JavaScript one needs a browser
DOM, so this is a grammar of our own (Lark, LALR) for the subset of Mermaid's
``flowchart`` language (its ``flow.jison``) we emit, checked as strictly as Mermaid
reads it: the ``flowchart`` header and direction; node statements with the shapes
``( )`` ``{ }`` ``[[ ]]`` ``([ ])`` ``(( ))`` ``((( )))`` ``{{ }}`` ``> ]`` and a quoted
label that holds no ``"`` (Mermaid ends a label at the first one); edges ``-->`` and
``-.->`` with an optional ``|"label"|``; ``subgraph ID["title"]`` … ``end``;
``classDef``, ``class``, ``style`` and ``linkStyle``; ``%%`` comments. Beyond the
grammar, :func:`check` verifies what Mermaid would reject or mis-draw: an id that is a
keyword, an edge to an undeclared node, a node declared twice, a class used but not
defined, a ``linkStyle`` index past the last edge, unbalanced subgraphs.
"""

from __future__ import annotations

import re

from lark import Lark, Token, Tree

GRAMMAR = r"""
start: _header (_NL statement)* _NL
_header: "flowchart" DIRECTION
DIRECTION: "TD" | "TB" | "LR" | "RL" | "BT"

?statement: node_stmt | edge_stmt | subgraph_open | subgraph_end | classdef
          | class_stmt | style_stmt | linkstyle | COMMENT

node_stmt: ID shape
shape: "(" LABEL ")"            -> round
     | "{" LABEL "}"            -> rhombus
     | "[[" LABEL "]]"          -> subroutine
     | "([" LABEL "])"          -> stadium
     | "((" LABEL "))"          -> circle
     | "(((" LABEL ")))"        -> double_circle
     | "{{" LABEL "}}"          -> hexagon
     | ">" LABEL "]"            -> flag
     | "[" LABEL "]"            -> rect

edge_stmt: ID ARROW edge_label? ID
ARROW: "-->" | "-.->" | "==>"
edge_label: "|" LABEL "|"

subgraph_open: "subgraph" ID "[" LABEL "]"
subgraph_end: "end"

classdef: "classDef" ID STYLES
class_stmt: "class" ID ("," ID)* ID
style_stmt: "style" ID STYLES
linkstyle: "linkStyle" INT ("," INT)* STYLES

LABEL: /"[^"\n]*"/
ID: /[A-Za-z][A-Za-z0-9_]*/
STYLES: /[a-z-]+:[^\s,]+(?:[ ][0-9]+)*(,[a-z-]+:[^\s,]+(?:[ ][0-9]+)*)*/
COMMENT: /%%[^\n]*/
INT: /[0-9]+/
_NL: /(\r?\n[\t ]*)+/

%import common.WS_INLINE
%ignore WS_INLINE
"""

_PARSER = Lark(GRAMMAR, parser="lalr", maybe_placeholders=False)
#: Words Mermaid's flowchart lexer reads as keywords, never as node ids.
KEYWORDS = frozenset(
    [
        "end",
        "subgraph",
        "graph",
        "flowchart",
        "style",
        "class",
        "classDef",
        "click",
        "linkStyle",
        "call",
        "href",
        "default",
        "direction",
        "interpolate",
    ]
)
_ENTITY = re.compile(r"#(?:[a-z]+|[0-9]+);")


class MermaidError(AssertionError):
    pass


def _label_ok(label: str) -> None:
    inner = label[1:-1]
    if any(c in inner for c in "<>") and not all(
        part in ("br/",) for part in re.findall(r"<([^>]*)>", inner)
    ):
        raise MermaidError(f"raw HTML in label {label}")
    stray = _ENTITY.sub("", inner)
    if "#" in stray and re.search(r"#[a-z0-9]+;", inner) is None and "#" in inner:
        raise MermaidError(f"a '#' that is not an entity code in {label}")


def check(text: str) -> Tree[Token]:
    """Parse ``text`` and apply Mermaid's other rules; raise :class:`MermaidError`."""
    if not text.endswith("\n"):
        raise MermaidError("output does not end with a newline")
    try:
        tree = _PARSER.parse(text)
    except Exception as error:  # lark's errors carry the line and column
        raise MermaidError(f"not Mermaid flowchart syntax: {error}") from None
    declared: set[str] = set()
    defined: set[str] = set()
    used_classes: set[str] = set()
    edges = 0
    depth = 0
    link_indexes: list[int] = []
    endpoints: list[str] = []
    for statement in tree.children:
        if isinstance(statement, Token):
            continue  # a comment
        kind = statement.data
        tokens = list(statement.scan_values(lambda t: isinstance(t, Token)))
        ids = [t for t in tokens if t.type == "ID"]
        for label in (t for t in tokens if t.type == "LABEL"):
            _label_ok(str(label))
        for token in ids:
            if str(token) in KEYWORDS:
                raise MermaidError(f"keyword {token} used as an id (line {token.line})")
        if kind == "node_stmt":
            if str(ids[0]) in declared:
                raise MermaidError(f"node {ids[0]} declared twice")
            declared.add(str(ids[0]))
        elif kind == "edge_stmt":
            edges += 1
            endpoints += [str(ids[0]), str(ids[-1])]
        elif kind == "subgraph_open":
            depth += 1
            declared.add(str(ids[0]))
        elif kind == "subgraph_end":
            depth -= 1
            if depth < 0:
                raise MermaidError("'end' without a subgraph")
        elif kind == "classdef":
            defined.add(str(ids[0]))
        elif kind == "class_stmt":
            used_classes.add(str(ids[-1]))
            endpoints += [str(t) for t in ids[:-1]]
        elif kind == "linkstyle":
            link_indexes += [int(t) for t in tokens if t.type == "INT"]
    if depth != 0:
        raise MermaidError("a subgraph is not closed with 'end'")
    undeclared = sorted(set(endpoints) - declared)
    if undeclared:
        raise MermaidError(f"edges or classes name undeclared nodes: {undeclared[:5]}")
    if used_classes - defined:
        raise MermaidError(f"classes used but not defined: {sorted(used_classes - defined)}")
    if link_indexes and max(link_indexes) >= edges:
        raise MermaidError(f"linkStyle {max(link_indexes)} but only {edges} edges")
    return tree
