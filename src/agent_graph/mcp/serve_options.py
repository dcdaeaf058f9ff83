"""What the server was started with (``agc mcp serve`` options) and who is calling."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ServeOptions:
    manifests: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    registry: str | None = None
    runs: str | None = None
    workspaces: tuple[str, ...] = ()
    config: str | None = None
    tools: str = "core"
    read_only: bool = False
    flows: tuple[str, ...] = ()

    def words(self) -> list[str]:
        """The options as ``agc mcp serve`` takes them (for client snippets and hints)."""
        out: list[str] = []
        for manifest in self.manifests:
            out += ["-m", manifest]
        for skill in self.skills:
            out += ["--skill", skill]
        if self.registry:
            out += ["--registry", self.registry]
        for flows in self.flows:
            out += ["--flows", flows]
        if self.runs:
            out += ["--runs", self.runs]
        for workspace in self.workspaces:
            out += ["--workspace", workspace]
        if self.config:
            out += ["--config", self.config]
        if self.tools != ("flows" if self.flows else "core"):
            out += ["--tools", self.tools]
        if self.read_only:
            out.append("--read-only")
        return out


@dataclass(frozen=True, slots=True)
class Client:
    """Who called, as far as the connection says (recorded with what the user decided),
    and where this call's progress goes (``progress(done, total, message)``; the adapter
    turns it into ``notifications/progress`` when the caller asked for them)."""

    name: str | None = None
    version: str | None = None
    protocol: str | None = None
    elicitation: bool = False
    #: the connection this call came on, when one outlives the call (a handshake
    #: session): what the user delegates is held for it (:mod:`.delegation`)
    connection: str | None = None
    progress: Callable[[float, float | None, str], None] | None = field(
        default=None, compare=False, repr=False
    )

    def provenance(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name:
            out["client"] = f"{self.name} {self.version or ''}".strip()
        if self.protocol:
            out["protocol"] = self.protocol
        return out
