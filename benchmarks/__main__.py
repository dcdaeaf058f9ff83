"""``python -m benchmarks``: every benchmark, or the quick checks CI runs.

``python -m benchmarks --quick`` (under two minutes) measures the ratios of
:mod:`quick` — growth 1,000 -> 10,000 nodes, trace overhead, cold start, a Flow Run's
200-command chain against spawn + fsync'd append — on CPU time, the two sides of each
taking turns, the least of their repeats; prints them with the load average, writes
``benchmark-results.json`` and exits 1 when one exceeds its limit.
``python -m benchmarks`` runs each benchmark script in turn (each prints its table and
writes ``benchmarks/results/<name>.json``), then, when ``AGC_REFERENCE_DIR`` names a
built reference checkout (its ``dist/index.js``), times the reference SDK on the same
cases in the same run and prints the agc / reference table (:mod:`compare`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: The benchmark scripts the full run executes, in order.
SCRIPTS = (
    "vm_bench.py",
    "validate_bench.py",
    "load_bench.py",
    "bundle_bench.py",
    "materialize_bench.py",
    "flow_bench.py",
    "flow_run_bench.py",
    "agent_reply_bench.py",
    "graph_bench.py",
    "lsp_bench.py",
    "reach_bench.py",
)


def _say(line: str) -> None:
    print(line, flush=True)


def _loads(loads: tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.1f}" for x in loads)


def quick(out: Path) -> int:
    from quick import run_checks

    started = time.perf_counter()
    load_before = os.getloadavg()
    _say(
        f"quick benchmark checks (ratios of CPU times measured in this run; load average "
        f"{_loads(load_before)} on {os.cpu_count()} CPUs)"
    )
    checks = run_checks(_say)
    load_after = os.getloadavg()
    failed = [c for c in checks if not c.ok]
    result = {
        "schema": "agent-graph.benchmark-results.v1",
        "mode": "quick",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        # 1, 5 and 15 minutes, before the first check and after the last
        "load_average": {"start": list(load_before), "end": list(load_after)},
        "seconds": round(time.perf_counter() - started, 1),
        "checks": [c.to_dict() for c in checks],
        "ok": not failed,
    }
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    _say(f"wrote {out} ({result['seconds']} s; load average now {_loads(load_after)})")
    for check in failed:
        _say(
            f"REGRESSION: {check.name} is {check.ratio:.1f}, above its limit {check.limit:g} "
            f"({check.detail})"
        )
    return 1 if failed else 0


def full() -> int:
    status = 0
    for script in SCRIPTS:
        path = HERE / script
        if not path.is_file():
            continue
        _say(f"\n== {script}")
        done = subprocess.run([sys.executable, str(path)], check=False)
        status = status or done.returncode
    reference = os.environ.get("AGC_REFERENCE_DIR")
    if reference:
        from compare import compare

        _say("\n== agc / reference (same cases, same run)")
        status = status or compare(Path(reference), _say)
    else:
        _say("\n(set AGC_REFERENCE_DIR to a built reference checkout to compare with it)")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument(
        "--quick", action="store_true", help="the CI checks: ratios, under two minutes"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("benchmark-results.json"),
        help="where --quick writes its results (default: ./benchmark-results.json)",
    )
    args = parser.parse_args(argv)
    return quick(args.out) if args.quick else full()


if __name__ == "__main__":
    sys.exit(main())
