"""Time ``agc validate`` (in process: load + every check + digests) on generated chains.

Prints a table and writes ``benchmarks/results/validate.json``.
Usage: python benchmarks/validate_bench.py [sizes ...]   (default: 10 100 1000 10000)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import write_chain_provider

from agent_graph.compiler import load_provider


def measure(nodes: int, repeats: int) -> dict[str, float | int]:
    with tempfile.TemporaryDirectory() as tmp:
        manifest = write_chain_provider(Path(tmp) / f"chain{nodes}", nodes)
        size = sum(p.stat().st_size for p in manifest.parent.rglob("*") if p.is_file())
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            load_provider(manifest)
            times.append(time.perf_counter() - start)
    return {"nodes": nodes, "bytes": size, "median_s": statistics.median(times), "runs": repeats}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("sizes", nargs="*", type=int, default=[10, 100, 1000, 10000])
    sizes = parser.parse_args(argv).sizes
    rows = [measure(n, 5 if n <= 1000 else 1) for n in sizes]
    print(f"{'nodes':>8} {'source KiB':>11} {'validate (median)':>18} {'runs':>5}")
    for row in rows:
        kib, ms = row["bytes"] / 1024, row["median_s"] * 1000
        print(f"{row['nodes']:>8} {kib:>11.1f} {ms:>15.1f} ms {row['runs']:>5}")
    out = Path(__file__).resolve().parent / "results" / "validate.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"benchmark": "validate-chain", "rows": rows}, indent=2) + "\n")
    print(f"wrote {out.relative_to(Path.cwd()) if out.is_relative_to(Path.cwd()) else out.name}")


if __name__ == "__main__":
    main()
