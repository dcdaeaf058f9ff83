"""The cost of the evaluation trace, and of drawing graphs (``agc graph``).

1. Trace overhead: for each shape of :mod:`shapes` and size, ``Program.evaluate`` with
   and without ``trace=True`` on the shape's worst-case state (medians of process CPU
   time, warm memo tables); the ratio is what ``agc graph``/``agc explain`` pay over
   ``agc evaluate``. The untraced path has one hook, the frame class chosen per frame.
2. Drawing: for the chain and layered shapes at 1,000 and 10,000 nodes (``--huge``
   adds 100,000): building the picture from the trace, writing Mermaid and DOT (all
   linear: layout is Graphviz's), and Graphviz ``dot -Tsvg`` up to ``--svg-max`` nodes
   (its layout is superlinear; larger graphs hit ``agc``'s time limit, a coded error).
   ``agc graph`` end to end (a new process: start-up, compile, evaluate, draw) too.

Prints two tables and writes ``benchmarks/results/graph.json``. Usage:

    python benchmarks/graph_bench.py [--sizes 1000 10000] [--huge] [--svg-max 1000] [--quick]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_result
from shapes import SHAPES
from vm_bench import compile_bytes, median_time

from agent_graph.pictures import dot, mermaid
from agent_graph.pictures.model import Picture
from agent_graph.pictures.provider import provider_picture
from agent_graph.pictures.svg import to_svg
from agent_graph.vm import load_program

TRACE_SHAPES = ("chain", "wide", "wide-open", "layered", "nested", "repeat")
DRAW_SHAPES = ("chain", "layered")


def _runs(nodes: int, quick: bool) -> int:
    if quick:
        return 3
    return 15 if nodes <= 1000 else 7 if nodes <= 10000 else 3


def _overhead_row(name: str, size: int, quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        shape = SHAPES[name](Path(tmp) / "provider", size)
        data, root = compile_bytes(shape.manifest)
        program = load_program(data, root)
        runs = _runs(size, quick)

        def plain() -> object:
            return program.evaluate(shape.graph, shape.entry, shape.state)

        def traced() -> object:
            return program.evaluate(shape.graph, shape.entry, shape.state, trace=True)

        assert traced() == plain()  # the trace never changes the result
        without = median_time(plain, runs)
        with_trace = median_time(traced, runs)
    return {
        "shape": name,
        "nodes": shape.nodes,
        "evaluate_s": without.cpu,
        "evaluate_traced_s": with_trace.cpu,
        "ratio": with_trace.cpu / without.cpu if without.cpu else None,
    }


def trace_overhead(sizes: list[int], quick: bool) -> list[dict[str, Any]]:
    rows = []
    for name in TRACE_SHAPES:
        for size in sizes:
            row = _overhead_row(name, size, quick)
            rows.append(row)
            print(
                f"{name:<10} {row['nodes']:>7} {row['evaluate_s'] * 1000:>10.2f} "
                f"{row['evaluate_traced_s'] * 1000:>10.2f} {row['ratio'] or 0:>6.2f}x",
                flush=True,
            )
    return rows


def _cli_seconds(args: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(["agc", *args], capture_output=True, check=False, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"agc {' '.join(args)} failed: {done.stderr.decode()[:300]}")
    return time.perf_counter() - start


def _state_options(tmp: str, state: dict[str, Any]) -> list[str]:
    """The state as ``@file`` options (a 10,000-entry state is too long for argv)."""
    words = []
    for name in ("facts", "outcomes"):
        if name in state:
            path = Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(state[name]), encoding="utf-8")
            words += [f"--{name}", f"@{path}"]
    return words or ["--facts", "{}"]


def _draw_row(name: str, size: int, svg_max: int, quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        shape = SHAPES[name](Path(tmp) / "provider", size)
        data, root = compile_bytes(shape.manifest)
        program = load_program(data, root)
        evaluation = program.evaluate(shape.graph, shape.entry, shape.state, trace=True)
        runs = 1 if size > 10000 else 3 if quick else 5

        def build() -> Picture:
            return provider_picture(
                program.ir, shape.graph, shape.entry, evaluation=evaluation, trace=evaluation.trace
            )

        picture = build()
        row: dict[str, Any] = {
            "shape": name,
            "nodes": shape.nodes,
            "picture_s": median_time(build, runs).cpu,
            "mermaid_s": median_time(lambda: mermaid.render(picture), runs).cpu,
            "dot_s": median_time(lambda: dot.render(picture), runs).cpu,
            "mermaid_bytes": len(mermaid.render(picture)),
            "svg_s": None,
        }
        if shutil.which("dot") is not None and size <= svg_max:
            text = dot.render(picture)
            start = time.perf_counter()
            to_svg(text)
            row["svg_s"] = time.perf_counter() - start
        if size <= 10000:
            base = [shape.graph, "-m", str(shape.manifest), *_state_options(tmp, shape.state)]
            row["cli_mermaid_s"] = _cli_seconds(["graph", *base])
            row["cli_dot_s"] = _cli_seconds(["graph", *base, "--format", "dot"])
    return row


def drawing(sizes: list[int], svg_max: int, quick: bool) -> list[dict[str, Any]]:
    rows = []
    for name in DRAW_SHAPES:
        for size in sizes:
            row = _draw_row(name, size, svg_max, quick)
            rows.append(row)
            svg = f"{row['svg_s']:.2f}" if row["svg_s"] is not None else "-"
            cli = f"{row['cli_mermaid_s']:.2f}" if "cli_mermaid_s" in row else "-"
            print(
                f"{name:<10} {row['nodes']:>7} {row['picture_s'] * 1000:>9.1f} "
                f"{row['mermaid_s'] * 1000:>9.1f} {row['dot_s'] * 1000:>9.1f} {svg:>8} {cli:>9}",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--huge", action="store_true", help="also draw 100,000-node graphs")
    parser.add_argument(
        "--svg-max", type=int, default=1000, help="largest graph laid out by dot (nodes)"
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    print("evaluation trace overhead (CPU ms, median)")
    print(f"{'shape':<10} {'nodes':>7} {'evaluate':>10} {'traced':>10} {'ratio':>7}")
    overhead = trace_overhead(args.sizes, args.quick)
    draw_sizes = [*args.sizes, *([100000] if args.huge else [])]
    print("\ndrawing (CPU ms, median; svg and cli: wall s)")
    print(
        f"{'shape':<10} {'nodes':>7} {'picture':>9} {'mermaid':>9} {'dot':>9} "
        f"{'svg':>8} {'agc graph':>8}"
    )
    drawn = drawing(draw_sizes, args.svg_max, args.quick)
    write_result("graph", {"trace_overhead": overhead, "drawing": drawn})


if __name__ == "__main__":
    main()
