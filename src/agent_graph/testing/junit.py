"""JUnit XML reports for CI (the de-facto schema read by Jenkins, GitLab and GitHub actions).

One ``<testsuite>`` per run, one ``<testcase>`` per case (``file`` and ``line`` point
at the case), a ``<failure>`` with every unmet expectation for a failed case and an
``<error>`` (``type`` is the error code) for a case that could not run; ``failures``
and ``errors`` count them apart, as JUnit readers expect.
Characters XML 1.0 cannot carry are written as ``\\uXXXX`` text.

:func:`write_junit` replaces an existing file only when it is a previous report of
ours (recognised by :data:`REPORT_HEAD` and :data:`REPORT_TAIL`) and not one of the
files it is told to keep; FIFOs, devices and sockets are never opened or replaced.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path

from .. import codes
from ..documents.files import write_atomic
from ..documents.paths import display_path
from ..errors import AgentGraphError
from .runner import CaseResult, error_lines, failure_lines

#: How every report we write starts (ElementTree's declaration, then our root element and
#: its name) and ends: an existing file is replaced only when it is such a report. Reports
#: written before these were named start and end the same way.
REPORT_HEAD = b"<?xml version='1.0' encoding='utf-8'?>\n<testsuites name=\"agc test\" "
REPORT_TAIL = b"</testsuites>\n"

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _classname(result: CaseResult, base: Path | None) -> str:
    relative = display_path(result.path, base).lstrip("/")
    stem = relative.rsplit(".", 1)[0] if "." in Path(relative).name else relative
    return stem.replace("/", ".")


def junit_xml(
    results: Sequence[CaseResult], *, suite: str = "agent-graph", base: Path | None = None
) -> bytes:
    """The report as UTF-8 bytes; ``suite`` names the test suite (e.g. the Provider id)."""
    errors = sum(1 for result in results if result.errored)
    failed = sum(1 for result in results if not result.passed) - errors
    total_time = _seconds(sum(result.seconds for result in results))
    counts = {
        "tests": str(len(results)),
        "failures": str(failed),
        "errors": str(errors),
        "skipped": "0",
        "time": total_time,
    }
    root = ET.Element("testsuites", {"name": "agc test", **counts})
    suite_element = ET.SubElement(root, "testsuite", {"name": _text(suite), **counts})
    for result in results:
        case = ET.SubElement(
            suite_element,
            "testcase",
            {
                "name": _text(result.name),
                "classname": _text(_classname(result, base)),
                "file": _text(display_path(result.path, base)),
                "line": str(result.case.line),
                "time": _seconds(result.seconds),
            },
        )
        if result.passed:
            continue
        if result.error is not None:
            error = ET.SubElement(
                case,
                "error",
                {
                    "message": _text(f"{result.error.code}: {result.error.message}"),
                    "type": _text(result.error.code),
                },
            )
            lines = [line.removeprefix("  ") for line in error_lines(result.error, base)]
            error.text = _text("\n".join(lines))
            continue
        first = result.failures[0].message
        more = len(result.failures) - 1
        message = f"{first} (and {more} more)" if more else first
        lines = [
            line.removeprefix("  ")
            for failure in result.failures
            for line in failure_lines(failure, result.path, base)
        ]
        failure = ET.SubElement(
            case, "failure", {"message": _text(message), "type": "graph-test-failure"}
        )
        failure.text = _text("\n".join(lines))
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


def is_report(head: bytes, tail: bytes) -> bool:
    """Whether a file starting with ``head`` and ending with ``tail`` is a report of ours."""
    return head.startswith(REPORT_HEAD) and tail.endswith(REPORT_TAIL)


def _refuse(target: Path, why: str) -> AgentGraphError:
    return AgentGraphError(
        codes.JUNIT_TARGET_EXISTS,
        f"Refusing to replace {target}: {why}; choose another report path",
    )


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _kept(keep: Iterable[str | os.PathLike[str]]) -> tuple[set[tuple[int, int]], set[str]]:
    """Inodes and real paths of the files a report must never replace."""
    inodes: set[tuple[int, int]] = set()
    paths: set[str] = set()
    for item in keep:
        where = os.path.abspath(os.fspath(item))
        paths.add(os.path.realpath(where))
        try:
            inodes.add(_identity(os.stat(where)))
        except (OSError, ValueError):
            continue
    return inodes, paths


def _read_ends(fd: int, size: int) -> tuple[bytes, bytes]:
    head = os.read(fd, len(REPORT_HEAD))
    if size < len(REPORT_HEAD) + len(REPORT_TAIL):
        return head, b""
    os.lseek(fd, size - len(REPORT_TAIL), os.SEEK_SET)
    return head, os.read(fd, len(REPORT_TAIL))


def _check_target(
    target: Path, keep: Iterable[str | os.PathLike[str]]
) -> tuple[Path, tuple[int, int] | None]:
    """Where to write and the identity of the report it replaces (None: a new file).

    Only a regular file that is a previous report of ours is replaced, never a source
    file of the Provider; a symbolic link is followed to such a report (and kept). A
    FIFO, device or socket is never opened; a directory is ``file-write-failed``.
    """
    if not os.path.lexists(target):
        return target, None
    final = Path(os.path.realpath(target)) if os.path.islink(target) else target
    try:
        info = os.lstat(final)
    except FileNotFoundError:
        raise _refuse(target, "it is a symbolic link to nothing") from None
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not stat.S_ISREG(info.st_mode):  # a FIFO, a device, a socket: never opened
        raise _refuse(target, "it is not a regular file")
    inodes, paths = _kept(keep)
    if _identity(info) in inodes or os.path.realpath(final) in paths:
        raise _refuse(target, "it is a source file of the Provider")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(final, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or _identity(opened) != _identity(info):
            raise _refuse(target, "it changed while it was checked")
        head, tail = _read_ends(fd, opened.st_size)
    finally:
        os.close(fd)
    if not is_report(head, tail):
        raise _refuse(target, "it is not a JUnit report written by agc test")
    return final, _identity(info)


def write_junit(
    path: str | os.PathLike[str],
    results: Sequence[CaseResult],
    *,
    suite: str = "agent-graph",
    base: Path | None = None,
    keep: Iterable[str | os.PathLike[str]] = (),
) -> Path:
    """Write the report atomically (a reader never sees half a file); returns its path.

    An existing file at ``path`` is replaced only when it is a previous report of ours
    (see :data:`REPORT_HEAD`) and none of ``keep`` (the Provider's source files);
    otherwise ``junit-target-exists`` is raised before anything is written.
    """
    target = Path(os.path.abspath(os.fspath(path)))
    data = junit_xml(results, suite=suite, base=base)
    try:
        final, replaced = _check_target(target, keep)
        # 0644: mkstemp's 0600 would hide the report from CI users
        write_atomic(
            final, data, mode=0o644, before_replace=lambda: _unchanged(target, final, replaced)
        )
    except OSError as error:
        raise AgentGraphError(
            codes.FILE_WRITE_FAILED, f"Cannot write {target}: {error.strerror or error}"
        ) from None
    return target


def _unchanged(target: Path, final: Path, replaced: tuple[int, int] | None) -> None:
    """Nothing took the checked file's place while the report was being written."""
    try:
        now: tuple[int, int] | None = _identity(os.lstat(final))
    except FileNotFoundError:
        now = None
    if now != replaced:
        raise _refuse(target, "it appeared or changed while the report was written")
