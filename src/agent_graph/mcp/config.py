"""``agent-graph.mcp-config.v1``: the host's policy file, read once when the server starts.

The user writes it, never the agent and never a Provider: a Provider states *what* proves
a step (``satisfiedBy``), the host decides *how* it is observed. Its digest goes into
every event the server writes, so a Run says under which policy a Fact was observed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import codes
from ..canonical import digest_bytes
from ..errors import AgentGraphError, Diagnostic

CONFIG_SCHEMA = "agent-graph.mcp-config.v1"

#: The limits of ``agc resource materialize`` an observer may not exceed (docs/resources.md).
DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Observer:
    """One declared observer: ``file`` (a digest) or ``command`` (an argv printing Facts)."""

    id: str
    writes: tuple[tuple[str, ...], ...]
    file: str | None = None
    command: tuple[str, ...] | None = None
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES

    @property
    def kind(self) -> Literal["file", "command"]:
        return "file" if self.file is not None else "command"

    def covers(self, path: tuple[str, ...]) -> bool:
        """Whether this observer may write ``path`` (a declared path or a member under one)."""
        return any(path[: len(w)] == w for w in self.writes)

    def proves(self, path: tuple[str, ...]) -> bool:
        """Whether this observer can supply the Fact at ``path`` (either contains the other)."""
        return any(path[: len(w)] == w or w[: len(path)] == path for w in self.writes)


@dataclass(frozen=True, slots=True)
class Handler:
    """A host handler the user lets the server run (an argv, as observers run)."""

    id: str
    command: tuple[str, ...]
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES


@dataclass(frozen=True, slots=True)
class GatePolicy:
    via: Literal["elicitation", "cli"] = "elicitation"
    #: Fact paths an approval sets; None: the Gate's own satisfiedBy ``equals`` checks
    on_approve: Mapping[tuple[str, ...], Any] | None = None


@dataclass(frozen=True, slots=True)
class HostConfig:
    observers: tuple[Observer, ...] = ()
    gates: Mapping[str, GatePolicy] = field(default_factory=dict)
    #: Flow closure fingerprints whose commands the user allows without being asked
    trusted_flows: tuple[str, ...] = ()
    handlers: Mapping[str, Handler] = field(default_factory=dict)
    #: name -> ``agc flow run --agent`` spec, for ``flow_start {"agent": name}``
    agents: Mapping[str, str] = field(default_factory=dict)
    #: ``sha256:…`` of the file's bytes; None without a file
    digest: str | None = None
    path: str | None = None

    def gate(self, gate_id: str) -> GatePolicy:
        return self.gates.get(gate_id, GatePolicy())

    def observers_for(self, path: tuple[str, ...]) -> list[Observer]:
        return [o for o in self.observers if o.proves(path)]


def split_path(dotted: str) -> tuple[str, ...]:
    return tuple(dotted.split("."))


def load_config(path: str | os.PathLike[str] | None) -> HostConfig:
    """Read and check the config file (``schema-invalid`` with every finding otherwise)."""
    if path is None:
        return HostConfig()
    from ..documents.files import read_bytes
    from ..documents.schema import validate
    from ..documents.sources import read_structured

    absolute = Path(os.path.abspath(path))
    display = os.fspath(path)
    raw = read_bytes(absolute, display)
    doc = read_structured(absolute, display=display)
    problem = validate("mcp-config", doc.value, path=display, source=doc.source)
    if problem is not None:
        raise AgentGraphError(problem.code, problem.message, problem.diagnostics)
    value: dict[str, Any] = doc.value
    observers = []
    seen: set[str] = set()
    for item in value.get("observers", []):
        if item["id"] in seen:
            raise AgentGraphError(
                codes.MCP_CONFIG_INVALID, f"{display}: observer id {item['id']} is declared twice"
            )
        seen.add(item["id"])
        observers.append(
            Observer(
                id=item["id"],
                writes=tuple(split_path(w) for w in item["writes"]),
                file=item.get("file"),
                command=tuple(item["command"]) if "command" in item else None,
                timeout_ms=item.get("timeoutMs", DEFAULT_TIMEOUT_MS),
                max_output_bytes=item.get("maxOutputBytes", DEFAULT_MAX_OUTPUT_BYTES),
            )
        )
    gates = {}
    for gate_id, policy in value.get("gates", {}).items():
        facts = (policy.get("onApprove") or {}).get("facts")
        gates[gate_id] = GatePolicy(
            via=policy.get("via", "elicitation"),
            on_approve=None if facts is None else {split_path(k): v for k, v in facts.items()},
        )
    handlers = {
        hid: Handler(
            id=hid,
            command=tuple(item["command"]),
            timeout_ms=item.get("timeoutMs", DEFAULT_TIMEOUT_MS),
            max_output_bytes=item.get("maxOutputBytes", DEFAULT_MAX_OUTPUT_BYTES),
        )
        for hid, item in value.get("handlers", {}).items()
    }
    agents = dict(value.get("agents", {}))
    for name, spec in agents.items():
        _check_agent(display, name, spec)
    return HostConfig(
        observers=tuple(observers),
        gates=gates,
        handlers=handlers,
        agents=agents,
        trusted_flows=tuple(item["fingerprint"] for item in value.get("trustedFlows", [])),
        digest=digest_bytes(raw),
        path=str(absolute),
    )


def _check_agent(display: str, name: str, spec: str) -> None:
    """A named adapter's spec must be one ``agc flow run --agent`` takes (checked at start,
    so a typo is the user's error now, not a failed Flow step later)."""
    from ..flow.agents.spec import adapter_from_spec

    try:
        adapter_from_spec(spec)
    except AgentGraphError as error:
        raise AgentGraphError(
            codes.MCP_CONFIG_INVALID,
            f"{display}: /agents/{name}: {error.message}",
            [
                Diagnostic(
                    codes.MCP_CONFIG_INVALID, error.message, path=display, pointer=f"/agents/{name}"
                )
            ],
        ) from None
