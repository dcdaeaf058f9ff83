"""Creating a set of new files all at once, never replacing anything that is there.

Every target is checked before anything is written (``provider-target-exists`` names
the first that exists, or a path component that is a file or a symbolic link, so nothing
is ever written outside the directory or through a link). The files are then written
and synced in a staging directory on the same file system and put in place:

* when the directory does not exist yet, the staging directory is renamed to it, so a
  crash leaves either nothing or every file;
* when it exists (a repository with a README, an empty folder …), each staged file is
  hard-linked to its target, which fails rather than replaces when something appeared
  there meanwhile (file systems without hard links get an exclusive create instead).
  Any failure removes exactly the files and folders this call created, nothing else.

The staging directory is removed in every case. A ``root`` that is a symbolic link to a
directory is the directory the person named.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from .. import codes
from ..errors import AgentGraphError

#: ``os.link`` errors that mean "this file system has no hard links", not "target exists".
_NO_LINKS = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP}

Refusal = Callable[[Path, str], AgentGraphError]


def _refuse(path: Path, why: str) -> AgentGraphError:
    return AgentGraphError(
        codes.PROVIDER_TARGET_EXISTS,
        f"Provider initialization refuses to replace existing content: {path}{why}",
    )


def check_targets(root: Path, names: list[str], refuse: Refusal = _refuse) -> None:
    """Raise ``refuse(path, why)`` for the first target that exists or cannot be made."""
    if os.path.lexists(root) and not root.is_dir():
        raise refuse(root, " (not a directory)")
    for name in names:
        target = root / name
        if os.path.lexists(target):
            raise refuse(target, "")
        for parent in reversed(target.relative_to(root).parents[:-1]):
            folder = root / parent
            if os.path.islink(folder):
                raise refuse(folder, " (a symbolic link)")
            if os.path.lexists(folder) and not folder.is_dir():
                raise refuse(folder, " (not a directory)")


def _write_new(path: Path, data: bytes) -> None:
    with open(path, "xb") as handle:  # never over an existing file
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _stage(stage: Path, files: Mapping[str, bytes]) -> None:
    os.chmod(stage, 0o777 & ~_umask())  # mkdtemp's 0700 would become the Provider's mode
    for name, data in files.items():
        target = stage / name
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_new(target, data)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _missing_parents(path: Path) -> list[Path]:
    """The ancestors of ``path`` that do not exist, outermost first."""
    out: list[Path] = []
    for parent in (path, *path.parents):
        if os.path.lexists(parent):
            break
        out.append(parent)
    return out[::-1]


class _Created:
    """What one call created, to take back (and only that) when it fails."""

    def __init__(self) -> None:
        self.files: list[Path] = []
        self.folders: list[Path] = []

    def folder(self, path: Path) -> None:
        for missing in _missing_parents(path):
            missing.mkdir()
            self.folders.append(missing)

    def undo(self) -> None:
        for path in reversed(self.files):
            path.unlink(missing_ok=True)
        for folder in reversed(self.folders):
            with contextlib.suppress(OSError):  # someone put something there meanwhile
                folder.rmdir()


def _place(staged: Path, target: Path, data: bytes, created: _Created) -> None:
    try:
        os.link(staged, target)
    except FileExistsError:
        raise
    except OSError as error:
        if error.errno not in _NO_LINKS:
            raise
        _write_new(target, data)
    created.files.append(target)


def create_files(root: Path, files: Mapping[str, bytes], refuse: Refusal = _refuse) -> None:
    """Create every ``{relative name: bytes}`` under ``root``, all or none (module doc)."""
    root = Path(os.path.abspath(root))
    check_targets(root, list(files), refuse)
    created = _Created()
    stage: Path | None = None
    try:
        fresh = not os.path.lexists(root)
        if fresh:
            created.folder(root.parent)
            stage = Path(tempfile.mkdtemp(prefix=f".{root.name}.agc-init-", dir=root.parent))
            _stage(stage, files)
            try:
                os.rename(stage, root)  # onto an empty folder that appeared meanwhile, too
                stage = None
                return
            except OSError as error:
                if error.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                    raise
                check_targets(root, list(files), refuse)  # something appeared: merge, or refuse
        if stage is None:
            stage = Path(tempfile.mkdtemp(prefix=".agc-init-", dir=root))
            _stage(stage, files)
        for name, data in files.items():
            target = root / name
            created.folder(target.parent)
            try:
                _place(stage / name, target, data, created)
            except FileExistsError:
                raise refuse(target, "") from None
    except BaseException:
        _remove(stage)  # first: it may sit in a folder this call created
        stage = None
        created.undo()
        raise
    finally:
        _remove(stage)


def _remove(stage: Path | None) -> None:
    if stage is not None:
        shutil.rmtree(stage, ignore_errors=True)
