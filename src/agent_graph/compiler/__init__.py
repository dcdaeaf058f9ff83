"""The compiler: Provider sources and Flow packages to IR, each through a pass table.

``provider.pipeline.PROVIDER_PASSES`` and ``flow.pipeline.FLOW_PASSES`` list the passes;
both run through the same machinery (``passes.run``, ``stop_after``). Hosts use the
entry points of the root package (``agent_graph.check_provider``,
``agent_graph.compile_provider``) and of ``agent_graph.flow`` (``check``, ``compile``);
tools use :func:`compile_manifest` and :func:`compile_flow`, which return the pass state.
The compiler never imports the VM or the Flow runtime. Importing this package loads
neither front end: each is imported when first used.
"""

from __future__ import annotations

import os

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..bundles.trust import TrustStore
    from ..errors import ProblemSink
    from .flow.passes import FlowState
    from .passes import Pass
    from .provider.model import LoadedProvider
    from .provider.passes import ProviderState
    from .provider.pipeline import CHECKED, PROVIDER_PASSES

__all__ = [
    "CHECKED",
    "PROVIDER_PASSES",
    "FlowState",
    "LoadedProvider",
    "Pass",
    "ProviderState",
    "compile_flow",
    "compile_manifest",
    "load_provider",
    "pass_names",
]

_LAZY = {
    "CHECKED": ".provider.pipeline",
    "PROVIDER_PASSES": ".provider.pipeline",
    "pass_names": ".provider.pipeline",
    "Pass": ".passes",
    "LoadedProvider": ".provider.model",
    "ProviderState": ".provider.passes",
    "FlowState": ".flow.passes",
}


def __getattr__(name: str) -> Any:
    """The table and model names, imported on first use (the Flow front end needs none)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module, __name__), name)


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
    from .passes import run
    from .provider.passes import ProviderState, new_state
    from .provider.pipeline import PROVIDER_PASSES

    state = manifest if isinstance(manifest, ProviderState) else new_state(manifest, sink, trust)
    return run(PROVIDER_PASSES, state, stop_after=stop_after)


def load_provider(
    manifest: str | os.PathLike[str], *, sink: ProblemSink | None = None
) -> LoadedProvider:
    """The checked Provider model (every check; a bundle's IR verified against its sources)."""
    from .provider.pipeline import CHECKED

    state = compile_manifest(manifest, stop_after=CHECKED, sink=sink)
    assert state.provider is not None
    return state.provider


def compile_flow(
    entry: str | os.PathLike[str] | FlowState,
    *,
    stop_after: str | None = None,
    lenient: bool = False,
) -> FlowState:
    """Run the Flow passes on a package (or carry on with a state that stopped early).

    ``lenient`` relaxes exactly the two rules Appendix C offers to relax (C.11, C.26).
    Raises :class:`~agent_graph.errors.AgentGraphError` for a bad entry path, and at
    ``raise-collected`` for a closure with errors (every diagnostic attached).
    """
    from .flow.passes import FlowState
    from .flow.pipeline import FLOW_PASSES
    from .passes import run

    state = entry if isinstance(entry, FlowState) else FlowState(entry, strict=not lenient)
    return run(FLOW_PASSES, state, stop_after=stop_after)
