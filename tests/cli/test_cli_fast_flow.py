"""``agc flow check``'s fast path (no click) against the click application.

The fast path must take the plain forms, hand everything else to click untouched, and
print exactly what click's command prints: the same stdout, stderr and exit code, in
text and JSON, for a valid Flow (with children, with warnings) and for every kind of
failure (findings, a syntax error lark reports, an entry that is no package). A fresh
``agc flow check`` must not import click, lark or the other heavy parts either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_graph.cli import app, fast_flow

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "flow_corpus"
ENTRIES = {
    "valid": ROOT / "examples" / "flows" / "repo-stats",
    "children": ROOT / "examples" / "flows" / "ship-release",
    "warning": CORPUS / "11-absolute-path" / "main",
    "findings": CORPUS / "25-edge-target-missing" / "main",
    "syntax": CORPUS / "74-graph-syntax" / "main",
    "not a package": CORPUS / "01-entry-invalid" / "main" / "release.md",
    "missing": CORPUS / "no-such-package",
}


def _both(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[tuple[int, str, str], ...]:
    """(exit code, stdout, stderr) of the fast path itself, then of the click app."""
    fast_code = fast_flow.check_fast(list(args))
    assert fast_code is not None, "the fast path takes this form"
    fast_out = capsys.readouterr()
    code = app.main(list(args))
    click_out = capsys.readouterr()
    return (fast_code, fast_out.out, fast_out.err), (code, click_out.out, click_out.err)


@pytest.mark.parametrize("fmt", [[], ["--format", "human"], ["--format", "json"]])
@pytest.mark.parametrize("case", sorted(ENTRIES))
def test_the_fast_path_prints_what_click_prints(
    case: str, fmt: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    fast, slow = _both(["flow", "check", str(ENTRIES[case]), *fmt], capsys)
    assert fast == slow
    code, out, err = fast
    assert (out or err).strip()  # something was said either way
    if fmt[-1:] == ["json"]:
        document = json.loads(out if code == 0 else err)
        assert document["state"] == ("valid" if code == 0 else "error")


def test_the_cases_cover_success_findings_and_failures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    codes = {}
    for case, entry in ENTRIES.items():
        codes[case] = fast_flow.check_fast(["flow", "check", str(entry), "--format", "json"])
        out, err = capsys.readouterr()
        codes[case] = (codes[case], json.loads(out or err).get("diagnostics") != [])
    assert codes["valid"] == (0, False)
    assert codes["warning"] == (0, True)
    assert {codes[c][0] for c in ("findings", "syntax", "not a package", "missing")} == {1}


@pytest.mark.parametrize(
    "args",
    [
        ["flow", "check", "--lenient", str(ENTRIES["warning"])],
        ["flow", "check", str(ENTRIES["children"]), "--lenient", "--format", "json"],
        ["flow", "check", "--format", "json", str(ENTRIES["syntax"])],
    ],
)
def test_options_in_any_order(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    fast, slow = _both(args, capsys)
    assert fast == slow


@pytest.mark.parametrize(
    "args",
    [
        ["flow", "check"],
        ["flow", "check", "--help"],
        ["flow", "check", "x", "--format=json"],
        ["flow", "check", "x", "--format"],
        ["flow", "check", "x", "--format", "yaml"],
        ["flow", "check", "x", "--format", "json", "--format", "json"],
        ["flow", "check", "x", "--lenient", "--lenient"],
        ["flow", "check", "x", "--color", "never"],
        ["flow", "check", "x", "y"],
        ["flow", "check", "-x"],
        ["flow", "check", "--", "x"],
        ["flow", "list", "x"],
        ["--format", "json", "flow", "check", "x"],
        ["evaluate", "x"],
    ],
)
def test_other_forms_go_to_click(args: list[str]) -> None:
    assert fast_flow.parse(args) is None


def test_a_fresh_flow_check_imports_no_heavy_part() -> None:
    probe = (
        "import contextlib, io, json, sys\n"
        "from agent_graph.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    code = main(sys.argv[1:])\n"
        "print(json.dumps({'code': code, 'out': out.getvalue(), 'modules': sorted(sys.modules)}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "flow", "check", str(ENTRIES["valid"]), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=dict(os.environ),
    )
    found = json.loads(done.stdout)
    assert found["code"] == 0
    assert json.loads(found["out"])["state"] == "valid"
    heavy = {"click", "lark", "yaml", "jsonschema", "jsonschema_rs", "referencing", "pyuca"}
    assert sorted(m for m in found["modules"] if m.split(".")[0] in heavy) == []
    # a check stops at lower: the wire format (msgpack, the IR's encoders) stays unloaded
    wire = {"msgpack", "agent_graph.ir.wire", "agent_graph.ir.flow_program"}
    assert sorted(wire & set(found["modules"])) == []
