"""Run record files: a snapshot and an append-only journal beside it, written under a lock.

Durability (docs/flow-runs.md §Durability and locking, C.3). The record is two files: the
*snapshot* ``run.json`` (the whole document, ``flow-run.schema.json``) and the *journal*
``.run.json.journal`` beside it. A commit appends one line to the journal holding only
what changed since the previous commit (:mod:`.journal`: new and changed visits, rounds
and top-level members, the events and recoveries added), ``fsync``ed before it counts;
a visit costs bytes in proportion to itself, not to the Run. The reader folds the lines
into the snapshot and returns the same document a whole-file record held. When the Run
ends or is interrupted, when the journal outgrows the snapshot, or when a process other
than the one that read the record last commits, the commit *compacts* instead: it
rewrites the snapshot through the durable write both Run stores share
(:func:`agent_graph.documents.durable.write_durably`: temporary file, ``fsync``, rename,
directory ``fsync``) and then removes the journal. So a completed or failed Run is one
file, as before. A crash at any moment leaves a readable record: a torn last journal line
(a killed append) is ignored on read and cut off by the next writer; a journal a killed
compaction left behind names an older snapshot and is ignored. A new record is published
with a hard link, which fails rather than replace a file that appeared meanwhile; a
replaced record keeps its permissions (the journal takes them too).

Contents (task, inputs, results, conclusion) whose JSON is over 64 KiB are stored once,
by digest, in ``.agc-flow-contents/<hex>.json`` beside the record, and the record refers
to them; the reader resolves them (a missing or damaged one is ``run-content-invalid``).
The writer never commits what its reader refuses (``MAX_RECORD_BYTES`` for the snapshot,
the journal and each content): :class:`RecordTooLarge` comes first, and the Run fails with
a ``persistence`` error (``record.Record.commit``).

Integrity: the snapshot carries ``checksum``, the SHA-256 of its compact JSON (members in
document order, contents in their stored form) without that member. Each journal line
carries ``chain``, the SHA-256 of the previous line's ``chain`` (the snapshot's
``checksum`` for the first), a newline and the line's own bytes before it, and the first
line names the snapshot it continues (``base``); a content's file name is its digest.
Every byte of a record is thus covered: a record edited outside agc (or of another tool)
is refused (``run-record-modified``) instead of being run from a state the runner never
wrote. The document the reader returns carries the checksum of its whole folded JSON,
the value a single-file record of the same state has. Checksums detect accidents, not
forgery.

Concurrency: a Run is driven by one process at a time. :meth:`RunFile.lock` takes the
writer lock both Run stores share (:mod:`agent_graph.documents.locks`: an advisory
``flock`` on ``.<name>.lock`` beside the real file, holding the holder's process id) for
the whole run or resume and never waits: a second ``resume`` of the same Run is refused
at once (``run-busy``). A lock file that is a symbolic link, a directory or not a regular
file is refused (``run-lock-invalid``), never followed. The kernel drops the lock of a
process that dies, so a crash never leaves it held. Whoever takes the lock removes the
temporary files killed writers of the record left (and those of ended processes in the
shared program and content directories). Readers (``status``, ``events``) take no lock:
they always see a whole version (a read that meets a compaction is made again).

Test-only crash hook: with ``AGC_FLOW_CRASH_AFTER_COMMIT=N`` in the environment the
process SIGKILLs itself right after its N-th commit (counted per process, new records
included; a journal append or a compaction); ``AGC_FLOW_CRASH_BEFORE_COMMIT=N`` kills it
during the N-th commit: a compaction after its temporary file is written but before the
rename, an append after half its line is on disk. Each :class:`RunFile` reads them when
it is made (not at every commit: the lookups in ``os.environ`` cost 0.02 ms a visit). The
kill tests use them to stop the runner between two events; nothing else reads them.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ... import codes
from ...documents import files, locks
from ...documents.durable import Appender, sweep, sweep_abandoned, write_durably
from ...documents.files import fsync_directory
from ...errors import AgentGraphError
from . import journal as journal_format
from . import record_files
from .validate import check_record

#: Beside the records: the compiled programs Runs were started with, by digest.
PROGRAMS: Final = ".agc-flow-programs"
#: Beside the records: contents over the side-file threshold, by digest.
CONTENTS: Final = ".agc-flow-contents"
#: A journal longer than this and than twice its snapshot is compacted.
COMPACT_AFTER: Final = 4 << 20
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


def _crash_hook(variable: str) -> int | None:
    """The commit a crash hook names (None: not set, or not a number)."""
    wanted = os.environ.get(variable)
    if not wanted or not wanted.isdigit():
        return None
    try:
        return int(wanted)
    except ValueError:  # a digit int() does not read (superscripts)
        return None


def _crash_point(wanted: int | None, number: int) -> None:
    if wanted == number:
        os.kill(os.getpid(), signal.SIGKILL)


class RunFile:
    """The record at ``path`` (absolute; a symbolic link is followed to the real file)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(os.path.abspath(os.fspath(path)))
        self._writer: _Writer | None = None
        self._drop_oversized = False
        self._sync = True
        self._durable = True
        self._crash_after = _crash_hook(CRASH_AFTER)
        self._crash_before = _crash_hook(CRASH_BEFORE)

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
            real = self.real
            sweep(real.parent, real.name)  # only a lock holder writes them: abandoned
            sweep_abandoned(real.parent / PROGRAMS)
            sweep_abandoned(real.parent / CONTENTS)
            try:
                yield
            finally:
                if self._writer is not None:
                    self._writer.close()  # the journal's descriptor: kept while locked

    # -- reading -------------------------------------------------------------------------

    @property
    def journal(self) -> Path:
        return _journal_of(self.real)

    def read(self) -> dict[str, Any]:
        """The record (snapshot and journal folded, contents resolved), checked for shape
        and checksums (``run-record-invalid`` / ``run-record-modified``; a content that
        cannot be read back is ``run-content-invalid``); a missing file is ``file-missing``.

        A writer that compacts while this reads replaces the snapshot: the read is made
        again, so it always returns one whole version.
        """
        for _ in range(20):
            found = self._read_once()
            if found is not None:
                if self._writer is not None:
                    self._writer.close()
                document, self._writer = found
                return document
        raise AgentGraphError(
            codes.RUN_RECORD_INVALID,
            f"{self.path} was replaced on every one of 20 reads; try again when its writer is done",
        )

    def _read_once(self) -> tuple[dict[str, Any], _Writer] | None:
        path = self.path
        if not os.path.lexists(path):
            raise AgentGraphError(codes.FILE_MISSING, f"No Run record at {path}")
        if os.path.isdir(path):
            raise AgentGraphError(codes.RUN_STATE_INVALID, f"--state is a directory: {path}")
        before = record_files.identity(path)
        data = record_files.read_capped(path, str(path), MAX_RECORD_BYTES)
        stored = record_files.parse(data, path)
        journal = self.journal
        lines: list[dict[str, Any]] = []
        length, tail = 0, ""
        snapshot_sum = stored.get("checksum") if isinstance(stored, dict) else None
        if isinstance(stored, dict) and isinstance(snapshot_sum, str):
            if os.path.lexists(journal):
                text = record_files.read_capped(journal, str(journal), MAX_RECORD_BYTES)
                if record_files.identity(path) != before:
                    return None  # compacted meanwhile: that journal is not this snapshot's
                lines, length = record_files.journal_lines(text, stored, journal)
            tail = record_files.chain_tail(lines, snapshot_sum)
        if record_files.identity(path) != before:
            return None
        if not isinstance(stored, dict):
            check_record(stored, str(path))
        assert isinstance(stored, dict)
        snapshot_ok = snapshot_sum == checksum(stored)
        for number, line in enumerate(lines, start=1):
            try:
                journal_format.apply(stored, line)
            except journal_format.BadLine as error:
                raise AgentGraphError(
                    codes.RUN_RECORD_INVALID,
                    f"{journal}: line {number} does not apply to the record: {error}",
                ) from None
        resolver = record_files.Resolver(self.real.parent / CONTENTS, str(path), MAX_RECORD_BYTES)
        document = journal_format.resolve_document(stored, resolver)
        if lines or resolver.used:
            document["checksum"] = checksum(document)
        check_record(document, str(path))
        if not snapshot_ok:
            raise AgentGraphError(
                codes.RUN_RECORD_MODIFIED,
                f"{path} was changed outside agc (its checksum does not match); "
                "a Run resumes only from a record the runner wrote",
            )
        writer = _Writer(
            identity=before,
            snapshot_bytes=len(data),
            checksum=str(snapshot_sum),
            length=length,
            tail=tail,
            base=journal_format.Baseline.of(stored),
            real=self.real,
            revision=int(stored.get("revision") or 0),
        )
        return document, writer

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

    def commit(self, document: dict[str, Any], *, sync: bool = True) -> bool:
        """Commit ``document``; True when it is on disk. Not ``sync``: a journal line is
        written (another process, and this one if killed, sees it) but its ``fsync`` is
        left to the next commit: for a commit the runner follows with another before
        anything happens outside it. A snapshot is always written durably."""
        self._sync = sync
        self._durable = True
        try:
            self._write(document, new=False)
        finally:
            self._sync = True
        return self._durable

    def fail_over(self, document: dict[str, Any]) -> None:
        """Commit ``document`` with every content too large to keep replaced by null: the
        record of a Run that fails because of them (``persistence``)."""
        self._drop_oversized = True
        try:
            self._write(document, new=False)
        finally:
            self._drop_oversized = False

    def _write(self, document: dict[str, Any], *, new: bool) -> None:
        global _commits
        with _commits_lock:
            _commits += 1
            number = _commits
        try:
            if new:
                self._snapshot(document, new=True, number=number)
            elif not self._append(document, number):
                self._snapshot(document, new=False, number=number)
        except FileExistsError:
            raise AgentGraphError(
                codes.RUN_TARGET_EXISTS, f"{self.path} appeared meanwhile; nothing was replaced"
            ) from None
        except OSError as error:
            raise AgentGraphError(
                codes.FILE_WRITE_FAILED,
                f"Cannot write the Run record {self.path}: {error.strerror or error}",
            ) from None
        _crash_point(self._crash_after, number)

    def _keep(self, text: str) -> Any:
        """Store a content's JSON once, by digest, beside the record; its reference."""
        data = text.encode("utf-8")
        if len(data) > MAX_RECORD_BYTES:
            if self._drop_oversized:
                return None
            raise RecordTooLarge(
                f"a content of {len(data):,} bytes is over the {MAX_RECORD_BYTES:,} bytes "
                "the reader of a Run record accepts"
            )
        hexdigest = hashlib.sha256(data).hexdigest()
        target = self.real.parent / CONTENTS / f"{hexdigest}.json"
        if not target.is_file():
            target.parent.mkdir(exist_ok=True)
            with suppress(FileExistsError):  # another Run kept the same bytes meanwhile
                write_durably(target, data, new=True)
        return {journal_format.REF: f"sha256:{hexdigest}"}

    def _snapshot(self, document: dict[str, Any], *, new: bool, number: int) -> None:
        """Rewrite the whole record (the compaction) and drop the journal it folds in."""
        stored = journal_format.stored_document(document, self._keep)
        # one serialisation: the canonical body, with its own checksum appended last
        body = journal_format.dumps(stored).encode("utf-8")
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        data = body[:-1] + (',"checksum":"' + digest + '"}').encode("ascii")
        if len(data) > MAX_RECORD_BYTES:
            raise RecordTooLarge(
                f"the record would be {len(data):,} bytes, over the {MAX_RECORD_BYTES:,} "
                "its reader accepts"
            )
        document["checksum"] = digest
        target = self.path if new else self.real
        journal = _journal_of(target)
        if new and not os.path.lexists(target):
            with suppress(FileNotFoundError):  # an earlier record's of this name, removed
                journal.unlink()
        write_durably(
            target, data, new=new, before_publish=lambda: _crash_point(self._crash_before, number)
        )
        if self._writer is not None:
            self._writer.close()
        if os.path.lexists(journal):
            with suppress(FileNotFoundError):
                journal.unlink()
            fsync_directory(target.parent)
        self._writer = _Writer(
            identity=record_files.identity(target),
            snapshot_bytes=len(data),
            checksum=digest,
            length=0,
            tail=digest,
            base=journal_format.Baseline.of(stored),
            real=self.real,
            revision=int(stored.get("revision") or 0),
            own=True,
        )

    def _append(self, document: dict[str, Any], number: int) -> bool:
        """Append the change since the last commit to the journal; False when the commit
        rewrites the snapshot instead (an ending Run, a long journal, a record read by
        another process or changed on disk since)."""
        writer = self._writer
        if writer is None or document.get("status") != "running":
            return False
        revision = document.get("revision")
        if type(revision) is not int or revision != writer.revision + 1:
            return False  # a line must be the next revision; a snapshot can be any
        real = writer.real
        if not writer.own:
            # read, not written, by this process: the files must still be what it read
            if real != self.real or record_files.identity(real) != writer.identity:
                return False
            try:
                on_disk = os.lstat(_journal_of(real)).st_size
            except FileNotFoundError:
                on_disk = 0
            if on_disk < writer.length:
                return False
        try:
            parts, base = journal_format.delta(document, writer.base, self._keep)
        except journal_format.NeedsSnapshot:
            return False
        head = f'{{"r":{revision}'
        if writer.length == 0:
            head += f',"base":"{writer.checksum}"'
        body = (head + "".join("," + part for part in parts) + "}").encode("utf-8")
        chain = journal_format.chain_of(writer.tail, body)
        line = body[:-1] + f',"chain":"{chain}"}}\n'.encode("ascii")
        grown = writer.length + len(line)
        if grown > max(COMPACT_AFTER, 2 * writer.snapshot_bytes) or (
            writer.snapshot_bytes + grown > MAX_RECORD_BYTES
        ):
            return False
        if writer.appender is None:
            writer.appender = Appender(_journal_of(real), mode_of=real)
        if self._crash_before == number:
            # the crash tests' torn append: half the line on disk, then the kill
            writer.appender.append(line[: len(line) // 2], at=writer.length)
            os.kill(os.getpid(), signal.SIGKILL)
        writer.appender.append(line, at=writer.length, sync=self._sync)
        self._durable = self._sync
        writer.length = grown
        writer.tail = chain
        writer.base = base
        writer.revision = revision
        writer.own = True  # under the lock, only this process writes until it ends
        return True


def _journal_of(record: Path) -> Path:
    """The journal beside the record file ``record``: made only where it is needed (the
    path arithmetic at every append cost it 3 us)."""
    return record.parent / f".{record.name}.journal"


class RecordTooLarge(Exception):
    """The commit would write what the reader refuses (the reason)."""


@dataclass
class _Writer:
    """What this process last read or committed: the snapshot it knows (by file identity),
    the journal's whole length and last chain value, and the baseline of the next delta."""

    identity: tuple[int, ...]
    snapshot_bytes: int
    checksum: str
    length: int
    tail: str
    base: journal_format.Baseline
    real: Path
    revision: int
    own: bool = False
    appender: Appender | None = None

    def close(self) -> None:
        if self.appender is not None:
            self.appender.close()
            self.appender = None
