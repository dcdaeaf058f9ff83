"""agent-graph: compiler, IR and deterministic VM for the Agent Graph protocol.

Host API::

    import agent_graph

    # authoring time (needs the compiler: yaml, jsonschema)
    program = agent_graph.compile_provider("provider.yaml")
    evaluation = program.evaluate("main", "default", {"facts": {...}, "outcomes": {...}})
    if evaluation.primary is not None:
        route = program.route("main", "default", evaluation.primary.route_id, state,
                              revision=evaluation.revision)

``agent_graph.load_program(ir_bytes, root)`` loads compiled IR without the compiler.
"""

from __future__ import annotations

import os

from .protocol import PROTOCOL_VERSION, __version__

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .bundles.trust import TrustStore
    from .compiler import ProviderState
    from .errors import Diagnostic
    from .vm import Program
    from .vm.locations import (
        host_action_input_digest,
        host_action_output_digest,
        host_action_read_receipt,
        validate_host_action_result,
    )


def check_provider(manifest: str | os.PathLike[str]) -> list[Diagnostic]:
    """Every problem of a Provider (or bundle) manifest, warnings included; ``[]`` when clean.

    Never raises for an invalid Provider: a missing or unreadable manifest is a
    diagnostic like any other. Runs every check ``compile_provider`` runs before lowering.
    """
    from .compiler import load_provider
    from .errors import AgentGraphError

    try:
        provider = load_provider(manifest)
    except AgentGraphError as exc:
        return list(exc.diagnostics) or [_as_diagnostic(exc)]
    return list(provider.warnings)


def _as_diagnostic(exc: Exception) -> Diagnostic:
    from .errors import AgentGraphError, Diagnostic

    assert isinstance(exc, AgentGraphError)
    return Diagnostic(exc.code, exc.message)


def compile_provider(
    manifest: str | os.PathLike[str], *, trust: TrustStore | str | os.PathLike[str] | None = None
) -> Program:
    """Load, check and compile a Provider manifest into a :class:`~agent_graph.vm.Program`.

    ``manifest`` is a source ``provider.yaml`` or a built bundle's ``manifest.json``.
    A bundle that ``agc build`` wrote is verified (manifest digest, every file digest,
    the IR's digest and its binding to the manifest) and evaluated from its IR
    without reading any YAML; a bundle without IR (built by the Node toolchain) is
    checked and compiled as it loads. Raises :class:`~agent_graph.errors.AgentGraphError`
    listing every problem found.

    A bundle's IR is used only when it is what the bundle's sources compile to: the
    bundle is compiled and the bytes compared (``bundle-ir-unverified`` when they
    differ), unless ``trust`` (a :class:`~agent_graph.bundles.TrustStore` or a folder for
    one) has already seen that IR verified for that manifest digest; then only the
    manifest, the listed files' digests and the IR are read. See ``docs/trust.md``.
    """
    from .bundles.trust import as_store

    store = as_store(trust)
    program = open_bundle(manifest, trust=store)
    if program is not None:
        return program
    from .compiler import compile_manifest

    return program_of(compile_manifest(manifest, trust=store))


def open_bundle(
    manifest: str | os.PathLike[str], *, trust: TrustStore | str | os.PathLike[str] | None = None
) -> Program | None:
    """A built bundle's trusted IR as a Program, or ``None`` when it has to be compiled.

    ``None`` when ``manifest`` is not a bundle's ``manifest.json``, the bundle has no
    IR (the Node toolchain built it), its IR is of another format, ``trust`` has not
    seen this IR verified for this manifest (or is None), or any check failed
    (``compile_provider`` then repeats the checks with positions and raises).
    """
    from .bundles import as_store, open_verified_ir

    opened = open_verified_ir(manifest, as_store(trust))
    if opened is None:
        return None
    bound, bundle = opened
    assert bound.program is not None
    from .vm import Program

    return Program(bound.program, bundle.root, bound.data)


def program_of(state: ProviderState) -> Program:
    """The runnable Program of a compilation (the passes it has not run yet are run first)."""
    from .compiler import compile_manifest
    from .vm import Program

    state = compile_manifest(state)
    assert state.ir is not None
    assert state.provider is not None
    return Program(state.ir, state.provider.root, state.data)


_VM_NAMES = (
    "Program",
    "RoutingState",
    "load_program",
    "Evaluation",
    # host-action helpers (docs/host-actions.md)
    "host_action_input_digest",
    "host_action_output_digest",
    "host_action_read_receipt",
    "validate_host_action_result",
)


def __getattr__(name: str) -> Any:
    # the VM's names resolve lazily so `import agent_graph` stays cheap
    if name in _VM_NAMES:
        from . import vm

        return getattr(vm, name)
    raise AttributeError(name)


__all__ = [
    "PROTOCOL_VERSION",
    "Evaluation",
    "Program",
    "RoutingState",
    "__version__",
    "check_provider",
    "compile_provider",
    "host_action_input_digest",
    "host_action_output_digest",
    "host_action_read_receipt",
    "load_program",
    "open_bundle",
    "program_of",
    "validate_host_action_result",
]
