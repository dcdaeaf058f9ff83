"""Renaming a node id: every place that spells it, or a refusal saying why not."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from .. import codes
from ..errors import AgentGraphError
from .provider_index import ProviderIndex
from .spans import Span

#: A node id as graph.schema.json's ``$defs/id`` spells it.
NODE_ID: Final = re.compile(r"^[a-z0-9](?:[a-z0-9._/-]*[a-z0-9])?$")


def rename(index: ProviderIndex, path: Path, line: int, column: int, new: str) -> list[Span]:
    """The spans to rewrite as ``new``: the node's id, its edges, entries, tests' expected
    nodes and state keys. ``lsp-rename-refused`` when the cursor is on no node id, the
    new id is not an id, or another node of that Graph has it."""
    ref = index.ref_at(path, line, column)
    if ref is None or ref.kind != "node":
        raise AgentGraphError(codes.LSP_RENAME_REFUSED, "only a node id can be renamed here")
    if not NODE_ID.match(new) or "/" in new or ">" in new:
        raise AgentGraphError(
            codes.LSP_RENAME_REFUSED,
            f"{new!r} is not a node id (lowercase letters, digits and . _ - inside, "
            "starting and ending with a letter or digit; no / in a state key's node)",
        )
    nodes = index.nodes_of(ref.graph)
    if ref.name not in nodes:
        raise AgentGraphError(
            codes.LSP_RENAME_REFUSED, f"Graph {ref.graph} has no node {ref.name} to rename"
        )
    if new in nodes and new != ref.name:
        raise AgentGraphError(
            codes.LSP_RENAME_REFUSED,
            f"Graph {ref.graph} already has a node {new}; the rename would merge two nodes",
        )
    return [
        r.span
        for r in index.refs
        if r.kind == "node" and r.graph == ref.graph and r.name == ref.name
    ]
