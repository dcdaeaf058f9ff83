"""All-or-nothing writes into a Provider: stage every file in memory, then commit.

An importer or ``agc migrate`` changes several files. A failure half-way (a read-only
file, a full disk) must not leave a Provider that is neither the old one nor the new,
so :meth:`Stage.commit` checks every target first, writes each file atomically
(``documents.files.write_atomic``) and, when one write fails, puts back the files it
already replaced and removes the files and folders it created.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .. import codes
from ..documents.files import write_atomic
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


@dataclass(slots=True)
class Stage:
    """New contents of files below ``root``, by Provider-relative path, not yet written."""

    root: Path
    files: dict[str, _Staged] = field(default_factory=dict)

    def put(self, rel: str, data: bytes, *, executable: bool = False) -> None:
        """Stage ``data`` as the new content of ``rel`` (contained in the root, lexically
        and through symlinks)."""
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
        self.files[key] = _Staged(key, Path(real), data, executable)

    def text(self, rel: str, text: str) -> None:
        self.put(rel, text.encode("utf-8"))

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
        """Write every staged file that changes; all of them or, on failure, none."""
        self.preflight()
        todo = [self.files[rel] for rel in self.changed()]
        replaced: list[tuple[Path, bytes, int]] = []
        created: list[Path] = []
        folders: list[Path] = []
        current = ""
        try:
            for staged in todo:
                current = staged.rel
                folders.extend(_missing_folders(staged.path.parent, self.root))
                try:
                    info = staged.path.stat()
                except FileNotFoundError:
                    info = None
                if info is not None:
                    old = staged.path.read_bytes()
                    mode = stat.S_IMODE(info.st_mode)
                    write_atomic(staged.path, staged.data, mode=mode)
                    replaced.append((staged.path, old, mode))
                else:
                    write_atomic(staged.path, staged.data, mode=_new_file_mode(staged.executable))
                    created.append(staged.path)
        except OSError as error:
            _roll_back(replaced, created, folders)
            raise _error(
                codes.FILE_WRITE_FAILED,
                f"Cannot write {current}: {error.strerror or error}; nothing was changed",
                current,
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


def _roll_back(
    replaced: list[tuple[Path, bytes, int]], created: list[Path], folders: list[Path]
) -> None:
    for path, data, mode in reversed(replaced):
        # the best we can do; the error that stopped the commit is what gets raised
        with contextlib.suppress(OSError):
            write_atomic(path, data, mode=mode)
    for path in created:
        path.unlink(missing_ok=True)
    for folder in reversed(folders):
        with contextlib.suppress(OSError):  # someone put something there meanwhile
            folder.rmdir()
