"""A per-Run stop (``Stop.request(kill_own=True)``, what MCP's ``flow_control stop`` sends)
kills the Run's running commands, parallel branches included, and no other process's."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from agent_graph import flow
from agent_graph.flow import Stop
from flow_run_support import command, package

GRAPH = """
start((开始)) --> a[a]
a -->|已执行| f{{并行}}
f --> x[x]
f --> y[y]
x -->|已执行| j[j]
y -->|已执行| j
j -->|已执行| finish((结束))
"""


def sleeper(pid_file: Path) -> str:
    return (
        f"require('fs').writeFileSync({json.dumps(str(pid_file))}, String(process.pid));"
        "setTimeout(()=>{}, 60000)"
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_per_run_stop_kills_the_commands_of_parallel_branches(tmp_path: Path) -> None:
    pids = {name: tmp_path / f"{name}.pid" for name in ("x", "y")}
    pkg = package(
        tmp_path,
        "fork",
        GRAPH,
        command("a", "process.stdout.write('a')"),
        command("x", sleeper(pids["x"])),
        command("y", sleeper(pids["y"])),
        command("j", "process.stdout.write('j')", stdin='{"x": {x.outcome}, "y": {y.outcome}}'),
    )
    stop = Stop()
    result: dict[str, Any] = {}

    def drive() -> None:
        with stop.owning():  # the thread that drives this Run, as the MCP host's does
            result["summary"] = flow.run(pkg, "t", state=tmp_path / "r.json", stop=stop)

    driver = threading.Thread(target=drive, daemon=True)
    driver.start()
    deadline = time.monotonic() + 30
    while not all(p.exists() and p.read_text() for p in pids.values()):
        assert time.monotonic() < deadline, "the branches did not start"
        time.sleep(0.05)
    running = {name: int(p.read_text()) for name, p in pids.items()}
    stop.request(kill_children=False, kill_own=True)
    driver.join(20)  # the branches sleep 60 s: only killing them ends the Run this soon
    assert not driver.is_alive()
    assert result["summary"].state == "interrupted"
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in running.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in running.values())
