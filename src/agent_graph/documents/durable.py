"""The one durable write: a whole file or none, on disk before it counts, debris swept.

Both Run stores (``agent-graph.run.v1`` files and Flow Run records) and the programs kept
beside Flow Runs write through :func:`write_durably`, so each has every property:

* the new bytes go to a temporary file in the target's directory (``.<name>.agc-<pid>-<hex>.tmp``),
  are ``fsync``ed, then renamed over the target (or hard-linked to a new one, which fails
  rather than replace a file that appeared meanwhile), and the directory is ``fsync``ed:
  after a crash at any moment the target is the complete old or the complete new version;
* a replaced file keeps its permissions;
* temporary files of this target left by writers that were killed are removed first. Only
  a writer holding the target's lock (:mod:`agent_graph.documents.locks`) writes them,
  and the caller holds it, so any that exist are abandoned.

Appends (:class:`Appender`, the Flow Run journal) are the other durable write: the
bytes are written at the end of what the caller knows to be whole, anything after it (the
torn tail of an append a killed writer left) is cut off first, and the file is ``fsync``ed
before the append counts; an append that fails is cut off again.

In directories many targets share (the programs and contents kept beside Flow Runs, each
written once by whichever Run needs it first), :func:`sweep_abandoned` removes the
temporary files of writers that are no longer alive.

Errors are ``OSError`` (``FileExistsError`` for a new file that exists): each store says
what failed in its own words and codes.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from .files import fsync_directory


def temp_pattern(name: str) -> re.Pattern[str]:
    """The temporary files of a write to ``name`` (any writer's)."""
    return re.compile(rf"\.{re.escape(name)}\.agc-[0-9]+-[0-9a-f]{{16}}\.tmp\Z")


def temp_name(name: str) -> str:
    return f".{name}.agc-{os.getpid()}-{secrets.token_hex(8)}.tmp"


def sweep(directory: Path, name: str) -> None:
    """Remove the temporary files of writes to ``name`` that their writers left behind."""
    pattern = temp_pattern(name)
    try:
        entries = [entry.name for entry in os.scandir(directory) if pattern.match(entry.name)]
    except OSError:
        return
    for entry in entries:
        with suppress(OSError):
            (directory / entry).unlink()


_ANY_TEMP = re.compile(r"\..+\.agc-([0-9]+)-[0-9a-f]{16}\.tmp\Z")


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` may be a running process: unknown counts as running (another user's
    process, a number no pid can be, a system without ``kill(pid, 0)``), so a sweep never
    deletes what a live writer still owns."""
    if os.name != "posix" or pid <= 0 or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True
    return True


def sweep_abandoned(directory: Path) -> None:
    """Remove the temporary files in ``directory`` whose writer process has ended (a
    directory many targets share, so no one lock says the writer is gone)."""
    try:
        found = [(e.name, _ANY_TEMP.match(e.name)) for e in os.scandir(directory)]
    except OSError:
        return
    for name, match in found:
        if match is not None and not pid_alive(int(match.group(1))):
            with suppress(OSError):
                (directory / name).unlink()


class Appender:
    """A file written by appends, durably (the Flow Run journal): the bytes go at the end
    of what the caller knows to be whole, and are ``fsync``ed before they count (unless
    not ``sync``: then the next synced append, whose ``fsync`` covers every byte before
    it, makes them durable; a killed process loses nothing either way, only a machine
    that stops does). The first append cuts off whatever followed (the torn tail of a
    killed writer's append); an append that fails is cut off again. The descriptor stays
    open between appends, until :meth:`close`. A symbolic link at the target is refused
    (``OSError``), never followed; a new file takes the permissions of ``mode_of``.
    """

    def __init__(self, target: Path, mode_of: Path | None = None) -> None:
        self.target = target
        self.mode_of = mode_of
        self._fd: int | None = None

    def append(self, data: bytes, *, at: int, sync: bool = True) -> None:
        fd = self._fd if self._fd is not None else self._open(at)
        try:
            view, offset = memoryview(data), at
            while view:
                written = os.pwrite(fd, view, offset)
                view, offset = view[written:], offset + written
            if sync:
                os.fsync(fd)
        except BaseException:
            with suppress(OSError):
                os.ftruncate(fd, at)
            raise

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with suppress(OSError):
                os.close(fd)

    def _open(self, at: int) -> int:
        target = self.target
        created = not os.path.lexists(target)
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_BINARY", 0)
        flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o666)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(target))
            if created and self.mode_of is not None and hasattr(os, "fchmod"):
                with suppress(OSError):
                    os.fchmod(fd, stat.S_IMODE(os.stat(self.mode_of).st_mode))
            if info.st_size != at:
                os.ftruncate(fd, at)  # the torn tail of a killed writer's append
        except BaseException:
            os.close(fd)
            raise
        if created:
            fsync_directory(target.parent)
        self._fd = fd
        return fd


def write_durably(
    target: Path,
    data: bytes,
    *,
    new: bool,
    before_publish: Callable[[], None] | None = None,
) -> None:
    """Write ``data`` as the whole of ``target`` (a new file when ``new``), durably.

    ``before_publish`` runs after the temporary file is on disk and before it becomes the
    target (the crash tests stop a writer there).
    """
    directory = target.parent
    sweep(directory, target.name)
    temp = directory / temp_name(target.name)
    try:
        _write_temp(temp, target, data, keep_mode=not new)
        if before_publish is not None:
            before_publish()
        if new:
            _publish_new(temp, target)
        else:
            os.replace(temp, target)
    finally:
        if os.path.lexists(temp):
            with suppress(OSError):
                temp.unlink()
    fsync_directory(directory)


def _write_temp(temp: Path, target: Path, data: bytes, *, keep_mode: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(temp, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        if keep_mode and hasattr(os, "fchmod"):
            with suppress(OSError):  # a replaced file keeps its permissions
                os.fchmod(fd, stat.S_IMODE(os.stat(target).st_mode))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish_new(temp: Path, target: Path) -> None:
    try:
        os.link(temp, target)  # fails rather than replace what appeared meanwhile
    except FileExistsError:
        raise
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        # a file system without hard links: the lock the caller holds is the only guard left
        if os.path.lexists(target):
            raise FileExistsError(str(target)) from None
        os.replace(temp, target)
