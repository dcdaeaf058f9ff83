"""Reading files we are given: non-blocking, size-capped, regular files only.

Every definition, Run and bundle file goes through :func:`read_bytes`: opening a
FIFO must not hang, a device or directory is refused, and no more than the cap + 1
bytes is ever read, whatever the file claims its size is.
"""

from __future__ import annotations

# hashlib only in digest_file: 3.2 ms of CPU to import, and agc flow check reads files
# through this module without digesting any
import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable

from agent_graph import codes
from agent_graph.errors import AgentGraphError, Diagnostic

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

#: Bytes read from a file at a time while hashing it.
_CHUNK: Final = 1 << 20

__all__ = [
    "MAX_FILE_BYTES",
    "digest_file",
    "file_error",
    "fsync_directory",
    "read_bytes",
    "read_text",
    "write_atomic",
]

#: Largest file read (32 MiB). Real Provider files are kilobytes; the
#: cap keeps a mistaken path (a log, an archive, a device) from eating memory.
MAX_FILE_BYTES: Final = 32 * 1024 * 1024  # a 100,000-node graph is ~20 MiB of YAML


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX); a no-op where a directory cannot be
    opened or synced."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def file_error(
    code: str,
    message: str,
    display: str,
    line: int | None = None,
    column: int | None = None,
    detail: dict[str, Any] | None = None,
) -> AgentGraphError:
    diagnostic = Diagnostic(
        code, message, path=display, line=line, column=column, detail=dict(detail or {})
    )
    return AgentGraphError(code, message, [diagnostic])


def _unreadable(abs_path: str | os.PathLike[str], display: str, reason: str) -> AgentGraphError:
    return file_error(codes.FILE_READ_FAILED, f"Cannot read {abs_path}: {reason}", display)


def _open_regular(abs_path: str | os.PathLike[str], display: str) -> tuple[int, os.stat_result]:
    """A read descriptor of a regular file; never blocks (a FIFO, a device are refused)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(abs_path, flags)
    except OSError as error:
        raise _unreadable(abs_path, display, error.strerror or str(error)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _unreadable(abs_path, display, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(info.st_mode):
            raise _unreadable(abs_path, display, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_bytes(
    abs_path: str | os.PathLike[str], display: str, limit: int = MAX_FILE_BYTES
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (``limit`` + 1 are read at most)."""
    fd, info = _open_regular(abs_path, display)
    try:
        if info.st_size > limit:
            raise _too_large(abs_path, info.st_size, display, limit)
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as error:
        raise _unreadable(abs_path, display, error.strerror or str(error)) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise _too_large(abs_path, len(data), display, limit)
    return data


def digest_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a regular file's bytes, streamed (no size cap: nothing is kept).

    An unreadable file raises ``AgentGraphError("file-read-failed")``.
    """
    import hashlib

    where = os.path.abspath(path)
    fd, info = _open_regular(where, where)
    try:
        chunk = os.read(fd, _CHUNK)
        h = hashlib.sha256(chunk)
        # a regular file read short of its size in one call is whole: no second call
        if not (len(chunk) < _CHUNK and len(chunk) == info.st_size):
            while chunk := os.read(fd, _CHUNK):
                h.update(chunk)
    except OSError as error:
        raise _unreadable(where, where, error.strerror or str(error)) from None
    finally:
        os.close(fd)
    return "sha256:" + h.hexdigest()


def _too_large(
    abs_path: str | os.PathLike[str], size: int, display: str, limit: int
) -> AgentGraphError:
    return file_error(
        codes.FILE_TOO_LARGE,
        f"Cannot read {abs_path}: the file has {size} bytes, more than the "
        f"{limit // (1024 * 1024)} MiB limit for definition files",
        display,
        detail={"size": size, "limit": limit},
    )


_WIDE_BOMS: Final = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def _wide_encoding(data: bytes) -> str | None:
    """``UTF-16``/``UTF-32`` when the bytes evidently are such text, else ``None``.

    By its byte order mark, or, without one, by ASCII text's tell-tale pattern of a
    NUL byte beside every character.
    """
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name
    head = data[:256]
    if len(head) < 4 or b"\0" not in head:
        return None
    for width, name in ((4, "UTF-32"), (2, "UTF-16")):
        units = [head[i : i + width] for i in range(0, len(head) - width + 1, width)]
        for first in (True, False):  # little- or big-endian: the character byte first or last
            ascii_units = sum(
                1
                for u in units
                if (u[0] if first else u[-1]) != 0 and not any(u[1:] if first else u[:-1])
            )
            if ascii_units >= 0.8 * len(units):
                return name
    return None


def _wide_text(
    abs_path: str | os.PathLike[str], data: bytes, display: str
) -> AgentGraphError | None:
    name = _wide_encoding(data)
    if name is None:
        return None
    return file_error(
        codes.PARSE_FAILED,
        f"Cannot parse {abs_path}: the file is {name} text, not UTF-8; save it as UTF-8",
        display,
        1,
        1,
        {"encoding": name},
    )


def read_text(abs_path: str | os.PathLike[str], *, display: str) -> str:
    """Read a definition file as UTF-8 text (byte order mark kept).

    ``file-read-failed`` when it cannot be read, ``file-too-large`` over
    :data:`MAX_FILE_BYTES`, ``parse-failed`` when it is not UTF-8 or holds NUL (said
    to be UTF-16 or UTF-32 text when it evidently is, at line 1, column 1). Inside
    :func:`agent_graph.documents.overlay.buffers` an editor's buffer for the path is the
    text instead (the language server checks what is typed, not what is saved).
    """
    buffered = _buffer_text(abs_path)
    if buffered is not None:
        return _checked_buffer(buffered, abs_path, display)
    data = read_bytes(abs_path, display)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        wide = _wide_text(abs_path, data, display)
        if wide is not None:
            raise wide from None
        line = data.count(b"\n", 0, error.start) + 1
        line_start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[line_start : error.start].decode("utf-8", "replace")) + 1
        byte = data[error.start]
        raise file_error(
            codes.PARSE_FAILED,
            f"Cannot parse {abs_path}: the file is not UTF-8 text "
            f"(byte 0x{byte:02x} at line {line}, column {column}); is it a binary file?",
            display,
            line,
            column,
        ) from None
    nul = text.find("\0")
    if nul != -1:
        wide = _wide_text(abs_path, data, display)
        if wide is not None:
            raise wide
        raise _nul_error(text, nul, abs_path, display)
    return text


def _nul_error(
    text: str, nul: int, abs_path: str | os.PathLike[str], display: str
) -> AgentGraphError:
    line = text.count("\n", 0, nul) + 1
    column = nul - text.rfind("\n", 0, nul)
    return file_error(
        codes.PARSE_FAILED,
        f"Cannot parse {abs_path}: the file contains a NUL character "
        f"at line {line}, column {column}; is it a binary file?",
        display,
        line,
        column,
    )


def _buffer_text(abs_path: str | os.PathLike[str]) -> str | None:
    """An editor's buffer for ``abs_path`` (:mod:`agent_graph.documents.overlay`).

    Looked up in ``sys.modules`` rather than imported: buffers can only be active once the
    overlay module is loaded, so a command-line run (which never loads it) pays nothing.
    """
    overlay = sys.modules.get("agent_graph.documents.overlay")
    if overlay is None:
        return None
    found: str | None = overlay.buffer_text(abs_path)
    return found


def _checked_buffer(text: str, abs_path: str | os.PathLike[str], display: str) -> str:
    """An editor's buffer read as the file: over the cap or holding NUL, refused the same way."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise _too_large(abs_path, size, display, MAX_FILE_BYTES)
    nul = text.find("\0")
    if nul != -1:
        raise _nul_error(text, nul, abs_path, display)
    return text


def write_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new, never half.

    A temporary file beside ``path`` is written and synced, given ``mode`` (mkstemp's
    is 0600), then ``before_replace`` runs (a last check; raising keeps the old file) and
    the temporary file replaces ``path``. Raises ``OSError``; nothing is left behind.
    """
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        if before_replace is not None:
            before_replace()
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
