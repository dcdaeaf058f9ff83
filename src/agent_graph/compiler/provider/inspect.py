"""``agent-graph.inspect.v1``: a read-only summary of a loaded Provider (reference §10)."""

from __future__ import annotations

from typing import Any

from ...canonical import js_sorted, locale_sorted
from ...documents.paths import portable
from .model import LoadedProvider

INSPECT_SCHEMA = "agent-graph.inspect.v1"


def _node_summary(node: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": node["id"], "kind": node["kind"]}
    if "description" in node:
        out["description"] = node["description"]
    if node["kind"] in ("action", "gate"):
        out["reasonCode"] = node["reasonCode"]
    out["priority"] = node.get("priority", 0)
    return out


def _by_id(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items in localeCompare order of their (unique) ids."""
    index = {item["id"]: item for item in items}
    return [index[key] for key in locale_sorted(list(index))]


def inspect_provider(provider: LoadedProvider) -> dict[str, Any]:
    graphs = []
    for graph in provider.graphs.values():
        definition = graph.definition
        entry: dict[str, Any] = {"id": graph.id}
        if "description" in definition:
            entry["description"] = definition["description"]
        entry["path"] = graph.rel
        entry["entrypoints"] = definition["entrypoints"]
        entry["nodes"] = [_node_summary(node) for node in definition["nodes"]]
        entry["dependencies"] = js_sorted(provider.graph_dependencies.get(graph.id, []))
        graphs.append(entry)
    actions = [
        {
            "id": action.id,
            "runner": action.definition["runner"],
            "effect": action.definition["effect"],
            "path": portable(provider.root, action.path),
        }
        for action in provider.actions.values()
    ]
    resources = [
        {
            "id": resource.id,
            "kind": resource.kind,
            "dynamic": resource.dynamic,
            "path": portable(provider.root, resource.path),
        }
        for resource in provider.resources.values()
    ]
    catalog = provider.catalog
    return {
        "schema": INSPECT_SCHEMA,
        "provider": {
            "id": provider.id,
            "version": provider.version,
            "manifest": str(provider.manifest_path),
        },
        "counts": {
            "graphs": len(provider.graphs),
            "nodes": sum(len(g.definition["nodes"]) for g in provider.graphs.values()),
            "edges": sum(len(g.definition["edges"]) for g in provider.graphs.values()),
            "actions": len(provider.actions),
            "resources": len(provider.resources),
            "codes": len(catalog.entries) if catalog is not None else 0,
        },
        "graphs": _by_id(graphs),
        "actions": _by_id(actions),
        "resources": _by_id(resources),
        "codes": catalog.doc.value["codes"] if catalog is not None else [],
    }
