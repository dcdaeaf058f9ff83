"""The package's speed machinery against its plain alternative, on the shipped examples.

A mechanism stays only where it pays on inputs users have. Measured here, on every
Provider under ``examples/`` and every Flow package under ``examples/flows``: frozen
records (``agent_graph.frozen.record``) against ``@dataclass(frozen=True,
slots=True)``, and the compile cache behind them and the IR decoders
(``frozen.compile_cached``) against compiling that generated code in every process.
(A YAML line reader for block-style Provider files was measured here too and removed:
it declined every shipped graph file and made cold ``agc validate`` 3-5 ms slower.)

Figures are fresh ``python -c`` processes running ``agent_graph.cli.main`` (cold ``agc
evaluate`` on a built bundle with a warm trust store, ``agc validate``, ``agc flow
check``), bytecode caches written as an installed package has them. Each alternative is
put in place by a prelude that runs before anything imports the module it replaces, so
its processes never load the mechanism; the variants take turns run by run, so a drift
of the machine's speed falls on each alike. A figure is the median of ``--runs``
processes, and "vs shipped" the median of the per-turn differences from the shipped
variant.

Prints a table and writes ``benchmarks/results/machinery.json``.
Usage: python benchmarks/machinery_bench.py [--runs 21]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_result

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

#: What every cold process runs after its prelude: the console script's body.
RUN = "from agent_graph.cli import main\nsys.exit(main())\n"

#: The shipped package's processes: no prelude.
SHIPPED = "shipped"

#: frozen.record, field, replace, is_record and record_fields as plain dataclasses; the
#: compile cache kept, loaded from frozen.py's own file under another name.
DATACLASSES = """
import dataclasses, importlib.util, os, types
_spec = importlib.util.find_spec("agent_graph")
_path = os.path.join(_spec.submodule_search_locations[0], "frozen.py")
_real_spec = importlib.util.spec_from_file_location("_bench_frozen", _path)
_real = importlib.util.module_from_spec(_real_spec)
_real_spec.loader.exec_module(_real)
_fake = types.ModuleType("agent_graph.frozen")
_fake.compile_cached = _real.compile_cached
_fake.record = lambda cls: dataclasses.dataclass(frozen=True, slots=True)(cls)
_fake.field = dataclasses.field
_fake.replace = dataclasses.replace
_fake.is_record = lambda cls: isinstance(cls, type) and dataclasses.is_dataclass(cls)
_fake.record_fields = lambda cls: tuple(f.name for f in dataclasses.fields(cls))
sys.modules["agent_graph.frozen"] = _fake
"""

#: Frozen records kept, their methods and the IR decoders compiled in every process.
NO_COMPILE_CACHE = """
import agent_graph.frozen as _frozen
_frozen.compile_cached = lambda source, filename: compile(source, filename, "exec")
"""

VARIANTS = {
    SHIPPED: "",
    "dataclasses": DATACLASSES,
    "no compile cache": NO_COMPILE_CACHE,
}


def _providers() -> list[Path]:
    return sorted(EXAMPLES.glob("*/provider.yaml"))


def _flows() -> list[Path]:
    return sorted(p.parent for p in (EXAMPLES / "flows").glob("*/FLOW.md"))


def cold(
    commands: dict[str, list[str]], variants: dict[str, str], runs: int, env: dict[str, str]
) -> list[dict[str, Any]]:
    """Per command and variant: median ms, and the median per-turn difference from the
    shipped variant (the variants of one command run in turn, ``runs`` turns)."""
    rows = []
    for label, argv in commands.items():
        times: dict[str, list[float]] = {name: [] for name in variants}
        outputs: dict[str, bytes] = {}
        for turn in range(runs + 1):  # turn 0 warms bytecode, compile and trust caches
            for name, prelude in variants.items():
                script = "import sys\n" + prelude + RUN
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-c", script, *argv],
                    env=env,
                    capture_output=True,
                    timeout=120,
                    check=False,
                )
                elapsed = time.perf_counter() - start
                if done.returncode != 0:
                    raise SystemExit(f"{label} ({name}) failed: {done.stderr.decode()[-2000:]}")
                outputs.setdefault(name, done.stdout)
                if outputs[name] != outputs[SHIPPED]:
                    raise SystemExit(f"{label}: the {name} variant printed something else")
                if turn:
                    times[name].append(elapsed * 1000)
        shipped = times[SHIPPED]
        for name, found in times.items():
            rows.append(
                {
                    "command": label,
                    "variant": name,
                    "median_ms": round(statistics.median(found), 1),
                    "min_ms": round(min(found), 1),
                    "vs_shipped_ms": round(
                        statistics.median(a - b for a, b in zip(found, shipped, strict=True)), 1
                    ),
                    "runs": runs,
                }
            )
    return rows


def _once_ms(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, timeout=60)
    return (time.perf_counter() - start) * 1000


def _print_cold(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    print(f"{'command':<34} {'variant':<17} {'median':>9} {'min':>9} {'vs shipped':>11}")
    for row in rows:
        print(
            f"{row['command']:<34} {row['variant']:<17} {row['median_ms']:>6.1f} ms "
            f"{row['min_ms']:>6.1f} ms {row['vs_shipped_ms']:>+8.1f} ms"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]) if __doc__ else None,
    )
    parser.add_argument("--runs", type=int, default=21, help="fresh processes per figure")
    args = parser.parse_args(argv)

    from agent_graph.bundles import TRUST_ENV
    from agent_graph.compiler import load_provider
    from agent_graph.compiler.provider.builder import build_bundle

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env[TRUST_ENV] = str(work / "trust")
        evaluate: dict[str, list[str]] = {}
        validate: dict[str, list[str]] = {}
        for manifest in _providers():
            name = manifest.parent.name
            bundle = work / name
            build_bundle(load_provider(manifest), bundle)
            built = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
            graph = built["graphs"][0]["id"]  # the first the manifest lists
            evaluate[f"evaluate {name} {graph}"] = [
                "evaluate",
                graph,
                "-m",
                str(bundle / "manifest.json"),
                "--format",
                "json",
            ]
            validate[f"validate {name}"] = ["validate", "-m", str(manifest)]
        for package in _flows():
            validate[f"flow check {package.name}"] = ["flow", "check", str(package)]
        rows = cold(evaluate | validate, VARIANTS, args.runs, env)
        _print_cold("Frozen records and the compile cache: cold processes", rows)
    start_ms = statistics.median(_once_ms([sys.executable, "-c", "pass"]) for _ in range(args.runs))
    print(f"\npython -c pass: {start_ms:.1f} ms (median of {args.runs})")
    write_result(
        "machinery",
        {"runs": args.runs, "python_start_ms": round(start_ms, 1), "rows": rows},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
