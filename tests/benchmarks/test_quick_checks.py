"""The quick benchmark's checks (``benchmarks/quick.py``) fail on real regressions only.

* The two sides of a ratio take turns and each keeps its least CPU time.
* A quadratic step injected into the VM's per-node work fails the evaluate growth
  check, measured by the same function CI runs (at 100 -> 1,000 nodes, so it is quick),
  while the VM as it is passes it.
* ``run_checks`` runs a registered check and prints its figures with the load average;
  a check over its limit is measured once more and keeps its lower ratio.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import quick

from agent_graph.vm import evaluate


def test_sides_take_turns_and_keep_their_least_time() -> None:
    calls: list[str] = []
    times = {"a": iter([3.0, 1.0, 2.0]), "b": iter([5.0, 6.0, 4.0])}

    def side(name: str) -> quick.Side:
        def once() -> float:
            calls.append(name)
            return next(times[name])

        return once

    assert quick.interleaved([side("a"), side("b")], 3) == [1.0, 4.0]
    assert calls == ["a", "b", "a", "b", "a", "b"]


def test_in_process_counts_cpu_time_not_waiting() -> None:
    spent = quick.in_process(lambda: time.sleep(0.2))()
    assert 0 <= spent < 0.1  # asleep, the process used (almost) no CPU


def test_in_child_counts_the_child_process_cpu_time() -> None:
    busy = [sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"]
    busy[-1] += "while time.process_time() < end: pass"
    idle = [sys.executable, "-c", "import time; time.sleep(0.3)"]
    env: dict[str, str] = {}
    assert quick.in_child(busy, env)() >= 0.3
    assert quick.in_child(idle, env)() < 0.25


def _chain_check(tmp_path: Path) -> quick.Check:
    context = quick.Context(tmp_path)
    sizes = (100, 1000)
    for nodes in sizes:
        context.program(nodes)
    return quick.growth("evaluate", lambda n: quick.evaluate_chain(context, n), 5, sizes=sizes)


def test_the_evaluate_growth_check_passes_on_the_vm_as_it_is(tmp_path: Path) -> None:
    check = _chain_check(tmp_path)
    assert check.ok, check  # linear is 10 at most (fixed costs make it less)


def test_a_quadratic_step_fails_the_evaluate_growth_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = evaluate.all_match

    def quadratic(facts: Any, checks: Any) -> bool:
        # the facts written out once per node: n nodes of a chain with n facts cost n²
        json.dumps(facts)
        return plain(facts, checks)

    monkeypatch.setattr(evaluate, "all_match", quadratic)
    check = _chain_check(tmp_path)
    assert not check.ok, check
    assert check.ratio > 2 * quick.GROWTH_LIMIT, check  # near 100: quadratic, not noise


def test_run_checks_prints_the_load_and_measures_a_failure_twice() -> None:
    ratios = iter([30.0, 12.0])
    measured: list[float] = []

    def flaky(context: quick.Context) -> list[quick.Check]:
        ratio = next(ratios)
        measured.append(ratio)
        return [quick.Check("flaky", ratio, quick.GROWTH_LIMIT, "figures")]

    lines: list[str] = []
    found = quick.run_checks(lines.append, [("flaky", flaky)])
    assert measured == [30.0, 12.0]
    assert [(c.name, c.ratio, c.ok) for c in found] == [("flaky", 12.0, True)]
    assert "load " in lines[0]
    assert "load " in lines[-1]
    assert "figures" in lines[-1]
    assert "load_average" in found[0].to_dict()


def test_a_regression_stays_over_when_measured_again() -> None:
    def regressed(context: quick.Context) -> list[quick.Check]:
        return [quick.Check("regressed", 95.0, quick.GROWTH_LIMIT, "figures")]

    found = quick.run_checks(lambda line: None, [("regressed", regressed)])
    assert [c.ok for c in found] == [False]


def test_without_a_built_reference_the_comparison_says_it_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGC_REFERENCE_DIR", str(tmp_path))  # no dist/index.js there
    assert quick.nested_against_reference(quick.Context(tmp_path)) == []
    assert "skip nested subgraphs against the reference SDK" in capsys.readouterr().out


REFERENCE = os.environ.get("AGC_REFERENCE_DIR", "")


@pytest.mark.slow
@pytest.mark.reference
@pytest.mark.skipif(
    not (REFERENCE and (Path(REFERENCE) / "dist" / "index.js").is_file() and shutil.which("node")),
    reason="reference not built (AGC_REFERENCE_DIR)",
)
def test_the_nested_cases_are_timed_against_the_reference_sdk(tmp_path: Path) -> None:
    found = quick.nested_against_reference(quick.Context(tmp_path))
    assert [c.name.split(":")[0] for c in found] == [
        f"100 nested subgraphs, {case}" for case in ("fresh", "half done", "all done", "99 done")
    ]
    for check in found:  # both sides measured: a real ratio with both figures
        assert 0 < check.ratio < 100, check
        assert check.limit == quick.NESTED_REFERENCE_LIMIT
        assert check.detail.startswith("reference ")
        assert " ms, agc " in check.detail
