"""``agc evaluate``'s fast path (no click) against the click application.

The fast path must take the plain forms, hand everything else to click untouched, and
print exactly what click's command prints: the same stdout, stderr and exit code, for
results and for every kind of failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_graph import cli
from agent_graph.cli import app, fast

TESTS = Path(__file__).resolve().parents[1]
WEEKLY = TESTS.parent / "examples" / "weekly-report"
MANIFEST = str(WEEKLY / "provider.yaml")
DIGEST = "sha256:" + "ab" * 32
DRAFTED = json.dumps({"report": {"digest": DIGEST}})


def _both(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[tuple[int, str, str], ...]:
    """(exit code, stdout, stderr) of the fast path itself, then of the click app."""
    fast_code = fast.evaluate_fast(list(args))
    assert fast_code is not None, "the fast path takes this form"
    fast_out = capsys.readouterr()
    code = app.main(list(args))
    click_out = capsys.readouterr()
    return (fast_code, fast_out.out, fast_out.err), (code, click_out.out, click_out.err)


def _write_bundle(tmp_path: Path) -> str:
    code = app.main(["build", str(tmp_path / "bundle"), "-m", MANIFEST])
    assert code == 0
    return str(tmp_path / "bundle" / "manifest.json")


CASES: dict[str, list[str]] = {
    "fresh json": ["evaluate", "report", "-m", MANIFEST, "--format", "json"],
    "fresh human": ["evaluate", "report", "-m", MANIFEST],
    "options first": ["evaluate", "-m", MANIFEST, "--format", "json", "report"],
    "directory manifest": ["evaluate", "report", "-m", str(WEEKLY)],
    "facts and authority": [
        "evaluate",
        "report",
        "-m",
        MANIFEST,
        "--facts",
        DRAFTED,
        "--authority",
        "a",
        "b",
    ],
    "authority repeated": [
        "evaluate",
        "--authority",
        "z",
        "report",
        "-m",
        MANIFEST,
        "--authority",
        "y",
    ],
    "authority swallows the graph": ["evaluate", "-m", MANIFEST, "--authority", "a", "report"],
    "unknown outcome key": ["evaluate", "report", "-m", MANIFEST, "--outcomes", '{"x/y":"failed"}'],
    "outcomes json": [
        "evaluate",
        "report",
        "-m",
        MANIFEST,
        "--outcomes",
        '{"report/draft":"completed"}',
        "--format",
        "json",
    ],
    "entry": ["evaluate", "report", "-m", MANIFEST, "--entry", "default", "--format", "json"],
    "unknown entry human": ["evaluate", "report", "-m", MANIFEST, "--entry", "nope"],
    "unknown entry json": [
        "evaluate",
        "report",
        "-m",
        MANIFEST,
        "--entry",
        "nope",
        "--format",
        "json",
    ],
    "no graph": ["evaluate", "-m", str(WEEKLY.parent / "release-train" / "provider.yaml")],
    "the only graph": ["evaluate", "-m", MANIFEST],
    "unknown graph json": ["evaluate", "nope", "-m", MANIFEST, "--format", "json"],
    "bad facts": ["evaluate", "report", "-m", MANIFEST, "--facts", "{nope"],
    "facts not an object json": [
        "evaluate",
        "report",
        "-m",
        MANIFEST,
        "--facts",
        "[1]",
        "--format",
        "json",
    ],
    "missing facts file": ["evaluate", "report", "-m", MANIFEST, "--facts", "@missing.json"],
    "missing manifest": ["evaluate", "report", "-m", "missing/provider.yaml"],
    "missing state": ["evaluate", "report", "-m", MANIFEST, "--state", "missing-run.json"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_fast_path_prints_what_click_prints(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    fast_result, click_result = _both(CASES[name], capsys)
    assert fast_result == click_result
    assert fast_result[1] or fast_result[2]  # something was printed either way


def test_a_bundle_is_evaluated_without_click(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _write_bundle(tmp_path)
    capsys.readouterr()
    args = ["evaluate", "report", "-m", bundle, "--facts", DRAFTED, "--format", "json"]
    fast_result, click_result = _both(args, capsys)
    assert fast_result == click_result
    assert fast_result[0] == 0
    script = (
        "import sys\n"
        "from agent_graph.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "assert 'click' not in sys.modules, 'click was imported'\n"
        "sys.exit(code)\n"
    )
    env = {**os.environ, "AGC_TRUST_CACHE": str(tmp_path / "trust")}
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(fast_result[1])


def test_the_fast_path_runs_without_the_click_application(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(argv: object = None) -> int:
        raise AssertionError("the click application ran")

    monkeypatch.setattr(app, "main", refuse)
    assert cli.main(CASES["fresh json"]) == 0
    assert json.loads(capsys.readouterr().out)["statusCode"] == "actionable"
    assert cli.main(CASES["no graph"]) == 1
    assert "graph-selection-missing" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["validate", "-m", MANIFEST],
        ["evaluate", "--help"],
        ["evaluate", "report", "-h"],
        ["evaluate", "report", "--skill", "SKILL.md"],
        ["evaluate", "report", "-m", MANIFEST, "--registry", "r.yaml"],
        ["evaluate", "report", "-m", MANIFEST, "--color", "never"],
        ["evaluate", "report", f"--manifest={MANIFEST}"],
        ["evaluate", "report", f"-m{MANIFEST}"],
        ["evaluate", "report", "-m", MANIFEST, "-m", MANIFEST],
        ["evaluate", "report", "other", "-m", MANIFEST],
        ["evaluate", "report", "-m"],
        ["evaluate", "report", "-m", "--format", "json"],
        ["evaluate", "report", "-m", MANIFEST, "--format", "yaml"],
        ["evaluate", "report", "-m", MANIFEST, "--format", ""],
        ["evaluate", "report", "-m", MANIFEST, "--authority"],
        ["evaluate", "report", "-m", MANIFEST, "--authority", "--format", "json"],
        ["evaluate", "report", "--", "-m"],
        ["evaluate", "report", "--unknown"],
        ["-m", MANIFEST, "evaluate", "report"],
        ["route", "report", "-m", MANIFEST],
    ],
)
def test_other_forms_are_left_to_click(args: list[str]) -> None:
    assert fast.parse(args) is None
