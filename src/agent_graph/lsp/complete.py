"""Completion where a reference is expected, read from the line being typed.

The buffer often does not parse while a value is half typed, so the context is the
text before the cursor: the key the value belongs to (``to:``, ``reasonCode:`` …), or
for a list item the nearest key above it with less indentation.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .provider_index import ProviderIndex

_KEYED: Final = re.compile(r"(?:^|[\s{,])([A-Za-z][\w.-]*)\s*:\s*[\"']?([^\s\"',{}\[\]]*)$")
_ITEM: Final = re.compile(r"^(\s*)(?:-\s+|.*\[\s*(?:[^\]]*,\s*)?)[\"']?([^\s\"',\[\]]*)$")
_NODE_KEYS: Final = frozenset({"from", "to", "primaryNode"})
_CODE_KEYS: Final = frozenset({"reasonCode", "primaryReasonCode"})
_RESOURCE_LISTS: Final = frozenset({"required", "recommended", "requiredResources"})
_FILE_KEYS: Final = {"action": "actions", "codes": "", "document": "", "graphs": "graphs"}


@dataclass(frozen=True, slots=True)
class Item:
    label: str
    kind: str  # "node" | "code" | "resource" | "file" | "graph"
    detail: str = ""


def _list_key(lines: list[str], row: int, indent: int) -> str | None:
    for above in range(row - 1, -1, -1):
        text = lines[above]
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(text) - len(stripped)
        if depth < indent or (depth == indent and not stripped.startswith("-")):
            found = re.match(r"(?:-\s+)?([A-Za-z][\w.-]*)\s*:", stripped)
            return found.group(1) if found else None
    return None


def context(lines: list[str], row: int, column: int) -> str | None:
    """The key whose value the cursor is in, or None."""
    before = lines[row][:column] if row < len(lines) else ""
    keyed = _KEYED.search(before)
    if keyed is not None:
        return keyed.group(1)
    item = _ITEM.match(before)
    if item is not None:
        inline = re.search(r"([A-Za-z][\w.-]*)\s*:\s*\[[^\]]*$", before)
        if inline is not None:
            return inline.group(1)
        return _list_key(lines, row, len(item.group(1)))
    return None


def complete(
    index: ProviderIndex, path: Path, lines: list[str], row: int, column: int
) -> list[Item]:
    key = context(lines, row, column)
    if key is None:
        return []
    if key in _NODE_KEYS or _in_entrypoints(lines, row):
        return _nodes(index, path)
    if key in _CODE_KEYS:
        return [Item(c.code, "code", str(c.value.get("summary", ""))) for c in index.codes.values()]
    if key in _RESOURCE_LISTS:
        items = [Item(rid, "resource", _shown(index, p)) for rid, p in index.resources.items()]
        return items + _paths(index, "", (".md", ".yaml", ".yml", ".json"))
    if key == "graph":
        return [Item(g.id, "graph", _shown(index, g.path)) for g in index.graphs.values()]
    if key in _FILE_KEYS:
        return _paths(index, _FILE_KEYS[key], (".yaml", ".yml", ".json"))
    return []


def _in_entrypoints(lines: list[str], row: int) -> bool:
    return False if row == 0 else _list_key(lines, row, 1) == "entrypoints"


def _nodes(index: ProviderIndex, path: Path) -> list[Item]:
    graph = index.graph_of(path)
    if graph is None:
        parsed = index.files.get(path)
        gid = parsed.value.get("graph") if parsed is not None else None
        graph = index.graphs.get(gid) if isinstance(gid, str) else None
    if graph is None:
        return []
    return [Item(n.id, "node", str(n.value.get("kind", ""))) for n in graph.nodes.values()]


def _shown(index: ProviderIndex, path: Path) -> str:
    return os.path.relpath(path, index.root).replace(os.sep, "/")


def _paths(index: ProviderIndex, under: str, suffixes: tuple[str, ...]) -> list[Item]:
    """Files of the Provider a reference may name (``under`` first, when it is there)."""
    shown = [_shown(index, p) for p in index.files if p.suffix.lower() in suffixes]
    shown = [s for s in shown if not s.startswith("../")]
    preferred = [s for s in shown if under and s.startswith(under + "/")]
    return [Item(s, "file") for s in (preferred or sorted(shown))]
