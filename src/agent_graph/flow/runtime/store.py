"""Run record files: one JSON document per Run, written atomically under a lock.

Durability (docs/flow-runs.md §Durability and locking, C.3): each commit writes the
whole document through the durable write both Run stores share
(:func:`agent_graph.documents.durable.write_durably`): a temporary file in the same
directory, ``fsync``ed, renamed over the record, the directory ``fsync``ed, so after a
crash at any moment the file is the complete previous or the complete new version. A new
record is published with a hard link, which fails rather than replace a file that
appeared meanwhile; a replaced record keeps its permissions; temporary files a killed
writer left behind are swept by the next commit.

Integrity: the document carries ``checksum``, the SHA-256 of its compact JSON (members
in document order) without that member; a record edited outside agc (or of another
tool) is refused on resume (``run-record-modified``) instead of being run from a state
the runner never wrote.

Concurrency: a Run is driven by one process at a time. :meth:`RunFile.lock` takes the
writer lock both Run stores share (:mod:`agent_graph.documents.locks`: an advisory
``flock`` on ``.<name>.lock`` beside the real file, holding the holder's process id) for
the whole run or resume and never waits: a second ``resume`` of the same Run is refused
at once (``run-busy``). A lock file that is a symbolic link, a directory or not a regular
file is refused (``run-lock-invalid``), never followed. The kernel drops the lock of a
process that dies, so a crash never leaves it held. Readers (``status``, ``events``)
take no lock: they always see a whole version.

Test-only crash hook: with ``AGC_FLOW_CRASH_AFTER_COMMIT=N`` in the environment the
process SIGKILLs itself right after its N-th commit (counted per process, new records
included); ``AGC_FLOW_CRASH_BEFORE_COMMIT=N`` kills it after the N-th commit's temporary
file is written but before the rename. The kill tests use them to stop the runner
between two events; nothing else reads them.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ... import codes
from ...documents import files, locks
from ...documents.durable import write_durably
from ...errors import AgentGraphError, Diagnostic
from .validate import check_record

#: Beside the records: the compiled programs Runs were started with, by digest.
PROGRAMS: Final = ".agc-flow-programs"
CRASH_AFTER: Final = "AGC_FLOW_CRASH_AFTER_COMMIT"
CRASH_BEFORE: Final = "AGC_FLOW_CRASH_BEFORE_COMMIT"
MAX_RECORD_BYTES: Final = 1 << 30

_commits = 0
_commits_lock = threading.Lock()


def canonical(document: dict[str, Any]) -> bytes:
    body = {k: v for k, v in document.items() if k != "checksum"}
    # members in document order (not sorted): Agent content keeps the order it came in,
    # and reading the file back and dumping it again gives exactly these bytes
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def checksum(document: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical(document)).hexdigest()


def _crash_point(variable: str, number: int) -> None:
    wanted = os.environ.get(variable)
    if wanted and wanted.isdigit() and int(wanted) == number:
        os.kill(os.getpid(), signal.SIGKILL)


class RunFile:
    """The record at ``path`` (absolute; a symbolic link is followed to the real file)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(os.path.abspath(os.fspath(path)))

    @property
    def real(self) -> Path:
        return Path(os.path.realpath(self.path))

    def sibling(self, name: str) -> RunFile:
        """A record beside this one (child Runs live next to their parent)."""
        return RunFile(self.real.parent / name)

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    # -- checks before a new Run -------------------------------------------------------

    def check_new(self) -> None:
        """A new record can be created here: nothing is there, the directory exists and
        is writable (checked before any node runs, so a bad ``--state`` costs nothing)."""
        if self.exists():
            raise AgentGraphError(
                codes.RUN_TARGET_EXISTS,
                f"{self.path} exists; a new Run never replaces a file (resume it with "
                f"`agc flow resume --state {self.path}`, or choose another --state)",
            )
        directory = self.path.parent
        if not directory.is_dir():
            raise AgentGraphError(
                codes.RUN_STATE_INVALID, f"The directory of --state does not exist: {directory}"
            )
        if not os.access(directory, os.W_OK | os.X_OK):
            raise AgentGraphError(
                codes.FILE_WRITE_FAILED,
                f"Cannot write the Run record in {directory}: permission denied",
            )

    # -- locking -------------------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the Run's lock, or refuse at once (``run-busy``) if another process does."""
        try:
            held = locks.take([self.path])  # timeout 0: a Run has one driver, never a queue
        except locks.LockBusy as error:
            raise AgentGraphError(
                codes.RUN_BUSY,
                f"Another agc process is running or resuming the Run {self.path} "
                f"(it holds {error.path}); wait for it to end",
            ) from None
        except locks.LockInvalid as error:
            raise AgentGraphError(
                codes.RUN_LOCK_INVALID,
                f"The Run's lock {error.path} is {error.what}, not a lock file agc made; "
                f"remove it if no agc process is running or resuming the Run {self.path}",
            ) from None
        except locks.LockError as error:
            raise AgentGraphError(
                codes.FILE_WRITE_FAILED, f"Cannot lock {error.path}: {error.reason}"
            ) from None
        with held:
            yield

    # -- reading -------------------------------------------------------------------------

    def read(self) -> dict[str, Any]:
        """The record, checked for shape and checksum (``run-record-invalid`` /
        ``run-record-modified``); a missing file is ``file-missing``."""
        path = self.path
        if not os.path.lexists(path):
            raise AgentGraphError(codes.FILE_MISSING, f"No Run record at {path}")
        if os.path.isdir(path):
            raise AgentGraphError(codes.RUN_STATE_INVALID, f"--state is a directory: {path}")
        # non-blocking and capped: a FIFO or a device given as --state must not hang the
        # reader or fill its memory (the Provider files' rule, and their codes)
        try:
            data = files.read_bytes(path, str(path), limit=MAX_RECORD_BYTES)
        except AgentGraphError as error:
            if error.code != codes.FILE_TOO_LARGE:
                raise
            raise AgentGraphError(
                codes.FILE_TOO_LARGE,
                f"{path} is over 1 GiB: not a Run record agc can read",
                error.diagnostics,
            ) from None
        try:
            document = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise AgentGraphError(
                codes.RUN_RECORD_INVALID, f"{path} is not UTF-8 text (byte {error.start})"
            ) from None
        except json.JSONDecodeError as error:
            found = Diagnostic(
                codes.RUN_RECORD_INVALID,
                error.msg,
                path=str(path),
                line=error.lineno,
                column=error.colno,
            )
            raise AgentGraphError(
                codes.RUN_RECORD_INVALID,
                f"{path}:{error.lineno}:{error.colno}: not a whole Run record "
                f"(truncated or damaged: {error.msg})",
                [found],
            ) from None
        check_record(document, str(path))
        assert isinstance(document, dict)
        if document.get("checksum") != checksum(document):
            raise AgentGraphError(
                codes.RUN_RECORD_MODIFIED,
                f"{path} was changed outside agc (its checksum does not match); "
                "a Run resumes only from a record the runner wrote",
            )
        return document

    # -- the program the Run runs ------------------------------------------------------

    def _program_path(self, digest: str) -> Path:
        return self.real.parent / PROGRAMS / f"{digest.removeprefix('sha256:')}.agfir"

    def keep_program(self, data: bytes, digest: str) -> None:
        """Keep a Run's compiled program beside it, by digest, before the record names it.

        Written whole or not at all (temporary file, fsync, rename), once per digest: Runs
        of one program in one directory share the file.
        """
        target = self._program_path(digest)
        if target.is_file():
            return
        try:
            target.parent.mkdir(exist_ok=True)
            write_durably(target, data, new=True)
        except FileExistsError:
            return  # another Run of this program kept it meanwhile: the same bytes
        except OSError as error:
            raise AgentGraphError(
                codes.FILE_WRITE_FAILED,
                f"Cannot keep the Run's program {target}: {error.strerror or error}",
            ) from None

    def kept_program(self, digest: str) -> bytes | None:
        """The program kept for ``digest``, or None when there is none (or it is unreadable)."""
        try:
            return files.read_bytes(self._program_path(digest), digest, limit=MAX_RECORD_BYTES)
        except AgentGraphError:
            return None

    # -- writing -------------------------------------------------------------------------

    def create(self, document: dict[str, Any]) -> None:
        self._write(document, new=True)

    def commit(self, document: dict[str, Any]) -> None:
        self._write(document, new=False)

    def _write(self, document: dict[str, Any], *, new: bool) -> None:
        global _commits
        with _commits_lock:
            _commits += 1
            number = _commits
        # one serialisation: the canonical body, with its own checksum appended last
        body = canonical(document)
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        document["checksum"] = digest
        data = body[:-1] + (',"checksum":"' + digest + '"}').encode("ascii")
        target = self.path if new else self.real
        try:
            write_durably(
                target, data, new=new, before_publish=lambda: _crash_point(CRASH_BEFORE, number)
            )
        except FileExistsError:
            raise AgentGraphError(
                codes.RUN_TARGET_EXISTS, f"{target} appeared meanwhile; nothing was replaced"
            ) from None
        except OSError as error:
            raise AgentGraphError(
                codes.FILE_WRITE_FAILED,
                f"Cannot write the Run record {target}: {error.strerror or error}",
            ) from None
        _crash_point(CRASH_AFTER, number)
