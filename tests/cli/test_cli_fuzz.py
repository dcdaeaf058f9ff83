"""Random states through `agc evaluate` and `agc route`: one JSON document, never a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_graph.cli import main

MANIFEST = str(Path(__file__).resolve().parents[2] / "examples" / "release-train" / "provider.yaml")
OUTCOMES = ["completed", "partial", "failed", "unverified", "skipped", "pending", "blocked",
            "waiting-user"]  # fmt: skip
KEYS = ["train/prepare", "train/verify-default", "train/verify-default>verify/run-checks",
        "train/ship", "nope", ""]  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
outcome_values: st.SearchStrategy[Any] = (
    st.sampled_from(OUTCOMES)
    | st.text(max_size=6)
    | st.integers()
    | st.builds(dict, outcome=st.sampled_from(OUTCOMES), recordedAt=st.just("2026-11-30T00:00:00Z"))
    | st.just({"recordedAt": "x"})
)


@settings(
    max_examples=int(os.environ.get("AGC_FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    command=st.sampled_from(["evaluate", "route"]),
    graph=st.sampled_from(["train", "verify", "ship", "missing"]),
    entry=st.sampled_from(["default", "smoke", "nope"]),
    facts=json_values,
    outcomes=st.dictionaries(st.sampled_from(KEYS), outcome_values, max_size=4),
    authorities=st.lists(st.text(alphabet="abc.-", min_size=1, max_size=6), max_size=3),
    extra=st.sampled_from([[], ["route:0123456789abcdef0123"], ["--revision", "sha256:00"]]),
)
@pytest.mark.slow
def test_random_states_give_one_document(
    capsys: pytest.CaptureFixture[str],
    command: str,
    graph: str,
    entry: str,
    facts: Any,
    outcomes: dict[str, Any],
    authorities: list[str],
    extra: list[str],
) -> None:
    args = [command, graph, *(extra if command == "route" else []), "-m", MANIFEST]
    args += ["--entry", entry, "--facts", json.dumps(facts), "--outcomes", json.dumps(outcomes)]
    args += ["--format", "json"]
    if authorities:
        args += ["--authority", *authorities]
    code = main(args)
    out, err = capsys.readouterr()
    if code == 0:
        document = json.loads(out)
        assert document["schema"] in ("agent-graph.evaluation.v1", "agent-graph.route.v1")
        assert err == ""
        return
    assert code in (1, 2)
    envelope = json.loads(err)
    assert envelope["schema"] == "agent-graph.error.v1"
    assert envelope["error"]["code"] != "unexpected-error", envelope
