"""Several files replaced as one change, under kill and beside an editor that saves.

:meth:`agent_graph.authoring.staging.Stage.commit` writes through here. Two promises:

* **No edit is lost.** Each file is replaced only while it still holds the bytes the
  command read when it made its plan; a file saved meanwhile (by an editor, another
  tool) is a ``write-conflict`` and nothing is written. The check runs after the new
  content is on disk, right before each rename, against the inode that is replaced (a
  hard link to it is kept until the end), and once more after the last rename, so an
  editor that rewrote the old file in place during the commit is caught too: the
  commit is then rolled back and the edited file put back.
* **All or none, even under kill.** Before the first rename a journal,
  :data:`JOURNAL` in the Provider root, names every target, its new content's temporary
  file and the hard link holding its old content. The next command that writes into
  the Provider (``migrate``, ``import``, before it plans) reads a journal left behind:
  one still ``prepared`` is rolled back (old contents restored, new files removed,
  temporary files deleted); one ``committed`` is finished (the links to the old
  contents deleted). Only then is the journal deleted.

Test-only crash hook: ``AGC_WRITE_CRASH_AFTER=N`` SIGKILLs the process right after the
N-th rename of a commit; the kill tests use it at every file boundary.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .. import codes
from ..canonical import digest_bytes
from ..documents.files import fsync_directory, write_atomic
from ..errors import AgentGraphError, Diagnostic

JOURNAL: Final = ".agc-write-journal.json"
JOURNAL_SCHEMA: Final = "agent-graph.write-journal.v1"
CRASH_AFTER: Final = "AGC_WRITE_CRASH_AFTER"


@dataclass(slots=True)
class Entry:
    """One target: its new content's temporary file, the link to its old content (None
    for a file the commit creates), the new content's digest and the bytes it was read
    as (None: it must not exist)."""

    rel: str
    target: Path
    temp: Path
    old: Path | None
    digest: str
    based_on: bytes | None = None
    mode: int = 0o644


def _error(code: str, message: str, rel: str | None = None) -> AgentGraphError:
    return AgentGraphError(code, message, [Diagnostic(code, message, path=rel)])


def conflict(rel: str) -> AgentGraphError:
    return _error(
        codes.WRITE_CONFLICT,
        f"{rel} changed on disk after it was read (saved in an editor?); nothing was "
        "written: run the command again on the saved file",
        rel,
    )


def _write_journal(root: Path, state: str, entries: Sequence[Entry]) -> None:
    document = {
        "schema": JOURNAL_SCHEMA,
        "state": state,
        "files": [
            {
                "path": e.rel,
                "new": os.path.relpath(e.temp, root),
                "old": None if e.old is None else os.path.relpath(e.old, root),
                "digest": e.digest,
            }
            for e in entries
        ],
    }
    write_atomic(root / JOURNAL, (json.dumps(document, indent=2) + "\n").encode("utf-8"))
    fsync_directory(root)


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() == data
    except OSError:
        return False


def _crash_hook(renamed: int) -> None:
    at = os.environ.get(CRASH_AFTER)
    if at is not None and at.isdigit() and int(at) == renamed:
        os.kill(os.getpid(), signal.SIGKILL)


def commit(root: Path, entries: list[Entry], new_data: dict[str, bytes]) -> None:
    """Replace every target as one change (module doc); raises ``write-conflict`` or
    ``OSError`` with nothing changed."""
    _write_journal(root, "prepared", entries)
    renamed: list[Entry] = []
    try:
        for entry in entries:
            entry.target.parent.mkdir(parents=True, exist_ok=True)
            _write_new(entry.temp, new_data[entry.rel], entry.mode)
            if entry.old is not None:
                os.link(entry.target, entry.old, follow_symlinks=False)
        for entry in entries:
            _place(entry)
            renamed.append(entry)
            _crash_hook(len(renamed))
        for entry in renamed:  # an editor that rewrote the old inode in place meanwhile
            if entry.old is not None and not _holds(entry.old, entry.based_on or b""):
                raise conflict(entry.rel)
    except BaseException:
        _roll_back(entries, {e.rel for e in renamed})
        with contextlib.suppress(OSError):
            (root / JOURNAL).unlink()
        raise
    for entry in entries:
        fsync_directory(entry.target.parent)
    _write_journal(root, "committed", entries)
    _finish(entries)
    (root / JOURNAL).unlink()
    fsync_directory(root)


def _write_new(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(path, mode)


def _place(entry: Entry) -> None:
    """Rename the new content in, if the target still is what the plan read."""
    if entry.old is None:
        try:
            os.link(entry.temp, entry.target)  # fails, never replaces, if one appeared
        except FileExistsError:
            raise conflict(entry.rel) from None
        entry.temp.unlink()
        return
    try:
        now = entry.target.lstat()
    except FileNotFoundError:
        raise conflict(entry.rel) from None
    if not _same_file(now, entry.old.lstat()) or not _holds(entry.old, entry.based_on or b""):
        raise conflict(entry.rel)
    os.replace(entry.temp, entry.target)


def _roll_back(entries: Sequence[Entry], renamed: set[str]) -> None:
    for entry in reversed(entries):
        if entry.rel in renamed:
            if entry.old is not None:
                with contextlib.suppress(OSError):
                    os.replace(entry.old, entry.target)  # the old inode, edits and all
            elif _digest_of(entry.target) == entry.digest:
                entry.target.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            entry.temp.unlink(missing_ok=True)
        if entry.old is not None:
            with contextlib.suppress(OSError):
                entry.old.unlink(missing_ok=True)


def _finish(entries: Sequence[Entry]) -> None:
    for entry in entries:
        with contextlib.suppress(OSError):
            entry.temp.unlink(missing_ok=True)
        if entry.old is not None:
            with contextlib.suppress(OSError):
                entry.old.unlink(missing_ok=True)


def _digest_of(path: Path) -> str | None:
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            return None
        return digest_bytes(path.read_bytes())
    except OSError:
        return None


# -- after a kill ----------------------------------------------------------------------------


def recover(root: Path) -> str | None:
    """Finish or undo a commit a killed process left in ``root``; returns what was done
    (``"rolled back"``, ``"finished"``) or None when there was no journal."""
    path = root / JOURNAL
    if not os.path.lexists(path):
        return None
    try:
        document: Any = json.loads(path.read_bytes())
        state = document["state"]
        entries = [_entry_of(root, item) for item in document["files"]]
        if document["schema"] != JOURNAL_SCHEMA or state not in ("prepared", "committed"):
            raise ValueError(state)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise _error(
            codes.WRITE_JOURNAL_INVALID,
            f"{path} is not a write journal agc left ({error}); a commit into this Provider "
            "was interrupted: compare its files with version control, then delete the journal",
            JOURNAL,
        ) from None
    if state == "committed":
        _finish(entries)
        done = "finished"
    else:
        renamed = {
            e.rel
            for e in entries
            if (e.old is None and _digest_of(e.target) == e.digest)
            or (e.old is not None and e.old.exists() and not e.temp.exists())
        }
        _roll_back(entries, renamed)
        done = "rolled back"
    path.unlink()
    fsync_directory(root)
    return done


def _entry_of(root: Path, item: Any) -> Entry:
    rel, new, old, digest = item["path"], item["new"], item["old"], item["digest"]
    paths = [p for p in (rel, new, old) if p is not None]
    if not all(isinstance(p, str) for p in paths) or not isinstance(digest, str):
        raise ValueError("a member is not a string")
    for part in paths:  # a journal never names a file outside the Provider
        if os.path.isabs(part) or ".." in Path(part).parts:
            raise ValueError(f"{part!r} leads outside the Provider")
    return Entry(rel, root / rel, root / new, None if old is None else root / old, digest)
