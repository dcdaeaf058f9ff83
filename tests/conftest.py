"""Suite-wide setup: the CLI's trust store lives in a temporary folder, not the user's cache."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

from agent_graph.bundles import TRUST_ENV

if TRUST_ENV not in os.environ:
    _folder = tempfile.mkdtemp(prefix="agc-trust-")
    os.environ[TRUST_ENV] = _folder  # inherited by every agc the tests start
    atexit.register(shutil.rmtree, _folder, True)


def _is_comparison(report: pytest.TestReport) -> bool:
    if "reference" in report.keywords:
        return True
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
    return "reference" in str(reason).lower()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line on the comparisons with the Node reference: how many ran, or why skipped."""
    stats = terminalreporter.stats
    skipped = [r for r in stats.get("skipped", []) if _is_comparison(r)]
    ran = [
        r
        for key in ("passed", "failed")
        for r in stats.get(key, [])
        if r.when == "call" and "reference" in r.keywords
    ]
    if not skipped and not ran:
        return
    if skipped and not ran:
        why = (
            "AGC_REFERENCE_CLI and AGC_REFERENCE_DIR are not set"
            if not (os.environ.get("AGC_REFERENCE_CLI") and os.environ.get("AGC_REFERENCE_DIR"))
            else "the reference or node was not found"
        )
        line = (
            f"reference comparisons: {len(skipped)} skipped ({why}; "
            'docs/testing.md, "The reference comparisons", says how to build the reference)'
        )
    else:
        line = f"reference comparisons: {len(ran)} run, {len(skipped)} skipped"
    terminalreporter.write_line(line)
