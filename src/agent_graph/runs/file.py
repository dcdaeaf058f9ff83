"""``FileRunStore``: one Run per file, safe against crashes and concurrent writers.

Durability: a new version is written to a temporary file in the same directory,
flushed to disk (``fsync``), renamed over the Run (atomic on POSIX and NTFS) and
the directory is flushed too, so after a crash the file is the complete old or
the complete new version, never a mixture. New files (``start``, ``checkpoint``,
``resume``) are published with a hard link, which fails instead of replacing
anything that appeared in the meantime.

Concurrency: every mutation holds an advisory lock (``flock`` on a sidecar
``.<name>.lock`` in the same directory, which stays there; the lock both Run stores
share, :mod:`agent_graph.documents.locks`, here waiting its turn) for its whole
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

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import codes
from ..documents import locks
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


def _holder_text(pid: int | None) -> str:
    return "Another process" if pid is None else f"Process {pid}"


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
                codes.FILE_WRITE_FAILED, f"Cannot create {directory}: {error.strerror or error}"
            ) from None

    @staticmethod
    def _real(key: Path) -> Path:
        return Path(os.path.realpath(key))

    def _read(self, key: Path) -> dict[str, Any]:
        return read_document(key, str(key))

    # -- locking -------------------------------------------------------------------------

    @contextmanager
    def _locked(self, keys: Sequence[Path]) -> Iterator[None]:
        try:
            held = locks.take(keys, timeout=self.lock_timeout, on_wait=self._wait_notice())
        except locks.LockError as error:
            raise self._lock_refusal(error) from None
        with held:
            yield

    def _lock_refusal(self, error: locks.LockError) -> AgentGraphError:
        path = error.path
        if isinstance(error, locks.LockInvalid):
            return AgentGraphError(
                codes.RUN_LOCK_INVALID,
                f"The Run lock {path} is {error.what}, not a lock file agc made; "
                "remove it if no agc process is running on this Run",
            )
        if isinstance(error, locks.LockBusy):
            return AgentGraphError(
                codes.RUN_LOCKED,
                f"{_holder_text(error.holder)} has held the lock {path} for over "
                f"{self.lock_timeout:g} s; is a writer stuck?",
            )
        return AgentGraphError(codes.FILE_WRITE_FAILED, f"Cannot lock {path}: {error.reason}")

    def _wait_notice(self) -> Callable[[Path, int | None], None] | None:
        say = self.on_wait if self.on_wait is not None else WAIT_NOTICE.get()
        if say is None:
            return None

        def waiting(path: Path, holder: int | None) -> None:
            text = _holder_text(holder)
            say(
                f"Waiting for the lock {path}: {text[0].lower() + text[1:]} holds it "
                f"(giving up after {self.lock_timeout:g} s)"
            )

        return waiting

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
                codes.FILE_WRITE_FAILED, f"Cannot write {key}: {error.strerror or error}"
            ) from None
