"""Reading definition files: JSON with positions, YAML, Markdown frontmatter, read errors."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_graph.documents.sources import (
    MAX_FILE_BYTES,
    JsonError,
    TextSourceMap,
    parse_frontmatter,
    parse_json,
    read_markdown,
    read_structured,
)
from agent_graph.documents.surrogates import unpaired_surrogate
from agent_graph.documents.yaml12 import MAX_DEPTH, to_js_number
from agent_graph.errors import AgentGraphError


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_bytes(content.encode("utf-8"))
    else:
        path.write_bytes(content)
    return path


def failure(call: Any, *args: Any, **kwargs: Any) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as caught:
        call(*args, **kwargs)
    return caught.value


def json_fails(text: str) -> JsonError:
    with pytest.raises(JsonError) as caught:
        parse_json(text)
    return caught.value


# ---------------------------------------------------------------------------
# parse_json


def test_json_values_and_positions() -> None:
    text = '{\n  "a": [1, 2.5, {"b": null}],\n  "c/d": "x",\n  "e": true\n}'
    value, source = parse_json(text)
    assert value == {"a": [1, 2.5, {"b": None}], "c/d": "x", "e": True}
    assert source.positions == {
        "": (1, 1),
        "/a": (2, 8),
        "/a/0": (2, 9),
        "/a/1": (2, 12),
        "/a/2": (2, 17),
        "/a/2/b": (2, 23),
        "/c~1d": (3, 10),
        "/e": (4, 8),
    }


def test_json_numbers_follow_the_js_model() -> None:
    value, _ = parse_json("[1.0, -0, -0.0, 1e3, 1E-7, 9007199254740993, 1e400, " + "9" * 5000 + "]")
    assert value[:5] == [1, 0, 0, 1000, 1e-7]
    assert [type(v) for v in value[:4]] == [int, float, float, int]
    # JSON.parse keeps negative zero
    assert [math.copysign(1, v) for v in value[1:3]] == [-1, -1]
    assert value[5] == 9007199254740992.0
    assert isinstance(value[5], float)
    assert value[6] == math.inf
    assert value[7] == math.inf


def test_json_duplicate_keys_last_wins_in_first_place() -> None:
    value, source = parse_json('{"a": 1, "b": 2, "a": 3}')
    assert value == {"a": 3, "b": 2}
    assert list(value) == ["a", "b"]
    assert source.positions["/a"] == (1, 23)


def test_json_strings_and_escapes() -> None:
    value, _ = parse_json(r'["\u00e9\n", "\ud83d\ude00", "/\/"]')
    assert value == ["é\n", "😀", "//"]
    # a lone surrogate is no text (it cannot be written as UTF-8): refused with its place,
    # as the YAML reader refuses it (hardening issue, finding 5)
    with pytest.raises(JsonError) as info:
        parse_json(r'["\u00e9\n", "\ud800"]')
    assert (info.value.line, info.value.column) == (1, 15)  # the escape itself


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("", "unexpected end of JSON input", 1, 1),
        ("  \n ", "unexpected end of JSON input", 2, 2),
        ('{"a": 1,}', "trailing comma before '}'", 1, 9),
        ("[1,\n]", "trailing comma before ']'", 2, 1),
        ("[1 2]", "expected ',' or ']'", 1, 4),
        ('{"a" 1}', "expected ':' after property name", 1, 6),
        ("{a: 1}", "expected a double-quoted property name", 1, 2),
        ("NaN", "unexpected character 'N'", 1, 1),
        ("[Infinity]", "unexpected character 'I'", 1, 2),
        ("-Infinity", "invalid number", 1, 1),
        ("01", "after the JSON value", 1, 2),
        ("1.", "after the JSON value", 1, 2),
        (".5", "unexpected character '.'", 1, 1),
        ("[1] x", "after the JSON value", 1, 5),
        ('"a\nb"', "invalid control character", 1, 3),
        ('"\\x"', "invalid \\escape", 1, 2),
        ("\ufeff{}", "unexpected character '\\ufeff'", 1, 1),
        ('{"a": 1', "unexpected end of JSON input", 1, 8),
        ("tru", "unexpected character 't'", 1, 1),
        ("// c\n1", "unexpected character '/'", 1, 1),
        ("'a'", "unexpected character", 1, 1),
    ],
)
def test_json_errors(text: str, message: str, line: int, column: int) -> None:
    error = json_fails(text)
    assert message in error.message
    assert (error.line, error.column) == (line, column)


def test_json_nesting_limit() -> None:
    value, _ = parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert isinstance(value, list)
    for text in ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), '{"a":' * 100_000):
        error = json_fails(text)
        assert f"more than {MAX_DEPTH} levels" in error.message


def _normalised(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return to_js_number(value)
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    return {k: _normalised(v) for k, v in value.items()}


def _pointers(value: Any, here: str = "") -> list[str]:
    out = [here]
    if isinstance(value, dict):
        for key, child in value.items():
            token = key.replace("~", "~0").replace("/", "~1")
            out += _pointers(child, f"{here}/{token}")
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += _pointers(child, f"{here}/{index}")
    return out


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_json_matches_json_loads(value: Any, pretty: bool) -> None:
    text = json.dumps(value, indent=2 if pretty else None, ensure_ascii=False)
    parsed, source = parse_json(text)
    assert parsed == _normalised(json.loads(text))
    assert sorted(source.positions) == sorted(set(_pointers(parsed)))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]:,"\\ -0123.eE+ntrufals\n\ud800')), max_size=40))
def test_random_text_gives_json_error_or_the_json_loads_value(text: str) -> None:
    try:
        expected: Any = json.loads(text, parse_constant=lambda name: pytest.fail(name))
    except ValueError:
        expected = JsonError
    except BaseException:  # pytest.fail for NaN/Infinity, which JSON.parse rejects
        expected = JsonError
    if unpaired_surrogate(text) is not None:  # json.loads keeps it; we refuse non-Unicode
        expected = JsonError
    if expected is JsonError:
        with pytest.raises(JsonError):
            parse_json(text)
    else:
        assert parse_json(text)[0] == _normalised(expected)


# ---------------------------------------------------------------------------
# read_structured


def test_reads_yaml_and_json_by_extension(tmp_path: Path) -> None:
    yml = write(tmp_path / "a.yaml", "schema: x\nn: 010\n")
    jsn = write(tmp_path / "b.JSON", '{"n": 010}'.replace("010", "10"))
    other = write(tmp_path / "c", "k: yes\n")
    dotjson = write(tmp_path / ".json", "k: 1\n")  # no extension: YAML, as node's extname
    assert read_structured(yml, display="a.yaml").value == {"schema": "x", "n": 10}
    document = read_structured(jsn, display="b.JSON")
    assert document.value == {"n": 10}
    assert document.source.positions["/n"] == (1, 7)
    assert document.abs_path == jsn
    assert document.body is None
    assert read_structured(other, display="c").value == {"k": "yes"}
    assert read_structured(dotjson, display=".json").value == {"k": 1}


def test_yaml_in_a_json_file_is_a_parse_failure(tmp_path: Path) -> None:
    path = write(tmp_path / "x.json", "a: 1\n")
    error = failure(read_structured, path, display="x.json")
    assert error.code == "parse-failed"
    assert error.message.startswith(f"Cannot parse {path}: unexpected character 'a'")
    diagnostic = error.diagnostics[0]
    assert (diagnostic.code, diagnostic.path, diagnostic.line, diagnostic.column) == (
        "parse-failed",
        "x.json",
        1,
        1,
    )


def test_yaml_parse_failure_has_position(tmp_path: Path) -> None:
    path = write(tmp_path / "graphs" / "main.yaml", "id: main\nid: again\n")
    error = failure(read_structured, path, display="graphs/main.yaml")
    assert error.code == "parse-failed"
    assert error.message == (f"Cannot parse {path}: duplicate mapping key 'id' at line 2, column 1")
    assert error.diagnostics[0].location() == "graphs/main.yaml:2:1"
    assert error.to_dict()["error"]["diagnostics"][0]["detail"] == {"line": 2, "column": 1}


def test_byte_order_mark_is_ignored_in_yaml_and_json(tmp_path: Path) -> None:
    yml = write(tmp_path / "a.yaml", b"\xef\xbb\xbfa: 1\n")
    jsn = write(tmp_path / "b.json", b'\xef\xbb\xbf{"a": 1}')
    assert read_structured(yml, display="a.yaml").value == {"a": 1}
    document = read_structured(jsn, display="b.json")
    assert document.value == {"a": 1}
    assert document.source.positions["/a"] == (1, 7)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    error = failure(read_structured, path, display="nope.yaml")
    assert error.code == "file-read-failed"
    assert error.message == f"Cannot read {path}: No such file or directory"
    assert error.diagnostics[0].path == "nope.yaml"


def test_directory_is_not_readable(tmp_path: Path) -> None:
    error = failure(read_structured, tmp_path, display="dir")
    assert error.code == "file-read-failed"
    assert error.message == f"Cannot read {tmp_path}: Is a directory"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    error = failure(read_structured, fifo, display="pipe.yaml")
    assert error.code == "file-read-failed"
    assert "not a regular file" in error.message


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path / "secret.yaml", "a: 1\n")
    path.chmod(0)
    error = failure(read_structured, path, display="secret.yaml")
    assert error.code == "file-read-failed"
    assert "Permission denied" in error.message


def test_huge_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:  # sparse: no 10 MiB written to disk
        handle.truncate(MAX_FILE_BYTES + 1)
    error = failure(read_structured, path, display="huge.yaml")
    assert error.code == "file-too-large"
    assert error.message.startswith(f"Cannot read {path}: the file has {MAX_FILE_BYTES + 1} bytes")
    assert error.diagnostics[0].detail == {"size": MAX_FILE_BYTES + 1, "limit": MAX_FILE_BYTES}


def test_file_at_the_limit_is_read(tmp_path: Path) -> None:
    path = write(tmp_path / "big.yaml", b"# " + b"x" * (MAX_FILE_BYTES - 3) + b"\n")
    assert read_structured(path, display="big.yaml").value is None


def test_binary_file_is_a_clear_parse_failure(tmp_path: Path) -> None:
    path = write(tmp_path / "logo.yaml", b"a: 1\nb: \x89PNG\r\n\x1a\n")
    error = failure(read_structured, path, display="logo.yaml")
    assert error.code == "parse-failed"
    assert "not UTF-8 text (byte 0x89 at line 2, column 4)" in error.message
    assert (error.diagnostics[0].line, error.diagnostics[0].column) == (2, 4)


def test_nul_character_is_a_parse_failure(tmp_path: Path) -> None:
    path = write(tmp_path / "x.json", b'{"a":\n "\x00"}')
    error = failure(read_structured, path, display="x.json")
    assert error.code == "parse-failed"
    assert "NUL character at line 2, column 3" in error.message


@pytest.mark.parametrize(
    ("data", "name"),
    [
        ("a: 1\n".encode("utf-16"), "UTF-16"),  # with a byte order mark
        ("a: 1\nb: 2\n".encode("utf-16-le"), "UTF-16"),  # without: NUL beside every letter
        ("a: 1\nb: 2\n".encode("utf-16-be"), "UTF-16"),
        ("a: 1\n".encode("utf-32"), "UTF-32"),
        ("a: 1\nb: 2\n".encode("utf-32-le"), "UTF-32"),
    ],
)
def test_utf16_and_utf32_text_is_named(tmp_path: Path, data: bytes, name: str) -> None:
    path = write(tmp_path / "x.yaml", data)
    error = failure(read_structured, path, display="x.yaml")
    assert error.code == "parse-failed"
    assert (
        error.message
        == f"Cannot parse {path}: the file is {name} text, not UTF-8; save it as UTF-8"
    )
    assert (error.diagnostics[0].line, error.diagnostics[0].column) == (1, 1)
    assert error.diagnostics[0].detail == {"encoding": name}


def test_binary_with_nul_bytes_is_not_taken_for_utf16(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"
    error = failure(read_structured, write(tmp_path / "x.yaml", png), display="x.yaml")
    assert "not UTF-8 text (byte 0x89" in error.message
    text = b"a: 1\nb: \x00\x00\x00 and more text here\n"
    error = failure(read_structured, write(tmp_path / "y.yaml", text), display="y.yaml")
    assert "contains a NUL character at line 2, column 4" in error.message


def test_column_counts_characters_before_bad_bytes(tmp_path: Path) -> None:
    path = write(tmp_path / "x.yaml", "é: ".encode() + b"\xff")
    error = failure(read_structured, path, display="x.yaml")
    assert (error.diagnostics[0].line, error.diagnostics[0].column) == (1, 4)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=64), st.sampled_from(["f.yaml", "f.json", "f.md"]))
def test_random_bytes_give_structured_errors(tmp_path: Path, data: bytes, name: str) -> None:
    path = write(tmp_path / name, data)
    reader = read_markdown if name.endswith(".md") else read_structured
    caught: AgentGraphError | None = None
    try:
        reader(path, display=name)
    except AgentGraphError as error:
        caught = error
    if caught is not None:
        assert caught.code in {"parse-failed", "frontmatter-missing", "frontmatter-invalid"}
        assert caught.diagnostics[0].path == name


# ---------------------------------------------------------------------------
# Frontmatter


def frontmatter(text: str, name: str = "r.md") -> Any:
    return parse_frontmatter(text, Path("/p") / name, display=name)


def test_frontmatter_value_body_and_positions() -> None:
    document = frontmatter("---\nid: r\nkind: procedure\ntags: [a, b]\n---\n# Title\n\nBody\n")
    assert document.value == {"id": "r", "kind": "procedure", "tags": ["a", "b"]}
    assert document.body == "# Title\n\nBody\n"
    assert document.source.positions[""] == (1, 1)  # the opening delimiter
    assert document.source.positions["/id"] == (2, 5)
    assert document.source.positions["/kind"] == (3, 7)
    assert document.source.positions["/tags/1"] == (4, 11)
    assert document.abs_path == Path("/p/r.md")


def test_frontmatter_with_crlf() -> None:
    document = frontmatter("---\r\nid: r\r\nx: 1\r\n---\r\nline 1\r\nline 2\r\n")
    assert document.value == {"id": "r", "x": 1}
    assert document.body == "line 1\nline 2\n"
    assert document.source.positions["/x"] == (3, 4)


def test_frontmatter_body_may_be_empty() -> None:
    assert frontmatter("---\nid: r\n---\n").body == ""


@pytest.mark.parametrize("text", ["id: r\n", "\n---\nid: r\n---\n", "--- \nid: r\n---\n", ""])
def test_frontmatter_missing(text: str) -> None:
    error = failure(frontmatter, text)
    assert error.code == "frontmatter-missing"
    assert error.message == "Markdown resource requires YAML frontmatter: /p/r.md"
    assert error.diagnostics[0].path == "r.md"


def test_frontmatter_after_a_byte_order_mark_is_missing_with_a_hint() -> None:
    error = failure(frontmatter, "\ufeff---\nid: r\n---\n")
    assert error.code == "frontmatter-missing"
    assert "byte order mark" in error.diagnostics[0].detail["hint"]
    assert error.message == (
        "Markdown resource requires YAML frontmatter: /p/r.md (it starts with an invisible "
        "UTF-8 byte order mark, U+FEFF, before the opening ---; save the file without one)"
    )
    assert error.diagnostics[0].message == error.message
    other = failure(frontmatter, "\ufeffid: r\n")  # no --- after it: the hint only
    assert other.message == "Markdown resource requires YAML frontmatter: /p/r.md"
    assert "byte order mark" in other.diagnostics[0].detail["hint"]


@pytest.mark.parametrize(
    "text",
    ["---\nid: r\n---", "---\nid: r\n--- \nbody", "---\n---\nbody\n", "---\nid: r\n...\n"],
)
def test_frontmatter_not_closed(text: str) -> None:
    error = failure(frontmatter, text)
    assert error.code == "frontmatter-invalid"
    assert error.message == "Markdown frontmatter is not closed: /p/r.md"


@pytest.mark.parametrize(
    "text", ["---\n\n---\nbody", "---\n- a\n---\n", "---\njust text\n---\n", "---\n~\n---\n"]
)
def test_frontmatter_must_be_an_object(text: str) -> None:
    error = failure(frontmatter, text)
    assert error.code == "frontmatter-invalid"
    assert error.message == "Markdown frontmatter must be an object: /p/r.md"


def test_frontmatter_yaml_error_has_the_file_position() -> None:
    error = failure(frontmatter, "---\nid: r\nkind: [a\n---\nbody\n")
    assert error.code == "frontmatter-invalid"
    assert error.message.startswith("Markdown frontmatter of /p/r.md is not valid YAML: ")
    assert (error.diagnostics[0].line, error.diagnostics[0].column) == (3, 9)
    duplicate = failure(frontmatter, "---\nid: r\nx: 1\nid: s\n---\n")
    assert (duplicate.diagnostics[0].line, duplicate.diagnostics[0].column) == (4, 1)


def test_frontmatter_closing_delimiter_inside_a_block_scalar_still_closes() -> None:
    # The reference splits on text, not on YAML structure; so do we.
    document = frontmatter("---\nnote: |\n  a\n---\nrest\n")
    assert document.value == {"note": "a\n"}  # as npm yaml: the header ends the scalar
    assert document.body == "rest\n"


def test_read_markdown(tmp_path: Path) -> None:
    path = write(tmp_path / "resources" / "r.md", "---\nid: r\n---\nHello\n")
    document = read_markdown(path, display="resources/r.md")
    assert document.value == {"id": "r"}
    assert document.body == "Hello\n"
    missing = failure(read_markdown, tmp_path / "none.md", display="none.md")
    assert missing.code == "file-read-failed"
    binary = write(tmp_path / "b.md", b"---\nid: \xc3\x28\n---\n")
    assert failure(read_markdown, binary, display="b.md").code == "parse-failed"


# ---------------------------------------------------------------------------
# Key positions (TextSourceMap)


def keyed(text: str, name: str = "f.yaml") -> TextSourceMap:
    """The source map of ``text`` read as a file called ``name``."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        source = read_structured(write(Path(folder) / name, text), display=name).source
    assert isinstance(source, TextSourceMap)
    return source


@pytest.mark.parametrize(
    ("text", "parent", "key", "expected"),
    [
        ("a: 1\nowner: x\n", "", "owner", (2, 1)),
        ("a:\n  b:\n    - 1\n", "/a", "b", (2, 3)),
        ("a: 1\nowner:\nnext: 2\n", "", "owner", (2, 1)),  # an empty value
        ("a:\n  # b: old\n  b:\n    # b: also\n    - 1\n", "/a", "b", (3, 3)),
        ("x: {a: 1, b: [2]}\n", "/x", "b", (1, 11)),
        ("x: {a: 1, 'b': 2}\n", "/x", "b", (1, 11)),
        ('x:\n  "b c": 2\n', "/x", "b c", (2, 3)),
        ("- id: a\n  ab: 1\n  b: 2\n", "/0", "b", (3, 3)),  # not the tail of "ab"
        ("a: 1\r\nb: 2\r\n", "", "b", (2, 1)),
        ("\ufeffa: 1\nb: 2\n", "", "b", (2, 1)),
        ("a: 1\nb: &x 2\nc: *x\n", "", "c", (3, 1)),
    ],
)
def test_key_positions_in_yaml(text: str, parent: str, key: str, expected: tuple[int, int]) -> None:
    assert keyed(text).key_position(parent, key) == expected


def test_key_positions_in_json() -> None:
    source = keyed('{\n  "a": 1,\n  "owner":\n    [1]\n}\n', "f.json")
    assert source.key_position("", "owner") == (3, 3)
    assert source.key_position("", "a") == (2, 3)
    escaped = keyed('{"\\u006fwner": 1}', "f.json")  # written with an escape: not found
    assert escaped.key_position("", "owner") is None


def test_key_positions_of_unknown_pointers_are_none() -> None:
    source = keyed("a: 1\n")
    assert source.key_position("", "b") is None
    assert source.key_position("/nope", "a") is None


def test_frontmatter_key_positions_are_file_lines() -> None:
    document = frontmatter("---\nid: r\nkind: procedure\nextra: 1\n---\nBody\n")
    assert isinstance(document.source, TextSourceMap)
    assert document.source.key_position("", "extra") == (4, 1)
