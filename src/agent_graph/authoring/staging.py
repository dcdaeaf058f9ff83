"""All-or-nothing writes into a Provider: stage every file in memory, then commit.

An importer or ``agc migrate`` changes several files. A failure half-way (a read-only
file, a full disk) must not leave a Provider that is neither the old one nor the new,
so :meth:`Stage.commit` checks every target first and writes them through
:mod:`agent_graph.authoring.commit_journal`: all of them or none, also when the process is
killed half-way, and never over a file saved since the command read it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .. import codes
from ..documents.paths import Origin, portable, resolve_contained
from ..errors import AgentGraphError, Diagnostic

__all__ = ["Stage"]


def _error(code: str, message: str, rel: str) -> AgentGraphError:
    return AgentGraphError(code, message, [Diagnostic(code, message, path=rel)])


def _new_file_mode(executable: bool) -> int:
    mask = os.umask(0)
    os.umask(mask)
    return (0o777 if executable else 0o666) & ~mask


@dataclass(slots=True)
class _Staged:
    rel: str
    path: Path
    data: bytes
    executable: bool = False
    #: The bytes the plan read it as; None: the file did not exist and still must not.
    based_on: bytes | None = None


@dataclass(slots=True)
class Stage:
    """New contents of files below ``root``, by Provider-relative path, not yet written."""

    root: Path
    files: dict[str, _Staged] = field(default_factory=dict)

    def put(
        self, rel: str, data: bytes, *, executable: bool = False, based_on: bytes | None = None
    ) -> None:
        """Stage ``data`` as the new content of ``rel`` (contained in the root, lexically
        and through symlinks), made from ``based_on``: the bytes it was read as, or None
        for a file that did not exist; the commit refuses when that is no longer so."""
        path = resolve_contained(self.root, rel, "target", Origin(rel))
        real_root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        if os.path.relpath(real, real_root).startswith(".."):
            raise _error(
                codes.PATH_SYMLINK_OUTSIDE_PROVIDER,
                f"{rel} resolves outside the provider root: {real}",
                rel,
            )
        key = portable(self.root, path)
        self.files[key] = _Staged(key, Path(real), data, executable, based_on)

    def text(self, rel: str, text: str, *, based_on: str | None = None) -> None:
        self.put(
            rel, text.encode("utf-8"), based_on=None if based_on is None else based_on.encode()
        )

    def changed(self) -> list[str]:
        """The staged paths whose content differs from what is on disk (sorted)."""
        out = []
        for rel, staged in sorted(self.files.items()):
            try:
                if staged.path.read_bytes() == staged.data:
                    continue
            except OSError:
                pass
            out.append(rel)
        return out

    def preflight(self) -> None:
        """Refuse before anything is written: a read-only file, a folder that is a file."""
        for rel, staged in sorted(self.files.items()):
            try:
                info = staged.path.lstat()
            except FileNotFoundError:
                continue
            except OSError as error:
                message = f"Cannot write {rel}: {error.strerror}"
                raise _error(codes.FILE_WRITE_FAILED, message, rel) from None
            if not stat.S_ISREG(info.st_mode):
                raise _error(
                    codes.FILE_WRITE_FAILED, f"Cannot write {rel}: not a regular file", rel
                )
            if not info.st_mode & 0o222 or not os.access(staged.path, os.W_OK):
                raise _error(
                    codes.FILE_READ_ONLY,
                    f"{rel} is read-only; nothing was changed (make it writable and run again)",
                    rel,
                )

    def commit(self) -> list[str]:
        """Write every staged file that changes; all of them or, on failure or kill, none;
        a file saved since it was read is a ``write-conflict`` (:mod:`.commit_journal`)."""
        from ..canonical import digest_bytes
        from . import commit_journal

        commit_journal.recover(self.root)
        self.preflight()
        todo = [self.files[rel] for rel in self.changed()]
        entries: list[commit_journal.Entry] = []
        folders: list[Path] = []
        for staged in todo:
            try:
                info: os.stat_result | None = staged.path.lstat()
            except FileNotFoundError:
                info = None
            if (info is None) != (staged.based_on is None) or (
                info is not None and staged.path.read_bytes() != staged.based_on
            ):
                raise commit_journal.conflict(staged.rel)
            token = os.urandom(6).hex()
            name = staged.path.name
            old = None if info is None else staged.path.with_name(f".{name}.agc-old-{token}")
            mode = _new_file_mode(staged.executable) if info is None else stat.S_IMODE(info.st_mode)
            digest = digest_bytes(staged.data)
            temp = staged.path.with_name(f".{name}.agc-new-{token}")
            entries.append(
                commit_journal.Entry(
                    staged.rel, staged.path, temp, old, digest, staged.based_on, mode
                )
            )
            folders.extend(
                f for f in _missing_folders(staged.path.parent, self.root) if f not in folders
            )
        if not entries:
            return []
        try:
            commit_journal.commit(self.root, entries, {s.rel: s.data for s in todo})
        except (OSError, AgentGraphError) as error:
            for folder in reversed(folders):
                with contextlib.suppress(OSError):  # someone put something there meanwhile
                    folder.rmdir()
            if isinstance(error, AgentGraphError):
                raise
            raise _error(
                codes.FILE_WRITE_FAILED,
                f"Cannot write: {error.strerror or error}; nothing was changed",
                getattr(error, "filename", None) or todo[0].rel,
            ) from None
        return [s.rel for s in todo]


def _missing_folders(folder: Path, root: Path) -> list[Path]:
    """Folders between ``root`` and ``folder`` that do not exist yet (deepest last)."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != root and current != current.parent:
        missing.append(current)
        current = current.parent
    return list(reversed(missing))
