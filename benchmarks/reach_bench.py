"""Time ``agc explain --reach``'s search on every node of every example Graph.

For each example Provider under ``examples/`` (one with ``provider.yaml``), every node of
every Graph is searched for (:func:`agent_graph.testing.reach.reach`, the search the
command runs, its Provider compiled beforehand), on CPU time: the least of ``--repeat``
runs a node. Issue 28 asks for under a second a node; the table prints the median and
the largest, and how many nodes were reached.

Prints a table and writes ``benchmarks/results/reach.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_result

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def measure(repeat: int) -> dict[str, object]:
    from agent_graph import program_of
    from agent_graph.testing.reach import reach

    rows: list[tuple[str, float, bool]] = []
    for manifest in sorted(EXAMPLES.glob("*/provider.yaml")):
        program = program_of(manifest)
        for graph in program.graph_ids:
            for node in program.graph(graph).nodes:
                best = float("inf")
                for _ in range(repeat):
                    started = time.process_time()
                    answer = reach(program, graph, node.id)
                    best = min(best, time.process_time() - started)
                name = f"{manifest.parent.name}:{graph}/{node.id}"
                rows.append((name, best * 1000, answer.reached))
    times = [ms for _, ms, _ in rows]
    slowest = max(rows, key=lambda row: row[1])
    return {
        "nodes": len(rows),
        "reached": sum(1 for *_, reached in rows if reached),
        "median_ms": round(statistics.median(times), 3),
        "max_ms": round(slowest[1], 3),
        "slowest": slowest[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    figures = measure(parser.parse_args().repeat)
    print("| example nodes | reached | median ms (CPU) | largest ms (CPU) | slowest |")
    print("|---|---|---|---|---|")
    print(
        f"| {figures['nodes']} | {figures['reached']} | {figures['median_ms']} | "
        f"{figures['max_ms']} | {figures['slowest']} |"
    )
    write_result("reach", figures)


if __name__ == "__main__":
    main()
