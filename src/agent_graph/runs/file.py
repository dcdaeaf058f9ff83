"""``FileRunStore``: one Run per file, safe against crashes and concurrent writers.

Durability: a new version is written to a temporary file in the same directory,
flushed to disk (``fsync``), renamed over the Run (atomic on POSIX and NTFS) and
the directory is flushed too, so after a crash the file is the complete old or
the complete new version, never a mixture. New files (``start``, ``checkpoint``,
``resume``) are published with a hard link, which fails instead of replacing
anything that appeared in the meantime.

Concurrency: every mutation holds an advisory lock (``flock`` on a sidecar
``.<name>.lock`` in the same directory, which stays there) for its whole
read-modify-write, so concurrent writers in any number of processes are
serialised and none loses an event. The kernel drops the lock of a process that
dies. Readers take no lock: they always see a complete version. Symbolic links to
a Run are followed, so two names for one Run share one lock (next to the real
file); the lock itself is opened without following a link, and a lock that is a
symbolic link or not a regular file is refused (``run-lock-invalid``), never
followed to create or lock something elsewhere. A lock is only created next to a
Run that exists, or for the new Run that ``start``/``checkpoint``/``resume`` create
(which alone create a missing directory).

A writer that has to wait for the lock is told so at once, and by whom it waits: the
holder writes its process id into the lock file after taking the lock (the content
is informative only; the lock is the ``flock``, never the content). The notice goes
to ``on_wait`` (default: :data:`WAIT_NOTICE`, which ``agc`` sets for human output).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..documents.durable import write_durably
from ..documents.files import fsync_directory
from ..errors import AgentGraphError
from . import codec
from .document import Clock, Run, new_run_id, utc_now
from .store import BaseRunStore, RunRef
from .validation import check_document

if TYPE_CHECKING:
    from ..documents.sourcemap import SourceMap

DEFAULT_LOCK_TIMEOUT = 60.0

#: Where a store without its own ``on_wait`` says that it waits for a lock (one line
#: of text, once per wait); ``None``: silently. ``agc`` sets it for human output.
WAIT_NOTICE: ContextVar[Callable[[str], None] | None] = ContextVar(
    "agent_graph_run_lock_wait_notice", default=None
)
# Open a lock without following a symbolic link (ELOOP, or EMLINK on FreeBSD, if it is one).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LOCK_FLAGS = (
    os.O_RDWR | os.O_CREAT | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def _lock_name(name: str) -> str:
    return f".{name}.lock"


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


def _holder(fd: int) -> int | None:
    """The process id the lock's holder wrote, when it can be read."""
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


def _holder_text(pid: int | None) -> str:
    return "Another process" if pid is None else f"Process {pid}"


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


def read_document(path: Path, display: str, provider: str | None = None) -> dict[str, Any]:
    """Read and check a Run file: JSON for ``.json``, YAML 1.2 otherwise (as the reference).

    Errors: ``file-read-failed``, ``file-too-large``, ``parse-failed`` (truncated or
    not JSON/YAML), ``run-version-unsupported``, ``schema-invalid`` (with line and
    column), ``run-provider-mismatch`` (with ``provider``), ``run-invalid``.
    """
    from ..documents.sources import parse_json, read_structured, read_text

    if path.suffix.lower() != ".json":
        document = read_structured(path, display=display)
        source = document.source
        return check_document(
            document.value, display, lambda: source, parsed=True, provider=provider
        )
    text = read_text(path, display=display)
    try:
        value = codec.loads(text)
    except (ValueError, RecursionError):
        # the compiler's reader names the line and column of the damage
        value = read_structured(path, display=display).value

    def positions() -> SourceMap | None:
        try:
            return parse_json(text.removeprefix("\ufeff"))[1]
        except Exception:
            return None

    return check_document(value, display, positions, parsed=True, provider=provider)


def read_run(path: RunRef, provider: str | None = None) -> Run:
    """Read a Run file without taking its lock (a reader always sees a whole version).

    With ``provider``, a Run of another Provider is refused (``run-provider-mismatch``)
    before its log is checked, as the reference refuses it.
    """
    absolute = Path(os.path.abspath(os.fspath(path)))
    return Run(read_document(absolute, str(absolute), provider))


class FileRunStore(BaseRunStore[Path]):
    """Runs as ``agent-graph.run.v1`` files; references are paths (relative to the process)."""

    def __init__(
        self,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        clock: Clock = utc_now,
        ids: Callable[[], str] = new_run_id,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(clock=clock, ids=ids)
        self.lock_timeout = lock_timeout
        self.on_wait = on_wait

    # -- references ----------------------------------------------------------------------

    def _key(self, ref: RunRef) -> Path:
        return Path(os.path.abspath(os.fspath(ref)))

    def _display(self, key: Path) -> str:
        return str(key)

    def _basename(self, key: Path) -> str:
        return key.name

    def _exists(self, key: Path) -> bool:
        return os.path.lexists(key)

    def _stored(self, key: Path) -> bool:
        return os.path.isfile(key)  # follows links: a dangling one stores nothing

    def _prepare(self, key: Path) -> None:
        directory = self._real(key).parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise AgentGraphError(
                "file-write-failed", f"Cannot create {directory}: {error.strerror or error}"
            ) from None

    @staticmethod
    def _real(key: Path) -> Path:
        return Path(os.path.realpath(key))

    def _read(self, key: Path) -> dict[str, Any]:
        return read_document(key, str(key))

    # -- locking -------------------------------------------------------------------------

    @contextmanager
    def _locked(self, keys: Sequence[Path]) -> Iterator[None]:
        # one global order (sorted lock paths) so two multi-Run operations cannot deadlock
        paths = sorted({self._real(key).parent / _lock_name(self._real(key).name) for key in keys})
        held: list[int] = []
        try:
            for path in paths:  # one at a time: those held are released if one fails
                held.append(self._acquire(path))  # noqa: PERF401
            yield
        finally:
            for fd in reversed(held):
                try:
                    with suppress(OSError):  # the holder's id is no longer true
                        os.ftruncate(fd, 0)
                    _unlock(fd)
                finally:
                    os.close(fd)

    @staticmethod
    def _lock_invalid(path: Path, what: str) -> AgentGraphError:
        return AgentGraphError(
            "run-lock-invalid",
            f"The Run lock {path} is {what}, not a lock file agc made; "
            "remove it if no agc process is running on this Run",
        )

    def _open_lock(self, path: Path) -> int:
        """The lock's descriptor; creates the file, never follows a link or makes a directory."""
        if not _NOFOLLOW and os.path.islink(path):  # pragma: no cover - no O_NOFOLLOW (Windows)
            raise self._lock_invalid(path, "a symbolic link")
        try:
            fd = os.open(path, _LOCK_FLAGS, 0o666)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.EMLINK) or os.path.islink(path):
                raise self._lock_invalid(path, "a symbolic link") from None
            if error.errno == errno.EISDIR or os.path.isdir(path):
                raise self._lock_invalid(path, "a directory") from None
            raise AgentGraphError(
                "file-write-failed", f"Cannot lock {path}: {error.strerror or error}"
            ) from None
        try:
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:  # pragma: no cover - fstat of an open descriptor
            regular = False
        if not regular:
            os.close(fd)
            raise self._lock_invalid(path, "not a regular file")
        return fd

    def _acquire(self, path: Path) -> int:
        fd = self._open_lock(path)
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.0005
        waiting = False
        while not _try_lock(fd):
            if not waiting:
                waiting = True
                self._notify_wait(path, fd)
            if time.monotonic() >= deadline:
                holder = _holder_text(_holder(fd))
                os.close(fd)
                raise AgentGraphError(
                    "run-locked",
                    f"{holder} has held the lock {path} for over "
                    f"{self.lock_timeout:g} s; is a writer stuck?",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        _record_holder(fd)
        return fd

    def _notify_wait(self, path: Path, fd: int) -> None:
        notice = self.on_wait if self.on_wait is not None else WAIT_NOTICE.get()
        if notice is None:
            return
        holder = _holder_text(_holder(fd))
        notice(
            f"Waiting for the lock {path}: {holder[0].lower() + holder[1:]} holds it "
            f"(giving up after {self.lock_timeout:g} s)"
        )

    # -- writing -------------------------------------------------------------------------

    def _replace(self, key: Path, document: dict[str, Any]) -> None:
        self._write(key, codec.dumps(document), exclusive=False)

    def _create(self, key: Path, document: dict[str, Any]) -> None:
        self._write(key, codec.dumps(document), exclusive=True)

    def _discard(self, key: Path) -> None:
        target = self._real(key)
        try:
            target.unlink()
        except FileNotFoundError:
            return
        fsync_directory(target.parent)

    def _write(self, key: Path, data: bytes, *, exclusive: bool) -> None:
        target = self._real(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_durably(target, data, new=exclusive)
        except FileExistsError:
            raise
        except OSError as error:
            raise AgentGraphError(
                "file-write-failed", f"Cannot write {key}: {error.strerror or error}"
            ) from None
