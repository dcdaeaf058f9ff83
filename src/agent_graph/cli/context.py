"""Resolving the global options into a loaded Provider (and optional Skill binding).

``-m PATH`` names a Provider manifest, or a directory holding ``provider.yaml`` (as
the pytest plugin's ``--agc-provider`` does); without it, ``provider.yaml`` in the
working directory. A missing default manifest says how to name one; a manifest that
is another ``agent-graph.*.v1`` document (a Graph, an Action …) says so instead of
listing every way it is not a Provider.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..errors import AgentGraphError, Diagnostic
from ..frozen import record
from .render import FORMATS

if TYPE_CHECKING:  # click is not imported at run time: ``agc evaluate``'s fast path uses this
    import click

    from ..compiler import ProviderState
    from ..compiler.provider.model import LoadedProvider
    from ..compiler.provider.skills import ResolvedBinding
    from ..vm import Program


@record  # a frozen dataclass, cheaper to create: cold start
class Options:
    manifest: str | None
    skill: str | None
    registry: str | None
    fmt: str

    def bases(self) -> list[Path]:
        """Directories that diagnostic paths may be relative to."""
        out = []
        if self.manifest:
            given = Path(os.path.abspath(self.manifest))
            out.append(given if given.is_dir() else given.parent)
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
    if ctx.parent is not None and ctx.parent.info_name == "run":
        _announce_lock_waits(ctx, fmt)
    return Options(merged["manifest"], merged["skill"], merged["registry"], fmt)


def _lock_wait_line(message: str) -> None:
    sys.stderr.write(f"agc: {message}\n")
    sys.stderr.flush()


def _announce_lock_waits(ctx: click.Context, fmt: str) -> None:
    """``agc run …`` in human form says on stderr that it waits for a Run's lock."""
    from ..runs.file import WAIT_NOTICE

    token = WAIT_NOTICE.set(_lock_wait_line if fmt == "human" else None)
    ctx.call_on_close(lambda: WAIT_NOTICE.reset(token))


@record
class ProviderContext:
    state: ProviderState  # stopped before lowering; ``agent_graph.program_of`` finishes it
    binding: ResolvedBinding | None

    @property
    def provider(self) -> LoadedProvider:
        assert self.state.provider is not None
        return self.state.provider


DEFAULT_MANIFEST: Final = "provider.yaml"
_OTHER_DOCUMENT: Final = re.compile(r"agent-graph\.([a-z0-9][a-z0-9.-]*)\.v1")
_MANIFEST_SCHEMAS: Final = frozenset({"provider", "bundle"})  # a bundle's manifest.json


def _missing(message: str, path: str, directory: str | None = None) -> AgentGraphError:
    """``file-missing`` for a manifest that is not there; ``directory`` is where it was
    looked for, and where ``agc init`` would start one (the hint, when init would not
    refuse there: ``detail.next``, printed as ``Next: agc init …``)."""
    detail: dict[str, Any] = {}
    if directory is not None:
        from ..authoring.scaffold import would_init
        from .options import shell_command

        provider_id = would_init(directory)
        if provider_id is not None:
            where = [] if directory == "." else [directory]
            detail["next"] = shell_command(["agc", "init", *where, "--id", provider_id])
    return AgentGraphError(
        "file-missing", message, [Diagnostic("file-missing", message, path=path, detail=detail)]
    )


def manifest_path(given: str | None) -> str:
    """The manifest ``-m`` names: the path itself, or ``provider.yaml`` in a directory."""
    if given is None:
        if not os.path.lexists(DEFAULT_MANIFEST):
            raise _missing(
                f"No {DEFAULT_MANIFEST} in the working directory {os.getcwd()}; pass "
                "-m PATH (a Provider manifest, or a directory holding provider.yaml)",
                DEFAULT_MANIFEST,
                ".",
            )
        return DEFAULT_MANIFEST
    if os.path.isdir(given):
        inside = os.path.join(given, DEFAULT_MANIFEST)
        if not os.path.lexists(inside):
            raise _missing(
                f"{os.path.abspath(given)} is a directory without {DEFAULT_MANIFEST}; "
                "pass -m the Provider manifest (or the directory that holds its provider.yaml)",
                DEFAULT_MANIFEST,
                given,
            )
        return inside
    return given


def _not_a_provider(manifest: str, error: AgentGraphError) -> AgentGraphError | None:
    """For a schema-invalid manifest that is another agent-graph document: say which."""
    from ..documents.sourcemap import positioned
    from ..documents.sources import read_structured

    display = os.path.basename(manifest)
    if error.code != "schema-invalid" or not any(d.path == display for d in error.diagnostics):
        return None
    absolute = Path(os.path.abspath(manifest))
    try:
        doc = read_structured(absolute, display=display)
    except AgentGraphError:
        return None
    schema = doc.value.get("schema") if isinstance(doc.value, dict) else None
    kind = _OTHER_DOCUMENT.fullmatch(schema) if isinstance(schema, str) else None
    if kind is None or kind.group(1) in _MANIFEST_SCHEMAS:
        return None
    message = (
        f"{absolute}: this is an {schema} file, not a Provider manifest; pass -m the "
        "Provider's provider.yaml (or its directory)"
    )
    diagnostic = positioned(
        "schema-invalid", message, path=display, source=doc.source, pointer="/schema"
    )
    return AgentGraphError("schema-invalid", message, [diagnostic])


def load_context(opts: Options) -> ProviderContext:
    from ..bundles import cli_trust_store
    from ..compiler import CHECKED, compile_manifest
    from ..compiler.provider.skills import read_registry, resolve_skill_binding

    registry = read_registry(opts.registry) if opts.registry else None
    if opts.skill:
        binding = resolve_skill_binding(opts.skill, registry)
        return ProviderContext(binding.state, binding)
    manifest = manifest_path(opts.manifest)
    try:
        state = compile_manifest(manifest, stop_after=CHECKED, trust=cli_trust_store())
    except AgentGraphError as error:
        other = _not_a_provider(manifest, error)
        if other is not None:
            raise other from None
        raise
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

        program = open_bundle(manifest_path(opts.manifest), trust=cli_trust_store())
        if program is not None:
            return None, program
    context = load_context(opts)
    return context.binding, compile_context(context)
