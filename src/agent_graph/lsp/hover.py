"""What a name under the cursor is: a node's kind, Action effect, Gate and satisfiedBy; a
code's kind and summary; a resource's id, kind and file; a Graph's entries."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .provider_index import Node, ProviderIndex


def hover(index: ProviderIndex, path: Path, line: int, column: int) -> str | None:
    """Markdown about the name at the cursor, or None."""
    ref = index.ref_at(path, line, column)
    if ref is None:
        return None
    if ref.kind == "node":
        node = index.nodes_of(ref.graph).get(ref.name)
        return _node(index, node) if node is not None else None
    if ref.kind == "code":
        code = index.codes.get(ref.name)
        if code is None:
            return f"`{ref.name}`: not in the code catalog"
        entry = code.value
        words = [str(entry.get(k)) for k in ("kind", "severity") if entry.get(k)]
        return f"**{ref.name}** ({', '.join(words)})\n\n{entry.get('summary', '')}".rstrip()
    if ref.kind == "resource":
        found = index.resolve(ref.name)
        if found is None:
            return f"`{ref.name}`: no resource has this id, and no file this path"
        parsed = index.files.get(found)
        value = parsed.value if parsed is not None else {}
        shown = os.path.relpath(found, index.root).replace(os.sep, "/")
        return f"Resource **{value.get('id', ref.name)}** ({value.get('kind', '?')}): `{shown}`"
    if ref.kind == "graph":
        graph = index.graphs.get(ref.name)
        if graph is None:
            return None
        entries = ", ".join(graph.entries)
        return f"Graph **{graph.id}**: {len(graph.nodes)} node(s); entries: {entries}"
    return None


def _node(index: ProviderIndex, node: Node) -> str:
    value = node.value
    lines = [f"**{node.id}**: {value.get('kind', '?')} node of Graph {node.graph}"]
    if isinstance(value.get("description"), str):
        lines.append(value["description"])
    action = value.get("action")
    if isinstance(action, str):
        declared = index.actions.get(Path(os.path.normpath(index.root / action)), {})
        lines.append(
            f"Action `{action}`: runner {declared.get('runner', '?')}, "
            f"effect {declared.get('effect', '?')}"
        )
    gate = value.get("gate")
    if isinstance(gate, dict):
        authority = gate.get("authority")
        lines.append(
            f"Gate `{gate.get('id')}`"
            + (f", authority `{authority}`" if authority else "")
            + (", delegatable" if gate.get("delegatable") else ", not delegatable")
        )
    if value.get("kind") == "subgraph":
        lines.append(f"Runs Graph `{value.get('graph')}` from entry `{value.get('entry')}`")
    checks = value.get("satisfiedBy")
    if isinstance(checks, list) and checks:
        lines.append("satisfiedBy: " + "; ".join(_check(c) for c in checks))
    if isinstance(value.get("reasonCode"), str):
        lines.append(f"reasonCode `{value['reasonCode']}`")
    return "\n\n".join(lines)


def _check(check: Any) -> str:
    if not isinstance(check, dict):
        return str(check)
    rest = ", ".join(f"{k} {v!r}" for k, v in check.items() if k != "path")
    return f"`{check.get('path')}` {rest}".strip()
