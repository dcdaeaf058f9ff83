"""Compile, decode and evaluate generated Providers of several shapes and sizes.

For each shape of :mod:`shapes` and each size it measures (medians of repeated runs):

* compile: ``load_provider`` + ``lower`` + ``encode`` (what ``agc build`` pays);
* IR size in bytes;
* decode: ``agent_graph.ir.codec.decode`` (what a host pays to load compiled IR);
* evaluate: ``Program.evaluate`` on a state that makes the evaluator walk the whole
  graph (state normalisation and the revision digest included, as a host sees it).

Each first evaluation is checked against the shape's expected status, primary node and
candidate count, so a state that stopped early cannot pass for a fast one. Prints a
table and the 1,000 -> 10,000 growth ratios, and writes ``benchmarks/results/vm.json``.

Times are process CPU time (medians); wall times are in the JSON. Usage:

    python benchmarks/vm_bench.py [--sizes 10 100 1000 10000] [--shapes chain wide …]
                                  [--huge] [--huge-nodes 100000] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shapes import EXTRA_SHAPES, SHAPES, Shape, chain

from agent_graph import canonical
from agent_graph.compiler import load_provider
from agent_graph.compiler.provider.lower import lower
from agent_graph.errors import AgentGraphError
from agent_graph.ir import codec
from agent_graph.vm import Program, load_program

DEFAULT_SIZES = (10, 100, 1000, 10000)


class Timing(NamedTuple):
    """Medians of one measurement: process CPU time (the headline; the machine may be
    shared, and CPU time is what contention disturbs least) and wall time."""

    cpu: float
    wall: float


def clear_caches() -> None:
    """Empty the canonical-JSON memo tables (collation keys, member order), so a run
    pays for every key it sorts, as the first evaluation of a new state does."""
    for value in vars(canonical).values():
        if not isinstance(value, type) and callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


def median_time(run: Callable[[], object], repeats: int, *, cold: bool = False) -> Timing:
    """Median time of ``repeats`` calls; a full collection first so one run's garbage is
    not charged to the next; ``cold`` empties the memo tables before each call."""
    cpu, wall = [], []
    for _ in range(repeats):
        if cold:
            clear_caches()
        gc.collect()
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        run()
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    return Timing(statistics.median(cpu), statistics.median(wall))


def repeats_for(nodes: int, quick: bool) -> tuple[int, int]:
    """(compile runs, decode/evaluate runs) for a size."""
    if quick:
        return 1, 3
    if nodes <= 100:
        return 7, 31
    if nodes <= 1000:
        return 5, 15
    if nodes <= 10000:
        return 3, 7
    return 1, 3


def compile_bytes(manifest: Path) -> tuple[bytes, Path]:
    provider = load_provider(manifest)
    return codec.encode(lower(provider)), provider.root


def check(shape: Shape, program: Program) -> int:
    """Evaluate once and insist the state drove the evaluator where the shape says."""
    evaluation = program.evaluate(shape.graph, shape.entry, shape.state)
    problems = []
    if evaluation.status_code != shape.expect:
        problems.append(f"status {evaluation.status_code}, expected {shape.expect}")
    primary = evaluation.primary
    if shape.primary is not None and (primary is None or primary.node.id != shape.primary):
        problems.append(f"primary {primary.node.id if primary else None}, expected {shape.primary}")
    if shape.candidates is not None and len(evaluation.candidates) != shape.candidates:
        problems.append(f"{len(evaluation.candidates)} candidates, expected {shape.candidates}")
    if problems:
        raise SystemExit(f"{shape.name} at {shape.nodes} nodes: " + "; ".join(problems))
    return len(evaluation.candidates)


METRICS = ("compile", "decode", "evaluate", "evaluate_warm")


def measure(make: Callable[[Path, int], Shape], size: int, quick: bool) -> dict[str, Any]:
    compile_runs, runs = repeats_for(size, quick)
    with tempfile.TemporaryDirectory() as tmp:
        shape = make(Path(tmp) / "provider", size)
        data, root = compile_bytes(shape.manifest)
        timings = {
            "compile": median_time(lambda: compile_bytes(shape.manifest), compile_runs),
            "decode": median_time(lambda: codec.decode(data), runs),
        }
        program = load_program(data, root)
        candidates = check(shape, program)

        def evaluate() -> object:
            return program.evaluate(shape.graph, shape.entry, shape.state)

        timings["evaluate"] = median_time(evaluate, runs, cold=True)
        timings["evaluate_warm"] = median_time(evaluate, runs)
    ir = program.ir
    state_entries = len(shape.state.get("outcomes", {})) + sum(
        len(v) if isinstance(v, dict) else 1 for v in shape.state.get("facts", {}).values()
    )
    return {
        "shape": shape.name,
        "size": size,
        "nodes": sum(len(g.nodes) for g in ir.graphs),
        "edges": sum(len(g.edges) for g in ir.graphs),
        "graphs": len(ir.graphs),
        "state_entries": state_entries,
        "candidates": candidates,
        "ir_bytes": len(data),
        **{f"{name}_s": t.cpu for name, t in timings.items()},
        "wall_s": {name: t.wall for name, t in timings.items()},
        "runs": {"compile": compile_runs, "other": runs},
        "notes": {k: v for k, v in shape.notes.items() if k != "record"},
    }


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        "CPU milliseconds, medians; evaluate = first evaluation of a state (memo tables "
        "empty), warm = the same state again"
    )
    print(
        f"{'shape':<12}{'nodes':>7}{'edges':>7}{'cands':>7}{'IR KiB':>9}"
        f"{'compile':>10}{'decode':>9}{'evaluate':>10}{'warm':>9}"
    )
    for row in rows:
        print(
            f"{row['shape']:<12}{row['nodes']:>7}{row['edges']:>7}{row['candidates']:>7}"
            f"{row['ir_bytes'] / 1024:>9.1f}{ms(row['compile_s']):>10}"
            f"{ms(row['decode_s']):>9}{ms(row['evaluate_s']):>10}"
            f"{ms(row['evaluate_warm_s']):>9}"
        )


def growth(rows: list[dict[str, Any]], small: int, large: int) -> dict[str, dict[str, float]]:
    """Per shape, large/small ratio of each timing (about large/small when linear)."""
    by_key = {(row["shape"], row["size"]): row for row in rows}
    out: dict[str, dict[str, float]] = {}
    for shape in dict.fromkeys(row["shape"] for row in rows):
        a, b = by_key.get((shape, small)), by_key.get((shape, large))
        if a and b:
            out[shape] = {"nodes": round(b["nodes"] / a["nodes"], 2)} | {
                metric: round(b[f"{metric}_s"] / a[f"{metric}_s"], 2) for metric in METRICS
            }
    return out


def huge(nodes: int) -> dict[str, Any]:
    """One ``nodes``-node chain: compile and evaluate must finish (no recursion limit, no
    quadratic step); one compile and one decode, median of three evaluations."""
    with tempfile.TemporaryDirectory() as tmp:
        shape = chain(Path(tmp) / "provider", nodes)
        built: list[tuple[bytes, Path]] = []
        compiled = median_time(lambda: built.append(compile_bytes(shape.manifest)), 1)
        data, root = built[0]
        decoded = median_time(lambda: codec.decode(data), 1)
        program = load_program(data, root)
        check(shape, program)
        evaluated = median_time(
            lambda: program.evaluate(shape.graph, shape.entry, shape.state), 3, cold=True
        )
    return {
        "shape": "chain",
        "nodes": nodes,
        "ir_bytes": len(data),
        "compile_s": compiled.cpu,
        "decode_s": decoded.cpu,
        "evaluate_s": evaluated.cpu,
        "wall_s": {"compile": compiled.wall, "decode": decoded.wall, "evaluate": evaluated.wall},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument(
        "--shapes", nargs="+", choices=[*SHAPES, *EXTRA_SHAPES], default=list(SHAPES)
    )
    parser.add_argument("--huge", action="store_true", help="also a 100,000-node chain")
    parser.add_argument("--huge-nodes", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (smoke run)")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "vm.json"
    )
    args = parser.parse_args(argv)

    shapes = {**SHAPES, **EXTRA_SHAPES}
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        print(
            f"note: load average {load:.1f} on {os.cpu_count()} CPUs; wall times will be "
            "noisy, CPU times less so",
            file=sys.stderr,
        )
    rows, failures = [], []
    for name in args.shapes:
        for size in args.sizes:
            try:
                rows.append(measure(shapes[name], size, args.quick))
            except AgentGraphError as exc:  # a finding to report, not a reason to lose the table
                failures.append({"shape": name, "size": size, "error": exc.code})
            print(f"  measured {name} at {size}", file=sys.stderr, flush=True)
    print_table(rows)
    for failure in failures:
        print(f"{failure['shape']} at {failure['size']} nodes: {failure['error']}")
    sizes = sorted(args.sizes)
    ratios = {}
    if len(sizes) >= 2:
        small, large = (1000, 10000) if {1000, 10000} <= set(sizes) else (sizes[-2], sizes[-1])
        ratios = growth(rows, small, large)
        print(f"\ngrowth {small} -> {large} nodes (linear is about {large // small}):")
        print(f"{'shape':<12}{'nodes':>8}{'compile':>9}{'decode':>9}{'evaluate':>10}{'warm':>8}")
        for shape, r in ratios.items():
            print(
                f"{shape:<12}{r['nodes']:>8.2f}{r['compile']:>9.2f}{r['decode']:>9.2f}"
                f"{r['evaluate']:>10.2f}{r['evaluate_warm']:>8.2f}"
            )
    result: dict[str, Any] = {
        "benchmark": "vm",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": load,
        "rows": rows,
        "failures": failures,
        "growth": ratios,
    }
    if args.huge:
        big = huge(args.huge_nodes)
        result["huge"] = big
        wall = big["wall_s"]
        print(
            f"\n{big['nodes']}-node chain (CPU / wall): "
            f"compile {big['compile_s']:.2f} / {wall['compile']:.2f} s, "
            f"IR {big['ir_bytes'] / 1024 / 1024:.1f} MiB, "
            f"decode {big['decode_s']:.2f} / {wall['decode']:.2f} s, "
            f"evaluate {big['evaluate_s'] * 1000:.0f} / {wall['evaluate'] * 1000:.0f} ms"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    shown = args.out.relative_to(Path.cwd()) if args.out.is_relative_to(Path.cwd()) else args.out
    print(f"wrote {shown}")


if __name__ == "__main__":
    main()
