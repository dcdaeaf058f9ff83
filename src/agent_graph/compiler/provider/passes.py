"""The Provider passes: each a function of the :class:`ProviderState` the earlier ones filled.

The table that orders them is ``compiler.provider.pipeline.PROVIDER_PASSES``. A pass either
records problems in ``state.sink`` and lets later passes check what is still
checkable, or raises when nothing after it could run (an unreadable manifest, a
damaged bundle); ``raise_collected`` turns the collected problems into one error
before anything is derived from a Provider that failed a check.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import codes
from ...bundles.binding import BoundIR, verify_ir
from ...bundles.manifest import Bundle, check_identity, is_bundle, verify_manifest
from ...bundles.trust import TrustStore
from ...collector import collector_paused
from ...documents import schema
from ...documents.paths import Origin, ensure_file, portable
from ...documents.sourcemap import Document
from ...documents.sources import read_structured
from ...errors import AgentGraphError, ProblemSink
from ...ir import records as r
from .bundle_check import skill_directories, verify_against_provider
from .digests import compute_digests
from .loader import ProviderLoader
from .loose_ends import bound_skill_warnings, unlisted_file_warnings
from .model import LoadedProvider
from .versions import compatibility_warnings


@dataclass(slots=True)
class ProviderState:
    """Everything the Provider passes hand on to each other, filled in pass order."""

    manifest_path: Path
    sink: ProblemSink
    display: str = ""
    doc: Document | None = None
    built: Bundle | None = None
    bound: BoundIR | None = None  # the IR a bundle carries (ours, decoded), when it has one
    trust: TrustStore | None = None  # where verified bundle IRs are remembered
    loader: ProviderLoader | None = None
    provider: LoadedProvider | None = None
    ir: r.ProviderIR | None = None
    data: bytes | None = None
    done: list[str] = field(default_factory=list)

    @property
    def manifest(self) -> dict[str, Any]:
        assert self.doc is not None  # read_manifest ran
        value: dict[str, Any] = self.doc.value
        return value

    @property
    def provider_loader(self) -> ProviderLoader:
        assert self.loader is not None  # check_manifest ran
        return self.loader

    @property
    def here(self) -> Origin:
        assert self.doc is not None
        return Origin(self.display, self.doc.source)


def new_state(
    manifest: str | os.PathLike[str],
    sink: ProblemSink | None = None,
    trust: TrustStore | None = None,
) -> ProviderState:
    sink = sink if sink is not None else ProblemSink()
    return ProviderState(Path(os.path.abspath(manifest)), sink, trust=trust)


def read_manifest(state: ProviderState) -> None:
    state.display = os.path.basename(state.manifest_path)
    ensure_file(state.manifest_path, "provider manifest", Origin(state.display))
    state.doc = read_structured(state.manifest_path, display=state.display)


def verify_bundle(state: ProviderState) -> None:
    # a built bundle: check it (reference §6.4 part A, then its IR), then read the
    # Provider manifest it names, with the bundle directory as the Provider root
    if state.doc is None or not is_bundle(state.doc.value):
        return
    built = verify_manifest(state.manifest_path, state.doc.value, source=state.doc.source)
    bound = verify_ir(built)
    state.built = built
    state.bound = bound if bound is not None and bound.program is not None else None
    state.manifest_path = built.provider_manifest
    state.display = portable(built.root, state.manifest_path)
    ensure_file(state.manifest_path, "provider manifest", Origin(state.display))
    state.doc = read_structured(state.manifest_path, display=state.display)


def check_manifest(state: ProviderState) -> None:
    doc, sink = state.doc, state.sink
    assert doc is not None
    state.loader = ProviderLoader(state.manifest_path, sink)
    problem = schema.validate("provider", doc.value, path=state.display, source=doc.source)
    if problem is not None:
        sink.add(problem)
        # a schema-invalid mapping (a bundle's too) is still mined for graphs and a
        # catalog; anything else has nothing to check and stops here
        if not isinstance(doc.value, dict):
            sink.raise_if_failed()
    if state.built is not None:
        state.provider_loader.attempt(check_identity, state.built, state.manifest)
    for warning in compatibility_warnings(state.manifest, state.here):
        sink.warn(warning)


def load_catalog(state: ProviderState) -> None:
    if isinstance(state.manifest.get("catalogs"), dict):
        state.provider_loader.load_catalog(state.manifest, state.here)


def load_graphs(state: ProviderState) -> None:
    # loading and checking a large graph allocates without making cycles: see gc_paused
    with collector_paused():
        state.provider_loader.load_graphs(state.manifest, state.here)


def resolve_references(state: ProviderState) -> None:
    with collector_paused():
        state.provider_loader.check_nodes()


def check_recursion(state: ProviderState) -> None:
    state.provider_loader.check_recursion()


def check_reason_codes(state: ProviderState) -> None:
    state.provider_loader.check_reason_codes()


def check_materializers(state: ProviderState) -> None:
    state.provider_loader.check_dynamic_resources()


def check_skills(state: ProviderState) -> None:
    state.provider_loader.check_skills()


def check_loose_ends(state: ProviderState) -> None:
    """Warnings only (:mod:`.loose_ends`): bound Skills, command files left out of ``files:``."""
    loader = state.provider_loader
    provider_id = state.manifest.get("id")
    if not isinstance(provider_id, str) or state.sink.failed:
        return  # a Provider that fails anyway: its errors say enough
    warnings = bound_skill_warnings(loader.root, loader.manifest_path, provider_id, loader.graphs)
    memo = {path: files or [] for path, files in loader.action_file_memo.items()}
    warnings += unlisted_file_warnings(loader.root, loader.actions, memo)
    for warning in warnings:
        state.sink.warn(warning)


def raise_collected(state: ProviderState) -> None:
    state.sink.raise_if_failed()


def digests(state: ProviderState) -> None:
    loader = state.provider_loader
    assert state.doc is not None
    graph_digests, digest = compute_digests(
        loader.root,
        state.manifest_path,
        state.manifest,
        loader.files,
        loader.graph_files,
        loader.dependencies,
    )
    state.provider = LoadedProvider(
        manifest_path=state.manifest_path,
        root=loader.root,
        manifest_doc=state.doc,
        graphs=loader.graphs,
        actions=loader.actions,
        resources=loader.resources,
        catalog=loader.catalog,
        files=loader.files,
        graph_files=loader.graph_files,
        graph_dependencies=loader.dependencies,
        graph_digests=graph_digests,
        digest=digest,
        warnings=list(state.sink.warnings),
    )


def verify_bundle_sources(state: ProviderState) -> None:
    if state.built is not None:
        assert state.provider is not None
        verify_against_provider(state.built, state.provider)


def verify_bundle_ir(state: ProviderState) -> None:
    # the IR a bundle carries is trusted only as what its sources compile to (docs/trust.md)
    bound, built = state.bound, state.built
    if bound is None or built is None:
        return
    assert state.provider is not None
    # the directories the sources say, never the binding's (docs/trust.md)
    directories = skill_directories(state.provider)
    if state.trust is not None and state.trust.vouches(built.digest, bound.digest, directories):
        state.ir, state.data = bound.program, bound.data
        return
    lower(state)
    encode(state)
    if state.data != bound.data:
        raise AgentGraphError(
            codes.BUNDLE_IR_UNVERIFIED,
            f"Bundle IR {bound.digest} is not what the bundle's sources compile to; "
            "rebuild the bundle (agc build) from its sources",
        )
    if state.trust is not None:
        state.trust.remember(built.digest, bound.digest, directories)


def lower(state: ProviderState) -> None:
    from .lower import lower as lower_provider

    assert state.provider is not None
    if state.ir is None:
        state.ir = lower_provider(state.provider)


def encode(state: ProviderState) -> None:
    from ...ir import codec

    assert state.ir is not None
    if state.data is None:
        state.data = codec.encode(state.ir)
