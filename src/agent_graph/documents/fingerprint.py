"""The file fingerprint of a Flow package (docs/flows.md §The compiled program, C.4): what a
Run resumes only on.

The front end records it in every compiled Flow program; the runtime recomputes it from
the files on disk before it resumes a Run on a kept program, so neither needs the other.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any, Final, TypeVar

#: Version of the fingerprint algorithm below; recorded in every compiled Flow program.
FINGERPRINT_VERSION: Final = 1
K = TypeVar("K", bound=Hashable)

#: The package directories whose files are part of the package (§1: references, scripts).
RESOURCE_DIRS: Final = ("references", "scripts")


def package_files(root: Path) -> list[tuple[str, str]]:
    """``[(posix relative path, sha256 hex)]`` of FLOW.md and every regular file under
    references/ and scripts/, sorted (C.4). Symlinked directories are not followed; a
    symlinked file counts when it resolves inside the package."""
    found: list[tuple[str, str]] = [("FLOW.md", _sha256(root / "FLOW.md"))]
    for top in RESOURCE_DIRS:
        base = root / top
        if base.is_symlink() or not base.is_dir():
            continue
        stack = [base]
        while stack:
            current = stack.pop()
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                    continue
                path = Path(entry.path)
                if entry.is_symlink():
                    real = Path(os.path.realpath(path))
                    if root not in real.parents or not real.is_file():
                        continue
                elif not entry.is_file(follow_symlinks=False):
                    continue
                found.append((path.relative_to(root).as_posix(), _sha256(path)))
    return sorted(found)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fingerprint(flow_id: str, files: list[tuple[str, str]], children: list[tuple[str, str]]) -> str:
    """C.4: ``sha256:`` of the canonical JSON of the package's files and its children's
    fingerprints (``children``: ``[(id, fingerprint)]`` of the distinct targets, sorted)."""
    doc = {
        "v": FINGERPRINT_VERSION,
        "flowId": flow_id,
        "files": [list(item) for item in files],
        "children": [list(item) for item in sorted(children)],
    }
    return "sha256:" + hashlib.sha256(canonical_json(doc)).hexdigest()


def children_first(
    root: K,
    children: Callable[[K], Iterable[K]],
    combine: Callable[[K, list[tuple[K, str]]], str],
    found: dict[K, str] | None = None,
) -> dict[K, str]:
    """The combined fingerprint of ``root`` and of every package below it, children first.

    ``combine(package, [(child, its fingerprint)])`` fingerprints one package once its
    children's are known; ``found`` (filled in place) keeps what an earlier call computed.
    Iterative, so a long chain of children is no deeper for Python than one. The front
    end runs it over a checked closure, the runtime over a kept program's Flows.
    """
    found = {} if found is None else found
    todo = [root]
    while todo:
        current = todo[-1]
        if current in found:
            todo.pop()
            continue
        kids = list(children(current))
        pending = [child for child in kids if child not in found]
        if pending:
            todo.extend(pending)
            continue
        found[current] = combine(current, [(child, found[child]) for child in kids])
        todo.pop()
    return found
