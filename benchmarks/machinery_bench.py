"""The package's speed machinery against its plain alternative, on the shipped examples.

A mechanism stays only where it pays on inputs users have. Measured here, on every
Provider under ``examples/`` (and the Flow packages under ``examples/flows``):

* frozen records (``agent_graph.frozen.record``) against ``@dataclass(frozen=True,
  slots=True)``, and the compile cache behind them and the IR decoders
  (``frozen.compile_cached``) against compiling that generated code in every process;
* the YAML line reader (``documents.yaml_lines``) against LibYAML's events alone
  (``documents.yaml12.parse_yaml_events``).

Cold figures are fresh ``python -c`` processes running ``agent_graph.cli.main`` (cold
``agc evaluate`` on a built bundle with a warm trust store, ``agc validate``, ``agc flow
check``), bytecode caches written as an installed package has them. Each alternative is
put in place by a prelude that runs before anything imports the module it replaces, so
its processes never load the mechanism; the variants take turns run by run, so a drift
of the machine's speed falls on each alike. A figure is the median of ``--runs``
processes, and "vs shipped" the median of the per-turn differences from the shipped
variant. In-process figures: the YAML texts each Provider's load parses, parsed through
each reader (the fastest of ``--repeats``), and that whole load (``load_provider``).

Prints tables and writes ``benchmarks/results/machinery.json``.
Usage: python benchmarks/machinery_bench.py [--runs 21] [--repeats 20]
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

#: A process that never imports the line reader: every text goes to LibYAML.
NO_LINE_READER = """
import types
_fake = types.ModuleType("agent_graph.documents.yaml_lines")
_fake.read_block_yaml = lambda text, line_offset=0: None
sys.modules["agent_graph.documents.yaml_lines"] = _fake
"""

FROZEN_VARIANTS = {
    SHIPPED: "",
    "dataclasses": DATACLASSES,
    "no compile cache": NO_COMPILE_CACHE,
}
YAML_VARIANTS = {SHIPPED: "", "no line reader": NO_LINE_READER}


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


def _print_cold(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    print(f"{'command':<34} {'variant':<17} {'median':>9} {'min':>9} {'vs shipped':>11}")
    for row in rows:
        print(
            f"{row['command']:<34} {row['variant']:<17} {row['median_ms']:>6.1f} ms "
            f"{row['min_ms']:>6.1f} ms {row['vs_shipped_ms']:>+8.1f} ms"
        )


@contextmanager
def _line_reader(enabled: bool, seen: list[tuple[str, int]] | None = None) -> Iterator[None]:
    """``parse_yaml`` with the line reader, or without it; ``seen`` collects each text
    ``parse_yaml`` hands it (text with its final line break, line offset)."""
    from agent_graph.documents import yaml12

    names = vars(yaml12)  # parse_yaml finds the reader among its module's globals
    real = names["read_block_yaml"]

    def reader(text: str, line_offset: int = 0) -> Any:
        if seen is not None:
            seen.append((text, line_offset))
        return real(text, line_offset) if enabled else None

    names["read_block_yaml"] = reader
    try:
        yield
    finally:
        names["read_block_yaml"] = real


def _fastest_ms(action: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def in_process(repeats: int) -> list[dict[str, Any]]:
    """Per Provider: the YAML texts its load parses, through each reader, and the load."""
    from agent_graph.compiler import load_provider
    from agent_graph.documents.yaml12 import parse_yaml, parse_yaml_events
    from agent_graph.documents.yaml_lines import read_block_yaml

    rows = []
    for manifest in _providers():
        texts: list[tuple[str, int]] = []
        with _line_reader(True, texts):
            load_provider(manifest)

        def lines(texts: list[tuple[str, int]] = texts) -> None:
            for text, offset in texts:
                parse_yaml(text, line_offset=offset)

        def events(texts: list[tuple[str, int]] = texts) -> None:
            for text, offset in texts:
                parse_yaml_events(text, text, offset)

        def load(manifest: Path = manifest) -> None:
            load_provider(manifest)

        with _line_reader(True):
            with_reader = _fastest_ms(load, repeats)
        with _line_reader(False):
            without = _fastest_ms(load, repeats)
        rows.append(
            {
                "provider": manifest.parent.name,
                "texts": len(texts),
                "taken": sum(read_block_yaml(t, o) is not None for t, o in texts),
                "kib": round(sum(len(t.encode()) for t, _ in texts) / 1024, 1),
                "parse_line_reader_ms": round(_fastest_ms(lines, repeats), 3),
                "parse_libyaml_ms": round(_fastest_ms(events, repeats), 3),
                "load_line_reader_ms": round(with_reader, 2),
                "load_libyaml_ms": round(without, 2),
            }
        )
    return rows


def _print_in_process(rows: list[dict[str, Any]]) -> None:
    print("\nYAML in process: the texts a Provider's load parses (fastest of the repeats)")
    print(
        f"{'provider':<15} {'texts':>5} {'taken':>5} {'KiB':>6} {'parse: lines':>13} "
        f"{'LibYAML':>9} {'load: lines':>12} {'LibYAML':>9}"
    )
    for row in rows:
        print(
            f"{row['provider']:<15} {row['texts']:>5} {row['taken']:>5} {row['kib']:>6.1f} "
            f"{row['parse_line_reader_ms']:>10.2f} ms {row['parse_libyaml_ms']:>6.2f} ms "
            f"{row['load_line_reader_ms']:>9.2f} ms {row['load_libyaml_ms']:>6.2f} ms"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]) if __doc__ else None,
    )
    parser.add_argument("--runs", type=int, default=21, help="fresh processes per figure")
    parser.add_argument("--repeats", type=int, default=20, help="in-process timings")
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
        frozen_rows = cold(evaluate | validate, FROZEN_VARIANTS, args.runs, env)
        _print_cold("Frozen records and the compile cache: cold processes", frozen_rows)
        yaml_rows = cold(validate, YAML_VARIANTS, args.runs, env)
        _print_cold("The YAML line reader: cold processes", yaml_rows)
    python = [sys.executable, "-c", "pass"]
    start_ms = statistics.median(
        _fastest_ms(lambda: subprocess.run(python, check=True), 1) for _ in range(args.runs)
    )
    print(f"\npython -c pass: {start_ms:.1f} ms (median of {args.runs})")
    yaml_in_process = in_process(args.repeats)
    _print_in_process(yaml_in_process)
    write_result(
        "machinery",
        {
            "runs": args.runs,
            "repeats": args.repeats,
            "python_start_ms": round(start_ms, 1),
            "frozen_cold": frozen_rows,
            "yaml_cold": yaml_rows,
            "yaml_in_process": yaml_in_process,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
