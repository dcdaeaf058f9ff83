"""The diagnostics of an owner, from the editor's buffers: what the command line reports.

A Provider is checked as ``agc validate`` checks it (every pass up to ``CHECKED``), a Flow
package as ``agc flow check`` does (up to ``load-closure``), with the buffers standing in
for their files (:func:`agent_graph.documents.overlay.buffers`). Each diagnostic keeps its
code, severity and message; its position becomes a range over the written token, and a
did-you-mean becomes related information pointing at what was meant.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .. import codes
from ..documents.overlay import buffers
from ..documents.sourcemap import Document
from ..documents.sources import TextSourceMap
from ..errors import AgentGraphError, Diagnostic
from .owners import Owner
from .parsed import Parsed, parse_file
from .spans import Span, lines_of, span_at

_MEANT: Final = re.compile(r"did you mean `?([^`?\s]+)`?\?")


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnostic placed in a file: ``related`` is (where, what) for a did-you-mean."""

    span: Span
    diagnostic: Diagnostic
    related: list[tuple[Span, str]] = field(default_factory=list)


@dataclass(slots=True)
class Report:
    """The diagnostics, and the Graph documents the compiler parsed on the way (so they
    are not parsed a second time to place a diagnostic)."""

    diagnostics: list[Diagnostic]
    documents: dict[Path, Document] = field(default_factory=dict)


def reported(owner: Owner, texts: Mapping[Path, str]) -> Report:
    """The diagnostics the command line reports for ``owner`` with ``texts`` as the files."""
    with buffers(texts):
        if owner.kind == "provider":
            return _provider(owner.path)
        return Report(_flow(owner.path))


def _provider(manifest: Path) -> Report:
    from ..compiler import CHECKED, compile_manifest
    from ..compiler.provider.pipeline import pass_names

    names = pass_names()
    # every check, stopped before raise-collected so the state (and its parsed Graphs)
    # survives a failure; then raise-collected and the rest, as agc validate runs them
    checked = names[names.index("raise-collected") - 1]
    try:
        state = compile_manifest(manifest, stop_after=checked)
    except AgentGraphError as error:
        return Report(error.diagnostics or [Diagnostic(error.code, error.message)])
    loader = state.loader
    documents = {g.path: g.doc for g in loader.graphs.values()} if loader is not None else {}
    try:
        compile_manifest(state, stop_after=CHECKED)
    except AgentGraphError as error:
        diagnostics = error.diagnostics or [Diagnostic(error.code, error.message)]
        return Report(diagnostics, documents)
    assert state.provider is not None
    return Report(list(state.provider.warnings), documents)


def _flow(package: Path) -> list[Diagnostic]:
    from ..compiler import compile_flow
    from ..compiler.flow.pipeline import FLOW_CHECKED

    try:
        return compile_flow(package, stop_after=FLOW_CHECKED).diagnostics()
    except AgentGraphError as error:
        return error.diagnostics or [Diagnostic(error.code, error.message)]


def base_of(owner: Owner) -> Path:
    """What the diagnostics' paths are relative to: the Provider's directory, or the
    directory the Flow package is in."""
    if owner.kind == "provider":
        return owner.path.parent
    return Path(os.path.realpath(owner.path)).parent


def findings(owner: Owner, texts: Mapping[Path, str]) -> dict[Path, list[Finding]]:
    """Every diagnostic of ``owner``, by the file it is in (the owner's own file when it
    names none)."""
    base = base_of(owner)
    home = owner.path if owner.kind == "provider" else owner.path / "FLOW.md"
    placed: dict[Path, list[Finding]] = {}
    with buffers(texts):
        report = reported(owner, texts)
        for diagnostic in report.diagnostics:
            path = Path(os.path.normpath(base / diagnostic.path)) if diagnostic.path else home
            if owner.kind == "flow":
                path = _as_written(path, owner)
            document = report.documents.get(path)
            placed.setdefault(path, []).append(_placed(diagnostic, path, base, document))
    return placed


def _as_written(path: Path, owner: Owner) -> Path:
    """``path`` under the package as the editor names it, when the compiler named it by
    its real path."""
    real_root = Path(os.path.realpath(owner.path))
    try:
        return owner.path / path.relative_to(real_root)
    except ValueError:
        return path


def _lines(path: Path) -> list[str]:
    from ..documents.sources import read_text

    try:
        return lines_of(read_text(path, display=path.name))
    except AgentGraphError:
        return []


def _placed(diagnostic: Diagnostic, path: Path, base: Path, document: Document | None) -> Finding:
    lines = _lines(path)
    if diagnostic.line is None:
        span = Span(path, 0, 0, max(len(lines[0]) if lines else 0, 1))
    else:
        span = span_at(path, lines, diagnostic.line, diagnostic.column or 1)
    suggestion = _suggestion(diagnostic)
    if diagnostic.pointer is None and suggestion is None:
        return Finding(span, diagnostic)
    # a Graph comes parsed from the compiler; other files are small
    parsed = _parsed(path, document)
    if parsed is not None and diagnostic.line is not None:
        if diagnostic.code == codes.GRAPH_EDGE_NODE_MISSING:
            span = _missing_end(parsed, diagnostic.pointer) or span
        else:
            span = _named(parsed, diagnostic.pointer, span) or span
    if suggestion is None:
        return Finding(span, diagnostic)
    return Finding(span, diagnostic, [_related(suggestion, span, parsed, base)])


def _parsed(path: Path, document: Document | None) -> Parsed | None:
    if document is not None and isinstance(document.source, TextSourceMap):
        return Parsed(path, document.value, document.source, lines_of(document.source.text))
    return parse_file(path)


def _suggestion(diagnostic: Diagnostic) -> str | None:
    suggestion = diagnostic.detail.get("suggestion")
    if isinstance(suggestion, str):
        return suggestion
    found = _MEANT.search(diagnostic.message)
    return found.group(1) if found else None


def _node_ids(parsed: Parsed) -> set[str]:
    nodes = parsed.value.get("nodes") if isinstance(parsed.value, dict) else None
    if not isinstance(nodes, list):
        return set()
    return {n["id"] for n in nodes if isinstance(n, dict) and isinstance(n.get("id"), str)}


def _value_at(value: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(token)
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value


def _named(parsed: Parsed, pointer: str | None, span: Span) -> Span | None:
    """An object reported as a whole (a node, a Graph) is underlined at its ``id``, when
    the compiler placed it on the line where that id is written."""
    if pointer is None or not isinstance(_value_at(parsed.value, pointer), dict):
        return None
    if not isinstance(_value_at(parsed.value, f"{pointer}/id"), str):
        return None
    named = parsed.span(f"{pointer}/id")
    return named if named is not None and named.line == span.line else None


def _missing_end(parsed: Parsed, pointer: str | None) -> Span | None:
    """The edge's ``to`` (or ``from``) that names no node: where the typo is."""
    if pointer is None or not pointer.startswith("/edges/"):
        return None
    try:
        edge = parsed.value["edges"][int(pointer.split("/")[2])]
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    known = _node_ids(parsed)
    for member in ("to", "from"):
        if isinstance(edge, dict) and edge.get(member) not in known:
            return parsed.span(f"{pointer}/{member}")
    return None


def _related(suggestion: str, span: Span, parsed: Parsed | None, base: Path) -> tuple[Span, str]:
    """Where the suggested name is: a node's id in this Graph, a file, or (a member name,
    a code) the diagnostic's own place."""
    message = f"did you mean {suggestion}?"
    if parsed is not None and suggestion in _node_ids(parsed):
        for index, node in enumerate(parsed.value["nodes"]):
            if isinstance(node, dict) and node.get("id") == suggestion:
                where = parsed.span(f"/nodes/{index}/id")
                if where is not None:
                    return where, message
    candidate = Path(os.path.normpath(base / suggestion))
    if "/" in suggestion and candidate.is_file():
        return Span(candidate, 0, 0, 0), message
    return span, message
