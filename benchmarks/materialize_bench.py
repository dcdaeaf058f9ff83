"""Materialize overhead: spawn to receipt, against a bare ``subprocess.run`` of the same command.

For the shipped context-views example's context view (a ``printf`` command Action) it
measures, in process, ``agent_graph.materialize.materialize`` into a fresh cache
folder (argument checks, environment, process group, capped capture, atomic cache
file and receipt) and ``subprocess.run(["/bin/sh", "-c", command])`` of the same
command, and prints both with their ratio. Wall-clock medians of repeated runs.
Prints a table and writes ``benchmarks/results/materialize.json``.

Usage: python benchmarks/materialize_bench.py [--runs 31] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from results import write_result

import agent_graph
from agent_graph.materialize import materialize

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "context-views" / "provider.yaml"
RESOURCE = "acme.workspace-status"


def median_ms(action: Callable[[], object], runs: int) -> float:
    action()  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (smoke run)")
    args = parser.parse_args()
    runs = 5 if args.quick else args.runs
    program = agent_graph.compile_provider(EXAMPLE)
    revision = program.evaluate("status", "default", {}).revision
    resource = next(r for r in program.ir.resources if r.id == RESOURCE)
    action = program.ir.actions[resource.materializer]
    assert action.command is not None
    command = action.command
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**9))

        def ours() -> object:
            cache = Path(tmp) / f"cache-{next(counter)}"
            return materialize(program, RESOURCE, cache=cache, revision=revision)

        def bare() -> object:
            return subprocess.run(
                ["/bin/sh", "-c", command],
                cwd=program.root,
                capture_output=True,
                check=True,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )

        materialize_ms = median_ms(ours, runs)
        bare_ms = median_ms(bare, runs)
    ratio = materialize_ms / bare_ms
    print(f"{'case':<34} {'median':>10}")
    print(f"{'materialize (spawn to receipt)':<34} {materialize_ms:>7.2f} ms")
    print(f"{'subprocess.run of the command':<34} {bare_ms:>7.2f} ms")
    print(f"{'ratio':<34} {ratio:>10.2f}")
    write_result(
        "materialize",
        {
            "runs": runs,
            "materialize_ms": materialize_ms,
            "subprocess_run_ms": bare_ms,
            "ratio": ratio,
        },
    )


if __name__ == "__main__":
    main()
