"""Every benchmark script is run by ``python -m benchmarks``, and the two of the
authoring tools (the language server's answer to an edit, ``explain --reach``) measure
what they say at a small size."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import lsp_bench
import reach_bench

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
#: Run by hand: it times fresh processes of every variant of the speed machinery
#: (minutes), for the figures in the docstrings of ``agent_graph.frozen``.
BY_HAND = {"machinery_bench.py"}


def _scripts() -> tuple[str, ...]:
    """``SCRIPTS`` of ``benchmarks/__main__.py`` (not importable by name under pytest)."""
    spec = importlib.util.spec_from_file_location("benchmarks_main", BENCHMARKS / "__main__.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scripts: tuple[str, ...] = module.SCRIPTS
    return scripts


def test_every_benchmark_script_is_in_the_full_run() -> None:
    found = {p.name for p in BENCHMARKS.glob("*_bench.py")} - BY_HAND
    assert sorted(found) == sorted(_scripts())


def test_lsp_bench_times_a_broken_and_a_mended_buffer() -> None:
    figures = lsp_bench.measure(nodes=20, rounds=1)
    assert set(figures) == {
        f"{state}_{what}_ms" for state in ("broken", "mended") for what in ("min", "median")
    }
    assert all(value >= 0 for value in figures.values())


def test_reach_bench_reaches_every_example_node() -> None:
    figures = reach_bench.measure(repeat=1)
    assert figures["nodes"] == figures["reached"]
    assert int(str(figures["nodes"])) >= 30
