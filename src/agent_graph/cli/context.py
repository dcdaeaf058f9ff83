"""The global options, and the one way a command gets its Provider.

``-m PATH`` names a Provider manifest, or a directory holding ``provider.yaml`` (as
the pytest plugin's ``--agc-provider`` does); without it, ``provider.yaml`` in the
working directory; ``--skill`` (with ``--registry``) names a Skill binding instead.
:func:`load` turns the options into one :class:`~agent_graph.selection.Selection` and
makes one library call; what the CLI adds is worked out afterwards, from a failure: a
missing manifest gets ``agc init`` as the next step when init would work there, and a
manifest that is another ``agent-graph.*.v1`` document (a Graph, an Action …) says so
instead of listing every way it is not a Provider.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .. import codes
from ..errors import AgentGraphError
from ..frozen import record, replace
from ..selection import Loaded, ManifestMissing, Need, Selection
from ..selection import load as load_selection
from ..selection import manifest_path as selected_manifest
from .render import FORMATS
from .words import manifest_base

if TYPE_CHECKING:  # click is not imported at run time: ``agc evaluate``'s fast path uses this
    import click

    from ..compiler.provider.skills import ResolvedBinding


@record  # a frozen dataclass, cheaper to create: cold start
class Options:
    manifest: str | None
    skill: str | None
    registry: str | None
    fmt: str

    def bases(self) -> list[str]:
        """Directories that diagnostic paths may be relative to."""
        return [manifest_base(self.manifest)] if self.manifest else []


def options(ctx: click.Context, **local: Any) -> Options:
    """Merge subcommand-level global options over the group-level ones."""
    root: dict[str, Any] = ctx.find_root().obj or {}
    merged = {
        key: local.get(key) if local.get(key) is not None else root.get(key)
        for key in ("manifest", "skill", "registry", "fmt")
    }
    fmt = merged["fmt"] or "human"
    if fmt not in FORMATS:
        raise AgentGraphError(codes.FORMAT_INVALID, f"Unsupported format: {fmt}")
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


_OTHER_DOCUMENT: Final = re.compile(r"agent-graph\.([a-z0-9][a-z0-9.-]*)\.v1")
_MANIFEST_SCHEMAS: Final = frozenset({"provider", "bundle"})  # a bundle's manifest.json


def load(opts: Options, *, need: Need = "program") -> Loaded:
    """The Provider the options select, loaded as far as ``need`` asks: one library call
    (:func:`agent_graph.selection.load`); a failure is then worked into a better one."""
    from ..bundles import cli_trust_store

    selection = Selection(opts.manifest, opts.skill, opts.registry)
    try:
        return load_selection(selection, need=need, trust=cli_trust_store())
    except ManifestMissing as missing:
        raise _with_init_hint(missing) from None
    except AgentGraphError as error:
        other = None if opts.skill else _not_a_provider(manifest_path(opts.manifest), error)
        if other is not None:
            raise other from None
        raise


def manifest_path(given: str | None) -> str:
    """The manifest ``-m`` names: the path itself, or ``provider.yaml`` in a directory."""
    try:
        return selected_manifest(given)
    except ManifestMissing as missing:
        raise _with_init_hint(missing) from None


def _with_init_hint(missing: ManifestMissing) -> AgentGraphError:
    """A missing manifest, with ``agc init`` as the next step (``detail.next``, printed
    as ``Next: agc init …``) when init would start a Provider where it was looked for."""
    if missing.directory is None:
        return missing
    from ..authoring.scaffold import would_init
    from .options import shell_command

    provider_id = would_init(missing.directory)
    if provider_id is None:
        return missing
    where = [] if missing.directory == "." else [missing.directory]
    detail = {"next": shell_command(["agc", "init", *where, "--id", provider_id])}
    diagnostics = [replace(d, detail={**d.detail, **detail}) for d in missing.diagnostics]
    return AgentGraphError(missing.code, missing.message, diagnostics)


def _not_a_provider(manifest: str, error: AgentGraphError) -> AgentGraphError | None:
    """For a schema-invalid manifest that is another agent-graph document: say which."""
    from ..documents.sourcemap import positioned
    from ..documents.sources import read_structured

    display = os.path.basename(manifest)
    if error.code != codes.SCHEMA_INVALID or not any(d.path == display for d in error.diagnostics):
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
        codes.SCHEMA_INVALID, message, path=display, source=doc.source, pointer="/schema"
    )
    return AgentGraphError(codes.SCHEMA_INVALID, message, [diagnostic])


def select(
    binding: ResolvedBinding | None,
    graph: str | None,
    entry: str | None,
    graphs: Sequence[str] = (),
    *,
    human: bool = False,
) -> tuple[str, str]:
    """Graph and entry from the arguments and the Skill binding (reference §8.1).

    Without either, the Provider's only Graph (``graphs``) is taken, said on stderr for
    ``human`` output; with several, the refusal lists them.
    """
    if binding is not None:
        bound = binding.binding
        if graph is not None and graph != bound.graph:
            raise AgentGraphError(
                codes.SKILL_GRAPH_CONFLICT,
                f"Skill selects Graph {bound.graph}; explicit Graph {graph} is not allowed",
            )
        if entry is not None and entry != bound.entry:
            raise AgentGraphError(
                codes.SKILL_ENTRY_CONFLICT,
                f"Skill selects Entry {bound.entry}; explicit Entry {entry} is not allowed",
            )
        return bound.graph, bound.entry
    if not graph:
        if len(graphs) == 1:
            if human:
                sys.stderr.write(f"Graph: {graphs[0]} (the Provider's only Graph)\n")
            return graphs[0], entry if entry is not None else "default"
        message = "Graph is required when no --skill binding is active"
        if graphs:
            message += f"; name one of the Provider's Graphs: {', '.join(graphs)}"
        raise AgentGraphError(codes.GRAPH_SELECTION_MISSING, message)
    return graph, entry if entry is not None else "default"
