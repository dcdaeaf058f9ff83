"""Inputs other hosts write: Run files with any schema-valid event log, broken graph tests.

The generator (``provider_gen.foreign_run``, ``provider_gen.broken_test_case``) writes
what a host other than agc may hand us: Runs whose log is empty, lacks ``run.started``,
starts at a later sequence or carries ``detail`` on every event, and graph test cases
that cannot run (schema-invalid, an unknown Graph, an unknown Entry).

Without the reference these check our own contract: every such Run reads, evaluates
as the same state given inline, and a write continues its numbering. With
``AGC_REFERENCE_CLI``/``AGC_REFERENCE_DIR`` set, the same inputs go through the
reference CLI too: ``evaluate --state`` and ``run status`` documents must be equal,
digests included, and ``agc test`` must fail with the reference's error code and
message (ours adds every broken case to the diagnostics).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agent_graph.cli import main
from agent_graph.compiler import load_provider
from agent_graph.runs import FileRunStore, read_run
from provider_gen import (
    BROKEN_CASES,
    RUN_LOG_SHAPES,
    Case,
    State,
    broken_test_case,
    foreign_run,
    generate_case,
)
from slow_support import fast_sample
from tree_support import write_json

REF_CLI = os.environ.get("AGC_REFERENCE_CLI")
REF_DIR = os.environ.get("AGC_REFERENCE_DIR")
needs_reference = pytest.mark.skipif(
    not (REF_CLI and REF_DIR and shutil.which("node")), reason="reference CLI not configured"
)
SEEDS = int(os.environ.get("AGC_FOREIGN_SEEDS", "8"))


def ours(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = main([*args, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out or captured.err)


def reference(args: list[str]) -> tuple[int, Any]:
    assert REF_CLI is not None
    done = subprocess.run(
        ["node", REF_CLI, *args, "--format", "json"], capture_output=True, text=True, check=False
    )
    return done.returncode, json.loads(done.stdout or done.stderr)


def foreign_runs(tmp: Path, seeds: range) -> list[tuple[Case, State, str, Path]]:
    """For each seed's states, one Run file each, the log shapes taken in turn."""
    out: list[tuple[Case, State, str, Path]] = []
    for seed in seeds:
        rng = random.Random(seed)
        case = generate_case(rng, tmp / f"case-{seed}")
        provider_id = load_provider(case.manifest).id
        for index, state in enumerate(case.states):
            shape = RUN_LOG_SHAPES[(seed + index) % len(RUN_LOG_SHAPES)]
            path = tmp / f"run-{seed}-{index}.json"
            write_json(path, foreign_run(rng, provider_id, state, shape))
            out.append((case, state, shape, path))
    return out


def evaluate_args(case: Case, run: Path) -> list[str]:
    document = json.loads(run.read_text(encoding="utf-8"))
    graph, entry = document["graph"], document["entry"]
    return ["evaluate", graph, "--entry", entry, "-m", str(case.manifest), "--state", str(run)]


def inline_args(case: Case, state: State) -> list[str]:
    args = ["evaluate", state.graph, "--entry", state.entry, "-m", str(case.manifest)]
    args += ["--facts", json.dumps(state.facts), "--outcomes", json.dumps(state.outcome_strings())]
    return args + (["--authority", *state.authorities] if state.authorities else [])


# -- our own contract (always) ---------------------------------------------------------------


def test_every_log_shape_is_generated(tmp_path: Path) -> None:
    shapes = {shape for _, _, shape, _ in foreign_runs(tmp_path, range(3))}
    assert shapes == set(RUN_LOG_SHAPES)


def test_foreign_runs_evaluate_as_their_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Run's state evaluates as the same state given inline (outcomes as strings)."""
    for case, state, shape, path in foreign_runs(tmp_path, range(6)):
        run_code, from_run = ours(evaluate_args(case, path), capsys)
        inline_code, inline = ours(inline_args(case, state), capsys)
        assert run_code == inline_code, (shape, path)
        if run_code == 0:
            # the revision digests outcome records, which the inline options cannot carry
            from_run.pop("revision")
            inline.pop("revision")
        assert from_run == inline, (shape, path)


def test_foreign_runs_are_continued(tmp_path: Path) -> None:
    store = FileRunStore()
    for _, state, shape, path in foreign_runs(tmp_path, range(5)):
        before = read_run(path).events
        store.set_facts(path, {"added": True})
        after = read_run(path).events
        assert after[:-1] == before, shape
        assert after[-1]["sequence"] == (before[-1]["sequence"] + 1 if before else 1), shape
        assert after[-1]["type"] == "facts.updated"
        assert read_run(path).graph == state.graph


# -- against the reference ---------------------------------------------------------------------


@pytest.mark.slow
@needs_reference
@pytest.mark.reference
def test_foreign_runs_evaluate_as_the_reference_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = foreign_runs(tmp_path, range(SEEDS))
    jobs = [(shape, evaluate_args(case, path)) for case, _, shape, path in runs]
    jobs += [
        ("status", ["run", "status", "-m", str(case.manifest), "--state", str(path)])
        for case, _, _, path in runs[::3]
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda job: reference(job[1]), jobs))
    seen: dict[str, int] = {}
    for (label, args), (ref_code, ref_doc) in zip(jobs, answers, strict=True):
        our_code, our_doc = ours(args, capsys)
        assert (our_code, our_doc) == (ref_code, ref_doc), args
        seen[label] = seen.get(label, 0) + 1
    assert set(seen) == {*RUN_LOG_SHAPES, "status"}, seen


@needs_reference
@pytest.mark.reference
def test_identity_is_told_before_consistency(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = generate_case(random.Random(7), tmp_path / "case")
    state = case.states[0]
    document = foreign_run(random.Random(1), "another.provider", state, "started")
    document["events"].append({**document["events"][0], "sequence": 9})  # a gap too
    path = tmp_path / "run.json"
    write_json(path, document)
    args = ["run", "status", "-m", str(case.manifest), "--state", str(path)]
    ref_code, ref_doc = reference(args)
    our_code, our_doc = ours(args, capsys)
    assert ref_doc["error"]["code"] == "run-provider-mismatch"
    assert (our_code, our_doc) == (ref_code, ref_doc)


def _write_cases(root: Path, cases: list[dict[str, Any]]) -> Path:
    for index, case in enumerate(cases):
        write_json(root / f"{index:02d}-{case['name'].split()[0]}.json", case)
    return root


@needs_reference
@pytest.mark.reference
@pytest.mark.parametrize("kind", fast_sample(BROKEN_CASES, 1))
def test_a_broken_case_fails_as_in_the_reference(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for seed in range(4):
        rng = random.Random(seed)
        case = generate_case(rng, tmp_path / f"case-{seed}")
        tests = _write_cases(
            tmp_path / f"tests-{seed}", [broken_test_case(rng, case.states[-1], kind)]
        )
        args = ["test", str(tests), "-m", str(case.manifest)]
        ref_code, ref_doc = reference(args)
        our_code, our_doc = ours(args, capsys)
        assert our_code == ref_code
        if kind == "unknown-entry":  # a failed case, not a broken one
            assert our_doc == ref_doc
            continue
        assert ref_doc["error"]["code"] == our_doc["error"]["code"]
        assert ref_doc["error"]["code"] in {"schema-invalid", "graph-missing"}
        assert our_doc["error"]["message"] == ref_doc["error"]["message"]
        assert our_doc["error"]["diagnostics"], "every broken case is placed"


@needs_reference
@pytest.mark.reference
def test_many_broken_cases_are_all_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(11)
    case = generate_case(rng, tmp_path / "case")
    broken = [
        broken_test_case(rng, state, kind) for state in case.states[:2] for kind in BROKEN_CASES
    ]
    tests = _write_cases(tmp_path / "tests", broken)
    args = ["test", str(tests), "-m", str(case.manifest)]
    ref_code, ref_doc = reference(args)
    our_code, our_doc = ours(args, capsys)
    assert our_code == ref_code == 1
    assert our_doc["error"]["code"] == ref_doc["error"]["code"]
    assert our_doc["error"]["message"].startswith(ref_doc["error"]["message"] + " (and ")
    named = {Path(d["path"]).name for d in our_doc["error"]["diagnostics"]}
    expected = {p.name for p in sorted(tests.iterdir()) if "unknown-entry" not in p.name}
    assert named == expected
