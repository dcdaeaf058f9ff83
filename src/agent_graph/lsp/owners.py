"""Which Provider, or which Flow package, a file belongs to.

A ``FLOW.md`` is its own package's entry. Any other file belongs to the nearest
``provider.yaml`` at or above it, except a SKILL.md whose binding names its Provider
with a ``path:`` locator, which belongs to that one. Each owner is checked on its own, so
several Providers in one workspace never see each other's files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..compiler.flow.package import ENTRY_FILE
from ..compiler.provider.skill_binding import read_skill_binding
from ..errors import AgentGraphError

MANIFEST = "provider.yaml"


@dataclass(frozen=True, slots=True)
class Owner:
    """``kind`` "provider": ``path`` is its manifest; "flow": the package directory."""

    kind: Literal["provider", "flow"]
    path: Path

    @property
    def root(self) -> Path:
        return self.path.parent if self.kind == "provider" else self.path


def owner_of(path: Path, text: str | None = None) -> Owner | None:
    """The owner of the file at ``path`` (``text``: its buffer, for a SKILL.md's binding)."""
    path = Path(os.path.abspath(path))
    if path.name == ENTRY_FILE:
        return Owner("flow", path.parent)
    if path.name == "SKILL.md":
        bound = _bound_manifest(path, text)
        if bound is not None:
            return Owner("provider", bound)
    for directory in path.parents:
        manifest = directory / MANIFEST
        if manifest.is_file():
            return Owner("provider", manifest)
    return None


def _bound_manifest(path: Path, text: str | None) -> Path | None:
    try:
        binding = read_skill_binding(path, text)
    except AgentGraphError:
        return None
    if not binding.locator.startswith("path:"):
        return None
    manifest = Path(os.path.normpath(path.parent / binding.locator[len("path:") :]))
    return manifest if manifest.is_file() else None
