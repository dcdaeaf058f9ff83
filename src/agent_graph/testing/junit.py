"""JUnit XML reports for CI (the de-facto schema read by Jenkins, GitLab and GitHub actions).

One ``<testsuite>`` per run, one ``<testcase>`` per case (``file`` and ``line`` point
at the case), a ``<failure>`` with every unmet expectation for a failed case.
Characters XML 1.0 cannot carry are written as ``\\uXXXX`` text.
"""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from ..documents.paths import display_path
from ..errors import AgentGraphError
from .runner import CaseResult, failure_lines

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
    failed = sum(1 for result in results if not result.passed)
    total_time = _seconds(sum(result.seconds for result in results))
    counts = {
        "tests": str(len(results)),
        "failures": str(failed),
        "errors": "0",
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


def write_junit(
    path: str | os.PathLike[str],
    results: Sequence[CaseResult],
    *,
    suite: str = "agent-graph",
    base: Path | None = None,
) -> Path:
    """Write the report atomically (a reader never sees half a file); returns its path."""
    target = Path(os.path.abspath(os.fspath(path)))
    data = junit_xml(results, suite=suite, base=base)
    try:
        if target.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the report from CI users
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise AgentGraphError(
            "file-write-failed", f"Cannot write {target}: {error.strerror or error}"
        ) from None
    return target
