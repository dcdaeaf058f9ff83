"""Time ``agc flow check`` (in process: read, parse, every Appendix A check) on generated Flows.

Each generated Flow is a chain of work nodes, alternating Agent and command nodes,
with a fork of two command branches and their join every tenth node, so every kind of
check has work to do. Prints a table (with the growth ratio of each size over the one
before: linear is 10 for a tenfold size) and writes ``benchmarks/results/flow-check.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


def measure(nodes: int, repeats: int) -> dict[str, float | int]:
    with tempfile.TemporaryDirectory() as tmp:
        package = write_flow(Path(tmp), nodes)
        size = (package / "FLOW.md").stat().st_size
        found = flow.check(package)
        errors = [d for d in found if d.severity == "error"]
        if errors:
            raise SystemExit(f"generated Flow of {nodes} nodes is invalid: {errors[0]}")
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            flow.check(package)
            times.append(time.perf_counter() - start)
    return {"nodes": nodes, "bytes": size, "median_s": statistics.median(times), "runs": repeats}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10, 100, 1000, 10000])
    parser.add_argument("--repeats", type=int, default=5, help="runs per size up to 1,000")
    args = parser.parse_args(argv)
    rows = [
        measure(n, args.repeats if n <= 1000 else max(1, args.repeats // 2)) for n in args.sizes
    ]
    print(f"{'nodes':>8} {'FLOW.md KiB':>12} {'check (median)':>15} {'growth':>7}")
    for i, row in enumerate(rows):
        ms = row["median_s"] * 1000
        growth = f"{row['median_s'] / rows[i - 1]['median_s']:.1f}" if i else "-"
        print(f"{row['nodes']:>8} {row['bytes'] / 1024:>12.1f} {ms:>12.1f} ms {growth:>7}")
    write_result("flow-check", {"rows": rows})


if __name__ == "__main__":
    main()
