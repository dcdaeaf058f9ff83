"""``agc flow check``'s work, without click: check the package, then print the verdict.

The click command (:mod:`.flow`) and the fast path (:mod:`.fast_flow`) both call
:func:`check_flow`, so the two print the same bytes by construction.
"""

from __future__ import annotations

from ..errors import AgentGraphError
from .render import emit, emit_error, warnings_lines


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
    # lowered, not encoded: the count and the children are the IR's, and a check need
    # not load the wire format
    record = compile_flow(state, stop_after="lower").record
    assert record is not None
    root = record.flows[record.root]
    children = [record.flows[i].id for i in root.children]
    warnings = [d for d in diagnostics if d.severity == "warning"]
    count = len(root.nodes) + len(root.forks)
    document = {
        "state": "valid",
        "flow": root.id,
        "nodes": count,
        "children": children,
        "diagnostics": [w.to_dict() for w in warnings],
    }
    runs = f"; runs {', '.join(children)}" if children else ""
    lines = [f"Valid flow {root.id}: {count} node(s){runs}"]
    lines += warnings_lines(warnings, bases)
    emit(fmt, document, lines)
    return 0
