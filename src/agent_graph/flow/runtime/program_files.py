"""A kept program against the files on disk: the fingerprint of C.4, recomputed.

A Run resumes on the program it started with (kept beside it by digest), and only while
the files it was compiled from are unchanged: each package's fingerprint is recomputed
from its files (children first, as the front end computed it) without parsing anything.
"""

from __future__ import annotations

from pathlib import Path

from ...documents.fingerprint import fingerprint, package_files
from ...ir.flow_program import FlowProgram


def fingerprint_on_disk(program: FlowProgram) -> tuple[str | None, Path | None]:
    """The entry's fingerprint from the files now, or ``(None, gone)`` naming a package
    directory (or its FLOW.md) that no longer exists."""
    assert program.base is not None  # a kept program is always placed
    flows = program.flows
    found: dict[int, str] = {}
    todo = [program.record.root]
    while todo:
        index = todo[-1]
        if index in found:
            todo.pop()
            continue
        pending = [c for c in flows[index].children if c not in found]
        if pending:
            todo.extend(pending)
            continue
        flow = flows[index]
        root = program.package_root(flow)
        assert root is not None
        if not (root / "FLOW.md").is_file():
            return None, root
        pairs = [(flows[c].id, found[c]) for c in flow.children]
        found[index] = fingerprint(flow.id, package_files(root), pairs)
        todo.pop()
    return found[program.record.root], None
