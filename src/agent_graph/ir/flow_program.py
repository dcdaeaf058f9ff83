"""The compiled Flow program as bytes and back: the shared IR container, a second kind.

``FLOW_PROGRAM`` is the record set (its own magic and version); encoding, interning,
the body digest and decoding that trusts nothing come from :mod:`agent_graph.ir.wire`.
"""

from __future__ import annotations

from pathlib import Path

from . import flow_records as r
from . import wire

MAGIC = "agent-graph.flow-ir"
FORMAT_VERSION = 1


def _verify(program: r.FlowIR) -> None:
    """Rules the per-field bounds checks cannot state."""
    if not program.flows:
        raise wire.corrupt("a Flow program holds at least its entry Flow")
    for flow in program.flows:
        for node in flow.nodes:
            for route in node.routes:
                if route.node != -1 and route.fork != -1:
                    raise wire.corrupt(f"{flow.id}.{node.ref}: a route has one destination")
            has = {r.COMMAND: node.command, r.CALL: node.call}
            for kind, value in has.items():
                if (node.kind == kind) != (value is not None):
                    raise wire.corrupt(f"{flow.id}.{node.ref}: action data does not match kind")


FLOW_PROGRAM: wire.RecordSet[r.FlowIR] = wire.RecordSet(
    magic=MAGIC,
    version=FORMAT_VERSION,
    root=r.FlowIR,
    records=r.FLOW_RECORDS,
    verify=_verify,
    rebuild="recompile the Flow (agent_graph.flow.compile)",
)


class FlowProgram:
    """A compiled Flow and its closure of child Flows.

    ``base``: the real directory holding the entry package, when compiled from sources
    on this machine (the IR itself holds only package-relative paths).
    """

    __slots__ = ("_data", "base", "record")

    def __init__(
        self, record: r.FlowIR, base: Path | None = None, data: bytes | None = None
    ) -> None:
        self.record = record
        self.base = base
        self._data = data  # the record's encoding, when the caller has it

    @classmethod
    def from_bytes(
        cls, data: bytes, *, expected_digest: str | None = None, base: Path | None = None
    ) -> FlowProgram:
        """Decode (trusting nothing) IR bytes; ``base``: where its packages are here."""
        return cls(wire.decode(FLOW_PROGRAM, data, expected_digest=expected_digest), base, data)

    def to_bytes(self) -> bytes:
        if self._data is None:
            self._data = wire.encode(FLOW_PROGRAM, self.record)
        return self._data

    @property
    def digest(self) -> str:
        return wire.digest_of(self.to_bytes())

    @property
    def root(self) -> r.Flow:
        return self.record.flows[self.record.root]

    @property
    def flows(self) -> tuple[r.Flow, ...]:
        return self.record.flows

    @property
    def fingerprint(self) -> str:
        return self.record.fingerprint

    def flow(self, flow_id: str) -> r.Flow:
        for flow in self.record.flows:
            if flow.id == flow_id:
                return flow
        raise KeyError(flow_id)

    def package_root(self, flow: r.Flow) -> Path | None:
        """Where ``flow``'s package is on this machine (None for a program from bytes)."""
        if self.base is None:
            return None
        return (self.base / flow.path).parent
