"""Go to definition and find references over a Provider's index."""

from __future__ import annotations

from pathlib import Path

from .provider_index import ProviderIndex, Ref
from .spans import Span


def _key(ref: Ref) -> tuple[str, str, str]:
    graph = ref.graph if ref.kind in ("node", "entry") else ""
    return ref.kind, graph, ref.name


def declaration(index: ProviderIndex, ref: Ref) -> Span | None:
    """Where the name ``ref`` spells is declared (a file reference: the file's start)."""
    if ref.kind == "node":
        node = index.nodes_of(ref.graph).get(ref.name)
        return node.span if node is not None else None
    if ref.kind == "code":
        code = index.codes.get(ref.name)
        return code.span if code is not None else None
    if ref.kind == "graph":
        graph = index.graphs.get(ref.name)
        return graph.span if graph is not None else None
    if ref.kind == "entry":
        found = index.graphs.get(ref.graph)
        return found.entries.get(ref.name) if found is not None else None
    target = ref.target if ref.kind == "file" else index.resolve(ref.name)
    return Span(target, 0, 0, 0) if target is not None and target.is_file() else None


def definition(index: ProviderIndex, path: Path, line: int, column: int) -> Span | None:
    ref = index.ref_at(path, line, column)
    return declaration(index, ref) if ref is not None else None


def references(
    index: ProviderIndex, path: Path, line: int, column: int, *, declared: bool = True
) -> list[Span]:
    """Every place that spells the name under the cursor (its declaration when asked)."""
    ref = index.ref_at(path, line, column)
    if ref is None or ref.kind in ("file", "resource"):
        return []
    key = _key(ref)
    return [r.span for r in index.refs if _key(r) == key and (declared or not r.defines)]
