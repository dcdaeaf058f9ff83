"""The YAML loader's fast paths give what its slow paths give.

* A plain scalar whose first character cannot begin null, a bool or a number is taken
  as the string it is, without the core-schema regexes: differentially against
  ``_resolve_plain`` over random scalars.
* Positions are recorded while parsing without spelling JSON pointers, and the pointer
  map is built on first use: it must hold exactly one entry per value, in document
  order, each where that value starts (checked against LibYAML's own node marks).
"""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph.documents.sourcemap import SourceMap, escape_token
from agent_graph.documents.yaml12 import parse_yaml
from agent_graph.documents.yaml_values import PLAIN_SPECIAL as _PLAIN_SPECIAL
from agent_graph.documents.yaml_values import resolve_plain as _resolve_plain

_WORDS = [
    "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
    ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "0o17", "0x1F", "-0", "1e3", "1.5", ".5",
    "n0", "no", "yes", "on", "off", "y", "Nope", "tru", "falsey", "2024-01-01",
]  # fmt: skip

_scalars = st.one_of(
    st.sampled_from(_WORDS),
    st.text(min_size=1, max_size=12),
    st.text(alphabet="~nNtTfFalsuer.-+0123456789eExXoOiIAaN_", min_size=1, max_size=8),
)


@settings(max_examples=600, deadline=None)
@given(_scalars)
def test_fast_path_agrees_with_core_schema(text: str) -> None:
    slow = _resolve_plain(text)
    if text[0] not in _PLAIN_SPECIAL:
        assert slow == text
        assert type(slow) is str


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcnNtTfFyY~0123456789.-+xo_ :", min_size=1, max_size=10))
def test_loaded_plain_scalars_match_the_resolver(text: str) -> None:
    """End to end: a value written plain loads as ``_resolve_plain`` says."""
    document = f"k: {text}\n"
    try:
        expected_events = list(yaml.parse(document, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        return
    scalars = [e for e in expected_events if isinstance(e, yaml.ScalarEvent)]
    if len(scalars) != 2 or scalars[1].style is not None or scalars[1].tag is not None:
        return
    value, _ = parse_yaml(document)
    expected = _resolve_plain(scalars[1].value)
    got = value["k"]
    if isinstance(expected, float) and expected != expected:
        assert got != got
    else:
        assert got == expected
        assert type(got) is type(expected)


# -- positions ----------------------------------------------------------------------------

_keys = st.text(alphabet="ab~/é 1", min_size=1, max_size=4)
# Text without digits and without YAML's line breaks: the documents come from PyYAML's
# emitter, which resolves scalars by YAML 1.1 (it writes ``0E0`` plain, a float to the 1.2
# core schema) and writes NEL, LS and PS raw into quoted scalars (where YAML folds them to
# a space); such values would not come back from their own dump. What is tested here is
# positions; the scalar rules have their own tests above.
_text = st.text(alphabet="abcé ~/_-:#'\"\\\t", max_size=5)
_leaves = st.one_of(st.none(), st.booleans(), st.integers(-5, 500), _text)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=25,
)


def _node_marks(node: yaml.Node, pointer: str, out: dict[str, tuple[int, int]]) -> None:
    out[pointer] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for key, child in node.value:
            _node_marks(child, f"{pointer}/{escape_token(key.value)}", out)
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            _node_marks(child, f"{pointer}/{index}", out)


@settings(max_examples=300, deadline=None)
@given(_values, st.booleans())
def test_positions_are_every_value_where_it_starts(value: Any, flow: bool) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=True)
    loaded, source = parse_yaml(text)
    expected: dict[str, tuple[int, int]] = {}
    node = yaml.compose(text, Loader=yaml.CSafeLoader)
    assert node is not None
    _node_marks(node, "", expected)
    assert loaded == value
    assert list(source.positions.items()) == list(expected.items())


def test_positions_are_built_once_and_can_be_replaced() -> None:
    _, source = parse_yaml("a: [1, {b: 2}]\n")
    first = source.positions
    assert source.positions is first
    assert source.locate("/a/1/b/c") == (1, 12)
    source.positions = {"": (3, 3)}
    assert source.locate("/a") == (3, 3)
    assert SourceMap({"": (1, 1)}) == SourceMap(pending=lambda: {"": (1, 1)})
