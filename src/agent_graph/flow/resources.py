"""Package files: mapped ``references/…`` and ``scripts/…`` paths (A.1, C.19, C.21) and
the file fingerprint of C.4."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .findings import Findings

#: Version of the fingerprint algorithm below; recorded in every compiled Flow program.
FINGERPRINT_VERSION: Final = 1
RESOURCE_DIRS: Final = ("references", "scripts")


@dataclass(frozen=True, slots=True)
class PackageFiles:
    """The package's real root; checks paths the way the runtime will resolve them."""

    root: Path  # real path

    def reference(self, path: str, line: int, column: int, findings: Findings) -> bool:
        return self._check(path, ".md", "resource-reference-not-md", line, column, findings)

    def script(self, path: str, line: int, column: int, findings: Findings) -> bool:
        return self._check(path, ".mjs", "resource-script-not-mjs", line, column, findings)

    def _check(
        self, path: str, suffix: str, suffix_code: str, line: int, column: int, findings: Findings
    ) -> bool:
        segments = path.split("/")
        if "?" in path or "\\" in path or "" in segments or path.startswith("/"):
            findings.error(
                "resource-path-invalid",
                f"resource path {path!r} has an empty segment, a backslash or a ? query",
                line,
                column,
            )
            return False
        if "." in segments or ".." in segments:
            findings.error(
                "resource-path-dot-segment",
                f"resource path {path!r} has a . or .. segment; write the path from the "
                "package root",
                line,
                column,
            )
            return False
        if not path.endswith(suffix) or len(segments) < 2:
            kind = "references/… link" if suffix == ".md" else "scripts/… argument"
            findings.error(suffix_code, f"{kind} {path!r} must name a {suffix} file", line, column)
            return False
        target = self.root.joinpath(*segments)
        real = Path(os.path.realpath(target))
        if real != self.root and self.root not in real.parents:
            findings.error(
                "resource-outside-package",
                f"resource {path!r} leads outside the package (a symlink to {real.name!r} "
                "elsewhere); package resources must stay inside it",
                line,
                column,
            )
            return False
        if not real.is_file():
            findings.error(
                "resource-missing",
                f"resource {path!r} does not exist in the package (or is not a regular file)",
                line,
                column,
            )
            return False
        return True


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
