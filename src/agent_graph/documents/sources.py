"""Reading definition files into positioned documents.

``.json`` files (extension compared case-insensitively) are parsed with
``JSON.parse`` semantics, everything else as YAML 1.2 (``yaml12``); Markdown
resources carry a YAML frontmatter header. Every failure is an
:class:`AgentGraphError` with one :class:`Diagnostic` naming the file (by its
display path) and, when known, the line and column.

Deliberate differences from the reference, which reads with
``readFile(path, "utf8")``: a file over :data:`MAX_FILE_BYTES` is refused
(``file-too-large``); bytes that are not UTF-8, or text with a NUL character,
are ``parse-failed`` instead of being decoded with replacement characters; a
leading UTF-8 byte order mark is ignored in JSON too (npm ``yaml`` already
ignores it in YAML; ``JSON.parse`` would reject it). Markdown keeps the
reference's rule that the file must begin with ``---``, so a BOM there is
``frontmatter-missing`` (with a hint in the diagnostic detail).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from agent_graph.documents.files import MAX_FILE_BYTES, read_text
from agent_graph.documents.files import file_error as _fail
from agent_graph.documents.json_text import JsonError, parse_json
from agent_graph.documents.sourcemap import Document, ParseError

__all__ = [
    "MAX_FILE_BYTES",
    "JsonError",
    "parse_frontmatter",
    "parse_json",
    "read_markdown",
    "read_structured",
    "read_text",
]

_BOM: Final = "\ufeff"


def read_structured(abs_path: Path, *, display: str) -> Document:
    """Read a ``.json`` (JSON) or any other (YAML 1.2) definition file with positions."""
    text = read_text(abs_path, display=display)
    if text.startswith(_BOM):
        text = text[1:]
    try:
        if abs_path.suffix.lower() == ".json":
            value, source = parse_json(text)
        else:
            from agent_graph.documents.yaml12 import parse_yaml

            value, source = parse_yaml(text)
    except ParseError as error:
        raise _fail(
            "parse-failed", f"Cannot parse {abs_path}: {error}", display, error.line, error.column
        ) from None
    return Document(value, source, abs_path)


def parse_frontmatter(text: str, abs_path: Path, *, display: str) -> Document:
    """Split Markdown into its YAML frontmatter (the document value) and body.

    The text must begin with ``---`` and a line break; CRLF becomes LF; the header
    ends at the first ``\\n---\\n`` from index 4 on and must be a mapping. Header
    positions are file lines (the header starts on line 2), except that the
    header as a whole (pointer ``""``) is placed on the opening ``---`` (line 1,
    column 1), where a problem with the frontmatter itself is best shown.
    ``Document.body`` is the text after the closing delimiter line.
    """
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        detail = {}
        if text.startswith(_BOM):
            detail["hint"] = "the file starts with a UTF-8 byte order mark; save it without one"
        raise _fail(
            "frontmatter-missing",
            f"Markdown resource requires YAML frontmatter: {abs_path}",
            display,
            1,
            1,
            detail,
        )
    from agent_graph.documents.yaml12 import YamlError, parse_yaml

    normalized = text.replace("\r\n", "\n")
    end = normalized.find("\n---\n", 4)
    if end == -1:
        raise _fail(
            "frontmatter-invalid", f"Markdown frontmatter is not closed: {abs_path}", display, 1, 1
        )
    try:
        value, source = parse_yaml(normalized[4:end], line_offset=1)
    except YamlError as error:
        raise _fail(
            "frontmatter-invalid",
            f"Markdown frontmatter of {abs_path} is not valid YAML: {error}",
            display,
            error.line,
            error.column,
        ) from None
    if not isinstance(value, dict):
        line, column = source.locate("") or (2, 1)
        raise _fail(
            "frontmatter-invalid",
            f"Markdown frontmatter must be an object: {abs_path}",
            display,
            line,
            column,
        )
    source.positions[""] = (1, 1)
    return Document(value, source, abs_path, normalized[end + 5 :])


def read_markdown(abs_path: Path, *, display: str) -> Document:
    """Read a Markdown file and parse its frontmatter (see :func:`parse_frontmatter`)."""
    return parse_frontmatter(read_text(abs_path, display=display), abs_path, display=display)
