"""Writing a benchmark's JSON result: the machine's facts, then the figures."""

from __future__ import annotations

import json
import os
import platform
import resource
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def write_result(name: str, figures: dict[str, Any]) -> Path:
    """``benchmarks/results/<name>.json`` with the Python, platform and load average."""
    result = {
        "benchmark": name,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": os.getloadavg()[0],
        **figures,
    }
    target = HERE / "results" / f"{name}.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target.relative_to(HERE.parent)}")
    return target


def children_cpu() -> float:
    """CPU seconds of this process's ended (waited-for) children, user and system."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
