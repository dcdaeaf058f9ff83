"""Time the Flow runtime: real concurrency of fork branches, and the runner's own cost.

1. A fork of 4 command branches that each sleep ``--sleep`` seconds (``node -e``): the
   round (first branch start to last branch end) should take about one sleep, not four;
   the table reports the ratio to the serial time (4 × sleep).
2. A loop Flow whose one Agent node answers ``again`` ``--visits - 1`` times and then
   ``stop``, with an in-process adapter (no subprocess, no model): the runner's overhead
   per visit, which is the atomic, fsync'ed commit of the whole Run record (its size grows
   with the log, so the per-visit cost grows with the Run's length).
3. A chain of ``--chain`` command nodes that each run ``true``, through
   ``agent_graph.flow.run``, against a baseline that only spawns the same commands one
   after the other and makes one ``fsync``ed append per visit (what any durable runner
   must do): the ratio is the runner's own cost (issue 26 asks for at most 2). With it,
   the record's bytes per content byte: the final record (and its side files) against
   the JSON of the visits' contents, for the chain and for a few visits with outputs
   over the side-file threshold.

Prints a table and writes ``benchmarks/results/flow-run.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import children_cpu, write_result

from agent_graph import flow
from agent_graph.flow import AgentAnswer, AgentRequest

FORK = """---
name: Fork
description: Four sleeping branches.
---

```mermaid
flowchart TD
  start((开始)) --> a[a]
  a -->|已执行| f{{{{并行}}}}
{branches}
  j -->|已执行| finish((结束))
```

## a

```执行自定义命令
{{"command": "node", "args": ["-e", ""]}}
```

### 已执行

Ran.

{sections}
## j

```执行自定义命令
{{"command": "node", "args": ["-e", ""], "stdin": {{{refs}}}}}
```

### 已执行

Joined.
"""

LOOP = """---
name: Loop
description: One Agent node that loops.
---

```mermaid
flowchart TD
  start((开始)) --> p[p]
  p -->|again| p
  p -->|stop| finish((结束))
```

## p

```新建Agent
Once more: {outcome}
```

### again

Loop.

### stop

Stop.
"""


def fork_package(root: Path, sleep: float) -> Path:
    names = ["b1", "b2", "b3", "b4"]
    branches = "\n".join(f"  f --> {n}[{n}]\n  {n} -->|已执行| j[j]" for n in names)
    js = f"setTimeout(()=>{{}},{int(sleep * 1000)})"
    sections = "".join(
        f'## {n}\n\n```执行自定义命令\n{{"command": "node", "args": ["-e", "{js}"]}}\n```\n\n'
        "### 已执行\n\nSlept.\n\n"
        for n in names
    )
    refs = ", ".join(f'"{n}": {{{n}.outcome}}' for n in names)
    text = FORK.format(branches=branches, sections=sections, refs=refs)
    package = root / "fork"
    package.mkdir()
    (package / "FLOW.md").write_text(text, encoding="utf-8")
    return package


def at(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def bench_fork(root: Path, sleep: float, repeat: int) -> dict[str, Any]:
    package = fork_package(root, sleep)
    rounds = []
    for index in range(repeat):
        state = root / f"fork-{index}.json"
        flow.run(package, "go", state=state, cwd=root)
        document = json.loads(state.read_text(encoding="utf-8"))
        branches = [v for v in document["visits"] if v["enteredFrom"] == "parallel"]
        start = min(at(v["startedAt"]) for v in branches)
        end = max(at(v["endedAt"]) for v in branches)
        rounds.append(end - start)
    best = min(rounds)
    return {
        "sleep_s": sleep,
        "branches": 4,
        "round_s_best": round(best, 3),
        "round_s_median": round(statistics.median(rounds), 3),
        "serial_s": 4 * sleep,
        "ratio_to_serial": round(best / (4 * sleep), 3),
    }


class Looper:
    def __init__(self, visits: int) -> None:
        self.left = visits

    def ask(self, request: AgentRequest) -> AgentAnswer:
        self.left -= 1
        return AgentAnswer("again" if self.left > 0 else "stop", self.left, "bench-agent")

    def release(self, agent: str) -> None:
        pass


def bench_loop(root: Path, visits: int) -> dict[str, Any]:
    package = root / "loop"
    package.mkdir()
    (package / "FLOW.md").write_text(LOOP, encoding="utf-8")
    state = root / "loop.json"
    started = time.perf_counter()
    summary = flow.run(package, "go", state=state, agent=Looper(visits), cwd=root)
    elapsed = time.perf_counter() - started
    assert summary.state == "completed", summary
    return {
        "visits": visits,
        "total_s": round(elapsed, 3),
        "per_visit_ms": round(elapsed / visits * 1000, 3),
        "record_bytes": state.stat().st_size,
    }


def chain_package(root: Path, nodes: int, argv: list[str], name: str = "chain") -> Path:
    """A FLOW.md of ``nodes`` command nodes in a row, each running ``argv``."""
    refs = [f"n{i}" for i in range(1, nodes + 1)]
    edges = [f"  start((开始)) --> {refs[0]}[{refs[0]}]"]
    edges += [f"  {a} -->|已执行| {b}[{b}]" for a, b in itertools.pairwise(refs)]
    edges.append(f"  {refs[-1]} -->|已执行| finish((结束))")
    block = json.dumps({"command": argv[0], "args": argv[1:]})
    sections = "".join(
        f"## {ref}\n\n```执行自定义命令\n{block}\n```\n\n### 已执行\n\nRan.\n\n" for ref in refs
    )
    text = (
        f"---\nname: {name}\ndescription: {nodes} commands in a row.\n---\n\n"
        "```mermaid\nflowchart TD\n" + "\n".join(edges) + "\n```\n\n" + sections
    )
    package = root / name
    package.mkdir()
    (package / "FLOW.md").write_text(text, encoding="utf-8")
    return package


def cpu() -> float:
    """CPU seconds of this process and of its ended children (the commands), both in
    microseconds: ``os.times`` counts clock ticks (10 ms here), each about 4 % of the
    240 ms baseline."""
    return time.process_time() + children_cpu()


def _baseline(root: Path, argv: list[str], nodes: int) -> tuple[float, float]:
    """Spawn the commands one after another, one fsync'd append per visit: (wall, CPU)."""
    log = root / "baseline.log"
    started, used = time.perf_counter(), cpu()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for index in range(nodes):
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False)
            line = json.dumps({"visit": index, "exit": done.returncode}) + "\n"
            os.write(fd, line.encode())
            os.fsync(fd)
    finally:
        os.close(fd)
    log.unlink()
    return time.perf_counter() - started, cpu() - used


def record_bytes(state: Path) -> int:
    """The record on disk: snapshot, journal and the side files of its contents."""
    total = state.stat().st_size
    journal = state.parent / f".{state.name}.journal"
    if journal.exists():
        total += journal.stat().st_size
    contents = state.parent / ".agc-flow-contents"
    if contents.is_dir():
        total += sum(p.stat().st_size for p in contents.iterdir())
    return total


def content_bytes(state: Path) -> int:
    """The JSON of every visit's content (what the Run produced), once each."""
    from agent_graph.flow.runtime.store import RunFile

    document = RunFile(state).read()
    return sum(
        len(json.dumps(v["result"]["content"], ensure_ascii=False).encode())
        for v in document["visits"]
        if v.get("result")
    )


def bench_chain(root: Path, nodes: int, repeat: int) -> dict[str, Any]:
    """agc's time for the chain against the baseline, best of ``repeat`` each: wall time
    (what a user waits) and CPU time (the runner's own work, fsync waits left out: the
    figure a busy machine disturbs least)."""
    from agent_graph.flow.runtime import start

    true = shutil.which("true") or "true"
    package = chain_package(root, nodes, [true])
    runs: list[tuple[float, float]] = []
    runners: list[tuple[float, float]] = []
    bases: list[tuple[float, float]] = []
    state = root / "runs" / "chain.json"
    program = flow.compile(package)
    for _ in range(repeat):
        shutil.rmtree(root / "runs", ignore_errors=True)
        (root / "runs").mkdir()
        started, used = time.perf_counter(), cpu()
        summary = flow.run(package, "go", state=state, cwd=root)
        runs.append((time.perf_counter() - started, cpu() - used))
        assert summary.state == "completed", summary
        started, used = time.perf_counter(), cpu()
        summary = start(program, "go", state=root / "runs" / "runner.json", cwd=root)
        runners.append((time.perf_counter() - started, cpu() - used))
        assert summary.state == "completed", summary
        bases.append(_baseline(root, [true], nodes))
    agc, base = min(w for w, _ in runs), min(w for w, _ in bases)
    agc_cpu, base_cpu = min(c for _, c in runs), min(c for _, c in bases)
    runner, runner_cpu = min(w for w, _ in runners), min(c for _, c in runners)
    return {
        # the Run alone, its Flow compiled beforehand (compiling is flow_bench.py's):
        # the runner against a durable runner that does nothing but spawn and append
        "runner_s": round(runner, 3),
        "runner_ratio": round(runner / base, 3),
        "runner_cpu_s": round(runner_cpu, 3),
        "runner_cpu_ratio": round(runner_cpu / base_cpu, 3),
        "nodes": nodes,
        "agc_s": round(agc, 3),
        "baseline_s": round(base, 3),
        "ratio": round(agc / base, 3),
        "agc_cpu_s": round(agc_cpu, 3),
        "baseline_cpu_s": round(base_cpu, 3),
        "cpu_ratio": round(agc_cpu / base_cpu, 3),
        "record_bytes": record_bytes(state),
        "record_bytes_per_content_byte": round(record_bytes(state) / content_bytes(state), 2),
    }


def bench_noisy(root: Path, visits: int, output_bytes: int) -> dict[str, Any]:
    """Record bytes per content byte for command visits that print ``output_bytes`` each."""
    # a different output each visit: identical ones would be stored once, which flatters
    js = f"process.stdout.write(String(Math.random()).padEnd({output_bytes}, 'x'))"
    package = chain_package(root, visits, ["node", "-e", js], name="noisy")
    (root / "noisy-runs").mkdir()
    state = root / "noisy-runs" / "noisy.json"
    summary = flow.run(package, "go", state=state, cwd=root)
    assert summary.state == "completed", summary
    size = record_bytes(state)
    return {
        "visits": visits,
        "output_bytes": output_bytes,
        "record_bytes": size,
        "record_bytes_per_content_byte": round(size / content_bytes(state), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sleep", type=float, default=1.0, help="seconds each branch sleeps")
    parser.add_argument("--repeat", type=int, default=3, help="fork runs (best is reported)")
    parser.add_argument("--visits", type=int, default=1000, help="visits of the loop Flow")
    parser.add_argument("--chain", type=int, default=200, help="command nodes of the chain")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        fork = bench_fork(root, args.sleep, args.repeat)
        loop = bench_loop(root, args.visits)
        chain = bench_chain(root, args.chain, args.repeat)
        noisy = bench_noisy(root, 6, 200_000)
    print(f"{'measure':<40} {'value':>12}")
    label = f"fork of 4 × {args.sleep:g} s: round (best)"
    print(f"{label:<40} {fork['round_s_best']:>10.3f} s")
    print(f"{'  ratio to serial (4 × sleep)':<40} {fork['ratio_to_serial']:>12.3f}")
    print(f"{'loop of ' + str(args.visits) + ' visits: total':<40} {loop['total_s']:>10.3f} s")
    print(f"{'  runner overhead per visit':<40} {loop['per_visit_ms']:>9.3f} ms")
    print(f"{'  final record size':<40} {loop['record_bytes']:>6} bytes")
    label = f"chain of {chain['nodes']} `true` commands: agc"
    print(f"{label:<40} {chain['agc_s']:>10.3f} s")
    print(f"{'  baseline (spawn + fsync append)':<40} {chain['baseline_s']:>10.3f} s")
    print(f"{'  ratio agc / baseline (wall)':<40} {chain['ratio']:>12.3f}")
    cpu_line = f"{chain['agc_cpu_s']:.3f} s / {chain['baseline_cpu_s']:.3f} s"
    print(f"{'  CPU ' + cpu_line:<40} {chain['cpu_ratio']:>12.3f}")
    print(f"{'  the Run alone (compiled beforehand)':<40} {chain['runner_s']:>10.3f} s")
    print(f"{'    ratio to baseline (wall)':<40} {chain['runner_ratio']:>12.3f}")
    print(f"{'    ratio to baseline (CPU)':<40} {chain['runner_cpu_ratio']:>12.3f}")
    print(
        f"{'  record bytes per content byte':<40} {chain['record_bytes_per_content_byte']:>12.2f}"
    )
    label = f"{noisy['visits']} visits printing {noisy['output_bytes']:,} B"
    print(f"{label:<40} {noisy['record_bytes_per_content_byte']:>12.2f} record B / content B")
    write_result("flow-run", {"fork": fork, "loop": loop, "chain": chain, "noisy": noisy})


if __name__ == "__main__":
    main()
