"""Time the Flow runtime: real concurrency of fork branches, and the runner's own cost.

1. A fork of 4 command branches that each sleep ``--sleep`` seconds (``node -e``): the
   round (first branch start to last branch end) should take about one sleep, not four;
   the table reports the ratio to the serial time (4 × sleep).
2. A loop Flow whose one Agent node answers ``again`` ``--visits - 1`` times and then
   ``stop``, with an in-process adapter (no subprocess, no model): the runner's overhead
   per visit, which is the atomic, fsync'ed commit of the whole Run record (its size grows
   with the log, so the per-visit cost grows with the Run's length).

Prints a table and writes ``benchmarks/results/flow-run.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_result

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sleep", type=float, default=1.0, help="seconds each branch sleeps")
    parser.add_argument("--repeat", type=int, default=3, help="fork runs (best is reported)")
    parser.add_argument("--visits", type=int, default=1000, help="visits of the loop Flow")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        fork = bench_fork(root, args.sleep, args.repeat)
        loop = bench_loop(root, args.visits)
    print(f"{'measure':<40} {'value':>12}")
    label = f"fork of 4 × {args.sleep:g} s: round (best)"
    print(f"{label:<40} {fork['round_s_best']:>10.3f} s")
    print(f"{'  ratio to serial (4 × sleep)':<40} {fork['ratio_to_serial']:>12.3f}")
    print(f"{'loop of ' + str(args.visits) + ' visits: total':<40} {loop['total_s']:>10.3f} s")
    print(f"{'  runner overhead per visit':<40} {loop['per_visit_ms']:>9.3f} ms")
    print(f"{'  final record size':<40} {loop['record_bytes']:>6} bytes")
    write_result("flow-run", {"fork": fork, "loop": loop})


if __name__ == "__main__":
    main()
