"""Package files: mapped ``references/…`` and ``scripts/…`` paths (A.3–A.6, A.73, A.74,
C.19, C.21).

The fingerprint of C.4 over the same files is :mod:`agent_graph.documents.fingerprint`,
which the runtime uses too, to check a kept program against the files before a resume.
"""

from __future__ import annotations

import os
from pathlib import Path

from ... import codes
from ...frozen import record
from .findings import Findings


@record
class PackageFiles:
    """The package's real root; checks paths the way the runtime will resolve them."""

    root: Path  # real path

    def reference(self, path: str, line: int, column: int, findings: Findings) -> bool:
        return self._check(path, ".md", codes.RESOURCE_REFERENCE_NOT_MD, line, column, findings)

    def script(self, path: str, line: int, column: int, findings: Findings) -> bool:
        return self._check(path, ".mjs", codes.RESOURCE_SCRIPT_NOT_MJS, line, column, findings)

    def _check(
        self, path: str, suffix: str, suffix_code: str, line: int, column: int, findings: Findings
    ) -> bool:
        segments = path.split("/")
        if "\0" in path:
            # a JSON escape can put one in a script argument; no file name holds it
            findings.error(
                codes.RESOURCE_PATH_INVALID, f"resource path {path!r} holds a NUL", line, column
            )
            return False
        if "?" in path or "\\" in path or "" in segments or path.startswith("/"):
            findings.error(
                codes.RESOURCE_PATH_INVALID,
                f"resource path {path!r} has an empty segment, a backslash or a ? query",
                line,
                column,
            )
            return False
        if "." in segments or ".." in segments:
            findings.error(
                codes.RESOURCE_PATH_DOT_SEGMENT,
                f"resource path {path!r} has a . or .. segment; write the path from the "
                "package root",
                line,
                column,
            )
            return False
        if not path.endswith(suffix) or len(segments) < 2:
            kind = "references/… link" if suffix == ".md" else "scripts/… argument"
            findings.error(suffix_code, f"{kind} {path!r} must name a {suffix} file", line, column)
            return False
        target = self.root.joinpath(*segments)
        try:
            real = Path(os.path.realpath(target))
            found = real.is_file()
            reason = ""
        except OSError as error:  # a path the system refuses (too long …): none is there
            real, found, reason = target, False, f" ({error.strerror or error})"
        if real != self.root and self.root not in real.parents:
            findings.error(
                codes.RESOURCE_OUTSIDE_PACKAGE,
                f"resource {path!r} leads outside the package (a symlink to {real.name!r} "
                "elsewhere); package resources must stay inside it",
                line,
                column,
            )
            return False
        if not found:
            findings.error(
                codes.RESOURCE_MISSING,
                f"resource {path!r} does not exist in the package (or is not a regular "
                f"file){reason}{self._near(segments)}",
                line,
                column,
            )
            return False
        return True

    def _near(self, segments: list[str]) -> str:
        """``; did you mean references/x.md?``: the closest regular file in the folder the
        path names (only when that folder exists; a failure's path, so listing is fine)."""
        import difflib

        folder = self.root.joinpath(*segments[:-1])
        try:
            with os.scandir(folder) as entries:
                names = [entry.name for entry in entries if entry.is_file()]
        except OSError:
            return ""
        close = difflib.get_close_matches(segments[-1], names, n=1, cutoff=0.6)
        return f"; did you mean {'/'.join([*segments[:-1], close[0]])}?" if close else ""
