"""The Providers a server serves: named on its command line, never in a tool argument.

Each ``-m`` / ``--skill`` is loaded once at start through :func:`agent_graph.selection.load`
(the one way a host loads a Provider). One that fails is kept, listed as ``invalid``
with its diagnostics, so the user sees why instead of a server that will not start;
tools naming it answer ``provider-invalid``. Providers are identified by id and never
merged: a Skill bound to a served Provider adds itself to that Provider's entry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import codes
from ..errors import AgentGraphError, Diagnostic
from ..selection import DEFAULT_MANIFEST, Selection, load

if TYPE_CHECKING:
    from ..vm import Program


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    path: str
    graph: str
    entry: str


@dataclass(slots=True)
class Served:
    """One served Provider, or one that failed to load (``program`` None)."""

    label: str  # the -m / --skill argument as given
    option: str  # "-m" or "--skill"
    id: str | None
    program: Program | None
    manifest: str | None  # the manifest path to name in printed commands
    error: AgentGraphError | None = None
    skills: list[Skill] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "ok" if self.program is not None else "invalid"

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id or self.label, "status": self.status}
        out["source"] = f"{self.option} {self.label}"
        if self.program is not None:
            ir = self.program.ir
            out["version"] = ir.provider_version
            out["graphs"] = [
                {"id": g.id, "entrypoints": [name for name, _ in g.entrypoints]} for g in ir.graphs
            ]
            out["skills"] = [
                {"name": s.name, "graph": s.graph, "entry": s.entry} for s in self.skills
            ]
        if self.error is not None:
            out["error"] = {"code": self.error.code, "message": self.error.message}
            out["diagnostics"] = [d.to_dict() for d in self.error.diagnostics[:20]]
        return out


def _skill_name(path: str) -> str:
    # a Skill's name is its directory's (the Agent Skills convention)
    return os.path.basename(os.path.dirname(os.path.abspath(path))) or path


class ProviderSet:
    def __init__(self, served: list[Served]) -> None:
        self.served = served

    @classmethod
    def load(cls, manifests: list[str], skills: list[str], registry: str | None) -> ProviderSet:
        if not manifests and not skills and os.path.isfile(DEFAULT_MANIFEST):
            manifests = [DEFAULT_MANIFEST]  # as every agc command defaults to it
        served = [_load("-m", m, Selection(manifest=m, registry=registry)) for m in manifests]
        for skill in skills:
            entry = _load("--skill", skill, Selection(skill=skill, registry=registry))
            same = next((s for s in served if s.id is not None and s.id == entry.id), None)
            if same is not None and entry.program is not None and same.program is not None:
                same.skills.extend(entry.skills)
                continue
            served.append(entry)
        ids: dict[str, Served] = {}
        for entry in served:
            if entry.id is None or entry.program is None:
                continue
            first = ids.setdefault(entry.id, entry)
            if first is not entry:
                message = f"Provider {entry.id} is already served by {first.option} {first.label}"
                entry.error = AgentGraphError(
                    codes.PROVIDER_INVALID, message, [Diagnostic(codes.PROVIDER_INVALID, message)]
                )
                entry.program = None
        return cls(served)

    def describe(self) -> list[dict[str, Any]]:
        return [s.describe() for s in self.served]

    def get(self, provider_id: str) -> Served:
        for entry in self.served:
            if entry.id == provider_id and entry.program is not None:
                return entry
        for entry in self.served:
            if entry.id == provider_id or entry.label == provider_id:
                assert entry.error is not None
                raise AgentGraphError(
                    codes.PROVIDER_INVALID,
                    f"Provider {provider_id} did not load ({entry.error.code}: "
                    f"{entry.error.message}); the user must fix it and restart the server",
                    entry.error.diagnostics[:20],
                )
        raise AgentGraphError(
            codes.PROVIDER_UNRESOLVED,
            f"This server does not serve Provider {provider_id}; it serves: {self.names()}",
        )

    def names(self) -> str:
        return ", ".join(s.id or s.label for s in self.served) or "nothing"

    def skill(self, name: str) -> tuple[Served, Skill]:
        for entry in self.served:
            for skill in entry.skills:
                if skill.name == name:
                    if entry.program is None:
                        self.get(entry.id or entry.label)
                    return entry, skill
        known = [s.name for e in self.served for s in e.skills]
        raise AgentGraphError(
            codes.PROVIDER_UNRESOLVED,
            f"This server serves no Skill {name}; it serves: {', '.join(known) or 'none'}",
        )

    def only(self) -> Served:
        ok = [s for s in self.served if s.program is not None]
        if len(ok) == 1 and len(self.served) == 1:
            return ok[0]
        if not self.served:
            raise AgentGraphError(
                codes.PROVIDER_UNRESOLVED, "This server serves no Provider: start it with -m"
            )
        if len(self.served) == 1:
            return self.get(self.served[0].id or self.served[0].label)
        raise AgentGraphError(
            codes.PROVIDER_UNRESOLVED,
            f"This server serves several Providers: name one of {self.names()}",
        )


def _load(option: str, label: str, selection: Selection) -> Served:
    try:
        loaded = load(selection, need="program")
    except AgentGraphError as error:
        return Served(label, option, None, None, None, error)
    program = loaded.runnable
    binding = loaded.binding
    manifest = label if option == "-m" else None
    skills = []
    if binding is not None:
        manifest = str(binding.manifest_path)
        skills.append(
            Skill(_skill_name(label), label, binding.binding.graph, binding.binding.entry)
        )
    return Served(label, option, program.provider_id, program, manifest, None, skills)
