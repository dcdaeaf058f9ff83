"""agc against the reference SDK on the same cases, timed in the same run.

Both sides run in process (the reference in one ``node`` process, agc in this one), on
the same generated Providers and states, fastest of several repeats after a warm-up, the
two sides taking turns case by case over three rounds. Cases: a 1,000-node chain half
done, a 2-node Provider, 100 nested subgraph calls (fresh, half done, all done), 100 and
1,000 nested calls with every frame but the deepest done (the quick benchmark's nested
pair), loading a 1,000-node chain from its sources, and — when ``AGC_CONTEXT_WORKFLOW``
names a directory holding the Context CLI's workflow Provider and its tests — every test
state of that real workflow. Prints the table with an agc / reference column and writes
``benchmarks/results/compare.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_result
from shapes import chain, nested_deep

from agent_graph import compile_provider
from agent_graph.vm import Program
from agent_graph.vm.state import forget_facts

HERE = Path(__file__).resolve().parent


def _fastest(action: Callable[[], object], repeats: int) -> float:
    action()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def _deep_state(done: int) -> dict[str, Any]:
    outcomes, prefix = {}, ""
    for i in range(done):
        outcomes[f"{prefix}d{i}/s"] = "completed"
        prefix += f"d{i}/call>"
    return {"outcomes": outcomes}


def nested_jobs(root: Path) -> list[dict[str, Any]]:
    """The four cases of 100 nested subgraph calls (issue 29: agc at most the reference
    SDK's time on each); the quick benchmark checks them too when a reference is built."""
    deep = nested_deep(root / "deep", 300)  # 100 nested subgraph calls
    cases = [("fresh", _deep_state(0), 300), ("half done", _deep_state(50), 50)]
    cases.append(("all done", _deep_state(100), 50))
    # the quick benchmark's nested-growth pair: every frame done but the deepest
    cases.append(("99 done", deep.state, 100))
    return [
        {
            "name": f"100 nested subgraphs, {name}",
            "manifest": str(deep.manifest),
            "graph": "d0",
            "entry": "default",
            "states": [state],
            "repeats": repeats,
            "load": False,
        }
        for name, state, repeats in cases
    ]


def _jobs(root: Path) -> list[dict[str, Any]]:
    long = chain(root / "chain", 1000)
    half = {"facts": {"done": {f"n{i}": True for i in range(499)}}}
    tiny = chain(root / "tiny", 2)
    deeper = nested_deep(root / "deeper", 3000)  # 1,000
    jobs = [
        {
            "name": "1,000-node chain, half done",
            "manifest": long.manifest,
            "graph": "chain",
            "states": [half],
            "repeats": 7,  # a round; the reference takes about 2 s a call
        },
        {
            "name": "tiny 2-node Provider",
            "manifest": tiny.manifest,
            "graph": "chain",
            "states": [{}, {"outcomes": {"chain/n0": "completed"}}],
            "repeats": 300,
        },
        *nested_jobs(root),
        {
            "name": "1,000 nested subgraphs, 999 done",
            "manifest": deeper.manifest,
            "graph": "d0",
            "states": [deeper.state],
            "repeats": 10,
        },
        {
            "name": "1,000-node chain, load from sources",
            "manifest": long.manifest,
            "graph": "chain",
            "states": [],
            "repeats": 3,
            "load": True,
        },
    ]
    context = os.environ.get("AGC_CONTEXT_WORKFLOW")
    if context:
        base = Path(context)
        states, graph = [], None
        for case in sorted((base / "tests").glob("*.yaml")):
            doc = yaml.safe_load(case.read_text(encoding="utf-8"))
            graph = doc["graph"]
            states.append(doc.get("state") or {})
        if graph is not None:
            context_job = {
                "name": f"Context workflow, {len(states)} states",
                "manifest": base / "provider.yaml",
                "graph": graph,
                "states": states,
                # each call is 10-50 us on either side: enough repeats that the fastest
                # is the steady state, not a call that met a collection or a cold cache
                "repeats": 300,
            }
            jobs.append(context_job)
            # agc keeps the canonical text of recent facts (an evaluate and the route
            # after it share it); this row makes every call write its facts afresh
            jobs.append(
                {
                    **context_job,
                    "name": f"{context_job['name']}, new facts",
                    "fresh_facts": True,
                }
            )
    for job in jobs:
        job.setdefault("entry", "default")
        job.setdefault("load", False)
        job["manifest"] = str(job["manifest"])
    return jobs


def _time_job(job: dict[str, Any], program: Program) -> dict[str, Any]:
    graph, entry, manifest = job["graph"], job["entry"], job["manifest"]

    def timed(state: dict[str, Any]) -> float:
        def fresh() -> object:
            forget_facts()
            return program.evaluate(graph, entry, state)

        if job.get("fresh_facts"):
            return _fastest(fresh, job["repeats"])
        return _fastest(lambda: program.evaluate(graph, entry, state), job["repeats"])

    evaluate = [timed(state) for state in job["states"]]
    load = _fastest(lambda: compile_provider(manifest), 3) if job["load"] else None
    return {"evaluate": evaluate, "load": load}


class Reference:
    """The reference SDK in one ``node`` process, timing one job per request; killed
    when the whole comparison outlasts ``limit`` seconds."""

    def __init__(self, reference: Path, limit: float) -> None:
        self.process = subprocess.Popen(
            ["node", str(HERE / "reference_time.mjs"), str(reference)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.timer = threading.Timer(limit, self.process.kill)
        self.timer.start()

    def time(self, job: dict[str, Any]) -> dict[str, Any]:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(json.dumps(job) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(self.close() or "the reference process ended")
        found: dict[str, Any] = json.loads(line)
        return found

    def close(self) -> str:
        """End the process; its standard error (the end of it)."""
        self.timer.cancel()
        if self.process.poll() is None:
            self.process.kill()
        _, err = self.process.communicate()
        return err.strip()[-400:]


def _least(a: dict[str, Any] | None, b: dict[str, Any]) -> dict[str, Any]:
    """Each figure of ``b`` or of ``a`` (an earlier round), whichever is lower."""
    if a is None:
        return b
    load = b["load"] if a["load"] is None else min(a["load"], b["load"])
    return {"evaluate": list(map(min, a["evaluate"], b["evaluate"])), "load": load}


#: Rounds in which the two sides take turns on each case (reference, agc, reference …),
#: each keeping its fastest: a busy spell of the machine then falls on both sides.
ROUNDS = 3


def _measure(reference: Path, jobs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    programs = {job["manifest"]: compile_provider(job["manifest"]) for job in jobs}
    theirs: dict[str, Any] = {}
    ours: dict[str, Any] = {}
    node = Reference(reference, 1800)
    try:
        for _ in range(ROUNDS):
            for job in jobs:
                name = job["name"]
                theirs[name] = _least(theirs.get(name), node.time(job))
                ours[name] = _least(ours.get(name), _time_job(job, programs[job["manifest"]]))
    finally:
        node.close()
    return theirs, ours


def _span(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{min(values):.3f}–{max(values):.3f}"


def compare(reference: Path, say: Callable[[str], None], only: str | None = None) -> int:
    """Time both sides and print the table; ``only``: just the cases whose name holds it."""
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [job for job in _jobs(Path(tmp)) if only is None or only in job["name"]]
        try:
            theirs, ours = _measure(reference, jobs)
        except (OSError, RuntimeError, ValueError) as exc:
            say(f"the reference could not be timed: {exc}")
            return 1
    say(f"{ROUNDS} rounds, the sides taking turns; load average {os.getloadavg()[0]:.1f}")
    rows = []
    say(f"{'case':<40}{'op':<10}{'reference ms':>16}{'agc ms':>16}{'agc / ref':>14}")
    for job in jobs:
        name = job["name"]
        pairs = (
            [("evaluate", theirs[name]["evaluate"], ours[name]["evaluate"])]
            if job["states"]
            else []
        )
        if job["load"]:
            pairs.append(("load", [theirs[name]["load"]], [ours[name]["load"]]))
        for op, ref_ms, agc_ms in pairs:
            ratios = [a / b for a, b in zip(agc_ms, ref_ms, strict=True) if b > 0]
            rows.append(
                {"case": name, "op": op, "reference_ms": ref_ms, "agc_ms": agc_ms, "ratio": ratios}
            )
            say(f"{name:<40}{op:<10}{_span(ref_ms):>16}{_span(agc_ms):>16}{_span(ratios):>14}")
    write_result("compare", {"rounds": ROUNDS, "rows": rows})
    return 0


if __name__ == "__main__":
    reference = os.environ.get("AGC_REFERENCE_DIR")
    if not reference:
        raise SystemExit("set AGC_REFERENCE_DIR to a built reference checkout (with dist/)")
    # an argument keeps only the cases whose name holds it: ``compare.py nested``
    sys.exit(compare(Path(reference), print, sys.argv[1] if len(sys.argv) > 1 else None))
