"""Proving staged changes valid before they are written: compile a scratch copy.

The compiler reads files from disk, so the Provider's reachable files are copied into
a temporary folder, the staged contents laid over them, and the copy compiled. Only
what the compiler reads is copied (not the whole Provider folder, which may hold
anything).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .. import codes
from ..compiler import CHECKED, LoadedProvider, compile_manifest
from ..documents.paths import portable
from ..errors import AgentGraphError
from .staging import Stage

__all__ = ["LEGACY_WARNINGS", "compile_staged", "load_checked"]

#: Warnings that mark a Provider as written for 0.2 (what ``agc migrate`` removes).
LEGACY_WARNINGS = frozenset({codes.COMPATIBILITY_RANGE_EXCLUDES, codes.RESOURCE_PROTOCOL_LEGACY})


def load_checked(manifest: Path) -> LoadedProvider:
    state = compile_manifest(manifest, stop_after=CHECKED)
    assert state.provider is not None
    return state.provider


def compile_staged(
    root: Path, manifest_rel: str, existing: Iterable[Path], stage: Stage
) -> LoadedProvider:
    """The Provider at ``root`` as it would be with ``stage`` written (``existing``: the
    absolute paths of the current files the compiler needs). Raises its problems."""
    with tempfile.TemporaryDirectory(prefix="agc-staged-") as scratch:
        copy = Path(scratch)
        for path in existing:
            rel = portable(root, path)
            if rel.startswith(".."):
                continue
            target = copy / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        for rel, staged in stage.files.items():
            target = copy / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(staged.data)
        try:
            return load_checked(copy / manifest_rel)
        except AgentGraphError as error:
            # the copy's paths mean nothing to the user: report them against the real root
            error.message = error.message.replace(os.fspath(copy), os.fspath(root))
            raise
