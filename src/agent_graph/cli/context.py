"""Resolving the global options into a loaded Provider (and optional Skill binding)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import AgentGraphError
from .render import FORMATS

if TYPE_CHECKING:
    from ..compiler import ProviderState
    from ..compiler.provider.model import LoadedProvider
    from ..compiler.provider.skills import ResolvedBinding
    from ..vm import Program


@dataclass(slots=True)
class Options:
    manifest: str | None
    skill: str | None
    registry: str | None
    fmt: str

    def bases(self) -> list[Path]:
        """Directories that diagnostic paths may be relative to."""
        out = []
        if self.manifest:
            out.append(Path(os.path.abspath(self.manifest)).parent)
        return out


def options(ctx: click.Context, **local: Any) -> Options:
    """Merge subcommand-level global options over the group-level ones."""
    root: dict[str, Any] = ctx.find_root().obj or {}
    merged = {
        key: local.get(key) if local.get(key) is not None else root.get(key)
        for key in ("manifest", "skill", "registry", "fmt")
    }
    fmt = merged["fmt"] or "human"
    if fmt not in FORMATS:
        raise AgentGraphError("format-invalid", f"Unsupported format: {fmt}")
    ctx.find_root().obj = {**root, "fmt": fmt}
    return Options(merged["manifest"], merged["skill"], merged["registry"], fmt)


@dataclass(slots=True)
class ProviderContext:
    state: ProviderState  # stopped before lowering; ``agent_graph.program_of`` finishes it
    binding: ResolvedBinding | None

    @property
    def provider(self) -> LoadedProvider:
        assert self.state.provider is not None
        return self.state.provider


def load_context(opts: Options) -> ProviderContext:
    from ..bundles import cli_trust_store
    from ..compiler import CHECKED, compile_manifest
    from ..compiler.provider.skills import read_registry, resolve_skill_binding

    registry = read_registry(opts.registry) if opts.registry else None
    if opts.skill:
        binding = resolve_skill_binding(opts.skill, registry)
        return ProviderContext(binding.state, binding)
    manifest = opts.manifest or "provider.yaml"
    state = compile_manifest(manifest, stop_after=CHECKED, trust=cli_trust_store())
    return ProviderContext(state, None)


def select(
    binding: ResolvedBinding | None, graph: str | None, entry: str | None
) -> tuple[str, str]:
    """Graph and entry from the arguments and the Skill binding (reference §8.1)."""
    if binding is not None:
        bound = binding.binding
        if graph is not None and graph != bound.graph:
            raise AgentGraphError(
                "skill-graph-conflict",
                f"Skill selects Graph {bound.graph}; explicit Graph {graph} is not allowed",
            )
        if entry is not None and entry != bound.entry:
            raise AgentGraphError(
                "skill-entry-conflict",
                f"Skill selects Entry {bound.entry}; explicit Entry {entry} is not allowed",
            )
        return bound.graph, bound.entry
    if not graph:
        raise AgentGraphError(
            "graph-selection-missing", "Graph is required when no --skill binding is active"
        )
    return graph, entry if entry is not None else "default"


def compile_context(context: ProviderContext) -> Program:
    from .. import program_of

    return program_of(context.state)


def load_program(opts: Options) -> tuple[ResolvedBinding | None, Program]:
    """The Program to evaluate: a built bundle's verified IR when there is one (no YAML is
    parsed then), else the Provider compiled from its sources."""
    if not opts.skill and not opts.registry:
        from .. import open_bundle
        from ..bundles import cli_trust_store

        program = open_bundle(opts.manifest or "provider.yaml", trust=cli_trust_store())
        if program is not None:
            return None, program
    context = load_context(opts)
    return context.binding, compile_context(context)
