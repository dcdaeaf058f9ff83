"""Package files: mapped ``references/…`` and ``scripts/…`` paths (A.3–A.6, A.73, A.74,
C.19, C.21).

The fingerprint of C.4 over the same files is :mod:`agent_graph.documents.fingerprint`,
which the runtime uses too, to check a kept program against the files before a resume.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable

from ... import codes
from ...frozen import record
from ...spelling import closest
from .findings import Findings

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


#: Where a path stands in FLOW.md, (line, column), asked for only when it is needed.
Place = Callable[[], tuple[int, int]]


@record
class PackageFiles:
    """The package's real root; checks paths the way the runtime will resolve them."""

    root: str  # real path

    # ``at`` gives the path's (line, column) when a finding needs it: finding where a
    # script argument stands lexes its whole block, and a good path needs no position
    # (the repository's 115 small packages: 140 blocks lexed for nothing, 4 ms)

    def reference(self, path: str, at: Place, findings: Findings) -> bool:
        return self._check(path, ".md", codes.RESOURCE_REFERENCE_NOT_MD, at, findings)

    def script(self, path: str, at: Place, findings: Findings) -> bool:
        return self._check(path, ".mjs", codes.RESOURCE_SCRIPT_NOT_MJS, at, findings)

    def _check(
        self, path: str, suffix: str, suffix_code: str, at: Place, findings: Findings
    ) -> bool:
        segments = path.split("/")
        if "\0" in path:
            # a JSON escape can put one in a script argument; no file name holds it
            findings.error(
                codes.RESOURCE_PATH_INVALID, f"resource path {path!r} holds a NUL", *at()
            )
            return False
        if "?" in path or "\\" in path or "" in segments or path.startswith("/"):
            findings.error(
                codes.RESOURCE_PATH_INVALID,
                f"resource path {path!r} has an empty segment, a backslash or a ? query",
                *at(),
            )
            return False
        if "." in segments or ".." in segments:
            findings.error(
                codes.RESOURCE_PATH_DOT_SEGMENT,
                f"resource path {path!r} has a . or .. segment; write the path from the "
                "package root",
                *at(),
            )
            return False
        if not path.endswith(suffix) or len(segments) < 2:
            kind = "references/… link" if suffix == ".md" else "scripts/… argument"
            findings.error(suffix_code, f"{kind} {path!r} must name a {suffix} file", *at())
            return False
        # strings, not Paths: a package's every link and script goes through here
        root = self.root
        try:
            real, found = _resolve(root, segments)
            reason = ""
        except OSError as error:  # a path the system refuses (too long …): none is there
            real, found = os.path.join(root, *segments), False
            reason = f" ({error.strerror or error})"
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            findings.error(
                codes.RESOURCE_OUTSIDE_PACKAGE,
                f"resource {path!r} leads outside the package (a symlink to "
                f"{os.path.basename(real)!r} elsewhere); package resources must stay inside it",
                *at(),
            )
            return False
        if not found:
            findings.error(
                codes.RESOURCE_MISSING,
                f"resource {path!r} does not exist in the package (or is not a regular "
                f"file){reason}{self._near(segments)}",
                *at(),
            )
            return False
        return True

    def _near(self, segments: list[str]) -> str:
        """``; did you mean references/x.md?``: the closest regular file in the folder the
        path names (only when that folder exists; a failure's path, so listing is fine)."""
        folder = os.path.join(self.root, *segments[:-1])
        try:
            with os.scandir(folder) as entries:
                names = [entry.name for entry in entries if entry.is_file()]
        except OSError:
            return ""
        close = closest(segments[-1], names)
        return f"; did you mean {'/'.join([*segments[:-1], close])}?" if close else ""


#: What ``Path.is_file`` takes for "no such file" rather than an error to raise.
_ABSENT: Final = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _resolve(root: str, segments: list[str]) -> tuple[str, bool]:
    """``os.path.realpath`` of ``root`` joined with ``segments``, and whether it is a
    regular file (:func:`is_file`): ``root`` is a real path and the segments hold no ``.``,
    ``..`` or empty one, so only what lies below the root can be a link, and a path with
    none resolves to itself. Each segment is looked at once (``realpath`` looks at every
    component from ``/``: a script of a package six folders deep took 12.4 us to resolve,
    this 2.6 us); the first link found hands the rest to ``realpath``."""
    path = root.rstrip(os.sep)
    for index, segment in enumerate(segments):
        path = path + os.sep + segment
        try:
            found = os.lstat(path)
        except OSError as error:
            if error.errno not in _ABSENT:
                raise
            # nothing there, so nothing below to resolve: realpath keeps the rest as written
            return os.sep.join([path, *segments[index + 1 :]]), False
        except ValueError:  # not encodable as a file name
            return os.sep.join([path, *segments[index + 1 :]]), False
        if stat.S_ISLNK(found.st_mode):
            real = os.path.realpath(os.sep.join([path, *segments[index + 1 :]]))
            return real, is_file(real)
    return path, stat.S_ISREG(found.st_mode)


def is_file(path: str) -> bool:
    """``Path(path).is_file()``: a regular file (through symlinks); an error other than
    the file's absence is raised."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as error:
        if error.errno not in _ABSENT:
            raise
        return False
    except ValueError:  # not encodable as a file name
        return False
