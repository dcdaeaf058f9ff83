"""The compiler: Provider sources (and, later, Flow packages) to IR, through a pass table.

``pipeline.PROVIDER_PASSES`` lists the passes in order. Hosts use the two entry
points of the root package, ``agent_graph.check_provider`` and
``agent_graph.compile_provider``; tools use :func:`compile_manifest`, which returns
the pass state (the checked Provider model, the IR, its bytes). The compiler never
imports the VM: making a runnable ``Program`` of the IR is the root package's job.
"""

from __future__ import annotations

import os

from ..bundles.trust import TrustStore
from ..errors import ProblemSink
from .pipeline import PROVIDER_PASSES, Pass, pass_names, run
from .provider.model import LoadedProvider
from .provider.passes import ProviderState, new_state

#: The last pass of checking: a state stopped here holds a fully checked Provider.
CHECKED = "verify-bundle-ir"

__all__ = [
    "CHECKED",
    "PROVIDER_PASSES",
    "LoadedProvider",
    "Pass",
    "ProviderState",
    "compile_manifest",
    "load_provider",
    "pass_names",
]


def compile_manifest(
    manifest: str | os.PathLike[str] | ProviderState,
    *,
    stop_after: str | None = None,
    sink: ProblemSink | None = None,
    trust: TrustStore | None = None,
) -> ProviderState:
    """Run the Provider passes on a manifest (or carry on with a state that stopped early).

    ``trust`` remembers bundle IRs verified against their sources (``verify-bundle-ir``).
    Raises :class:`~agent_graph.errors.AgentGraphError` listing every problem found.
    """
    state = _state_of(manifest, sink, trust)
    return run(PROVIDER_PASSES, state, stop_after=stop_after)


def _state_of(
    manifest: str | os.PathLike[str] | ProviderState,
    sink: ProblemSink | None,
    trust: TrustStore | None,
) -> ProviderState:
    if isinstance(manifest, ProviderState):
        return manifest
    return new_state(manifest, sink, trust)


def load_provider(
    manifest: str | os.PathLike[str], *, sink: ProblemSink | None = None
) -> LoadedProvider:
    """The checked Provider model (every check; a bundle's IR verified against its sources)."""
    state = compile_manifest(manifest, stop_after=CHECKED, sink=sink)
    assert state.provider is not None
    return state.provider
