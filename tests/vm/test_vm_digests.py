"""The VM's hand-assembled digests equal ``digest_value`` of the objects they stand for.

``route_id`` and ``compute_revision`` write their canonical text in a fixed member
order for speed; these tests hold that order (and the escaping of every member) to the
general canonical serializer, on ordinary and on awkward values.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph.canonical import canonical_strings, canonical_text, digest_value
from agent_graph.vm.evaluate import compute_revision, route_id
from agent_graph.vm.state import normalize

TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12) | st.sampled_from(
    ["", "a/b", "ä", "\ud800", "😀", 'q"\\', "B", "10", "\u0301e"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(revision=TEXT, graph=TEXT, node=TEXT, path=st.lists(TEXT, max_size=4))
def test_route_id_is_the_digest_of_its_object(
    revision: str, graph: str, node: str, path: list[str]
) -> None:
    expected = digest_value(
        {"revision": revision, "graph": graph, "node": node, "callPath": list(path)}
    )
    assert route_id(revision, graph, node, tuple(path)) == "route:" + expected[7:27]


class _Graph:
    def __init__(self, digest: str) -> None:
        self.digest = digest


@settings(max_examples=300, deadline=None)
@given(
    facts=st.dictionaries(TEXT, JSON, max_size=4),
    outcomes=st.dictionaries(TEXT, st.sampled_from(["completed", "failed", "pending"]), max_size=4),
    authorities=st.lists(TEXT, max_size=3),
    graph_id=TEXT,
    entry=TEXT,
    provider=TEXT,
)
def test_revision_is_the_digest_of_its_object(
    facts: dict[str, Any],
    outcomes: dict[str, str],
    authorities: list[str],
    graph_id: str,
    entry: str,
    provider: str,
) -> None:
    state = normalize({"facts": facts, "outcomes": outcomes, "authorities": authorities})
    expected = digest_value(
        {
            "provider": provider,
            "graphId": graph_id,
            "entry": entry,
            "facts": state.facts,
            "outcomes": state.outcomes,
            "authorities": list(state.authorities),
        }
    )
    graph: Any = _Graph(provider)
    assert compute_revision(None, graph, graph_id, entry, state) == expected  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    strings=st.dictionaries(TEXT, TEXT, max_size=6)
    | st.dictionaries(TEXT, TEXT, min_size=60, max_size=90)  # past the order cache
)
@pytest.mark.slow
def test_string_objects_have_the_general_canonical_text(strings: dict[str, str]) -> None:
    # the revision writes a state's outcomes with this shortcut
    assert canonical_strings(strings) == canonical_text(strings)
