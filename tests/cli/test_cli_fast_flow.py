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
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agent_graph.cli import app, fast_flow
from agent_graph.cli.flow_check import summary
from agent_graph.compiler import compile_flow
from agent_graph.compiler.flow.pipeline import FLOW_CHECKED
from agent_graph.errors import AgentGraphError

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
        "import sys\n"
        "before = set(sys.modules)\n"
        "import contextlib, io, json\n"
        "from agent_graph.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    code = main(sys.argv[1:])\n"
        "print(json.dumps({'code': code, 'out': out.getvalue(), 'modules': sorted(sys.modules),\n"
        "                  'loaded': sorted(set(sys.modules) - before)}))"
    )
    # -S: no site, so nothing a .pth file or this interpreter's site imports (typing and
    # importlib.util, in some environments) is counted as loaded already; the fast path
    # needs nothing outside the standard library and the package's own source
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe, "flow", "check", str(ENTRIES["valid"]),
         "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    found = json.loads(done.stdout)
    assert found["code"] == 0
    assert json.loads(found["out"])["state"] == "valid"
    heavy = {"click", "lark", "yaml", "jsonschema", "jsonschema_rs", "referencing", "pyuca"}
    assert sorted(m for m in found["modules"] if m.split(".")[0] in heavy) == []
    # a check stops before encode: the wire format (msgpack, the IR's encoders) stays unloaded
    wire = {"msgpack", "agent_graph.ir.wire", "agent_graph.ir.flow_program"}
    assert sorted(wire & set(found["modules"])) == []
    # and before lower: its summary is the checked entry's (test_the_summary_is_the_lowered_
    # record_s), so lowering, the fingerprints' digests and hashlib (3.2 ms of CPU, as much
    # as any part of a cold check) stay unloaded; the record cache names its entries by a
    # CRC and finds its folder from its own spec, without hashlib or importlib.util
    unlowered = {
        "hashlib",
        "_hashlib",
        "importlib.util",
        "agent_graph.compiler.flow.lower",
        "agent_graph.ir.frozen_json",
        # the checks take the action kinds from ir.flow_kinds, not from the records
        "agent_graph.ir.flow_records",
        "agent_graph.ir.schema",
        # the positioned JSON reader: a package whose blocks are JSON as written never needs it
        # (documents.surrogates is all the front end asks of it then): 1.2 ms
        "agent_graph.documents.json_text",
        # the JSON readers take to_js_number from js_numbers: canonical builds its collation
        # tables as it loads (1.1 ms)
        "agent_graph.canonical",
        # typing is for the type checker only on this path (TYPE_CHECKING = False and
        # imports under it; Pass and Marker made by collections.namedtuple): 2 ms
        "typing",
        # checking a package directory makes no Path: pathlib, with the urllib.parse and
        # ipaddress it imports, is 4 ms of CPU
        "pathlib",
        "urllib.parse",
        "ipaddress",
    }
    assert sorted(unlowered & set(found["loaded"])) == []


def _checked_packages(tmp_path: Path) -> list[Path]:
    """The shipped Flows and every corpus entry, each copied with its declared symlinks."""
    entries = sorted((ROOT / "examples" / "flows").iterdir())
    for case in sorted(CORPUS.iterdir()):
        if not (case / "expected.yaml").is_file():
            continue
        spec = yaml.safe_load((case / "expected.yaml").read_text(encoding="utf-8"))
        work = tmp_path / case.name
        shutil.copytree(case, work, symlinks=True)
        for link, target in (spec.get("symlinks") or {}).items():
            (work / link).parent.mkdir(parents=True, exist_ok=True)
            (work / link).symlink_to(target, target_is_directory=True)
        if (work / spec["entry"]).exists():
            entries.append(work / spec["entry"])
    return entries


def test_the_summary_is_the_lowered_record_s(tmp_path: Path) -> None:
    """``agc flow check`` prints the checked entry's summary without lowering it: for
    every package that checks without errors, strict or lenient, it is what the lowered
    record says, and lowering it raises nothing."""
    compared = 0
    for entry in _checked_packages(tmp_path):
        for lenient in (False, True):
            try:
                state = compile_flow(entry, stop_after=FLOW_CHECKED, lenient=lenient)
            except AgentGraphError:  # an entry that is no package: reported before any summary
                continue
            if any(d.severity == "error" for d in state.diagnostics()):
                continue
            record = compile_flow(state, stop_after="lower").record
            assert record is not None
            root = record.flows[record.root]
            lowered = (root.id, len(root.nodes) + len(root.forks))
            lowered_children = [record.flows[i].id for i in root.children]
            assert summary(state.loaded) == (*lowered, lowered_children), entry
            compared += 1
    assert compared >= 20  # the valid corpus cases, the warnings, the lenient passes


@pytest.mark.parametrize("case", ["valid", "warning", "findings", "missing"])
def test_a_flow_check_process_prints_and_exits_as_in_process(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run as a program (``main()`` without arguments, as the console script calls it),
    the fast path hands its objects to the collector's permanent generation before the
    interpreter shuts down: what it prints and its exit code are what it says in process."""
    args = ["flow", "check", str(ENTRIES[case]), "--format", "json"]
    code = fast_flow.check_fast(list(args))
    said = capsys.readouterr()
    done = subprocess.run(
        [sys.executable, "-m", "agent_graph", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert (done.returncode, done.stdout, done.stderr) == (code, said.out, said.err)
