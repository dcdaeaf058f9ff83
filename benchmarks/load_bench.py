"""Cold ``agc evaluate`` on built bundles: does a small graph pay for the whole bundle?

A bundle's IR decodes lazily, per graph, on first use (docs/trust.md: every byte is
still checked before the VM relies on it), so a fresh ``agc evaluate`` of a small graph
should cost about the same whatever else the bundle holds. Bundles measured:

* ``small``: one 10-node chain;
* ``many-graphs``: ``--graphs`` graphs of 10 nodes each (default 1,000), evaluating one;
* ``big-beside-small``: a 10-node graph beside a ``--big``-node chain (default 10,000),
  evaluating the small one (and, as ``big-evaluated``, the big one, which must decode);

each against ``python -c pass`` (the interpreter's own start-up) on the same machine.
Every figure is the minimum of ``--runs`` fresh processes (the least disturbed by a busy
machine) after one warm-up run (page cache, bytecode caches, trust store). Cold
processes run with bytecode caches written, as an installed package has them.

Prints a table and writes ``benchmarks/results/load.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_result
from shapes import ACTION, graph_yaml, write_provider

from agent_graph.bundles import TRUST_ENV


@dataclass(frozen=True, slots=True)
class Bundle:
    name: str
    manifest: Path  # the bundle's manifest.json
    graph: str  # the graph evaluated
    graphs: int
    nodes: int


def chain_graph(graph_id: str, nodes: int) -> str:
    """``n0 -> … -> n{nodes-2} -> end``: action nodes sharing one Action."""
    body = [
        {"id": f"n{i}", "kind": "action", "reasonCode": f"route.bench.n{i}", "action": ACTION}
        for i in range(nodes - 1)
    ]
    body.append({"id": "end", "kind": "terminal", "terminalOutcome": "completed"})
    edges = [{"from": a["id"], "to": b["id"]} for a, b in pairwise(body)]
    return graph_yaml(graph_id, {"default": "n0"}, body, edges)


def build(work: Path, name: str, graphs: dict[str, int], evaluated: str) -> Bundle:
    """Write a Provider with ``graphs`` (id -> nodes) and build its bundle."""
    from agent_graph.compiler import load_provider
    from agent_graph.compiler.provider.builder import build_bundle

    docs = {gid: chain_graph(gid, nodes) for gid, nodes in graphs.items()}
    manifest = write_provider(work / name, name.replace("-", ""), docs)
    out = work / f"{name}-bundle"
    build_bundle(load_provider(manifest), out)
    return Bundle(name, out / "manifest.json", evaluated, len(graphs), sum(graphs.values()))


def agc_command() -> list[str]:
    # the installed console script, not a shim that starts another interpreter first
    script = Path(sysconfig.get_path("scripts")) / "agc"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "agent_graph"]


def cold_ms(argv: list[str], runs: int, trust: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env[TRUST_ENV] = trust

    def once() -> float:
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env, timeout=120)
        return time.perf_counter() - start

    once()  # warm the page cache, the bytecode caches and the trust store
    return min(once() for _ in range(runs)) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]) if __doc__ else None,
    )
    parser.add_argument("--runs", type=int, default=9, help="fresh processes per figure")
    parser.add_argument("--graphs", type=int, default=1000, help="graphs in many-graphs")
    parser.add_argument("--big", type=int, default=10000, help="nodes of the big graph")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trust = str(work / "trust")
        bundles = [
            build(work, "small", {"g0": 10}, "g0"),
            build(work, "many-graphs", {f"g{i}": 10 for i in range(args.graphs)}, "g0"),
            build(work, "big-beside-small", {"small": 10, "big": args.big}, "small"),
        ]
        bundles.append(Bundle("big-evaluated", bundles[2].manifest, "big", 2, bundles[2].nodes))
        python = cold_ms([sys.executable, "-c", "pass"], args.runs, trust)
        rows: list[dict[str, Any]] = []
        for b in bundles:
            evaluate = [*agc_command(), "evaluate", b.graph, "-m", str(b.manifest)]
            ms = cold_ms([*evaluate, "--format", "json"], args.runs, trust)
            ir = next((b.manifest.parent / "ir").glob("*.agir"))
            rows.append(
                {
                    "bundle": b.name,
                    "graphs": b.graphs,
                    "nodes": b.nodes,
                    "evaluated": b.graph,
                    "ir_bytes": ir.stat().st_size,
                    "cold_evaluate_ms": round(ms, 1),
                    "above_python_ms": round(ms - python, 1),
                }
            )
    small = rows[0]["cold_evaluate_ms"]
    print(f"{'bundle':<18} {'graphs':>6} {'nodes':>6} {'IR bytes':>9} {'cold eval':>10} "
          f"{'above py':>9} {'/ small':>7}")  # fmt: skip
    for row in rows:
        print(
            f"{row['bundle']:<18} {row['graphs']:>6} {row['nodes']:>6} {row['ir_bytes']:>9} "
            f"{row['cold_evaluate_ms']:>7.1f} ms {row['above_python_ms']:>6.1f} ms "
            f"{row['cold_evaluate_ms'] / small:>7.2f}"
        )
    print(f"python -c pass: {python:.1f} ms (min of {args.runs})")
    write_result("load", {"runs": args.runs, "python_start_ms": round(python, 1), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
