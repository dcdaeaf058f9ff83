"""YAML 1.2 core loader: values as npm ``yaml`` gives them, positions, and limits."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph.documents import yaml12
from agent_graph.documents.yaml12 import (
    ALIAS_EXPANSION_LIMIT,
    MAX_DEPTH,
    YamlError,
    parse_yaml,
    to_js_number,
)


def value_of(text: str) -> Any:
    return parse_yaml(text)[0]


def fails(text: str) -> YamlError:
    with pytest.raises(YamlError) as caught:
        parse_yaml(text)
    return caught.value


# ---------------------------------------------------------------------------
# Measured against npm yaml, row by row: `v: <input>` -> what npm `yaml` returns.

TABLE: list[tuple[str, Any]] = [
    ("yes", "yes"),
    ("no", "no"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("[Yes, TRUE, True]", ["Yes", True, True]),
    ("[false, False, FALSE, fAlse]", [False, False, False, "fAlse"]),
    ("010", 10),
    ("0o10", 8),
    ("0o17", 15),
    ("0x1F", 31),
    ("0b101", "0b101"),
    ("1_000", "1_000"),
    ("+12", 12),
    ("-12", -12),
    ("1:20", "1:20"),
    ("2024-01-01", "2024-01-01"),
    ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"),
    ("1e3", 1000),
    ("1.0e3", 1000),
    ("1.0", 1),
    (".5", 0.5),
    ("+.5", 0.5),
    ("1.", 1),
    ("1.5e-7", 1.5e-7),
    ("~", None),
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("nULL", "nULL"),
    ("", None),
    ("=", "="),
    ("!!str 123", "123"),
    ("'123'", "123"),
    ('"true"', "true"),
    ("-0", -0.0),  # npm yaml keeps negative zero (Object.is(v, -0) is true)
    ("-0.0", -0.0),
    ("9007199254740992", 9007199254740992),
    ("12345678901234567890", 12345678901234567890.0),
    ("0o", "0o"),
    ("0x", "0x"),
    ("0o8", "0o8"),
    ("+0x1F", "+0x1F"),
    ("-0o17", "-0o17"),
    ("1__0", "1__0"),
    ("TRue", "TRue"),
]


@pytest.mark.parametrize(("source", "expected"), TABLE)
def test_core_schema_scalar(source: str, expected: Any) -> None:
    value = value_of(f"v: {source}")["v"]
    assert value == expected
    assert type(value) is type(expected)
    if isinstance(expected, float) and expected == 0:
        assert math.copysign(1, value) == math.copysign(1, expected)


def test_integral_floats_are_ints_and_negative_zero_keeps_its_sign() -> None:
    value = value_of("[1.0, -0.0, 1e3, 2.5, 0.0]")
    assert value == [1, 0, 1000, 2.5, 0]
    assert [type(v) for v in value] == [int, float, int, float, int]
    assert math.copysign(1, value[1]) == -1
    assert math.copysign(1, value[4]) == 1


def test_ints_beyond_2_53_become_doubles() -> None:
    assert value_of("9007199254740993") == 9007199254740992.0
    assert isinstance(value_of("9007199254740993"), float)
    assert value_of("-9007199254740992") == -(2**53)
    assert value_of("1" * 5000) == math.inf  # also beats int()'s digit limit
    assert value_of("0x" + "f" * 300) == math.inf


@pytest.mark.parametrize(
    ("source", "expected"),
    [(".inf", math.inf), ("-.Inf", -math.inf), ("+.INF", math.inf), ("1e400", math.inf)],
)
def test_infinities(source: str, expected: float) -> None:
    assert value_of(source) == expected


def test_nan() -> None:
    assert all(math.isnan(value_of(s)) for s in (".nan", ".NaN", ".NAN"))
    assert value_of(".Nan") == ".Nan"


def test_to_js_number() -> None:
    assert to_js_number(3.0) == 3
    assert isinstance(to_js_number(3.0), int)
    assert to_js_number(2**53 + 1) == float(2**53)
    assert to_js_number(10**400) == math.inf
    assert to_js_number(-(10**400)) == -math.inf
    assert to_js_number(1e300) == 1e300


# ---------------------------------------------------------------------------
# Keys


def test_scalar_keys_take_their_js_string_form() -> None:
    text = "1: a\n~: b\ntrue: c\n1.5: d\n1e21: e\n.inf: f\n.nan: g\n0x10: h\n1e-7: i\n"
    assert value_of(text) == {
        "1": "a",
        "": "b",
        "true": "c",
        "1.5": "d",
        "1e+21": "e",
        "Infinity": "f",
        "NaN": "g",
        "16": "h",
        "1e-7": "i",
    }


def test_on_is_a_string_key() -> None:
    assert value_of("on: 1\nyes: 2") == {"on": 1, "yes": 2}


def test_duplicate_key_is_an_error_with_position() -> None:
    error = fails("a: 1\nb: 2\na: 3\n")
    assert "duplicate mapping key 'a'" in error.message
    assert (error.line, error.column) == (3, 1)


def test_keys_equal_after_stringification_are_duplicates() -> None:
    assert "duplicate" in fails("1: a\n'1': b").message
    assert "duplicate" in fails("{null: a, '': b}").message


def test_duplicate_in_flow_mapping() -> None:
    error = fails("x: {a: 1, a: 2}")
    assert (error.line, error.column) == (1, 11)


def test_merge_key_is_an_ordinary_key() -> None:
    assert value_of("b: &b {x: 1}\n<<: *b\ny: 2") == {"b": {"x": 1}, "<<": {"x": 1}, "y": 2}


def test_collection_keys_are_rejected() -> None:
    assert "must be a scalar" in fails("? [a, b]\n: 1").message
    assert "must be a scalar" in fails("[a]: 1").message
    assert "must be a scalar" in fails("x: &c {a: 1}\n*c : 2").message


# ---------------------------------------------------------------------------
# Anchors and aliases


def test_aliases_share_the_anchored_value() -> None:
    value = value_of("a: &x [1, 2]\nb: *x\nc: &s text\nd: *s")
    assert value == {"a": [1, 2], "b": [1, 2], "c": "text", "d": "text"}
    assert value["a"] is value["b"]


def test_alias_as_key() -> None:
    assert value_of("a: &k key\n*k : 3") == {"a": "key", "key": 3}
    assert value_of("&k a: 1\nb: *k") == {"a": 1, "b": "a"}


def test_undefined_alias() -> None:
    error = fails("a: 1\nb: *nope")
    assert "*nope" in error.message
    assert (error.line, error.column) == (2, 4)


def test_recursive_alias_is_rejected() -> None:
    assert "contains it" in fails("&a [1, *a]").message
    assert "contains it" in fails("&m {k: *m}").message


def test_billion_laughs_is_rejected() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in "bcdefghi":
        previous = chr(ord(level) - 1)
        lines.append(f"{level}: &{level} [{', '.join([f'*{previous}'] * 9)}]")
    error = fails("\n".join(lines))
    assert "aliases expand to more than" in error.message
    assert error.line is not None
    assert error.line <= 8


def test_many_small_aliases_within_the_budget_load() -> None:
    count = ALIAS_EXPANSION_LIMIT // 2
    value = value_of("a: &s x\nb: [" + ", ".join(["*s"] * count) + "]")
    assert len(value["b"]) == count


def test_alias_budget_counts_expanded_nodes() -> None:
    # A 10-element list (11 nodes) aliased LIMIT/11 + 1 times crosses the limit.
    uses = ALIAS_EXPANSION_LIMIT // 11 + 1
    text = "a: &l [" + ", ".join("0" * 10) + "]\nb: [" + ", ".join(["*l"] * uses) + "]"
    assert "aliases expand" in fails(text).message
    ok = "a: &l [" + ", ".join("0" * 10) + "]\nb: [" + ", ".join(["*l"] * (uses - 1)) + "]"
    assert len(value_of(ok)["b"]) == uses - 1


# ---------------------------------------------------------------------------
# Documents, directives, tags


@pytest.mark.parametrize("text", ["", "   \n", "# only a comment\n", "---", "---\n...\n"])
def test_empty_document_is_none(text: str) -> None:
    value, source = parse_yaml(text, line_offset=1)
    assert value is None
    assert list(source.positions) == [""]


def test_empty_stream_is_placed_at_its_start() -> None:
    assert parse_yaml("# nothing\n", line_offset=1)[1].positions == {"": (2, 1)}


def test_explicit_document_markers() -> None:
    assert value_of("---\na: 1\n...\n") == {"a": 1}


@pytest.mark.parametrize("text", ["a: 1\n---\nb: 2", "---\n...\n---\n", "x\n---\n"])
def test_second_document_is_an_error(text: str) -> None:
    assert "only one YAML document" in fails(text).message


@pytest.mark.parametrize(
    "text", ["%YAML 1.2\n---\na: 1", "%YAML 1.1\n---\nyes", "%TAG !e! tag:e.com,2000:\n---\n!e!x a"]
)
def test_directives_are_rejected(text: str) -> None:
    assert "directives are not supported" in fails(text).message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("!!str 1", "1"),
        ("!!str", ""),
        ("!!int 0x1F", 31),
        ("!!int '7'", 7),
        ("!!float 1", 1),
        ("!!float 1.5", 1.5),
        ("!!bool true", True),
        ("!!null ''", None),
        ("!!null ~", None),
        ("!<tag:yaml.org,2002:str> 12", "12"),
        ("!!map {a: 1}", {"a": 1}),
        ("!!seq [1]", [1]),
    ],
)
def test_core_tags(text: str, expected: Any) -> None:
    assert value_of(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("!foo bar", "unsupported tag !foo"),
        ("! 12", "unsupported tag !"),
        ("!!binary aGk=", "unsupported tag !!binary"),
        ("!!set {a, b}", "unsupported tag !!set on a mapping"),
        ("!!timestamp 2024-01-01", "unsupported tag !!timestamp"),
        ("!!python/object:os.system x", "unsupported tag !!python/object:os.system"),
        ("!!map [1]", "unsupported tag !!map on a sequence"),
        ("!!seq {a: 1}", "unsupported tag !!seq on a mapping"),
        ("!!int 1.5", "'1.5' is not a valid !!int"),
        ("!!bool yes", "'yes' is not a valid !!bool"),
        ("!!null x", "'x' is not a valid !!null"),
        ("!!float abc", "'abc' is not a valid !!float"),
    ],
)
def test_other_tags_are_errors(text: str, fragment: str) -> None:
    assert fragment in fails(text).message


def test_tabs_as_npm_yaml_accepts_them() -> None:
    assert value_of("a:\t1") == {"a": 1}
    assert value_of("[1,\t2]") == [1, 2]
    error = fails("a:\n\tb: 1")
    assert error.line == 2


def test_block_scalars_and_quoting() -> None:
    text = "a: |\n  x\n  y\nb: >-\n  x\n  y\nc: 'it''s'\nd: \"\\u00e9\\t\""
    assert value_of(text) == {"a": "x\ny\n", "b": "x y", "c": "it's", "d": "é\t"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a: |\n  x", "x\n"), ("a: >\n  x\n  y", "x y\n"), ("a: |-\n  x", "x"), ("a: |+\n  x", "x\n")],
)
def test_block_scalar_at_end_of_input_ends_with_a_line_break(text: str, expected: str) -> None:
    # npm yaml's behaviour (LibYAML alone would drop the line break).
    assert value_of(text) == {"a": expected}


def test_byte_order_mark_is_ignored() -> None:
    value, source = parse_yaml("\ufeffa: 1")
    assert value == {"a": 1}
    assert source.positions["/a"] == (1, 4)


# ---------------------------------------------------------------------------
# Positions


def test_positions_of_block_values() -> None:
    text = "schema: x\nnodes:\n  - id: a\n    kind: action\n  - id: b\nempty:\n"
    value, source = parse_yaml(text)
    assert value["empty"] is None
    assert source.positions[""] == (1, 1)
    assert source.positions["/schema"] == (1, 9)
    assert source.positions["/nodes"] == (3, 3)
    assert source.positions["/nodes/0"] == (3, 5)
    assert source.positions["/nodes/0/id"] == (3, 9)
    assert source.positions["/nodes/0/kind"] == (4, 11)
    assert source.positions["/nodes/1/id"] == (5, 9)
    assert source.positions["/empty"][0] == 6


def test_positions_inside_flow_collections() -> None:
    _, source = parse_yaml("edges: [{from: a, to: b}, {from: b, to: [c, d]}]")
    assert source.positions["/edges"] == (1, 8)
    assert source.positions["/edges/0"] == (1, 9)
    assert source.positions["/edges/0/to"] == (1, 23)
    assert source.positions["/edges/1/from"] == (1, 34)
    assert source.positions["/edges/1/to/1"] == (1, 45)


def test_positions_escape_pointer_tokens_and_use_characters() -> None:
    _, source = parse_yaml("'a/b': 1\n'~x': 2\né: [ü, v]")
    assert source.positions["/a~1b"] == (1, 8)
    assert source.positions["/~0x"] == (2, 7)
    assert source.positions["/é/1"] == (3, 8)


def test_alias_positions_point_at_the_alias() -> None:
    _, source = parse_yaml("a: &x {k: 1}\nb: *x")
    assert source.positions["/b"] == (2, 4)
    assert "/b/k" not in source.positions
    assert source.locate("/b/k") == (2, 4)


def test_line_offset_shifts_values_and_errors() -> None:
    _, source = parse_yaml("id: x\nkind: y", line_offset=1)
    assert source.positions["/id"] == (2, 5)
    assert source.positions["/kind"] == (3, 7)
    with pytest.raises(YamlError) as caught:
        parse_yaml("a: 1\na: 2", line_offset=10)
    assert (caught.value.line, caught.value.column) == (12, 1)


def test_every_value_has_a_position() -> None:
    value, source = parse_yaml("a: [1, {b: [2, 3]}, []]\nc: {}\n")

    def pointers(node: Any, here: str) -> list[str]:
        out = [here]
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else []
        )
        for key, child in items:
            out += pointers(child, f"{here}/{key}")
        return out

    assert sorted(pointers(value, "")) == sorted(source.positions)


# ---------------------------------------------------------------------------
# Errors and limits


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("a: [1, 2\nb: 3", 2, 2),
        ("'unterminated", 1, 14),
        ("a:\n  - b\n  -c", 3, 5),
        ("a: b: c", 1, 5),
        ("key: \x01", 1, 6),
        ("é: \x01", 1, 4),
        ("a: \ud800", 1, 4),
    ],
)
def test_syntax_errors_have_one_based_positions(text: str, line: int, column: int) -> None:
    error = fails(text)
    assert (error.line, error.column) == (line, column)
    assert str(error).endswith(f"at line {line}, column {column}")


def test_nesting_at_the_limit_loads() -> None:
    value = value_of("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == []


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deep_flow_nesting_is_refused(depth: int) -> None:
    error = fails("[" * depth + "]" * depth)
    if depth == MAX_DEPTH + 1:
        assert f"more than {MAX_DEPTH} levels" in error.message
        assert (error.line, error.column) == (1, MAX_DEPTH + 1)
    else:
        # LibYAML 0.2.6 (PyYAML 6.0.4 wheels) has its own scanner limit, which may fire
        # before ours when the scanner runs ahead of the parser; either is a clean refusal.
        assert "more than" in error.message or "maximum nesting depth" in error.message
        assert error.line == 1


def test_deep_block_nesting_is_refused() -> None:
    text = "".join(" " * i + "a:\n" for i in range(MAX_DEPTH + 5))
    assert f"more than {MAX_DEPTH} levels" in fails(text).message
    assert "levels" in fails("- " * 100_000 + "x").message


def test_libyaml_is_used() -> None:
    # The pure-Python parser rejects `a:<TAB>1`, which npm yaml accepts.
    assert yaml.__with_libyaml__
    assert yaml12.LIBYAML


@pytest.mark.parametrize(("source", "expected"), [row for row in TABLE if "\t" not in row[0]][:20])
def test_pure_python_fallback_agrees(
    monkeypatch: pytest.MonkeyPatch, source: str, expected: Any
) -> None:
    monkeypatch.setattr(yaml12, "_EVENT_SOURCE", (yaml.SafeLoader, False))
    assert value_of(f"v: {source}") == {"v": expected}


def test_pure_python_fallback_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml12, "_EVENT_SOURCE", (yaml.SafeLoader, False))
    assert "duplicate" in fails("a: 1\na: 2").message
    assert "levels" in fails("[" * 100_000).message
    assert fails("é: \x01").column == 4
    assert parse_yaml("a: [1, {b: c}]")[1].positions["/a/1/b"] == (1, 12)


_YAML_CHARACTERS = [*"ab1 :-[]{},&*!|>'\"#?%@`~\t\n.eE+0x\\", "\x00", "é", "\ud800"]
_YAMLISH = st.text(alphabet=st.sampled_from(_YAML_CHARACTERS), max_size=60)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=80), _YAMLISH))
def test_random_text_raises_only_yaml_error(text: str) -> None:
    outcome: YamlError | None = None
    try:
        _, source = parse_yaml(text)
    except YamlError as error:
        outcome = error
    if outcome is None:
        assert "" in source.positions
    else:
        assert (outcome.line or 1) >= 1
        assert (outcome.column or 1) >= 1


# ---------------------------------------------------------------------------
# Differential check against npm `yaml` (only with the reference checked out)

_REF_CLI = os.environ.get("AGC_REFERENCE_CLI")
_NODE_SCRIPT = """
const { createRequire } = require("node:module");
const YAML = createRequire(process.argv[1])("yaml");
process.removeAllListeners("warning");
const cases = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
const out = cases.map((c) => {
  try {
    const v = YAML.parse(c);
    return { ok: JSON.stringify(v === undefined ? null : v, (k, x) =>
      typeof x === "number" && !Number.isFinite(x) ? String(x) : x) };
  } catch (e) { return { err: String(e.message).split("\\n")[0] }; }
});
process.stdout.write(JSON.stringify(out));
"""

_DIFF_CASES = [
    "v: yes",
    "v: 010",
    "v: 0o17",
    "v: 1e3",
    "v: 2024-01-01",
    "v: 0b101",
    "v: .inf",
    "a: 1\na: 2",
    "a: 1\n---\nb: 2",
    "b: &b {x: 1}\n<<: *b",
    "true: 1\nnull: 2\n1.5: 3",
    "a:\t1",
    "\ufeffa: 1",
    "- &a x\n- *a",
    "{a: [1, {b: c}], d: ~}",
    "a: |\n  x\n",
    "v: 12345678901234567890",
    "v: -0.0",
    "v: 1.",
    "'x': \"y\"",
    "*nope",
    "[1, 2",
]


def _normalise(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    return value


@pytest.mark.reference
@pytest.mark.skipif(not _REF_CLI or not shutil.which("node"), reason="AGC_REFERENCE_CLI unset")
def test_agrees_with_npm_yaml() -> None:
    assert _REF_CLI is not None
    run = subprocess.run(
        ["node", "-e", _NODE_SCRIPT, str(Path(_REF_CLI).resolve())],
        input=json.dumps(_DIFF_CASES),
        capture_output=True,
        text=True,
        check=True,
    )
    for case, theirs in zip(_DIFF_CASES, json.loads(run.stdout), strict=True):
        try:
            ours: dict[str, Any] = {"ok": _normalise(parse_yaml(case)[0])}
        except YamlError:
            ours = {"err": True}
        if "err" in theirs:
            assert "err" in ours, case
        else:
            expected = json.loads(theirs["ok"], parse_int=lambda t: to_js_number(int(t)))
            assert ours.get("ok") == expected, case
