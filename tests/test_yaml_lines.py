"""The line reader (documents.yaml_lines) against LibYAML's event builder (yaml12).

Whenever the line reader takes a text, the event builder must give the same value (types,
key order and all) and the same position for every value; whenever it gives up, the text
goes to LibYAML unchanged. Checked over every YAML file and frontmatter in the repository,
over generated Provider files, over texts built at random from the line shapes the reader
knows and the ones it must refuse, and case by case.
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph.documents.yaml12 import YamlError, parse_yaml, parse_yaml_events
from agent_graph.documents.yaml_lines import read_block_yaml

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

import shapes  # noqa: E402


def _typed(value: Any) -> Any:
    """``value`` with its types spelled out (1, 1.0 and True compare equal in Python)."""
    if isinstance(value, dict):
        return ("map", [(key, _typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("seq", [_typed(item) for item in value])
    if isinstance(value, float):
        if math.isnan(value):
            return ("float", "nan")
        return ("float", repr(value))
    return (type(value).__name__, value)


def _complete(text: str) -> str:
    return text if not text or text.endswith(("\n", "\r")) else text + "\n"


def _agree(text: str, line_offset: int = 0) -> bool:
    """Whether the line reader took ``text``; if it did, it agrees with the events."""
    complete = _complete(text)
    fast = read_block_yaml(complete, line_offset)
    if fast is None:
        return False
    value, source = parse_yaml_events(text, complete, line_offset)
    assert _typed(fast[0]) == _typed(value), text
    assert list(fast[1].positions.items()) == list(source.positions.items()), text
    return True


def _corpus() -> list[Path]:
    found = [
        path
        for pattern in ("*.yaml", "*.yml")
        for path in REPOSITORY.rglob(pattern)
        if ".git" not in path.parts
    ]
    return sorted(found)


def test_every_yaml_file_in_the_repository() -> None:
    taken = 0
    files = _corpus()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
        try:
            parse_yaml_events(text, _complete(text), 0)
        except YamlError:
            assert read_block_yaml(_complete(text)) is None, path  # never takes a bad text
            continue
        taken += _agree(text)
    assert len(files) > 300
    assert taken > len(files) // 2, f"the line reader took only {taken} of {len(files)} files"


def test_every_markdown_frontmatter_in_the_repository() -> None:
    taken = seen = 0
    for path in sorted(REPOSITORY.rglob("*.md")):
        if ".git" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.startswith("---\n") or "\n---" not in text[3:]:
            continue
        header = text[4 : text.index("\n---", 3) + 1]
        try:
            parse_yaml_events(header, _complete(header), 1)
        except YamlError:
            continue
        seen += 1
        taken += _agree(header, line_offset=1)
    assert seen > 20
    assert taken > seen // 2


@pytest.mark.parametrize("make", [shapes.chain, shapes.wide, shapes.nested_deep])
def test_generated_providers(tmp_path: Path, make: Any) -> None:
    make(tmp_path, 60)
    texts = [path.read_text() for path in sorted(tmp_path.rglob("*.yaml"))]
    assert texts
    assert all(_agree(text) for text in texts)


TAKEN = {
    "nested": "a:\n  b:\n    c: 1\n  d: x\ne: [1, 2]\n",
    "indentless sequence": "nodes:\n- id: a\n  kind: action\n- id: b\nnext: 1\n",
    "sequence under a key in an item": "- id: a\n  by:\n  - p: 1\n  - p: 2\n  k: v\n- id: b\n",
    "wide dash": "-   a: 1\n    b: 2\n-    x\n",
    "flow": "a: [x, 'y', \"z\", 1, true, ~]\nb: { from: n0, to: 'n1' }\nc: []\nd: {}\n",
    "trailing commas": "a: [x, y, ]\nb: {p: 1, }\n",
    "comments": "# head\na: 1 # one\n  # indented comment\nb: 'x' # two\nc: [1] # three\n\n",
    "document start": "---\na: 1\n",
    "scalars": "a: -1\nb: 0x1F\nc: .5\nd: 1e3\ne: yes\nf: null\ng: True\nh: -.inf\ni: a#b\n",
    "keys typed": "1: a\ntrue: b\nnull: c\n0x10: d\nfalse: e\n",
    "quotes": "a: 'it''s'\nb: \"x # y\"\nc: ''\nd: \"\"\n",
    "colons": "a: http://x/y\nb: a:b\n- c\n"[:-4] + "c: x :y\n",
    "non-ascii": "名前: 値\nk: 日本語 テキスト\né: [ü, 'ß']\n",
    "root sequence": "- 1\n- [a]\n- {b: c}\n",
    "indented root": "  a: 1\n  b:\n    - x\n",
    "spaces everywhere": "a:    1   \nb:\n   -    x  \n",
}


@pytest.mark.parametrize("text", TAKEN.values(), ids=TAKEN.keys())
def test_shapes_the_line_reader_takes(text: str) -> None:
    assert _agree(text)


GIVEN_UP = {
    "tab": "a:\t1\n",
    "carriage return": "a: 1\r\nb: 2\r\n",
    "anchor and alias": "a: &x 1\nb: *x\n",
    "tag": "a: !!str 1\n",
    "block scalar": "a: |\n  x\n",
    "folded scalar": "a: >\n  x\n",
    "multi-line plain": "a: one\n  two\n",
    "empty value": "a:\nb: 1\n",
    "empty item": "- \n- x\n",
    "empty at the end": "a: 1\nb:\n",
    "duplicate": "a: 1\na: 2\n",
    "duplicate after typing": "1: a\n'1': b\n",
    "duplicate in flow": "a: {x: 1, x: 2}\n",
    "quoted key": "'a': 1\n",
    "complex key": "? a\n: 1\n",
    "escape": 'a: "x\\ty"\n',
    "multi-line flow": "a: [x,\n  y]\n",
    "nested flow": "a: [[x]]\n",
    "flow mapping of a collection": "a: {x: [1]}\n",
    "second mapping on a line": "a: b: c\n",
    "nested sequence on a line": "- - x\n",
    "directive": "%YAML 1.2\n---\na: 1\n",
    "second document": "a: 1\n---\nb: 2\n",
    "document end": "a: 1\n...\n",
    "scalar document": "just text\n",
    "empty document": "# nothing\n",
    "bad indentation": "a:\n    b: 1\n  c: 2\n",
    "dedent below the root": "  a: 1\nb: 2\n",
    "line separator": "a: x\u2028y\n",
    "byte order mark inside": "a: x\ufeffy\n",
    "control character": "a: x\x07y\n",
    "reserved indicator": "a: @x\n",
    "long key": "k" * 1100 + ": 1\n",
}


@pytest.mark.parametrize("text", GIVEN_UP.values(), ids=GIVEN_UP.keys())
def test_shapes_left_to_libyaml(text: str) -> None:
    assert read_block_yaml(_complete(text)) is None
    # and parse_yaml reads them as LibYAML's events do, or refuses them in the same words
    complete = _complete(text)
    try:
        expected: Any = _typed(parse_yaml_events(text, complete, 0)[0])
    except YamlError as error:
        expected = ("error", str(error))
    try:
        got: Any = _typed(parse_yaml(text)[0])
    except YamlError as error:
        got = ("error", str(error))
    assert got == expected


def test_deep_nesting_is_left_to_libyaml() -> None:
    deep = "".join(" " * depth + f"k{depth}:\n" for depth in range(240)) + " " * 240 + "v: 1\n"
    assert read_block_yaml(deep) is None
    with pytest.raises(YamlError, match="nested more than"):
        parse_yaml(deep)


# -- random texts from the line shapes ---------------------------------------------------

_KEYS = ["a", "b", "id", "kind", "n0", "1", "true", "null", "~", "x y", "é", "0x1", "-k", "k:"]
_KEYS += ["a]", "a,b", "x{y", "it's", "<<", "a'", '"q"', "'q'", "k #c", "[k]", "?k", "=", ".5"]
_VALUES = [
    "", "v", "1", "-2", "0.5", "1e3", ".inf", "true", "False", "null", "~", "n0", "yes",
    "'q'", "'it''s'", '"d"', '"a # b"', "x # c", "# c", "a:b", "a: b", "x:", "[a, b]",
    "[a, 'b', 1]", "[]", "[a,]", "{p: 1}", "{ from: n0, to: n1 }", "{}", "{p: 1,}",
    "&a x", "*a", "!t x", "|", ">", "- x", "@x", "`x`", "%x", "[a", "{p: [1]}", "a  ", " ",
    "日本", "-x", "?x", ":x", "'x' y", '"x"y', "x\ty",
    "a, b", "x]", "x}", "[a] b", "{a} b", "a,", "'a'#c", "[a]#c", "[a b, c]", "['a', \"b\"]",
    "[-1]", "[a: b]", "{a: b: c}", "{a}", "{a: }", "{a: 'x', b: \"y\"}", "{'a': 1}", "0o7",
]  # fmt: skip
_line = st.tuples(
    st.integers(min_value=0, max_value=6),  # indentation
    st.sampled_from(["", "- ", "-  ", "-"]),
    st.sampled_from(_KEYS + [""] * 4),
    st.sampled_from(_VALUES),
    st.sampled_from(["", "", "", " # c"]),
)


def _render(parts: tuple[int, str, str, str, str]) -> str:
    indent, dash, key, value, comment = parts
    body = f"{key}: {value}" if key else value
    return " " * indent + dash + body + (comment if body else "")


_texts = st.lists(_line, min_size=1, max_size=14).map(
    lambda lines: "".join(_render(line) + "\n" for line in lines)
)


@settings(max_examples=1500, deadline=None)
@given(_texts)
def test_random_texts_agree_or_are_left_to_libyaml(text: str) -> None:
    complete = _complete(text)
    fast = read_block_yaml(complete)
    if fast is None:
        return
    value, source = parse_yaml_events(text, complete, 0)  # a taken text is valid YAML
    assert _typed(fast[0]) == _typed(value)
    assert list(fast[1].positions.items()) == list(source.positions.items())


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab-: #'\"[]{},\n\t1~&!|>.")), max_size=40))
def test_random_characters_agree_or_are_left_to_libyaml(text: str) -> None:
    complete = _complete(text)
    fast = read_block_yaml(complete)
    if fast is None:
        return
    value, source = parse_yaml_events(text, complete, 0)
    assert _typed(fast[0]) == _typed(value)
    assert list(fast[1].positions.items()) == list(source.positions.items())


def test_seeded_random_texts_reach_the_line_reader() -> None:
    # the same shapes from a fixed seed: the reader takes a fair share of them (so the
    # property above is not vacuous) and agrees on every one it takes
    chooser = random.Random(20261201)
    taken = 0
    for _ in range(3000):
        lines = [
            (
                chooser.choice([0, 0, 2, 2, 4]),
                chooser.choice(["", "", "- "]),
                chooser.choice(_KEYS[:6]),
                chooser.choice(_VALUES[:30]),
                chooser.choice(["", " # c"]),
            )
            for _ in range(chooser.randint(1, 8))
        ]
        taken += _agree("".join(_render(line) + "\n" for line in lines))
    assert taken > 150, taken
