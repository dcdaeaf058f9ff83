"""The output folder of ``agc build``: what is replaced, what is swept.

A build writes ``<dest>.tmp-<pid>-<ms>`` and swaps it in by two renames, the previous
output going aside to ``<dest>.old-<pid>-<ns>`` and deleted after. Nothing is deleted
unless it is accounted for as written by a build:

* while a working directory is being filled, its ``.agc-build-journal`` names every
  path before it is created (write-ahead); the journal is removed once the directory
  is exactly the bundle, just before the swap;
* a bundle (a finished working directory, a previous output put aside) is accounted
  for by its ``manifest.json`` (an intact ``agent-graph.bundle.v1`` document): the
  files it lists, with their digests, and ``ir/binding.json`` with the IR it binds.

Only regular files named by that account (with the recorded digest, when there is
one) and the directories above them are deleted, ``manifest.json`` and the journal
last, so a deletion cut short leaves a directory that is still accounted for. A
directory holding anything else is left as it is. Working and aside directories of a
build that was killed (their pid is no live process) are swept by the next build to
the same output; if it was killed between the two renames, the aside is put back
first, so the output path never stays without the previous bundle.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from ... import codes
from ...bundles import (
    BINDING_PATH,
    BINDING_SCHEMA,
    BUNDLE_SCHEMA,
    MANIFEST_NAME,
    conforms,
    ir_path,
    is_bundle,
    read_json,
    verify_manifest,
)
from ...canonical import digest_value, is_digest
from ...documents.durable import pid_alive
from ...documents.files import digest_file
from ...errors import AgentGraphError

JOURNAL = ".agc-build-journal"
_JOURNAL_HEAD = b"agc build working directory v1\n"


class _NotOurs(Exception):
    """A directory holds something a build did not write (the message says what)."""


class Journal:
    """The write-ahead list of every path a build creates in its working directory."""

    def __init__(self, working: Path) -> None:
        self.path = working / JOURNAL
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        self.fd: int | None = os.open(self.path, flags, 0o600)
        self._write(_JOURNAL_HEAD)

    def add(self, rel: str) -> None:
        self._write(json.dumps(rel).encode("ascii") + b"\n")  # before ``rel`` is created

    def _write(self, data: bytes) -> None:
        assert self.fd is not None
        while data:
            data = data[os.write(self.fd, data) :]

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def finish(self) -> None:
        self.close()
        os.unlink(self.path)


def abandon(working: Path, journal: Journal | None, created: bool) -> None:
    """Delete what a failed build wrote in its working directory (never anything else)."""
    if journal is not None:
        journal.close()
    if not created:
        return
    with contextlib.suppress(OSError, AgentGraphError):  # else left for the next sweep
        _discard(working)


def _safe_rel(rel: Any) -> bool:
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def _journaled(directory: Path) -> dict[str, str | None]:
    """The paths a journal names (any content: they may be half written)."""
    from ...documents.files import read_bytes

    journal = directory / JOURNAL
    if not stat.S_ISREG(os.lstat(journal).st_mode):
        raise _NotOurs(f"{JOURNAL} is not a regular file")
    data = read_bytes(journal, display=JOURNAL)
    if not data.startswith(_JOURNAL_HEAD):
        raise _NotOurs(f"{JOURNAL} is not a build journal")
    lines = data[len(_JOURNAL_HEAD) :].split(b"\n")
    written: dict[str, str | None] = {JOURNAL: None}
    for line in lines[:-1]:  # an unfinished last line names nothing that was created
        try:
            rel = json.loads(line)
        except ValueError:
            raise _NotOurs(f"{JOURNAL} is damaged") from None
        if not _safe_rel(rel):
            raise _NotOurs(f"{JOURNAL} names {rel!r}")
        written[rel] = None
    return written


def _manifested(directory: Path, *, complete: bool) -> dict[str, str]:
    """What an intact ``manifest.json`` accounts for: path -> digest (IR and binding too).

    ``complete``: the bundle must also verify (every listed file present, digests and
    catalogs right: :func:`~agent_graph.bundles.verify_manifest`), and so must its IR
    binding when there is one; else files may be missing (a deletion cut short).
    """
    manifest = directory / MANIFEST_NAME
    try:
        if not stat.S_ISREG(os.lstat(manifest).st_mode):
            raise _NotOurs(f"{MANIFEST_NAME} is not a regular file")
        value = read_json(manifest)
    except FileNotFoundError:
        raise _NotOurs(f"it has no {MANIFEST_NAME}") from None
    except (OSError, ValueError, RecursionError, AgentGraphError) as exc:
        raise _NotOurs(f"its {MANIFEST_NAME} cannot be read ({exc})") from None
    if not is_bundle(value):
        raise _NotOurs(f"its {MANIFEST_NAME} is not an {BUNDLE_SCHEMA} document")
    if complete:
        try:
            verify_manifest(manifest, value)
        except AgentGraphError as exc:
            raise _NotOurs(f"its bundle does not verify ({exc.code}: {exc.message})") from None
    elif not conforms(value) or value["digest"] != digest_value(
        {key: item for key, item in value.items() if key != "digest"}
    ):
        raise _NotOurs(f"its {MANIFEST_NAME} is not an intact {BUNDLE_SCHEMA} document")
    written = {str(entry["path"]): str(entry["digest"]) for entry in value["files"]}
    if not all(_safe_rel(rel) for rel in written):
        raise _NotOurs(f"its {MANIFEST_NAME} lists a path that is not a plain relative path")
    written[MANIFEST_NAME] = digest_file(manifest)
    written.update(_bound(directory, str(value["digest"]), complete=complete))
    return written


def _bound(directory: Path, bundle_digest: str, *, complete: bool) -> dict[str, str]:
    """``ir/binding.json`` and the IR it names, when the binding is intact and ours.

    Provenance only: the digests chain the IR to the manifest; whether this version
    of agc can decode that IR does not matter for replacing it.
    """
    binding = directory / BINDING_PATH
    if not os.path.lexists(binding):
        return {}
    try:
        if not stat.S_ISREG(os.lstat(binding).st_mode):
            raise ValueError("not a regular file")
        value = read_json(binding)
        unsigned = {key: item for key, item in value.items() if key != "digest"}
        if (
            value.get("schema") != BINDING_SCHEMA
            or value.get("digest") != digest_value(unsigned)
            or value.get("bundle") != bundle_digest
            or not is_digest(value.get("irDigest"))
            or value.get("ir") != ir_path(str(value.get("irDigest")))
        ):
            raise ValueError("not bound to this bundle")
    except (OSError, ValueError, RecursionError, AttributeError, AgentGraphError):
        if complete:
            raise _NotOurs(f"its {BINDING_PATH} does not verify") from None
        return {}
    written = {BINDING_PATH: digest_file(binding)}
    ir_file = directory / value["ir"]
    if complete and not (
        os.path.isfile(ir_file)
        and not os.path.islink(ir_file)
        and digest_file(ir_file) == value["irDigest"]
    ):
        raise _NotOurs(f"its IR {value['ir']} does not match {BINDING_PATH}")
    written[str(value["ir"])] = str(value["irDigest"])
    return written


def _written(directory: Path) -> dict[str, str | None]:
    """What a build wrote in ``directory`` by its journal, else by its manifest."""
    if os.path.lexists(directory / JOURNAL):
        return _journaled(directory)
    if os.path.lexists(directory / MANIFEST_NAME):
        manifested: dict[str, str | None] = {**_manifested(directory, complete=False)}
        return manifested
    return {}


def _above(paths: Iterable[str]) -> set[str]:
    """Every directory above the given relative paths."""
    out: set[str] = set()
    for rel in paths:
        parts = rel.split("/")
        out.update("/".join(parts[:end]) for end in range(1, len(parts)))
    return out


def _first_foreign(directory: Path, written: Collection[str]) -> str | None:
    """The first entry a build did not write: depth first, names in code point order.

    Only regular files named in ``written`` and the directories above them count as
    written; symbolic links, FIFOs and devices never do.
    """
    directories = _above(written)
    stack = [iter(_listing(directory, ""))]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        rel, is_dir, is_file = entry
        if is_dir:
            if rel not in directories:
                return rel
            stack.append(iter(_listing(directory, rel)))
        elif not (is_file and rel in written):
            return rel
    return None


def _listing(directory: Path, rel: str) -> list[tuple[str, bool, bool]]:
    """``(relative path, is a directory, is a regular file)`` of each entry, by name."""
    with os.scandir(directory / rel if rel else directory) as entries:
        found = [
            (e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False))
            for e in entries
        ]
    return [(f"{rel}/{name}" if rel else name, d, f) for name, d, f in sorted(found)]


def _discard(directory: Path) -> bool:
    """Delete ``directory`` if it holds only what a build wrote; True when it is gone.

    Files are checked against their recorded digests before anything is deleted.
    """
    try:
        written = _written(directory)
    except _NotOurs:
        return False
    if _first_foreign(directory, written) is not None:
        return False
    present = [rel for rel in written if os.path.lexists(directory / rel)]
    for rel in present:
        digest = written[rel]
        if digest is not None and digest_file(directory / rel) != digest:
            return False
    last = (BINDING_PATH, MANIFEST_NAME, JOURNAL)
    for rel in [r for r in present if r not in last]:
        (directory / rel).unlink(missing_ok=True)
    if BINDING_PATH in written:  # after the IR it accounts for
        (directory / BINDING_PATH).unlink(missing_ok=True)
    for rel in sorted(_above(written), key=lambda r: r.count("/"), reverse=True):
        try:
            (directory / rel).rmdir()
        except FileNotFoundError:
            continue
    for rel in (MANIFEST_NAME, JOURNAL):
        if rel in written:
            (directory / rel).unlink(missing_ok=True)
    directory.rmdir()
    return True


def replaceable(destination: Path) -> tuple[int, int] | None:
    """Refuse an output that is not absent, empty or a verified previous bundle.

    Returns the identity (device, inode) of the directory to replace, if any.
    """
    if not os.path.lexists(destination):
        return None
    if destination.is_symlink() or not destination.is_dir():
        raise _exists(destination, "exists and is not an Agent Graph bundle")
    try:
        info = os.lstat(destination)
        with os.scandir(destination) as listing:
            empty = next(iter(listing), None) is None
        if empty:
            return info.st_dev, info.st_ino
        written = _manifested(destination, complete=True)
        foreign = _first_foreign(destination, written)
    except _NotOurs as exc:
        if not os.path.lexists(destination / MANIFEST_NAME):
            raise _exists(destination, "exists and is not an Agent Graph bundle") from None
        raise _exists(destination, f"is not replaced: {exc}") from None
    except (OSError, AgentGraphError) as exc:
        raise _exists(destination, f"cannot be checked ({exc})") from None
    if foreign is not None:
        raise _exists(
            destination,
            f"holds {foreign}, which is not part of the bundle there, so nothing was replaced",
            "move it out of the way or choose another directory",
        )
    return info.st_dev, info.st_ino


def _exists(
    destination: Path, why: str, remedy: str = "remove it or choose another directory"
) -> AgentGraphError:
    return AgentGraphError(codes.BUILD_OUTPUT_EXISTS, f"Build output {destination} {why}; {remedy}")


def swap(working: Path, destination: Path, previous: tuple[int, int] | None) -> None:
    """Put ``working`` at ``destination``; the previous output survives any failure."""
    aside = None
    if previous is not None:
        info = os.lstat(destination)  # the directory that was checked, not a newcomer
        if (info.st_dev, info.st_ino) != previous:
            raise _exists(destination, "changed while the bundle was built", "run the build again")
        aside = destination.with_name(f"{destination.name}.old-{os.getpid()}-{time.time_ns()}")
        os.rename(destination, aside)
    try:
        os.rename(working, destination)
    except BaseException:
        if aside is not None:
            os.rename(aside, destination)
        raise
    if aside is not None:
        with contextlib.suppress(OSError, AgentGraphError):  # else left for the next sweep
            _discard(aside)  # anything that appeared in it meanwhile keeps it, untouched


def recover(destination: Path) -> None:
    """Sweep what killed builds left beside ``destination``; put a stranded bundle back.

    Only ``<name>.tmp-<pid>-<ms>`` and ``<name>.old-<pid>-<ns>`` directories whose pid
    is no live process are considered, and only what :func:`_discard` accounts for is
    deleted. A build killed between its two renames left the previous output aside and
    nothing at ``destination``: the newest complete aside is renamed back first.
    """
    pattern = re.compile(re.escape(destination.name) + r"\.(tmp|old)-([0-9]{1,10})-([0-9]{1,20})")
    try:
        with os.scandir(destination.parent) as listing:
            found = [
                (match.group(1), int(match.group(3)), Path(entry.path))
                for entry in listing
                if (match := pattern.fullmatch(entry.name))
                and entry.is_dir(follow_symlinks=False)
                and not pid_alive(int(match.group(2)))
            ]
    except OSError:
        return
    stale = [path for _, _, path in sorted(found, reverse=True)]  # newest aside first
    if not os.path.lexists(destination):
        for kind, _, path in sorted(found, reverse=True):
            if kind != "old":
                continue
            try:
                written = _manifested(path, complete=True)
                if _first_foreign(path, written) is not None:
                    continue
                os.rename(path, destination)
            except (_NotOurs, OSError, AgentGraphError):
                continue
            stale.remove(path)
            break
    for path in stale:
        try:
            _discard(path)
        except (OSError, AgentGraphError):
            continue
