"""A kept program against the files on disk: the fingerprint of C.4, recomputed.

A Run resumes on the program it started with (kept beside it by digest), and only while
the files it was compiled from are unchanged: each package's fingerprint is recomputed
from its files (children first, as the front end computed it) without parsing anything.
"""

from __future__ import annotations

from pathlib import Path

from ...documents.fingerprint import children_first, fingerprint, package_files
from ...ir.flow_program import FlowProgram


class _Gone(Exception):
    def __init__(self, root: Path) -> None:
        self.root = root


def fingerprint_on_disk(program: FlowProgram) -> tuple[str | None, Path | None]:
    """The entry's fingerprint from the files now, or ``(None, gone)`` naming a package
    directory (or its FLOW.md) that no longer exists."""
    flows = program.flows

    def combine(index: int, pairs: list[tuple[int, str]]) -> str:
        flow = flows[index]
        root = program.package_root(flow)
        assert root is not None  # a kept program is always placed
        if not (root / "FLOW.md").is_file():
            raise _Gone(root)
        named = [(flows[child].id, value) for child, value in pairs]
        return fingerprint(flow.id, package_files(root), named)

    entry = program.record.root
    try:
        found = children_first(entry, lambda index: flows[index].children, combine)
    except _Gone as gone:
        return None, gone.root
    return found[entry], None
