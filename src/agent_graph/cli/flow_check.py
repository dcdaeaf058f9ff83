"""``agc flow check``'s work, without click: check the package, then print the verdict.

The click command (:mod:`.flow`) and the fast path (:mod:`.fast_flow`) both call
:func:`check_flow`, so the two print the same bytes by construction.
"""

from __future__ import annotations

from ..errors import AgentGraphError
from .render import emit, emit_error, warnings_lines

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..compiler.flow.package import Closure


def check_flow(entry: str, lenient: bool, fmt: str) -> int:
    """Check the Flow at ``entry`` and print the result in ``fmt``; the exit code (0 or 1).

    ``{"state":"valid",…}`` on stdout for a valid Flow, else the error envelope of every
    diagnostic on stderr. An entry that is no package raises (the caller reports it).
    """
    from ..compiler import compile_flow
    from ..compiler.flow.pipeline import FLOW_CHECKED

    state = compile_flow(entry, stop_after=FLOW_CHECKED, lenient=lenient)
    diagnostics = state.diagnostics()
    errors = [d for d in diagnostics if d.severity == "error"]
    bases = [state.loaded.base]
    if errors:
        emit_error(fmt, AgentGraphError(errors[0].code, errors[0].message, diagnostics), bases)
        return 1
    # The summary comes from the checked entry, as lowering would write it (the root is
    # the entry; its nodes are the work declarations and the forks; its children the
    # distinct 执行Flow targets, sorted): lowering adds no finding to a checked closure,
    # and skipping it keeps the IR records, the fingerprints and hashlib out of a cold
    # check (tests/cli/test_cli_fast_flow.py compares the two on every corpus package)
    root, count, children = summary(state.loaded)
    warnings = [d for d in diagnostics if d.severity == "warning"]
    document = {
        "state": "valid",
        "flow": root,
        "nodes": count,
        "children": children,
        "diagnostics": [w.to_dict() for w in warnings],
    }
    runs = f"; runs {', '.join(children)}" if children else ""
    lines = [f"Valid flow {root}: {count} node(s){runs}"]
    lines += warnings_lines(warnings, bases)
    emit(fmt, document, lines)
    return 0


def summary(closure: Closure) -> tuple[str, int, list[str]]:
    """``(flow id, node count, child Flow ids)`` of a checked closure's entry: what its
    lowered record says (``FlowIR.flows[root]``: ``id``, ``nodes`` and ``forks``,
    ``children``)."""
    root = closure.root
    assert root.structure is not None  # checked
    structure = root.structure
    return root.id, len(structure.work()) + len(structure.forks), sorted(structure.children)
