"""Names in a ``FLOW.md``: its Mermaid nodes, their sections, and the child Flows it runs.

Read from the Flow front end's own scan of the buffer (``read-entry`` and ``check-entry``
through the pass table), so positions are the checker's. Each written occurrence of a
node in the graph is a reference; its ``## label`` section is where it is defined; a
``执行Flow`` block's ``flow`` value refers to the sibling package's FLOW.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..compiler.flow.package import ENTRY_FILE
from ..documents.overlay import buffers
from ..errors import AgentGraphError
from .spans import Span, lines_of, span_at


@dataclass(frozen=True, slots=True)
class FlowRef:
    span: Span
    name: str  # a node ref, or a child Flow's id
    child: Path | None = None  # a 执行Flow target's FLOW.md


@dataclass(slots=True)
class FlowIndex:
    path: Path
    refs: list[FlowRef] = field(default_factory=list)
    sections: dict[str, Span] = field(default_factory=dict)  # node ref -> its heading
    kinds: dict[str, tuple[str, str]] = field(default_factory=dict)  # ref -> (kind, label)

    def ref_at(self, line: int, column: int) -> FlowRef | None:
        return next((r for r in self.refs if r.span.contains(self.path, line, column)), None)


def build(package: Path, texts: dict[Path, str]) -> FlowIndex:
    """The index of the package's FLOW.md, from its buffer when there is one."""
    from ..compiler import compile_flow

    path = package / ENTRY_FILE
    index = FlowIndex(path)
    with buffers(texts):
        try:
            state = compile_flow(package, stop_after="check-entry")
        except AgentGraphError:
            return index
        text = texts.get(path)
        if text is None:
            from ..documents.sources import read_text

            text = read_text(path, display=ENTRY_FILE)
    lines = lines_of(text.removeprefix("\ufeff"))
    loaded = state.loaded.root
    document, structure = loaded.document, loaded.structure
    if document is None or document.graph is None:
        return index
    for occurrence in document.graph.occurrences:
        span = span_at(path, lines, occurrence.line, occurrence.column)
        index.refs.append(
            FlowRef(
                Span(path, span.line, span.start, span.start + len(occurrence.ref)), occurrence.ref
            )
        )
    for ref, decl in (structure.decls if structure is not None else {}).items():
        index.kinds[ref] = (decl.kind, decl.text)
        if decl.section is not None:
            heading = decl.section.heading
            row = heading.line - 1
            start = heading.column - 1 + heading.level + 1
            end = len(lines[row].rstrip()) if row < len(lines) else start
            index.sections[ref] = Span(path, row, start, max(end, start))
        action = decl.action
        target = getattr(action, "flow", None)
        if isinstance(target, str) and action is not None:
            line, column = action.flow_at
            span = span_at(path, lines, line, column)
            child = Path(os.path.normpath(package.parent / target)) / ENTRY_FILE
            index.refs.append(FlowRef(span, target, child))
    return index


def definition(index: FlowIndex, line: int, column: int) -> Span | None:
    ref = index.ref_at(line, column)
    if ref is None:
        return None
    if ref.child is not None:
        return Span(ref.child, 0, 0, 0) if ref.child.is_file() else None
    return index.sections.get(ref.name) or next(
        (r.span for r in index.refs if r.name == ref.name and r.child is None), None
    )


def references(index: FlowIndex, line: int, column: int) -> list[Span]:
    ref = index.ref_at(line, column)
    if ref is None or ref.child is not None:
        return []
    found = [r.span for r in index.refs if r.name == ref.name and r.child is None]
    section = index.sections.get(ref.name)
    return found + ([section] if section is not None else [])


def hover(index: FlowIndex, line: int, column: int) -> str | None:
    ref = index.ref_at(line, column)
    if ref is None:
        return None
    if ref.child is not None:
        return f"执行Flow: runs the sibling package `{ref.name}` as a child Run"
    kind, label = index.kinds.get(ref.name, ("?", ""))
    return f"**{ref.name}**: {kind} node, section `## {label}`"
