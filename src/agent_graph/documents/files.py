"""Reading files we are given: non-blocking, size-capped, regular files only.

Every definition, Run and bundle file goes through :func:`read_bytes`: opening a
FIFO must not hang, a device or directory is refused, and no more than the cap + 1
bytes is ever read, whatever the file claims its size is.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any, Final

from agent_graph.errors import AgentGraphError, Diagnostic

__all__ = ["MAX_FILE_BYTES", "digest_file", "file_error", "read_bytes", "read_text"]

#: Largest file read (32 MiB). Real Provider files are kilobytes; the
#: cap keeps a mistaken path (a log, an archive, a device) from eating memory.
MAX_FILE_BYTES: Final = 32 * 1024 * 1024  # a 100,000-node graph is ~20 MiB of YAML


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


def _unreadable(abs_path: Path | str, display: str, reason: str) -> AgentGraphError:
    return file_error("file-read-failed", f"Cannot read {abs_path}: {reason}", display)


def _open_regular(abs_path: Path | str, display: str) -> tuple[int, os.stat_result]:
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


def read_bytes(abs_path: Path, display: str, limit: int = MAX_FILE_BYTES) -> bytes:
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
    from hashlib import sha256

    where = os.path.abspath(path)
    h = sha256()
    fd, _ = _open_regular(where, where)
    try:
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    except OSError as error:
        raise _unreadable(where, where, error.strerror or str(error)) from None
    finally:
        os.close(fd)
    return "sha256:" + h.hexdigest()


def _too_large(abs_path: Path, size: int, display: str, limit: int) -> AgentGraphError:
    return file_error(
        "file-too-large",
        f"Cannot read {abs_path}: the file has {size} bytes, more than the "
        f"{limit // (1024 * 1024)} MiB limit for definition files",
        display,
        detail={"size": size, "limit": limit},
    )


def read_text(abs_path: Path, *, display: str) -> str:
    """Read a definition file as UTF-8 text (byte order mark kept).

    ``file-read-failed`` when it cannot be read, ``file-too-large`` over
    :data:`MAX_FILE_BYTES`, ``parse-failed`` when it is not UTF-8 or holds NUL.
    """
    data = read_bytes(abs_path, display)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        line_start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[line_start : error.start].decode("utf-8", "replace")) + 1
        byte = data[error.start]
        raise file_error(
            "parse-failed",
            f"Cannot parse {abs_path}: the file is not UTF-8 text "
            f"(byte 0x{byte:02x} at line {line}, column {column}); is it a binary file?",
            display,
            line,
            column,
        ) from None
    nul = text.find("\0")
    if nul != -1:
        line = text.count("\n", 0, nul) + 1
        column = nul - text.rfind("\n", 0, nul)
        raise file_error(
            "parse-failed",
            f"Cannot parse {abs_path}: the file contains a NUL character "
            f"at line {line}, column {column}; is it a binary file?",
            display,
            line,
            column,
        )
    return text
