"""Which Provider a host means, and the one call that loads it.

A host names a Provider in one of three ways, the :class:`Selection`: a manifest (a
``provider.yaml``, a directory holding one, or a built bundle's ``manifest.json``;
``provider.yaml`` in the working directory when nothing is named), or a Skill whose
``SKILL.md`` binds a Provider, a Graph and an Entry (found through a host registry when the
binding names the Provider by id). :func:`load` turns a selection into what the caller
needs (:data:`Need`) in one call, and raises :class:`~agent_graph.errors.AgentGraphError`
with every diagnostic when it cannot:

* ``"program"``: a runnable Program; a built bundle's trusted IR is used as it is, without
  reading a YAML file (``docs/trust.md``), and sources are compiled otherwise;
* ``"provider"``: the checked Provider, its sources read and checked but not lowered;
* ``"both"``: the checked Provider and the Program compiled from it.

Nothing here knows about a command line: a missing manifest is :class:`ManifestMissing`,
which says where ``provider.yaml`` was looked for, and a CLI that wants to suggest a
command works that out from the failure. The module imports the compiler, the bundles
and the VM only inside :func:`load`, so ``agc evaluate``'s cold start pays for none of
them before it needs them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final, Literal

from . import codes
from .errors import AgentGraphError, Diagnostic
from .frozen import record

if TYPE_CHECKING:
    from .bundles.trust import TrustStore
    from .compiler import ProviderState
    from .compiler.provider.model import LoadedProvider
    from .compiler.provider.skills import ResolvedBinding
    from .vm import Program

__all__ = ["DEFAULT_MANIFEST", "Loaded", "ManifestMissing", "Need", "Selection", "load"]

DEFAULT_MANIFEST: Final = "provider.yaml"

Need = Literal["program", "provider", "both"]


@record
class Selection:
    """How a Provider was named: ``manifest`` (None: ``provider.yaml`` here) unless
    ``skill`` names a SKILL.md; ``registry`` resolves a binding's ``provider:`` locator."""

    manifest: str | None = None
    skill: str | None = None
    registry: str | None = None


@record
class Loaded:
    """What :func:`load` returns. ``state`` is None when a bundle's trusted IR was opened
    (no source was read); ``program`` is None when only the Provider was needed."""

    state: ProviderState | None
    program: Program | None
    binding: ResolvedBinding | None

    @property
    def provider(self) -> LoadedProvider:
        assert self.state is not None
        assert self.state.provider is not None
        return self.state.provider

    @property
    def runnable(self) -> Program:
        assert self.program is not None
        return self.program


class ManifestMissing(AgentGraphError):
    """``file-missing`` for a manifest that is not there; ``directory`` is where
    ``provider.yaml`` was looked for (None when a named file is missing)."""

    def __init__(self, message: str, path: str, directory: str | None) -> None:
        super().__init__(
            codes.FILE_MISSING, message, [Diagnostic(codes.FILE_MISSING, message, path=path)]
        )
        self.directory = directory


def manifest_path(given: str | None) -> str:
    """The manifest ``given`` names: the path itself, or ``provider.yaml`` in a directory
    (in the working directory when ``given`` is None)."""
    if given is None:
        if not os.path.lexists(DEFAULT_MANIFEST):
            raise ManifestMissing(
                f"No {DEFAULT_MANIFEST} in the working directory {os.getcwd()}; pass "
                "-m PATH (a Provider manifest, or a directory holding provider.yaml)",
                DEFAULT_MANIFEST,
                ".",
            )
        return DEFAULT_MANIFEST
    if os.path.isdir(given):
        inside = os.path.join(given, DEFAULT_MANIFEST)
        if not os.path.lexists(inside):
            raise ManifestMissing(
                f"{os.path.abspath(given)} is a directory without {DEFAULT_MANIFEST}; "
                "pass -m the Provider manifest (or the directory that holds its provider.yaml)",
                DEFAULT_MANIFEST,
                given,
            )
        return inside
    return given


def load(
    selection: Selection, *, need: Need = "program", trust: TrustStore | None = None
) -> Loaded:
    """Load the selected Provider as far as ``need`` asks (see the module docstring).

    ``trust`` remembers bundle IRs verified against their sources; with ``need="program"``
    a manifest whose IR it has seen verified is opened without compiling anything.
    """
    if need == "program" and not selection.skill and not selection.registry:
        from . import open_bundle

        program = open_bundle(manifest_path(selection.manifest), trust=trust)
        if program is not None:
            return Loaded(None, program, None)
    from .compiler import CHECKED, compile_manifest
    from .compiler.provider.skills import read_registry, resolve_skill_binding

    registry = read_registry(selection.registry) if selection.registry else None
    binding: ResolvedBinding | None = None
    if selection.skill:
        binding = resolve_skill_binding(selection.skill, registry)
        state = binding.state
    else:
        manifest = manifest_path(selection.manifest)
        state = compile_manifest(manifest, stop_after=CHECKED, trust=trust)
    if need == "provider":
        return Loaded(state, None, binding)
    from . import program_of

    return Loaded(state, program_of(state), binding)
