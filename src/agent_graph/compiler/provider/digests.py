"""Provider and graph closure digests, computed exactly as the reference does (§1.7).

A graph's digest covers the files of its same-Provider dependency closure plus the
Provider id and version, so editing a file used only by another graph leaves its
revisions unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...canonical import digest_value, js_sorted, locale_sorted
from ...documents.files import digest_file
from ...documents.paths import portable


def graph_closures(
    graph_files: dict[str, dict[Path, None]], dependencies: dict[str, list[str]]
) -> dict[str, set[Path]]:
    """Direct files of each graph plus those of every graph it calls, transitively."""
    closures: dict[str, set[Path]] = {}
    for start in graph_files:
        stack: list[tuple[str, bool]] = [(start, False)]
        while stack:
            graph, expanded = stack.pop()
            if graph in closures:
                continue
            children = [c for c in dependencies.get(graph, []) if c in graph_files]
            if expanded:
                closure = set(graph_files[graph])
                for child in children:
                    closure |= closures.get(child, set())
                closures[graph] = closure
                continue
            stack.append((graph, True))
            stack.extend((c, False) for c in children if c not in closures)
    return closures


def compute_digests(
    root: Path,
    manifest_path: Path,
    manifest: dict[str, Any],
    files: dict[Path, None],
    graph_files: dict[str, dict[Path, None]],
    dependencies: dict[str, list[str]],
) -> tuple[dict[str, str], str]:
    """``(graph id -> closure digest, provider digest)``."""
    rel = {path: portable(root, path) for path in files if path != manifest_path}
    file_digest = {path: digest_file(path) for path in rel}
    by_rel = {rel[path]: path for path in rel}
    identity = {"id": manifest["id"], "version": manifest["version"]}
    graph_digests: dict[str, str] = {}
    for graph_id, closure in graph_closures(graph_files, dependencies).items():
        names = locale_sorted([rel[path] for path in closure if path in rel])
        graph_digests[graph_id] = digest_value(
            {
                "provider": identity,
                "graph": graph_id,
                "files": [[name, file_digest[by_rel[name]]] for name in names],
            }
        )
    ordered = js_sorted(list(by_rel))
    provider_digest = digest_value(
        {"manifest": manifest, "files": [[name, file_digest[by_rel[name]]] for name in ordered]}
    )
    return {g: graph_digests[g] for g in graph_files}, provider_digest
