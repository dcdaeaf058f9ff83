"""Skill bindings (``metadata.agent-graph*`` in SKILL.md) and host Provider registries."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import codes
from ...documents.paths import Origin, display_path, ensure_file
from ...documents.sourcemap import join_pointer
from ...documents.sources import read_structured
from .model import LoadedProvider
from .skill_binding import SkillBinding, read_skill_binding

if TYPE_CHECKING:
    from .passes import ProviderState

SKILL_BINDING_SCHEMA = "agent-graph.skill-binding.v1"
_DRIVE_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]")


@dataclass(frozen=True, slots=True)
class ResolvedBinding:
    binding: SkillBinding
    manifest_path: Path
    state: ProviderState  # the Provider's compilation, stopped before lowering

    @property
    def provider(self) -> LoadedProvider:
        assert self.state.provider is not None
        return self.state.provider

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SKILL_BINDING_SCHEMA,
            "skillPath": str(self.binding.skill_path),
            "locator": self.binding.locator,
            "graph": self.binding.graph,
            "entry": self.binding.entry,
            "manifestPath": str(self.manifest_path),
            "provider": self.provider.id,
        }


@dataclass(frozen=True, slots=True)
class Registry:
    """A host's Provider registry: id -> manifest path, and where each entry was written."""

    paths: dict[str, Path]
    origins: dict[str, Origin]


def read_registry(path: str | os.PathLike[str]) -> Registry:
    """Read a registry file; manifest paths resolve against the registry file's directory."""
    absolute = Path(os.path.abspath(path))
    display = display_path(absolute)
    doc = read_structured(absolute, display=display)
    here = Origin(display, doc.source)
    value = doc.value
    if not isinstance(value, dict):
        raise here.fail(codes.REGISTRY_INVALID, f"Provider registry must be an object: {path}")
    # like the reference's `providers ?? root`: a null providers member means the whole file
    nested = value.get("providers")
    pointer = "" if nested is None else "/providers"
    providers = value if nested is None else nested
    if not isinstance(providers, dict):
        raise here.at(pointer).fail(
            codes.REGISTRY_INVALID, f"Provider registry providers must be an object: {path}"
        )
    paths: dict[str, Path] = {}
    origins: dict[str, Origin] = {}
    for provider_id, manifest in providers.items():
        origin = here.at(join_pointer(pointer, provider_id))
        if not isinstance(manifest, str):
            raise origin.fail(
                codes.REGISTRY_INVALID, f"Provider {provider_id} must map to a manifest path"
            )
        paths[provider_id] = Path(os.path.normpath(absolute.parent / manifest))
        origins[provider_id] = origin
    return Registry(paths, origins)


def resolve_skill_binding(
    skill_path: str | os.PathLike[str], registry: Registry | None = None
) -> ResolvedBinding:
    """Read a Skill's binding, locate and load its Provider, and check Graph and Entry."""
    from ..passes import run
    from .passes import new_state
    from .pipeline import CHECKED, PROVIDER_PASSES

    binding = read_skill_binding(skill_path)
    here, locator, skill = binding.origin, binding.locator, binding.skill_path
    if locator.startswith("path:"):
        reference = locator[len("path:") :]
        if not reference:
            raise here.fail(codes.SKILL_LOCATOR_INVALID, f"Skill path locator is empty: {skill}")
        if os.path.isabs(reference) or _DRIVE_ABSOLUTE.match(reference):
            raise here.fail(
                codes.SKILL_LOCATOR_ABSOLUTE, f"Skill path locator must be relative: {skill}"
            )
        manifest_path = Path(os.path.normpath(skill.parent / reference))
        ensure_file(manifest_path, "skill provider manifest", here)
    elif locator.startswith("provider:"):
        provider_id = locator[len("provider:") :]
        registered = registry.paths.get(provider_id) if registry is not None else None
        if registered is None:
            raise here.fail(
                codes.PROVIDER_UNRESOLVED,
                f"Provider {provider_id} is not available: no Provider registry maps it to a "
                "manifest (agc --registry FILE, or read_registry(FILE) from Python; "
                "see docs/registry.md)",
            )
        manifest_path = registered
    else:
        raise here.fail(
            codes.SKILL_LOCATOR_INVALID, f"Unsupported agent-graph locator in {skill}: {locator}"
        )
    ensure_file(manifest_path, "registered provider manifest", here)
    state = run(PROVIDER_PASSES, new_state(manifest_path, None, None), stop_after=CHECKED)
    assert state.provider is not None
    provider = state.provider
    if locator.startswith("provider:") and provider.id != locator[len("provider:") :]:
        assert registry is not None  # a provider: locator resolved only through the registry
        raise registry.origins[locator[len("provider:") :]].fail(
            codes.PROVIDER_ID_MISMATCH,
            f"Registry key {locator[len('provider:') :]} resolved to Provider {provider.id}",
        )
    graph = provider.graphs.get(binding.graph)
    if graph is None:
        raise here.at("/metadata/agent-graph.graph").fail(
            codes.SKILL_GRAPH_MISSING, f"Skill {skill} selects missing Graph {binding.graph}"
        )
    if binding.entry not in graph.definition["entrypoints"]:
        raise here.at("/metadata/agent-graph.entry").fail(
            codes.SKILL_ENTRY_MISSING,
            f"Skill {skill} selects missing Entry {binding.graph}#{binding.entry}",
        )
    return ResolvedBinding(binding, manifest_path, state)
