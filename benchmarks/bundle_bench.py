"""Build a bundle and load it, cold and warm, against working from the sources.

For a generated 1,000-node chain Provider and for the largest example (most nodes):

* build: ``load_provider`` + ``build_bundle`` in process (sources -> bundle with IR);
* build (cold): an ``agc build`` process;
* load: ``agent_graph.open_bundle`` in process with a trust store that has seen the
  IR verified (every digest checked, IR decoded), next to ``compile_provider`` on the
  bundle without a store (every check, compile, IR bytes compared: what a bundle's
  first load costs, docs/trust.md) and the compile of the sources;
* cold evaluate: wall time of a fresh ``agc evaluate <graph> --format json`` process on
  the bundle (trust store warm, and off) and on the sources, and of a fresh host
  process that calls ``agent_graph.compile_provider(...).evaluate(...)`` on each (with
  a warm trust store for the bundle); plus the bare
  interpreter start (``python -c pass``) those sit on. Cold processes run with
  bytecode caches written (``PYTHONDONTWRITEBYTECODE`` is dropped for them), as an
  installed package has them.

Medians of repeated runs. Prints a table and writes ``benchmarks/results/bundle.json``.
Usage: python benchmarks/bundle_bench.py [--runs 9] [--nodes 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import write_chain_provider
from results import write_result

import agent_graph
from agent_graph import compile_provider
from agent_graph.bundles import TRUST_ENV, TrustStore
from agent_graph.compiler import load_provider
from agent_graph.compiler.provider.builder import build_bundle

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
HOST = (
    "import sys, agent_graph\n"
    "trust = sys.argv[3] if len(sys.argv) > 3 else None\n"
    "agent_graph.compile_provider(sys.argv[1], trust=trust)"
    ".evaluate(sys.argv[2], 'default', {})\n"
)


def median_ms(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def agc_command() -> list[str]:
    script = Path(sys.executable).with_name("agc")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "agent_graph"]


def cold_ms(argv: list[str], runs: int, cwd: Path, trust: str = "off") -> float:
    # an installed package has its bytecode compiled; without caches every import would
    # compile its module from source, which is not what a host pays
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env[TRUST_ENV] = trust

    def once() -> None:
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True, env=env)

    once()  # warm the page cache and write the bytecode caches
    return median_ms(once, runs)


def largest_example() -> Path:
    def nodes(manifest: Path) -> int:
        provider = load_provider(manifest)
        return sum(len(g.definition["nodes"]) for g in provider.graphs.values())

    return max(sorted(EXAMPLES.glob("*/provider.yaml")), key=nodes)


def measure(name: str, manifest: Path, graph: str, work: Path, runs: int) -> dict[str, Any]:
    out = work / f"{name}-bundle"
    bundle = out / "manifest.json"
    provider = load_provider(manifest)
    nodes = sum(len(g.definition["nodes"]) for g in provider.graphs.values())

    def build() -> None:
        build_bundle(load_provider(manifest), out)

    row: dict[str, Any] = {"subject": name, "nodes": nodes, "graph": graph}
    row["build_ms"] = median_ms(build, runs)
    cli = agc_command()
    row["build_cold_ms"] = cold_ms([*cli, "build", str(out), "-m", str(manifest)], runs, work)
    row["files"] = len(json.loads(bundle.read_text(encoding="utf-8"))["files"])
    row["bundle_bytes"] = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    store = TrustStore(work / f"{name}-trust")
    compile_provider(bundle, trust=store)  # verifies the IR once and remembers it
    assert agent_graph.open_bundle(bundle, trust=store) is not None
    row["load_ms"] = median_ms(lambda: agent_graph.open_bundle(bundle, trust=store), runs)
    row["load_full_ms"] = median_ms(lambda: compile_provider(bundle), runs)
    row["compile_sources_ms"] = median_ms(lambda: compile_provider(manifest), runs)
    evaluate = [*cli, "evaluate", graph, "--format", "json", "-m"]
    warm = str(store.directory)
    row["cold_agc_evaluate_bundle_ms"] = cold_ms([*evaluate, str(bundle)], runs, work, warm)
    row["cold_agc_evaluate_unverified_ms"] = cold_ms([*evaluate, str(bundle)], runs, work)
    row["cold_agc_evaluate_sources_ms"] = cold_ms([*evaluate, str(manifest)], runs, work)
    host = [sys.executable, "-c", HOST]
    row["cold_host_bundle_ms"] = cold_ms([*host, str(bundle), graph, warm], runs, work)
    row["cold_host_sources_ms"] = cold_ms([*host, str(manifest), graph], runs, work)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        chain = write_chain_provider(work / "chain", args.nodes)
        example = largest_example()
        copy = work / example.parent.name
        shutil.copytree(example.parent, copy)
        first = next(iter(load_provider(copy / "provider.yaml").graphs))
        rows = [
            measure(f"chain-{args.nodes}", chain, "chain", work, args.runs),
            measure(example.parent.name, copy / "provider.yaml", first, work, args.runs),
        ]
        baseline = cold_ms([sys.executable, "-c", "pass"], args.runs, work)
        isolated = cold_ms([sys.executable, "-I", "-S", "-c", "pass"], args.runs, work)
    columns = [
        ("build_ms", "build"),
        ("build_cold_ms", "agc build"),
        ("load_ms", "load trusted"),
        ("load_full_ms", "load verify"),
        ("compile_sources_ms", "compile src"),
        ("cold_agc_evaluate_bundle_ms", "agc eval bundle"),
        ("cold_agc_evaluate_unverified_ms", "agc eval verify"),
        ("cold_agc_evaluate_sources_ms", "agc eval src"),
        ("cold_host_bundle_ms", "host bundle"),
        ("cold_host_sources_ms", "host src"),
    ]
    print(f"{'subject':<16} {'nodes':>6} " + " ".join(f"{title:>15}" for _, title in columns))
    for row in rows:
        cells = " ".join(f"{row[key]:>12.1f} ms" for key, _ in columns)
        print(f"{row['subject']:<16} {row['nodes']:>6} {cells}")
    print(f"python -c pass: {baseline:.1f} ms (python -I -S -c pass: {isolated:.1f} ms)")
    write_result(
        "bundle",
        {
            "runs": args.runs,
            "python_start_ms": baseline,
            "python_start_isolated_ms": isolated,
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
