"""The revision's facts text: one pass that checks and writes plain JSON, and the memo of
recent texts. Both must give exactly the general serializer's text and the same errors."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph.canonical import NotPlainJson, canonical_text, plain_json_text
from agent_graph.errors import AgentGraphError
from agent_graph.vm import state as state_module
from agent_graph.vm.state import normalize

KEYS = st.text(max_size=6) | st.sampled_from(["0", "10", "9", "B", "a", "_", "ä", "a_b"])
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
JSON = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=8),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(facts=st.dictionaries(KEYS, JSON, max_size=8))
def test_plain_text_is_the_canonical_text(facts: dict[str, Any]) -> None:
    assert plain_json_text(facts) == canonical_text(facts)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(facts=st.dictionaries(KEYS, JSON, max_size=8))
def test_memoised_text_is_the_canonical_text(facts: dict[str, Any]) -> None:
    first = normalize({"facts": facts}).facts_text
    again = normalize({"facts": facts}).facts_text  # from the memo when it was kept
    assert first == again == canonical_text(facts)


@pytest.mark.parametrize(
    "value",
    [OrderedDict(a=1), {1: "int key"}, {"a": math.nan}, {"a": object()}, {"a": {1}}],
)
def test_anything_but_plain_json_leaves_the_one_pass(value: Any) -> None:
    with pytest.raises(NotPlainJson):
        plain_json_text({"x": value})


def test_values_equal_in_python_but_not_in_json_are_kept_apart() -> None:
    state_module.forget_facts()
    texts = [normalize({"facts": {"a": v}}).facts_text for v in (True, 1, 1.0, 1.5, "1")]
    assert texts == ['{"a":true}', '{"a":1}', '{"a":1}', '{"a":1.5}', '{"a":"1"}']
    # and again, now that each is kept
    assert [normalize({"facts": {"a": v}}).facts_text for v in (True, 1, 1.0, 1.5, "1")] == texts
    nested = [normalize({"facts": {"a": [v, {"b": v}]}}).facts_text for v in (False, 0, None)]
    assert nested == ['{"a":[false,{"b":false}]}', '{"a":[0,{"b":0}]}', '{"a":[null,{"b":null}]}']


def test_invalid_facts_are_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(AgentGraphError) as caught:
            normalize({"facts": {"a": {"b": math.inf}}})
        assert caught.value.code == "facts-invalid"
        assert "facts.a.b" in str(caught.value)
        with pytest.raises(AgentGraphError) as caught:
            normalize({"facts": {"a": {2: "x"}}})
        assert caught.value.code == "facts-invalid"


def test_mappings_that_marshal_cannot_write_are_checked_and_written() -> None:
    facts = {"a": OrderedDict([("z", 1), ("b", [True, None])]), "n": (1, 2)}
    assert normalize({"facts": facts}).facts_text == '{"a":{"b":[true,null],"z":1},"n":[1,2]}'


def test_the_memo_is_bounded() -> None:
    state_module.forget_facts()
    for i in range(state_module._FACTS_TEXT_ENTRIES * 3):
        assert normalize({"facts": {"i": i}}).facts_text == f'{{"i":{i}}}'
    assert len(state_module._FACTS_TEXT) <= state_module._FACTS_TEXT_ENTRIES
    big = {"k": "x" * (state_module._FACTS_TEXT_BYTES + 1)}
    state_module.forget_facts()
    assert normalize({"facts": big}).facts_text == canonical_text(big)
    assert not state_module._FACTS_TEXT  # too large to keep


def test_deep_and_circular_facts_take_the_general_walk() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(300):
        node["d"] = {}
        node = node["d"]
    assert normalize({"facts": deep}).facts_text == canonical_text(deep)
    loop: dict[str, Any] = {"list": []}
    loop["list"].append(loop)
    with pytest.raises(AgentGraphError) as caught:  # once this hung
        normalize({"facts": loop})
    assert caught.value.code == "facts-invalid"
    assert "facts.list[0].list contains itself" in str(caught.value)  # facts is a copy
    shared = [1, {"x": True}]
    assert normalize({"facts": {"a": shared, "b": shared}}).facts_text == (
        '{"a":[1,{"x":true}],"b":[1,{"x":true}]}'
    )
