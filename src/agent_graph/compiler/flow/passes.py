"""The Flow passes: a ``FLOW.md`` package and the Flows it runs, to Flow IR bytes.

Each function is one row of :data:`agent_graph.compiler.flow.pipeline.FLOW_PASSES` and fills
in what the next rows need; they run through the same machinery as the Provider passes
(:func:`agent_graph.compiler.passes.run`, ``stop_after``). Every finding is collected
on the packages; ``raise-collected`` raises the first error in document order, with
every diagnostic, so a check stops before it and a compile after it.
"""

from __future__ import annotations

import os

from ...collector import collector_paused
from ...errors import AgentGraphError, Diagnostic
from ...frozen import field, slotted
from .package import Closure, check_package, entry_root, load_children, read_package

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...ir import flow_records as r
    from ...ir.flow_program import FlowProgram


@slotted
class FlowState:
    """Everything the Flow passes hand on to each other, filled in pass order."""

    entry: str | os.PathLike[str]
    strict: bool = True
    root: str | None = None  # the entry package's real directory
    closure: Closure | None = None
    record: r.FlowIR | None = None
    data: bytes | None = None
    done: list[str] = field(default_factory=list)

    @property
    def loaded(self) -> Closure:
        assert self.closure is not None  # read-entry ran
        return self.closure

    def diagnostics(self) -> list[Diagnostic]:
        return self.closure.diagnostics() if self.closure is not None else []

    def program(self) -> FlowProgram:
        """The compiled program (after ``encode``), knowing where its packages are."""
        assert self.record is not None  # lower ran
        assert self.data is not None  # encode ran
        from pathlib import Path

        from ...ir.flow_program import FlowProgram

        return FlowProgram(self.record, Path(self.loaded.base), self.data)


def find_entry(state: FlowState) -> None:
    state.root = entry_root(state.entry)


# Reading, checking and lowering build many small objects and no cycles: the cyclic
# collector would rescan them for nothing (agent_graph.collector).


def read_entry(state: FlowState) -> None:
    assert state.root is not None
    state.closure = Closure(os.path.dirname(state.root))
    with collector_paused():
        first = read_package(
            state.root, state.closure.base, os.path.basename(state.root), child=False
        )
    state.closure.packages[first.id] = first


def check_entry(state: FlowState) -> None:
    with collector_paused():
        check_package(state.loaded.root, state.strict)


def load_closure(state: FlowState) -> None:
    with collector_paused():
        load_children(state.loaded, state.strict)


def raise_collected(state: FlowState) -> None:
    diagnostics = state.diagnostics()
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise AgentGraphError(errors[0].code, errors[0].message, diagnostics)


def lower(state: FlowState) -> None:
    # lowering is loaded here, not with the passes: agc flow check stops before it
    from .lower import lower as lower_closure

    with collector_paused():
        state.record = lower_closure(state.loaded)


def encode(state: FlowState) -> None:
    # the wire format (msgpack, the IR decoders) is loaded here, not with the passes:
    # a compile that stops at lower (and agc flow check, which stops before it) never loads it
    from ...ir import wire
    from ...ir.flow_program import FLOW_PROGRAM

    assert state.record is not None
    state.data = wire.encode(FLOW_PROGRAM, state.record)
