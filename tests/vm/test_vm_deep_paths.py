"""A deep chain of subgraph calls: state keys hundreds of characters long, and many of them.

The VM finds such keys through an index by length and last segment instead of
building and hashing each one, and hashes the revision member by member; both must
give exactly what the plain reading of the state gives (the oracle).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph import canonical, compile_provider
from agent_graph.compiler import load_provider
from agent_graph.vm import evaluate, plans
from oracle_eval import oracle_evaluate

DEPTH = 60
#: Graph ids long enough that the call path passes the index threshold a few levels down.
NAME = "a-graph-with-a-rather-long-identifier-{}"
#: Node ids may hold "/": a key's last segment is then only part of the node id.
STEP = "do/it"


def _write(path: Path, value: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


def _deep_provider(root: Path) -> Path:
    _write(
        root / "actions/run.json",
        {"schema": "agent-graph.action.v1", "id": "run", "runner": "host", "effect": "write"}
        | {"handler": "x.run"},
    )
    graphs = []
    for level in range(DEPTH):
        nodes: list[dict[str, Any]] = [
            {"id": STEP, "kind": "action", "action": "actions/run.json", "reasonCode": "route.s"}
        ]
        edges = [{"from": STEP, "to": "end"}]
        if level + 1 < DEPTH:
            call = {"id": "call", "kind": "subgraph", "graph": NAME.format(level + 1)}
            nodes.append(call | {"entry": "default"})
            edges = [{"from": STEP, "to": "call"}, {"from": "call", "to": "end"}]
        nodes.append({"id": "end", "kind": "terminal", "terminalOutcome": "completed"})
        path = f"graphs/g{level}.json"
        graph: dict[str, Any] = {"schema": "agent-graph.graph.v1", "id": NAME.format(level)}
        graph |= {"entrypoints": {"default": STEP}, "nodes": nodes, "edges": edges}
        _write(root / path, graph)
        graphs.append(path)
    provider = {"schema": "agent-graph.provider.v1", "id": "deep.p", "version": "1.0.0"}
    _write(root / "provider.yaml", provider | {"graphs": graphs})
    return root / "provider.yaml"


def _frame_prefixes() -> list[str]:
    prefixes, prefix = [], ""
    for level in range(DEPTH):
        prefix += NAME.format(level) + "/"
        prefixes.append(prefix)
        prefix += "call>"
    return prefixes


def _states() -> list[dict[str, str]]:
    prefixes = _frame_prefixes()
    assert len(prefixes[-1]) > 2 * evaluate._LONG_PREFIX  # the index is really used
    all_done = {p + STEP: "completed" for p in prefixes}
    # Keys of the same length and last segment as a real key, one character off.
    lookalikes = {p[:-2] + "X/" + STEP: "failed" for p in prefixes}
    # and keys under the right prefix, as long as the step's and with its last segment
    lookalikes |= {p + "de/" + STEP.rsplit("/", 1)[1]: "failed" for p in prefixes}
    half = {p + STEP: "completed" for p in prefixes[: DEPTH // 2]}
    return [
        {},
        all_done,
        half,
        half | lookalikes,
        dict.fromkeys(lookalikes, "completed"),
        all_done | {prefixes[-1] + "end": "failed", prefixes[DEPTH // 2] + STEP: "failed"},
        {p + STEP: "partial" for p in prefixes[::3]} | {"no/slash/at/the/end/": "completed"},
    ]


@pytest.mark.parametrize("index", range(len(_states())))
def test_deep_states_agree_with_the_oracle(index: int, tmp_path: Path) -> None:
    manifest = _deep_provider(tmp_path)
    program = compile_provider(manifest)
    provider = load_provider(manifest)
    outcomes = _states()[index]
    expected = oracle_evaluate(provider, NAME.format(0), outcomes=outcomes)
    assert program.evaluate(NAME.format(0), state={"outcomes": outcomes}).to_dict() == expected


def test_the_index_and_the_plain_lookup_give_one_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = compile_provider(_deep_provider(tmp_path))
    states = _states()
    monkeypatch.setattr(evaluate, "_LONG_OUTCOMES", 0)  # the revision hashed part by part
    indexed = [program.evaluate(NAME.format(0), state={"outcomes": s}).to_dict() for s in states]
    monkeypatch.setattr(evaluate, "_LONG_PREFIX", 1 << 30)
    monkeypatch.setattr(evaluate, "_LONG_OUTCOMES", 1 << 62)  # and as one text
    plain = [program.evaluate(NAME.format(0), state={"outcomes": s}).to_dict() for s in states]
    assert indexed == plain
    assert len({doc["revision"] for doc in plain}) == len(states)


def test_the_kept_state_keys_stay_within_their_budget_and_change_no_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = _deep_provider(tmp_path)
    states = _states()
    kept = compile_provider(manifest)
    expected = [kept.evaluate(NAME.format(0), state={"outcomes": s}).to_dict() for s in states]
    assert kept._plans.key_characters > 200  # the deep frames' keys were kept
    monkeypatch.setattr(plans, "KEY_CHARACTERS", 200)
    capped = compile_provider(manifest)
    for _ in range(2):  # kept keys, then the same found again
        found = [capped.evaluate(NAME.format(0), state={"outcomes": s}).to_dict() for s in states]
        assert found == expected
    longest = max(len(p) for p in _frame_prefixes()) + len(STEP)
    assert 0 < capped._plans.key_characters < 200 + longest


def _collation_order(keys: list[str]) -> tuple[str, ...]:
    """JavaScript's member order: array indices by value, then the rest by localeCompare."""
    index = sorted(filter(canonical._is_array_index, keys), key=int)
    rest = [k for k in keys if not canonical._is_array_index(k)]
    return (*index, *sorted(rest, key=canonical.locale_sort_key))


_PRINTABLE = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(_PRINTABLE, min_size=65, max_size=120), st.sampled_from(["", "a/", "d0/call>d1/"]))
def test_many_ascii_keys_sort_as_the_collation_keys_sort(keys: list[str], prefix: str) -> None:
    # more than 64 keys take the rank keys; equal keys keep their input order either way
    keys = [prefix + k for k in keys]
    assert canonical._sorted_keys(tuple(keys)) == _collation_order(keys)


def _written_in(order: tuple[str, ...], obj: dict[str, str]) -> str:
    """JSON.stringify of ``obj`` with its members in ``order`` (json.dumps writes these
    keys and values as it does: no lone surrogates among them)."""
    members = (f"{json.dumps(k, ensure_ascii=False)}:{json.dumps(obj[k])}" for k in order)
    return "{" + ",".join(members) + "}"


_KEY_TEXT = st.text(alphabet=st.sampled_from('aAbB/>1_"\\ \té'), max_size=8)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(_KEY_TEXT, min_size=65, max_size=120, unique=True), st.booleans())
def test_a_states_outcomes_are_written_as_the_general_walk_writes_them(
    keys: list[str], again: bool
) -> None:
    # the revision's outcomes path keeps each key's ranks; quotes, backslashes, tabs,
    # digits-only keys and non-ASCII take the general path, with the same text
    outcomes = {key: ("completed" if i % 2 else 'fail"ed') for i, key in enumerate(keys)}
    if again:  # the second time every key's ranks come from the memo
        canonical.canonical_string_parts(outcomes)
    text = "".join(canonical.canonical_string_parts(outcomes))
    assert text == _written_in(_collation_order(keys), outcomes)


def test_many_outcomes_in_every_case_are_written_in_collation_order() -> None:
    # equal primaries (the same letters in other cases) fall to the tertiary ranks; upper
    # case first, so the order the ties end in is not the order they came in
    keys = [f"{a}{b}/s" for a in "AaBb" for b in "CcDd"] + [f"n{i}" for i in range(60)]
    keys += ['x"y', "back\\slash", "12", "ü"]
    # every key; then quotes and backslashes without the digits and the ü (the fast
    # path writes them escaped); then plain keys only
    for state in (
        dict.fromkeys(keys, "completed"),
        dict.fromkeys(keys[:-2], "completed"),
        dict.fromkeys(keys[:-4], "completed"),
    ):
        text = "".join(canonical.canonical_string_parts(state))
        assert text == _written_in(_collation_order(list(state)), state)
        assert canonical.canonical_text(state) == text
        assert "".join(canonical.canonical_string_parts(state)) == text  # from the memo


def test_a_key_outside_printable_ascii_keeps_the_collation_sort() -> None:
    keys = [f"k{i}" for i in range(80)] + ["é", "tab\there", "K5", "k5", "7"]
    assert canonical._sorted_keys(tuple(keys)) == _collation_order(keys)
    assert canonical._ascii_primary("tab\there") is None
    assert canonical._ascii_primary("é") is None


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="aAbB/>1_", min_size=1, max_size=6), min_size=65, max_size=150))
def test_keys_equal_but_for_case_sort_by_their_tertiary_ranks(keys: list[str]) -> None:
    # a small alphabet: many keys share their primary ranks and differ only in case
    assert canonical._sorted_keys(tuple(keys)) == _collation_order(keys)


def test_the_memo_tables_stay_within_their_budget() -> None:
    # a deep state's keys run to thousands of characters: kept by count alone, a host's
    # stream of new deep states would hold them for as long as the process lives
    memos = (
        canonical._COLLATION_KEYS,
        canonical._MEMBER_HEADS,
        canonical._ORDERS,
        canonical._PRIMARIES,
    )
    for memo in memos:
        memo.cache_clear()
    prefix = "d0/call>" * 600
    for state in range(400):  # 400 states x 40 keys of ~4,800 characters: 77 M characters
        keys = [f"{prefix}{state}/d{i}/s" for i in range(40)]
        canonical.canonical_text(dict.fromkeys(keys, "completed"))
        # and a state's outcomes as a revision writes them: more keys than are ordered
        # by the key-set cache, weighed one by one (kept in _PRIMARIES)
        many = [f"{prefix}{state}/m{i}/s" for i in range(80)]
        canonical.canonical_string_parts(dict.fromkeys(many, "completed"))
    for memo in memos:
        assert 0 < memo.size <= memo.budget
        assert memo.size == sum(memo.sizes.values())
        assert memo.sizes.keys() == memo.entries.keys()
    canonical.canonical_text({"a": 1, "b": 2})
    assert canonical._ORDERS.get(("a", "b")) is not None  # short key sets are kept
    huge = tuple(f"{prefix * 60}{i}" for i in range(2))  # over an eighth of the budget
    canonical.canonical_text(dict.fromkeys(huge, 1))
    assert canonical._ORDERS.get(huge) is None
