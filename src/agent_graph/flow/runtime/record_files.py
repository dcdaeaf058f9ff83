"""Reading a Run record's files (``store.RunFile.read``): the snapshot and journal bytes,
capped and non-blocking; the journal's whole lines, each with its chain checked; the
contents kept beside the record, each checked against its digest. What the lines and
references mean is :mod:`.journal`'s; the codes are the record's."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ... import codes
from ...documents import files
from ...errors import AgentGraphError, Diagnostic
from . import journal as journal_format


def identity(path: Path) -> tuple[int, ...]:
    try:
        info = os.stat(path)
    except OSError:
        return ()
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def read_capped(path: Path, display: str, limit: int) -> bytes:
    # non-blocking and capped: a FIFO or a device given as --state must not hang the
    # reader or fill its memory (the Provider files' rule, and their codes)
    try:
        return files.read_bytes(path, display, limit=limit)
    except AgentGraphError as error:
        if error.code != codes.FILE_TOO_LARGE:
            raise
        raise AgentGraphError(
            codes.FILE_TOO_LARGE,
            f"{display} is over {limit:,} bytes: not a Run record agc can read",
            error.diagnostics,
        ) from None


def parse(data: bytes, path: Path) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
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


def journal_lines(data: bytes, snapshot: dict[str, Any], journal: Path) -> tuple[list[Any], int]:
    """The whole lines of a journal that belong to ``snapshot``, each with its chain
    checked, and the length they take. Bytes after the last newline are the torn append
    of a killed writer (ignored; the next writer cuts them off). A journal whose first
    line names another snapshot of no later revision is what a compaction left when it
    was killed before removing it: it is already folded into the snapshot."""
    end = data.rfind(b"\n") + 1
    lines: list[Any] = []
    tail = str(snapshot.get("checksum"))
    revision = snapshot.get("revision")
    revision = revision if isinstance(revision, int) else 0
    for number, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
        where = f"{journal}: line {number}"
        found = journal_format.CHAIN.search(raw)
        body = raw[: found.start()] + b"}" if found is not None else b""
        try:
            line = json.loads(body.decode("utf-8")) if found is not None else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            line = None
        if not (isinstance(line, dict) and type(line.get("r")) is int) or found is None:
            raise AgentGraphError(
                codes.RUN_RECORD_INVALID, f"{where} is not a journal line agc wrote"
            )
        if number == 1 and line.get("base") != tail:
            if line["r"] <= revision:
                return [], 0
            raise AgentGraphError(
                codes.RUN_RECORD_MODIFIED,
                f"{where} continues another version of {journal.name.removesuffix('.journal')}"
                " than the one there: the record was changed outside agc",
            )
        if line["r"] != revision + number:
            raise AgentGraphError(
                codes.RUN_RECORD_INVALID, f"{where} is revision {line['r']}, out of sequence"
            )
        chain = found.group(1).decode("ascii")
        if journal_format.chain_of(tail, body) != chain:
            raise AgentGraphError(
                codes.RUN_RECORD_MODIFIED,
                f"{where} was changed outside agc (its chain does not match)",
            )
        tail = chain
        line["chain"] = chain
        lines.append(line)
    return lines, end


def chain_tail(lines: list[Any], snapshot_sum: str) -> str:
    return str(lines[-1]["chain"]) if lines else snapshot_sum


class Resolver:
    """Reads the contents a record refers to (once each per read), checking each digest."""

    def __init__(self, directory: Path, display: str, limit: int) -> None:
        self.directory = directory
        self.display = display
        self.limit = limit
        self.used = False
        self._seen: dict[str, Any] = {}

    def __call__(self, ref: dict[str, Any]) -> Any:
        self.used = True
        digest = ref.get(journal_format.REF)
        if not (
            isinstance(digest, str) and _DIGEST.fullmatch(digest) is not None and len(ref) == 1
        ):
            raise AgentGraphError(
                codes.RUN_CONTENT_INVALID,
                f"{self.display} refers to a content as {json.dumps(ref)[:120]}, not a "
                "reference agc wrote",
            )
        if digest in self._seen:
            return self._seen[digest]
        path = self.directory / f"{digest.removeprefix('sha256:')}.json"
        if not os.path.lexists(path):
            raise AgentGraphError(
                codes.RUN_CONTENT_INVALID,
                f"{self.display} keeps a content in {path}, which is missing",
            )
        try:
            data = files.read_bytes(path, str(path), limit=self.limit)
        except AgentGraphError as error:
            raise AgentGraphError(
                codes.RUN_CONTENT_INVALID,
                f"{self.display} keeps a content in {path}, which cannot be read: {error.message}",
            ) from None
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise AgentGraphError(
                codes.RUN_CONTENT_INVALID,
                f"{path} is damaged (its bytes do not match the digest in its name)",
            )
        try:
            value = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise AgentGraphError(
                codes.RUN_CONTENT_INVALID, f"{path} is not the JSON of a content"
            ) from None
        self._seen[digest] = value
        return value


_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
