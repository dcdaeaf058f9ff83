"""The file fingerprint of a Flow package (docs/flows.md §The compiled program, C.4): what a
Run resumes only on.

The front end records it in every compiled Flow program; the runtime recomputes it from
the files on disk before it resumes a Run on a kept program, so neither needs the other.
"""

from __future__ import annotations

# hashlib only where a digest is taken: 3.2 ms of CPU to import, and agc flow check
# needs unhashable_files alone
import json
import os
from collections.abc import Callable, Hashable, Iterable

from .. import codes
from ..frozen import record

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, TypeVar

    K = TypeVar("K", bound=Hashable)

#: Version of the fingerprint algorithm below; recorded in every compiled Flow program.
FINGERPRINT_VERSION: Final = 1

#: The package directories whose files are part of the package (§1: references, scripts).
RESOURCE_DIRS: Final = ("references", "scripts")


#: The largest file hashed into a fingerprint, and the most bytes of one package's files.
#: A package's references are Markdown and its scripts source code; a file past these is
#: a mistake (a build output, a data set), and hashing it would cost seconds on every
#: check, run and resume.
MAX_FILE_BYTES: Final = 32 * 1024 * 1024
MAX_PACKAGE_BYTES: Final = 256 * 1024 * 1024
_CHUNK: Final = 1 << 20


@record
class Unhashable:
    """A counted file (or directory) the fingerprint cannot cover: its posix relative
    path as diagnostics show it, the error code (``file-too-large``,
    ``file-read-failed`` or ``resource-path-invalid``) and why."""

    path: str
    code: str
    reason: str


def package_files(root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``[(posix relative path, sha256 hex)]`` of FLOW.md and every regular file under
    references/ and scripts/, sorted (C.4). Symlinked directories are not followed; a
    symlinked file counts when it resolves inside the package.

    What :func:`unhashable_files` names is not read: its entry is ``unhashed:`` and the
    code instead of a digest, which no sha256 equals, so a fingerprint with it matches no
    program compiled from readable files (the front end refuses such a package, and a
    resume after a file grew past the cap is a fingerprint mismatch).
    """
    counted, problems = _counted(root)
    refused = {item.path: item.code for item in _unhashable(counted, problems)}
    found: list[tuple[str, str]] = []
    for relative, path in counted:
        digest = None if relative in refused else _sha256(path)
        # a file that grew past the cap or vanished after the stat: unhashed all the same
        found.append((relative, digest or f"unhashed:{refused.get(relative, 'changed')}"))
    found += [(item.path, f"unhashed:{item.code}") for item in problems]
    return sorted(found)


def unhashable_files(root: str | os.PathLike[str]) -> list[Unhashable]:
    """What the fingerprint of the package at ``root`` cannot cover: a file over
    :data:`MAX_FILE_BYTES`, each that would take the package past
    :data:`MAX_PACKAGE_BYTES` (adding them in path order), a file that cannot be opened,
    a directory that cannot be listed, a name that is not UTF-8 text. Costs a ``stat``
    and an open per file, no reading."""
    return _unhashable(*_counted(root))


def _unhashable(counted: list[tuple[str, str]], problems: list[Unhashable]) -> list[Unhashable]:
    problems = list(problems)
    total = 0
    for relative, path in counted:
        try:
            size = os.stat(path).st_size
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        except OSError as error:
            reason = error.strerror or type(error).__name__
            problems.append(Unhashable(relative, codes.FILE_READ_FAILED, reason))
            continue
        if size > MAX_FILE_BYTES:
            problems.append(
                Unhashable(
                    relative,
                    codes.FILE_TOO_LARGE,
                    f"{size} bytes, over the {MAX_FILE_BYTES} a package file may have",
                )
            )
            continue
        total += size
        if total > MAX_PACKAGE_BYTES:
            problems.append(
                Unhashable(
                    relative,
                    codes.FILE_TOO_LARGE,
                    f"takes the package's files past {MAX_PACKAGE_BYTES} bytes in all",
                )
            )
            total -= size
    return sorted(problems, key=lambda item: item.path)


def _counted(root: str | os.PathLike[str]) -> tuple[list[tuple[str, str]], list[Unhashable]]:
    """FLOW.md and the regular files under references/ and scripts/, by relative path
    (each with its full path); and the directories that cannot be listed and the names
    that are not UTF-8 (the fingerprint is UTF-8 JSON), which are not skipped silently.

    Paths are strings, not :class:`Path` objects: ``agc flow check`` of the repository's
    115 small packages spent 5.2 ms here with a Path made and made relative per file.
    """
    top_dir = os.fspath(root)
    prefix = top_dir.rstrip(os.sep) + os.sep
    cut = len(prefix)
    found: list[tuple[str, str]] = [("FLOW.md", prefix + "FLOW.md")]
    problems: list[Unhashable] = []
    for top in RESOURCE_DIRS:
        base = prefix + top
        if os.path.islink(base) or not os.path.isdir(base):
            continue
        stack = [base]
        while stack:
            current = stack.pop()
            try:
                with os.scandir(current) as listing:
                    entries = list(listing)
            except OSError as error:
                reason = f"the directory cannot be listed: {error.strerror or error}"
                shown = _shown(_posix(current[cut:])) + "/"
                problems.append(Unhashable(shown, codes.FILE_READ_FAILED, reason))
                continue
            for entry in entries:
                path = entry.path
                relative = _posix(path[cut:])
                if _shown(relative) != relative:
                    reason = "its name is not UTF-8 text, and the fingerprint records names"
                    problems.append(
                        Unhashable(_shown(relative), codes.RESOURCE_PATH_INVALID, reason)
                    )
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                    continue
                if entry.is_symlink():
                    real = os.path.realpath(path)
                    if not real.startswith(prefix) or not os.path.isfile(real):
                        continue
                elif not entry.is_file(follow_symlinks=False):
                    continue
                found.append((relative, path))
    return sorted(found), problems


def _posix(relative: str) -> str:
    return relative if os.sep == "/" else relative.replace(os.sep, "/")


def _shown(relative: str) -> str:
    """``relative`` with the bytes of a non-UTF-8 name (decoded as lone surrogates)
    written as ``\\xNN`` escapes: printable, and encodable as the fingerprint's JSON."""
    return relative.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _sha256(path: str) -> str | None:
    """The file's sha256, streamed; None when it holds more than :data:`MAX_FILE_BYTES`
    by the time it is read (it grew after the check) or cannot be read."""
    import hashlib

    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                size += len(chunk)
                if size > MAX_FILE_BYTES:
                    return None
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fingerprint(flow_id: str, files: list[tuple[str, str]], children: list[tuple[str, str]]) -> str:
    """C.4: ``sha256:`` of the canonical JSON of the package's files and its children's
    fingerprints (``children``: ``[(id, fingerprint)]`` of the distinct targets, sorted)."""
    doc = {
        "v": FINGERPRINT_VERSION,
        "flowId": flow_id,
        "files": [list(item) for item in files],
        "children": [list(item) for item in sorted(children)],
    }
    import hashlib

    return "sha256:" + hashlib.sha256(canonical_json(doc)).hexdigest()


def children_first(
    root: K,
    children: Callable[[K], Iterable[K]],
    combine: Callable[[K, list[tuple[K, str]]], str],
    found: dict[K, str] | None = None,
) -> dict[K, str]:
    """The combined fingerprint of ``root`` and of every package below it, children first.

    ``combine(package, [(child, its fingerprint)])`` fingerprints one package once its
    children's are known; ``found`` (filled in place) keeps what an earlier call computed.
    Iterative, so a long chain of children is no deeper for Python than one. The front
    end runs it over a checked closure, the runtime over a kept program's Flows.
    """
    found = {} if found is None else found
    todo = [root]
    while todo:
        current = todo[-1]
        if current in found:
            todo.pop()
            continue
        kids = list(children(current))
        pending = [child for child in kids if child not in found]
        if pending:
            todo.extend(pending)
            continue
        found[current] = combine(current, [(child, found[child]) for child in kids])
        todo.pop()
    return found
