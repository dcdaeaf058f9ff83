"""What a ``FLOW.md`` graph block is made of, as its readers hand it on: node occurrences,
edges and syntax errors, each at its file position; and the grammar's text.

:mod:`.mermaid` reads a block into these, line by line when it can, else through
:mod:`.mermaid_grammar` (lark); both build the same records.
"""

from __future__ import annotations

import os
import re
from functools import cache

from ...frozen import field, record, slotted

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


@record
class Occurrence:
    """One written node: ``shape`` is None for a bare ref, else box/circle/hexagon with
    its ``text`` (trimmed)."""

    ref: str
    shape: str | None
    text: str | None
    line: int
    column: int


@record
class Edge:
    """``source --> target``; ``label`` None when unlabelled (``-->||`` gives "")."""

    source: Occurrence
    target: Occurrence
    label: str | None
    line: int
    column: int  # of the arrow


@slotted
class Graph:
    occurrences: list[Occurrence] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    syntax_errors: list[tuple[str, int, int]] = field(default_factory=list)


@cache
def grammar() -> str:
    """The text of ``mermaid.lark``, beside this module (read as a plain file: importing
    ``importlib.resources`` would cost a cold ``agc flow check`` more than reading it)."""
    path = os.path.join(os.path.dirname(__file__), "mermaid.lark")
    with open(path, encoding="utf-8") as handle:
        return handle.read()


_TERMINAL: Final = re.compile(r"^([A-Z_]+): /(.*)/$", re.MULTILINE)


def terminals(text: str) -> dict[str, str]:
    """The grammar's regular-expression terminals, ``NAME: /pattern/``, by name."""
    return dict(_TERMINAL.findall(text))
