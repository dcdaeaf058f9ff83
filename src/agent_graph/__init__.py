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
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
PROTOCOL_VERSION = "0.3.1"

if TYPE_CHECKING:
    from .vm import Program


def compile_provider(manifest: str | os.PathLike[str]) -> Program:
    """Load, check and compile a Provider manifest into a :class:`~agent_graph.vm.Program`.

    ``manifest`` is a source ``provider.yaml`` or a built bundle's ``manifest.json``.
    A bundle that ``agc build`` wrote is verified (manifest digest, every file digest,
    the IR's digest and its binding to the manifest) and evaluated from its IR
    without reading any YAML; a bundle without IR (built by the Node toolchain) is
    checked and compiled as it loads.
    """
    from .bundles.manifest import open_bundle_program

    program = open_bundle_program(manifest)
    if program is not None:
        return program
    from .compiler.provider.loader import load_provider
    from .compiler.provider.lower import lower
    from .vm import Program

    provider = load_provider(manifest)
    return Program(lower(provider), provider.root)


def __getattr__(name: str) -> Any:
    # the VM's names resolve lazily so `import agent_graph` stays cheap
    if name in ("Program", "RoutingState", "load_program", "Evaluation"):
        from . import vm

        return getattr(vm, name)
    raise AttributeError(name)


__all__ = [
    "PROTOCOL_VERSION",
    "Evaluation",
    "Program",
    "RoutingState",
    "__version__",
    "compile_provider",
    "load_program",
]
