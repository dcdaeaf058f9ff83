"""The runnable examples stay runnable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_host_loop_walks_the_weekly_report_to_completion() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "host_loop.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("draft: actionable, read ['skill.report-drafting'")
    assert lines[1] == "approve: waiting-user, read nothing"
    assert lines[-1] == "complete: completed"
