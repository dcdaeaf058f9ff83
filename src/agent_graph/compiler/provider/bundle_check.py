"""Part B of bundle verification (reference §6.4 steps 7–9): the bundle against its Provider.

The builder writes catalogs, the file list and the dependency index from a loaded
Provider with these functions, and loading a bundle recomputes them to compare.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ... import codes
from ...bundles.manifest import CATALOGS, Bundle
from ...canonical import digest_value, js_sorted, locale_sorted
from ...documents.paths import portable
from .model import LoadedProvider


def catalog_entries(provider: LoadedProvider) -> dict[str, list[tuple[str, str]]]:
    """``(id, path)`` of every graph, action, resource and schema, in the manifest's order.

    Action schema references are normalised to their Provider-relative path (the
    reference records them as written, so ``./schemas/x.json`` produced a bundle
    that failed to load: §6.2).
    """
    root = provider.root

    def by_id(items: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        order = {key: i for i, key in enumerate(locale_sorted([i for i, _ in items]))}
        return sorted(items, key=lambda item: order[item[0]])

    graphs = [(g.id, g.rel) for g in provider.graphs.values()]
    actions = [(a.id, a.rel) for a in provider.actions.values()]
    resources = [(res.id, res.rel) for res in provider.resources.values()]
    schema_ids: dict[str, str] = {}
    for action in provider.actions.values():
        for name in ("inputSchema", "outputSchema"):
            reference = action.definition.get(name)
            if isinstance(reference, str):
                rel = portable(root, Path(os.path.normpath(root / reference)))
                schema_ids[rel] = rel
    for res in provider.resources.values():
        if not res.dynamic and res.kind == "schema":
            schema_ids[portable(root, res.content_path)] = res.id
    schemas = [(schema_ids[path], path) for path in locale_sorted(list(schema_ids))]
    return {
        "graphs": by_id(graphs),
        "actions": by_id(actions),
        "resources": by_id(resources),
        "schemas": schemas,
    }


def dependency_index(provider: LoadedProvider) -> dict[str, list[str]]:
    deps = provider.graph_dependencies
    return {gid: js_sorted(deps[gid]) for gid in locale_sorted(list(deps))}


def reachable_paths(provider: LoadedProvider) -> list[str]:
    """Provider-relative paths of every reachable file except the manifest."""
    return [
        portable(provider.root, path) for path in provider.files if path != provider.manifest_path
    ]


def skill_directories(provider: LoadedProvider) -> list[str]:
    """Directories whose whole listing is reachable (a Skill's own directory)."""
    root = provider.root
    found: set[str] = set()
    for action in provider.actions.values():
        reference = action.definition.get("skill")
        if isinstance(reference, str):
            parent = Path(os.path.normpath(root / reference)).parent
            if parent != root:
                found.add(portable(root, parent))
    return js_sorted(found)


def verify_against_provider(bundle: Bundle, provider: LoadedProvider) -> None:
    """Part B, steps 7–9 of reference §6.4."""
    expected = catalog_entries(provider)
    for name in CATALOGS:
        actual = sorted(f"{e['id']}\0{e['path']}" for e in bundle.value[name])
        if actual != sorted(f"{i}\0{p}" for i, p in expected[name]):
            raise bundle.at(f"/{name}").fail(
                codes.BUNDLE_CATALOG_MISMATCH,
                f"Bundle {name} catalog does not match reachable Provider definitions",
            )
    listed = sorted(entry["path"] for entry in bundle.value["files"])
    if listed != sorted([bundle.value["providerManifest"], *reachable_paths(provider)]):
        raise bundle.at("/files").fail(
            codes.BUNDLE_FILES_MISMATCH, "Bundle files do not match the reachable Provider file set"
        )
    if digest_value(bundle.value["graphDependencies"]) != digest_value(dependency_index(provider)):
        raise bundle.at("/graphDependencies").fail(
            codes.BUNDLE_DEPENDENCIES_MISMATCH,
            "Bundle Graph dependency index does not match Subgraph references",
        )
