"""Finding Flow packages under a directory (``FlowDirectory``: B.5, C.22).

Every directory holding a regular ``FLOW.md`` is a package, at any depth. The walk
never enters ``references/``, ``scripts/``, dot-directories or ``node_modules``, and
never follows a directory symlink. Two packages with one id under one root are an
error (``flow-id-duplicate``): choosing one by traversal order would make which Flow
runs depend on the file system.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ... import codes
from ...documents.files import read_text
from ...errors import AgentGraphError, Diagnostic
from .markdown import front_matter, split_lines

_SKIP = frozenset({"references", "scripts", "node_modules"})


@dataclass(frozen=True, slots=True)
class FlowEntry:
    """A discovered package: ``path`` is its FLOW.md, joined onto the root as given."""

    id: str
    name: str | None
    description: str | None
    path: str

    def to_dict(self) -> dict[str, str | None]:
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "path": self.path,
        }


def _summary(path: Path) -> tuple[str | None, str | None]:
    try:
        text = read_text(path, display=str(path)).removeprefix("\ufeff")
    except AgentGraphError:
        return None, None
    front = front_matter(split_lines(text[:65536]))
    values = {k: v for k, v, _ in front.entries if k in ("name", "description")}
    return values.get("name") or None, values.get("description") or None


def discover(root: str | os.PathLike[str]) -> list[FlowEntry]:
    """The packages under ``root``, sorted by id (raises ``flow-id-duplicate``)."""
    base = Path(root)
    if not base.is_dir():
        message = f"{os.fspath(root)} is not a directory to look for Flow packages in"
        raise AgentGraphError(
            codes.FLOW_ROOT_MISSING, message, [Diagnostic(codes.FLOW_ROOT_MISSING, message)]
        )
    found: dict[str, list[Path]] = {}
    stack = [base]
    while stack:
        current = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name == "FLOW.md" and entry.is_file(follow_symlinks=False):
                found.setdefault(current.name if current != base else base.resolve().name, [])
                found[current.name if current != base else base.resolve().name].append(current)
            elif (
                entry.is_dir(follow_symlinks=False)
                and entry.name not in _SKIP
                and not entry.name.startswith(".")
            ):
                stack.append(Path(entry.path))
    duplicates = {flow_id: paths for flow_id, paths in found.items() if len(paths) > 1}
    if duplicates:
        flow_id, paths = sorted(duplicates.items())[0]
        shown = [os.path.join(os.fspath(p), "FLOW.md") for p in sorted(paths)]
        message = (
            f"two packages have the id {flow_id!r}: {' and '.join(shown)}; "
            "rename one directory (which one runs must not depend on the file system)"
        )
        raise AgentGraphError(
            codes.FLOW_ID_DUPLICATE,
            message,
            [Diagnostic(codes.FLOW_ID_DUPLICATE, message, "error", s) for s in shown],
        )
    entries_out = []
    for flow_id, (directory,) in found.items():
        path = directory / "FLOW.md"
        name, description = _summary(path)
        entries_out.append(FlowEntry(flow_id, name, description, os.fspath(path)))
    return sorted(entries_out, key=lambda e: e.id)
