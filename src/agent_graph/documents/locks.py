"""The one writer lock of a file: an advisory ``flock`` on a sidecar ``.<name>.lock``.

Both Run stores (``agent-graph.run.v1`` files and Flow Run records) serialise their
writers with :func:`take`, so each has every property:

* the lock sits beside the *real* file (symbolic links to it are followed), so two names
  for one file share one lock;
* the lock file itself is opened without following a link, and one that is a symbolic
  link, a directory or not a regular file is refused (:class:`LockInvalid`), never
  followed to create or lock something elsewhere;
* the holder writes its process id into the lock after taking it, and clears it before
  letting go: the content only names the holder in messages, the lock is the ``flock``;
* the kernel drops the lock of a process that dies, so a crash never leaves it held;
* several locks are taken in one global order (sorted lock paths), so two writers that
  each need several cannot deadlock, and those held are released if a later one fails.

How long to wait is the caller's policy: ``timeout=0`` refuses at once when another
holds the lock, a positive ``timeout`` waits for it (telling ``on_wait`` once).
Refusals are :class:`LockError`, which names only the lock file: each store says what
failed in its own words and codes.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path
from types import TracebackType

# Open a lock without following a symbolic link (ELOOP, or EMLINK on FreeBSD, if it is one).
# O_NONBLOCK: a lock replaced by a FIFO must be refused, not hang the open.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LOCK_FLAGS = (
    os.O_RDWR | os.O_CREAT | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


class LockError(Exception):
    """A lock was not taken: ``path`` is the lock file, ``reason`` the system's words.

    This one (not a subclass): the lock file cannot be opened or created.
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class LockInvalid(LockError):
    """The lock file is ``what`` (``"a symbolic link"``, ``"a directory"``, ``"not a
    regular file"``): something agc did not make, left alone."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(path, what)
        self.what = what


class LockBusy(LockError):
    """Another holds the lock (still, after ``timeout``); ``holder`` is its process id when
    it wrote one and is alive."""

    def __init__(self, path: Path, holder: int | None) -> None:
        super().__init__(path, "held by another process")
        self.holder = holder


def lock_path(target: str | os.PathLike[str]) -> Path:
    """The lock of ``target``: beside the real file, so every name for it shares one."""
    real = Path(os.path.realpath(target))
    return real.parent / f".{real.name}.lock"


class Held:
    """Locks this process holds; leaving the ``with`` block (or :meth:`release`) lets go."""

    def __init__(self, fds: list[int]) -> None:
        self._fds = fds

    def release(self) -> None:
        while self._fds:
            fd = self._fds.pop()
            try:
                with suppress(OSError):  # the holder's id is no longer true
                    os.ftruncate(fd, 0)
                _unlock(fd)
            finally:
                os.close(fd)

    def __enter__(self) -> Held:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def take(
    targets: Iterable[str | os.PathLike[str]],
    *,
    timeout: float = 0.0,
    on_wait: Callable[[Path, int | None], None] | None = None,
) -> Held:
    """Hold the locks of ``targets``, waiting up to ``timeout`` seconds for each.

    ``on_wait(lock, holder)`` is called once for a lock that is held elsewhere, before
    waiting for it. Raises :class:`LockError`; nothing is held then.
    """
    fds: list[int] = []
    try:
        for path in sorted({lock_path(target) for target in targets}):
            # one at a time: those already held are released if a later one fails
            fds.append(_acquire(path, timeout, on_wait))  # noqa: PERF401
    except BaseException:
        Held(fds).release()
        raise
    return Held(fds)


def _acquire(path: Path, timeout: float, on_wait: Callable[[Path, int | None], None] | None) -> int:
    fd = _open(path)
    try:  # a notice that fails or an interrupt while waiting must not leak the descriptor
        deadline = time.monotonic() + timeout
        delay = 0.0005
        waiting = False
        while not _try_lock(fd):
            if not waiting:
                waiting = True
                if on_wait is not None:
                    on_wait(path, holder(fd))
            if time.monotonic() >= deadline:
                raise LockBusy(path, holder(fd))
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
    except BaseException:
        os.close(fd)
        raise
    _record_holder(fd)
    return fd


def _open(path: Path) -> int:
    """The lock's descriptor; creates the file, never follows a link or makes a directory."""
    if not _NOFOLLOW and os.path.islink(path):  # pragma: no cover - no O_NOFOLLOW (Windows)
        raise LockInvalid(path, "a symbolic link")
    try:
        fd = os.open(path, _LOCK_FLAGS, 0o666)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK) or os.path.islink(path):
            raise LockInvalid(path, "a symbolic link") from None
        if error.errno == errno.EISDIR or os.path.isdir(path):
            raise LockInvalid(path, "a directory") from None
        raise LockError(path, str(error.strerror or error)) from None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:  # pragma: no cover - fstat of an open descriptor
        regular = False
    if not regular:
        os.close(fd)
        raise LockInvalid(path, "not a regular file")
    return fd


def _record_holder(fd: int) -> None:
    """Write our process id into the lock we now hold (best effort: never fails a write)."""
    data = f"{os.getpid()}\n".encode("ascii")
    with suppress(OSError):
        if hasattr(os, "pwrite"):
            os.pwrite(fd, data, 0)
        else:  # pragma: no cover - Windows: the locked byte is ours to write
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, data)
            os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, len(data))


def holder(fd: int) -> int | None:
    """The process id the lock's holder wrote, when it can be read and is alive."""
    try:
        if hasattr(os, "pread"):
            data = os.pread(fd, 32, 0)
        else:  # pragma: no cover - Windows refuses to read a locked byte anyway
            return None
    except OSError:
        return None
    text = data.split(b"\n", 1)[0].strip()
    if not text.isdigit() or len(text) > 10:
        return None
    pid = int(text)
    if pid <= 0:
        return None
    if sys.platform != "win32":  # left by a holder that was killed, and another holds it now?
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except OSError:  # EPERM: it exists, as another user
            pass
    return pid


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
