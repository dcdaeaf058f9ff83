"""Finding Flow packages under a directory (``FlowDirectory``: B.5, C.22).

Every directory holding a regular ``FLOW.md`` is a package, at any depth. The walk
never enters ``references/``, ``scripts/``, dot-directories or ``node_modules``, and
never follows a directory symlink. Two packages with one id under one root are an
error (``flow-id-duplicate``): choosing one by traversal order would make which Flow
runs depend on the file system.

:func:`survey` is the walk without that verdict, for ``agc flow list`` searching the
working directory (a checkout holds test fixtures that share ids): every package is
listed, each duplicate id is one warning, and a FLOW.md or a directory that cannot be
read is a warning too instead of ending the listing.
"""

from __future__ import annotations

import os
from pathlib import Path

from ... import codes
from ...documents.files import read_text
from ...errors import AgentGraphError, Diagnostic, Severity
from ...frozen import record
from .markdown import front_matter, split_lines

_SKIP = frozenset({"references", "scripts", "node_modules"})
#: Paths a duplicate-id message names before "and N more" (a checkout can hold dozens).
_SHOWN = 3


@record
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


@record
class Survey:
    """What a walk found: every package (by id, then path; duplicates included), the
    ids more than one package has (their FLOW.md paths, sorted), and what could not be
    read on the way (warnings)."""

    entries: tuple[FlowEntry, ...]
    duplicates: dict[str, tuple[str, ...]]
    problems: tuple[Diagnostic, ...]

    def duplicate_diagnostics(self, severity: Severity) -> list[Diagnostic]:
        """One diagnostic per duplicate id, at its first FLOW.md."""
        return [
            Diagnostic(codes.FLOW_ID_DUPLICATE, _duplicate_message(i, p), severity, p[0])
            for i, p in sorted(self.duplicates.items())
        ]


def _duplicate_message(flow_id: str, paths: tuple[str, ...]) -> str:
    listed = ", ".join(paths[:_SHOWN])
    if len(paths) > _SHOWN:
        listed += f" and {len(paths) - _SHOWN} more"
    return (
        f"{len(paths)} packages have the id {flow_id!r}: {listed}; rename all but one "
        "directory (which one runs must not depend on the file system)"
    )


def _summary(path: Path) -> tuple[str | None, str | None, Diagnostic | None]:
    try:
        text = read_text(path, display=str(path)).removeprefix("\ufeff")
    except AgentGraphError as error:
        problem = Diagnostic(
            error.code,
            f"its name and description cannot be read: {error.message}",
            "warning",
            os.fspath(path),
        )
        return None, None, problem
    front = front_matter(split_lines(text[:65536]))
    values = {k: v for k, v, _ in front.entries if k in ("name", "description")}
    return values.get("name") or None, values.get("description") or None, None


def discover(root: str | os.PathLike[str]) -> list[FlowEntry]:
    """The packages under ``root``, sorted by id (raises ``flow-id-duplicate``, one
    diagnostic per shared id)."""
    found = survey(root)
    if found.duplicates:
        diagnostics = found.duplicate_diagnostics("error")
        raise AgentGraphError(codes.FLOW_ID_DUPLICATE, diagnostics[0].message, diagnostics)
    return list(found.entries)


def survey(root: str | os.PathLike[str]) -> Survey:
    """Every package under ``root``, duplicates included (``flow-root-missing`` when
    ``root`` is not a directory)."""
    base = Path(root)
    if not base.is_dir():
        message = f"{os.fspath(root)} is not a directory to look for Flow packages in"
        raise AgentGraphError(
            codes.FLOW_ROOT_MISSING, message, [Diagnostic(codes.FLOW_ROOT_MISSING, message)]
        )
    return _list(*_walk(base))


def _walk(base: Path) -> tuple[dict[str, list[Path]], list[Diagnostic]]:
    """The package directories under ``base`` by id, and the directories it could not
    read."""
    found: dict[str, list[Path]] = {}
    problems: list[Diagnostic] = []
    stack = [base]
    while stack:
        current = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as error:
            reason = f"cannot look for packages in this directory: {error.strerror or error}"
            problems.append(
                Diagnostic(codes.FILE_READ_FAILED, reason, "warning", os.fspath(current))
            )
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
    return found, problems


def _list(found: dict[str, list[Path]], problems: list[Diagnostic]) -> Survey:
    entries_out = []
    duplicates: dict[str, tuple[str, ...]] = {}
    for flow_id, directories in found.items():
        paths = sorted(os.fspath(directory / "FLOW.md") for directory in directories)
        if len(paths) > 1:
            duplicates[flow_id] = tuple(paths)
        for path in paths:
            name, description, problem = _summary(Path(path))
            entries_out.append(FlowEntry(flow_id, name, description, path))
            if problem is not None:
                problems.append(problem)
    entries_out.sort(key=lambda e: (e.id, e.path))
    problems.sort(key=lambda d: d.path or "")
    return Survey(tuple(entries_out), duplicates, tuple(problems))
