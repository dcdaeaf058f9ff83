"""Time ``agc flow check`` (in process: read, parse, every Appendix A check) on generated Flows.

Each generated Flow is a chain of work nodes, alternating Agent and command nodes,
with a fork of two command branches and their join every tenth node, so every kind of
check has work to do. Besides the generated sizes, the set of small hand-written
packages is checked in one pass: every ``FLOW.md`` package of the repository (examples,
the corpus, the spec fixtures; valid ones and ones with findings alike).

Each figure is the fastest of its repeats after one warm-up: wall time, and the CPU time
of the process (``time.process_time``: what a busy machine disturbs least). A size whose
check is quick gets more repeats, up to a quarter second of them: seven of a 100-node
check (2 ms) read 3.4 ms on a busy machine, where two hundred read 1.9. The table
shows the growth of each size over the one before (linear is 10 for a tenfold size).

With ``AGC_FLOW_PEER`` naming a directory that holds a TypeScript Flow loader built to
``flow-loader.js`` (docs/testing.md, Benchmarks: the only other public Flow runtime's
``src/parser.ts`` and ``src/flow-loader.ts``), ``benchmarks/flow_peer.mjs`` times it in
one ``node`` process on the same packages (its ``loadFlow``, fastest pass after a
warm-up, CPU from ``process.cpuUsage``), and a second table gives agc / peer. Writes
``benchmarks/results/flow-check.json``.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_result

from agent_graph import flow


def flow_text(nodes: int) -> str:
    """A valid FLOW.md of about ``nodes`` work nodes."""
    graph = ["flowchart TD"]
    sections: list[str] = []
    previous = "start((开始))"
    label = ""
    index = 0
    while index < nodes:
        ref = f"n{index}"
        if index % 10 == 9 and index + 3 <= nodes:
            fork, a, b, join = f"f{index}", f"a{index}", f"b{index}", f"j{index}"
            graph += [
                f"  {previous} -->{label} {fork}{{{{并行}}}}",
                f"  {fork} --> {a}[Branch A {index}]",
                f"  {fork} --> {b}[Branch B {index}]",
                f"  {a} -->|已执行| {join}[Join {index}]",
                f"  {b} -->|已执行| {join}",
            ]
            branch_body = '{"command": "node", "args": ["-e", "0"]}'
            sections += [_command(f"Branch {x} {index}", branch_body) for x in "AB"]
            stdin = (
                f'{{"command": "node", "stdin": {{"a": {{{a}.outcome}}, "b": {{{b}.outcome}}}}}}'
            )
            sections.append(_command(f"Join {index}", stdin))
            previous, label, index = join, "|已执行|", index + 3
            continue
        if index % 2:
            body = '{"command": "node", "args": ["-e", "0"], "stdin": {"in": "{outcome}"}}'
            sections.append(_command(f"Step {index}", body))
            graph.append(f"  {previous} -->{label} {ref}[Step {index}]")
            label = "|已执行|"
        else:
            marker = "新建Agent" if index == 0 else "复用Agent"
            graph.append(f"  {previous} -->{label} {ref}[Step {index}]")
            graph.append(f"  {ref} -->|stop| finish")
            sections.append(
                f"## Step {index}\n\n```{marker}\nDo step {index} with:\n{{outcome}}\n```\n\n"
                "### next\n\nGo on.\n\n### stop\n\nStop here.\n"
            )
            label = "|next|"
        previous = ref
        index += 1
    graph.append(f"  {previous} -->{label} finish((结束))")
    front = "---\nname: Generated\ndescription: A generated Flow for benchmarks.\n---\n\n"
    return front + "```mermaid\n" + "\n".join(graph) + "\n```\n\n" + "\n".join(sections)


def _command(name: str, body: str) -> str:
    return f"## {name}\n\n```执行自定义命令\n{body}\n```\n\n### 已执行\n\nRan.\n"


def write_flow(root: Path, nodes: int) -> Path:
    package = root / f"gen{nodes}"
    package.mkdir(parents=True)
    (package / "FLOW.md").write_text(flow_text(nodes), encoding="utf-8")
    return package


HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEER_SCRIPT = HERE / "flow_peer.mjs"
#: Least passes the peer gets per package (see main).
PEER_REPEATS = 30


def small_packages() -> list[Path]:
    """Every ``FLOW.md`` package of the repository, in path order."""
    found = {p.parent for p in ROOT.rglob("FLOW.md") if ".git" not in p.parts}
    return sorted(found)


#: The least time a figure's repeats take together (see the module's docstring).
MIN_SPAN_S = 0.25
MAX_RUNS = 500


def runs_for(first_s: float, repeats: int) -> int:
    """``repeats``, or more when that many runs of ``first_s`` take under MIN_SPAN_S."""
    return max(repeats, min(MAX_RUNS, int(MIN_SPAN_S / max(first_s, 1e-6))))


def timed(action: Callable[[], object], repeats: int) -> tuple[float, float, float, int]:
    """(fastest wall, median wall, fastest CPU, runs) of at least ``repeats`` runs after a
    warm-up (:func:`runs_for`)."""
    started = time.perf_counter()
    action()
    repeats = runs_for(time.perf_counter() - started, repeats)
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return min(walls), statistics.median(walls), min(cpus), repeats


def measure(package: Path, nodes: int, repeats: int) -> dict[str, float | int]:
    size = (package / "FLOW.md").stat().st_size
    found = flow.check(package)
    errors = [d for d in found if d.severity == "error"]
    if errors:
        raise SystemExit(f"generated Flow of {nodes} nodes is invalid: {errors[0]}")
    wall, median, cpu, runs = timed(lambda: flow.check(package), repeats)
    return {
        "nodes": nodes,
        "bytes": size,
        "min_s": wall,
        "median_s": median,
        "cpu_s": cpu,
        "runs": runs,
    }


def measure_small(packages: list[Path], repeats: int) -> dict[str, Any]:
    wall, median, cpu, runs = timed(lambda: [flow.check(p) for p in packages], repeats)
    return {
        "packages": len(packages),
        "min_s": wall,
        "median_s": median,
        "cpu_s": cpu,
        "runs": runs,
    }


def peer(groups: dict[str, tuple[list[Path], int]]) -> dict[str, Any] | None:
    """The peer's figures per group (``AGC_FLOW_PEER``), or None when it is not set up."""
    where = os.environ.get("AGC_FLOW_PEER")
    if not where:
        return None
    jobs = [
        {"name": name, "paths": [str(p) for p in paths], "repeats": repeats}
        for name, (paths, repeats) in groups.items()
    ]
    done = subprocess.run(
        ["node", str(PEER_SCRIPT), where],
        input=json.dumps({"groups": jobs}),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"the peer's loader failed ({where}): {done.stderr.strip()[-400:]}")
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10, 100, 1000, 5000, 10000])
    parser.add_argument("--repeats", type=int, default=7, help="least runs per size up to 1,000")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        packages = {n: write_flow(Path(tmp), n) for n in args.sizes}
        repeats = {n: args.repeats if n <= 1000 else max(2, args.repeats // 2) for n in args.sizes}
        rows = [measure(packages[n], n, repeats[n]) for n in args.sizes]
        smalls = small_packages()
        small = measure_small(smalls, max(2, args.repeats // 2))
        # the peer's JIT keeps getting faster over many more passes than ours needs to be
        # steady (a 1,000-node Flow: 21.9 ms CPU at its best of 7, 12.3 ms of 30), so it
        # gets at least PEER_REPEATS: agc / peer is against the peer at its fastest
        groups = {
            str(row["nodes"]): ([packages[row["nodes"]]], max(int(row["runs"]), PEER_REPEATS))
            for row in rows
        }
        groups["small"] = (smalls, max(int(small["runs"]), PEER_REPEATS // 3))
        theirs = peer(groups)
    print(f"{'nodes':>8} {'FLOW.md KiB':>12} {'check (min)':>12} {'CPU (min)':>10} {'growth':>7}")
    for i, row in enumerate(rows):
        growth = f"{row['cpu_s'] / rows[i - 1]['cpu_s']:.1f}" if i else "-"
        print(
            f"{row['nodes']:>8} {row['bytes'] / 1024:>12.1f} {row['min_s'] * 1000:>9.1f} ms "
            f"{row['cpu_s'] * 1000:>7.1f} ms {growth:>7}"
        )
    print(
        f"{small['packages']:>5} small packages, one pass: {small['min_s'] * 1000:.1f} ms, "
        f"CPU {small['cpu_s'] * 1000:.1f} ms"
    )
    figures: dict[str, Any] = {"rows": rows, "small": small, "peer": theirs}
    if theirs is None:
        print("(set AGC_FLOW_PEER to a built peer loader to compare with it: docs/testing.md)")
    else:
        print(f"\n{'case':>22} {'agc CPU':>10} {'peer CPU':>10} {'agc / peer':>11}")
        mine = {str(r["nodes"]): r["cpu_s"] for r in rows} | {"small": small["cpu_s"]}
        for name, found in theirs.items():
            label = f"{int(name):,} nodes" if name.isdigit() else f"{small['packages']} small"
            ms = mine[name] * 1000
            ratio = ms / found["cpu_ms"] if found["cpu_ms"] else float("inf")
            print(f"{label:>22} {ms:>7.1f} ms {found['cpu_ms']:>7.1f} ms {ratio:>11.2f}")
            found["ratio"] = round(ratio, 3)
    write_result("flow-check", figures)


if __name__ == "__main__":
    main()
