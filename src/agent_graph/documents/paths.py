"""Provider-root containment: every reference stays inside the root, symlinks included.

Guards raise :class:`AgentGraphError` carrying one diagnostic located at the
reference (``Origin``), so a user sees which line of which file named the path.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath

from .. import codes
from ..errors import AgentGraphError, Diagnostic, Severity
from ..frozen import record
from .sourcemap import SourceMap, positioned

_DRIVE = re.compile(r"^[A-Za-z]:")


@record
class Origin:
    """Where a value came from: a provider-relative file path and a JSON pointer in it."""

    path: str
    source: SourceMap | None = None
    pointer: str = ""

    def at(self, pointer: str) -> Origin:
        return Origin(self.path, self.source, pointer)

    def diagnostic(self, code: str, message: str, severity: Severity = "error") -> Diagnostic:
        # without a source map the pointer could not be shown against the file: leave it out
        pointer = self.pointer if self.source is not None else None
        return positioned(
            code, message, path=self.path, source=self.source, pointer=pointer, severity=severity
        )

    def fail(self, code: str, message: str) -> AgentGraphError:
        return AgentGraphError(code, message, [self.diagnostic(code, message)])


def display_path(path: Path, base: Path | None = None) -> str:
    """``path`` as a user recognises it: relative to ``base`` (default: the working
    directory) when it lies below it, else as it is."""
    base = base if base is not None else Path(os.getcwd())
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def portable(root: Path, path: Path) -> str:
    """Provider-relative POSIX path of ``path`` (which lies under ``root``)."""
    return os.path.relpath(path, root).replace("\\", "/")


def _escapes(rel: str) -> bool:
    return rel == ".." or rel.startswith("../") or rel.startswith("..\\") or os.path.isabs(rel)


def is_absolute_reference(reference: str) -> bool:
    """Whether ``reference`` is absolute on any platform (a root, a drive, a share)."""
    return os.path.isabs(reference) or bool(_DRIVE.match(reference)) or reference.startswith("\\")


def resolve_contained(root: Path, reference: str, label: str, origin: Origin) -> Path:
    """Resolve ``reference`` against ``root`` lexically; absolute or escaping paths fail."""
    if is_absolute_reference(reference):
        raise origin.fail(codes.ABSOLUTE_PATH_FORBIDDEN, f"{label} must be relative: {reference}")
    resolved = Path(os.path.normpath(root / reference))
    if _escapes(os.path.relpath(resolved, root)):
        raise origin.fail(
            codes.PATH_OUTSIDE_PROVIDER, f"{label} escapes the provider root: {reference}"
        )
    return resolved


def ensure_file(path: Path, label: str, origin: Origin) -> None:
    try:
        info = path.stat()
    except PermissionError as error:  # it may exist: say what is wrong, not "missing"
        raise origin.fail(
            codes.FILE_READ_FAILED, f"{label} cannot be read: {path}: {error.strerror}"
        ) from None
    except (OSError, ValueError):
        info = None
    if info is None:
        raise origin.fail(codes.FILE_MISSING, f"{label} does not exist: {path}")
    if not stat.S_ISREG(info.st_mode):  # it exists: "missing" would send the user looking
        raise origin.fail(
            codes.FILE_MISSING, f"{label} is {_kind(info.st_mode)}, not a regular file: {path}"
        )


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def ensure_contained_file(root: Path, path: Path, label: str, origin: Origin) -> None:
    """A regular file whose real path (symlinks resolved) stays under the real root."""
    ensure_file(path, label, origin)
    real_root = os.path.realpath(root)
    real_file = os.path.realpath(path)
    if _escapes(os.path.relpath(real_file, real_root)):
        raise origin.fail(
            codes.PATH_SYMLINK_OUTSIDE_PROVIDER,
            f"{label} resolves outside the provider root: {path}",
        )


def contained_file(root: Path, reference: str, labels: tuple[str, str], origin: Origin) -> Path:
    """``resolve_contained`` then ``ensure_contained_file`` (reference label, file label)."""
    path = resolve_contained(root, reference, labels[0], origin)
    ensure_contained_file(root, path, labels[1], origin)
    return path


def list_files_recursive(directory: Path) -> list[Path]:
    """Regular files below ``directory``; symlinked files and directories are skipped.

    Iterative so a deep tree cannot exhaust the stack; siblings in collation order
    like the reference (the order only affects iteration, not results). A folder that
    cannot be listed is ``file-read-failed``, never skipped.
    """
    from ..canonical import locale_sorted

    out: list[Path] = []
    stack = [directory]
    while stack:
        current = stack.pop()
        try:
            entries = {e.name: e for e in os.scandir(current)}
        except FileNotFoundError:
            continue
        except OSError as error:  # an unreadable folder would silently lose its files
            message = f"Cannot list {current}: {error.strerror or error}"
            raise AgentGraphError(
                codes.FILE_READ_FAILED, message, [Diagnostic(codes.FILE_READ_FAILED, message)]
            ) from None
        subdirs: list[Path] = []
        for name in locale_sorted(list(entries)):
            entry = entries[name]
            if entry.is_dir(follow_symlinks=False):
                subdirs.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                out.append(Path(entry.path))
        stack.extend(reversed(subdirs))
    return out


def is_relative_posix(reference: str) -> bool:
    """True when ``reference`` is a relative path without ``..`` segments (schema rule)."""
    if not reference or reference.startswith("/") or _DRIVE.match(reference):
        return False
    return ".." not in PurePosixPath(reference).parts
