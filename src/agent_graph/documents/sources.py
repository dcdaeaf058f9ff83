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

import errno
import os
import re
import stat
from bisect import bisect_right
from collections.abc import Callable
from json import JSONDecodeError
from json import decoder as _json_decoder
from pathlib import Path
from typing import Any, Final

from agent_graph.documents.sourcemap import Document, SourceMap, escape_token
from agent_graph.documents.yaml12 import (
    MAX_DEPTH,
    ParseError,
    YamlError,
    parse_yaml,
    to_js_number,
)
from agent_graph.errors import AgentGraphError, Diagnostic

__all__ = [
    "MAX_FILE_BYTES",
    "JsonError",
    "parse_frontmatter",
    "parse_json",
    "read_markdown",
    "read_structured",
    "read_text",
]

#: Largest definition file read (10 MiB). Real Provider files are kilobytes; the
#: cap keeps a mistaken path (a log, an archive, a device) from eating memory.
MAX_FILE_BYTES: Final = 32 * 1024 * 1024  # a 100,000-node graph is ~20 MiB of YAML

_BOM: Final = "\ufeff"


class JsonError(ParseError):
    """The text is not JSON as ``JSON.parse`` accepts it."""


# ---------------------------------------------------------------------------
# JSON with positions

_WS: Final = re.compile(r"[ \t\n\r]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_NEWLINE: Final = re.compile("\n")
# The C string decoder behind json.loads (exact JSON string rules); typeshed omits it.
_scanstring: Final[Callable[[str, int, bool], tuple[str, int]]] = _json_decoder.scanstring  # type: ignore[attr-defined]


def _skip_ws(text: str, index: int) -> int:
    return _WS.match(text, index).end()  # type: ignore[union-attr]  # `*` always matches


class _JsonScanner:
    """Iterative JSON parser: an explicit stack instead of recursion, one pass."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [m.start() for m in _NEWLINE.finditer(text)]

    def position(self, index: int) -> tuple[int, int]:
        row = bisect_right(self.newlines, index - 1)
        start = self.newlines[row - 1] + 1 if row else 0
        return row + 1, index - start + 1

    def error(self, message: str, index: int) -> JsonError:
        line, column = self.position(index)
        return JsonError(message, line, column)

    def unexpected(self, index: int) -> JsonError:
        if index >= len(self.text):
            return self.error("unexpected end of JSON input", index)
        return self.error(f"unexpected character {self.text[index]!r}", index)

    def string(self, index: int) -> tuple[str, int]:
        """Decode the string whose opening quote is at ``index - 1``."""
        try:
            return _scanstring(self.text, index, True)
        except JSONDecodeError as error:
            raise self.error(error.msg.removesuffix(" at").lower(), error.pos) from None

    def key(self, index: int) -> tuple[str, int]:
        """Read ``"name"`` and the ``:`` after it; return the name and where its value starts."""
        text = self.text
        if index >= len(text):
            raise self.unexpected(index)
        if text[index] != '"':
            if text[index] == "}":
                raise self.error("trailing comma before '}'", index)
            raise self.error(
                f"expected a double-quoted property name, found {text[index]!r}", index
            )
        key, index = self.string(index + 1)
        index = _skip_ws(text, index)
        if index >= len(text):
            raise self.unexpected(index)
        if text[index] != ":":
            raise self.error(f"expected ':' after property name, found {text[index]!r}", index)
        return key, _skip_ws(text, index + 1)

    def parse(self) -> tuple[Any, SourceMap]:
        text = self.text
        end = len(text)
        ws = _WS.match
        positions: dict[str, tuple[int, int]] = {}
        # Frames: [container, pointer, is_object, pending key].
        stack: list[list[Any]] = []
        pointer = ""
        i = ws(text, 0).end()  # type: ignore[union-attr]
        while True:
            # A value starts at i.
            if i >= end:
                raise self.unexpected(i)
            positions[pointer] = self.position(i)
            c = text[i]
            value: Any
            if c == "{" or c == "[":
                if len(stack) >= MAX_DEPTH:
                    raise self.error(f"values are nested more than {MAX_DEPTH} levels deep", i)
                is_object = c == "{"
                i = ws(text, i + 1).end()  # type: ignore[union-attr]
                if i < end and text[i] == ("}" if is_object else "]"):
                    value = {} if is_object else []
                    i += 1
                else:
                    if is_object:
                        key, i = self.key(i)
                        stack.append([{}, pointer, True, key])
                        pointer = pointer + "/" + escape_token(key)
                    else:
                        stack.append([[], pointer, False, None])
                        pointer += "/0"
                    continue
            elif c == '"':
                value, i = self.string(i + 1)
            elif c == "t" and text.startswith("true", i):
                value, i = True, i + 4
            elif c == "f" and text.startswith("false", i):
                value, i = False, i + 5
            elif c == "n" and text.startswith("null", i):
                value, i = None, i + 4
            elif c == "-" or "0" <= c <= "9":
                match = _NUMBER.match(text, i)
                if match is None:
                    raise self.error("invalid number", i)
                number = match.group()
                if match.group(1) is None and match.group(2) is None:
                    # int() refuses > 4300 digits; such values are doubles in JS.
                    value = to_js_number(int(number) if len(number) < 40 else float(number))
                    if value == 0 and number.startswith("-"):
                        value = -0.0  # JSON.parse keeps negative zero
                else:
                    value = to_js_number(float(number))
                i = match.end()
            else:
                raise self.unexpected(i)

            # The value is complete: attach it, then read what follows it.
            while True:
                if not stack:
                    i = ws(text, i).end()  # type: ignore[union-attr]
                    if i < end:
                        raise self.error(
                            f"unexpected character {text[i]!r} after the JSON value", i
                        )
                    return value, SourceMap(positions)
                frame = stack[-1]
                container = frame[0]
                if frame[2]:
                    container[frame[3]] = value  # JSON.parse: a repeated key's last value wins
                else:
                    container.append(value)
                i = ws(text, i).end()  # type: ignore[union-attr]
                c = text[i] if i < end else ""
                if c == ",":
                    i = ws(text, i + 1).end()  # type: ignore[union-attr]
                    if frame[2]:
                        key, i = self.key(i)
                        frame[3] = key
                        pointer = frame[1] + "/" + escape_token(key)
                    else:
                        if i < end and text[i] == "]":
                            raise self.error("trailing comma before ']'", i)
                        pointer = frame[1] + "/" + str(len(container))
                    break
                if c == ("}" if frame[2] else "]"):
                    stack.pop()
                    value = container
                    i += 1
                    continue
                if not c:
                    raise self.unexpected(i)
                closer = "'}'" if frame[2] else "']'"
                raise self.error(f"expected ',' or {closer}, found {c!r}", i)


def parse_json(text: str) -> tuple[Any, SourceMap]:
    """Parse JSON as ``JSON.parse`` does, keeping the position of every value.

    Numbers follow the JS number model (``yaml12.to_js_number``); a repeated key
    keeps its last value (in the first one's place; positions recorded inside
    the value it replaced stay in the map, unreferenced); ``NaN``/``Infinity``,
    comments, trailing commas and a byte order mark are errors. Nesting deeper
    than ``MAX_DEPTH`` is refused. Raises :class:`JsonError`.
    """
    return _JsonScanner(text).parse()


# ---------------------------------------------------------------------------
# Files


def _fail(
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


def _read_bytes(abs_path: Path, display: str) -> bytes:
    def unreadable(reason: str) -> AgentGraphError:
        return _fail("file-read-failed", f"Cannot read {abs_path}: {reason}", display)

    # O_NONBLOCK: opening a FIFO must not hang; anything but a regular file is refused.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(abs_path, flags)
    except OSError as error:
        raise unreadable(error.strerror or str(error)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise unreadable(os.strerror(errno.EISDIR))
        if not stat.S_ISREG(info.st_mode):
            raise unreadable("not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise _too_large(abs_path, info.st_size, display)
        chunks: list[bytes] = []
        remaining = MAX_FILE_BYTES + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as error:
        raise unreadable(error.strerror or str(error)) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(abs_path, len(data), display)
    return data


def _too_large(abs_path: Path, size: int, display: str) -> AgentGraphError:
    return _fail(
        "file-too-large",
        f"Cannot read {abs_path}: the file has {size} bytes, more than the "
        f"{MAX_FILE_BYTES // (1024 * 1024)} MiB limit for definition files",
        display,
        detail={"size": size, "limit": MAX_FILE_BYTES},
    )


def read_text(abs_path: Path, *, display: str) -> str:
    """Read a definition file as UTF-8 text (byte order mark kept).

    ``file-read-failed`` when it cannot be read, ``file-too-large`` over
    :data:`MAX_FILE_BYTES`, ``parse-failed`` when it is not UTF-8 or holds NUL.
    """
    data = _read_bytes(abs_path, display)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        line_start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[line_start : error.start].decode("utf-8", "replace")) + 1
        byte = data[error.start]
        raise _fail(
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
        raise _fail(
            "parse-failed",
            f"Cannot parse {abs_path}: the file contains a NUL character "
            f"at line {line}, column {column}; is it a binary file?",
            display,
            line,
            column,
        )
    return text


def read_structured(abs_path: Path, *, display: str) -> Document:
    """Read a ``.json`` (JSON) or any other (YAML 1.2) definition file with positions."""
    text = read_text(abs_path, display=display)
    if text.startswith(_BOM):
        text = text[1:]
    try:
        if abs_path.suffix.lower() == ".json":
            value, source = parse_json(text)
        else:
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
