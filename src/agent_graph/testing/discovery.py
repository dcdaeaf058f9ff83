"""Finding and reading graph test cases (``agent-graph.test.v1``).

Discovery follows the reference: a file path is that one case (any extension); a
directory is walked depth-first, each directory's entries in ``localeCompare`` order,
symbolic links skipped, keeping names ending in ``.yaml``, ``.yml`` or ``.json``
(any case). A missing path and an empty result are errors, never a vacuous pass.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import codes
from ..documents.sourcemap import SourceMap
from ..errors import AgentGraphError, Diagnostic

TEST_SCHEMA = "agent-graph.test.v1"
_CASE_NAME = re.compile(r"\.(?:ya?ml|json)\Z", re.IGNORECASE)


def _absolute(path: str | os.PathLike[str]) -> Path:
    # os.path.abspath keeps symlinks unresolved, like node's path.resolve
    return Path(os.path.abspath(os.fspath(path)))


def _walk(directory: Path, found: list[Path]) -> None:
    from ..canonical import locale_sorted

    try:
        with os.scandir(directory) as listing:
            entries = {entry.name: entry for entry in listing}
    except OSError as error:
        raise AgentGraphError(
            codes.FILE_READ_FAILED, f"Cannot read {directory}: {error.strerror or error}"
        ) from None
    for name in locale_sorted(entries):
        entry = entries[name]
        try:
            if entry.is_dir(follow_symlinks=False):
                _walk(directory / name, found)
            elif entry.is_file(follow_symlinks=False) and _CASE_NAME.search(name):
                found.append(directory / name)
        except OSError:
            continue  # vanished while listing: it is not there


def discover(path: str | os.PathLike[str] = "tests") -> list[Path]:
    """Absolute paths of the cases at ``path`` (relative paths: to the process directory).

    Raises ``test-path-missing`` when nothing exists there and ``test-cases-empty`` when
    a directory holds no YAML or JSON file.
    """
    absolute = _absolute(path)
    try:
        info = os.stat(absolute)
    except (OSError, ValueError):
        raise AgentGraphError(
            codes.TEST_PATH_MISSING, f"Graph test path does not exist: {absolute}"
        ) from None
    if stat.S_ISREG(info.st_mode):
        return [absolute]
    if not stat.S_ISDIR(info.st_mode):
        raise AgentGraphError(
            codes.TEST_PATH_INVALID,
            f"Graph test path is neither a file nor a directory: {absolute}",
        )
    found: list[Path] = []
    _walk(absolute, found)
    if not found:
        raise AgentGraphError(
            codes.TEST_CASES_EMPTY, f"No YAML or JSON graph test cases found: {absolute}"
        )
    return found


@dataclass(frozen=True, slots=True)
class GraphTestCase:
    """One parsed and schema-checked case, with the position of every value in its file."""

    path: Path
    name: str
    graph: str
    entry: str
    state: Mapping[str, Any]
    expect: Mapping[str, Any]
    source: SourceMap = field(default_factory=SourceMap, compare=False, repr=False)

    def position(self, pointer: str) -> tuple[int, int]:
        """``(line, column)`` of the value at ``pointer`` (or its nearest ancestor)."""
        return self.source.locate(pointer) or (1, 1)

    @property
    def line(self) -> int:
        """Where the case starts: its ``name`` member."""
        return self.position("/name")[0]

    def diagnostic(self, code: str, message: str, pointer: str) -> Diagnostic:
        line, column = self.position(pointer)
        return Diagnostic(
            code, message, path=str(self.path), line=line, column=column, pointer=pointer
        )


def load_case(path: str | os.PathLike[str]) -> GraphTestCase:
    """Read one case file (JSON for ``.json``, else YAML 1.2) and check it against the schema.

    ``parse-failed``/``file-read-failed`` when it cannot be read, ``schema-invalid``
    (one positioned diagnostic per finding) when it is not an ``agent-graph.test.v1``.
    """
    case, error = try_load_case(path)
    if error is not None:
        raise error
    return case


def try_load_case(path: str | os.PathLike[str]) -> tuple[GraphTestCase, AgentGraphError | None]:
    """:func:`load_case`, but a file that cannot be loaded gives a stand-in and the error.

    The stand-in is named by the file's ``name`` member when that is a non-empty
    string, else by the file's name, and keeps the file's positions when it parsed.
    """
    from ..documents.schema import validate
    from ..documents.sources import read_structured

    absolute = _absolute(path)
    display = str(absolute)
    try:
        document = read_structured(absolute, display=display)
    except AgentGraphError as error:
        return _stand_in(absolute, None, SourceMap()), error
    problem = validate("test-case", document.value, path=display, source=document.source)
    if problem is not None:
        invalid = AgentGraphError(problem.code, problem.message, problem.diagnostics)
        return _stand_in(absolute, document.value, document.source), invalid
    value: dict[str, Any] = document.value
    case = GraphTestCase(
        path=absolute,
        name=value["name"],
        graph=value["graph"],
        entry=value["entry"],
        state=value.get("state", {}),
        expect=value["expect"],
        source=document.source,
    )
    return case, None


def _stand_in(path: Path, value: Any, source: SourceMap) -> GraphTestCase:
    def text(key: str) -> str:
        found = value.get(key) if isinstance(value, Mapping) else None
        return found if isinstance(found, str) and found else ""

    return GraphTestCase(
        path=path,
        name=text("name") or path.name,
        graph=text("graph"),
        entry=text("entry"),
        state={},
        expect={},
        source=source,
    )
