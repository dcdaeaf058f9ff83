"""Issue 27, item 2: every command that prints a command to run next prints one that runs.

Each scenario below makes one command print its hints (on stdout or stderr, success or
failure), then pastes every hint line into ``agc`` from the same working directory, as a
reader would: each must exit 0. A hint that holds a placeholder for the reader to fill in
(``<rev>``, ``MANIFEST``) is filled in with the value the scenario knows, and only the
placeholders listed here may appear. The last test keeps the list whole: a CLI module that
prints a hint line must name the test that pastes its hints.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_support import ROOT, run

EXAMPLES = ROOT / "examples"
LEGACY = ROOT / "tests" / "legacy" / "release-notes"
#: ``Label: agc …`` on a line of its own, or a sentence ending in a command to run (``…;
#: run agc …``, ``…: agc …``).
HINT = re.compile(r"(?:^[A-Z][A-Za-z ()_]*: |: |; run )(?P<command>agc\b.*)$")
PLACEHOLDERS = ("<rev>", "<dir>", "MANIFEST")

Capture = pytest.CaptureFixture[str]
Scenario = Callable[[Path, Capture], tuple[list[str], dict[str, str]]]


def _init(work: Path, capsys: Capture) -> tuple[list[str], dict[str, str]]:
    return ["init", "--id", "fresh-provider"], {}


def _missing_manifest(work: Path, capsys: Capture) -> tuple[list[str], dict[str, str]]:
    return ["validate"], {}


def _import_skill(work: Path, capsys: Capture) -> tuple[list[str], dict[str, str]]:
    assert run(["init", "--id", "host-provider"], capsys)[0] == 0
    skill = work / "incoming" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text(
        "---\nname: tidy-notes\ndescription: Tidy a folder of notes.\n---\n\nTidy them.\n",
        encoding="utf-8",
    )
    return ["import", "skill", str(skill), "--into", "."], {}


def _migrate_check(work: Path, capsys: Capture) -> tuple[list[str], dict[str, str]]:
    shutil.copytree(LEGACY, work / "legacy")
    return ["migrate", "-m", "legacy", "--check"], {}


def _blocked_evaluate(work: Path, capsys: Capture) -> tuple[list[str], dict[str, str]]:
    shutil.copytree(EXAMPLES / "weekly-report", work / "weekly")
    outcomes = json.dumps({"report/draft": "blocked"})
    return ["evaluate", "report", "-m", "weekly", "--outcomes", outcomes], {}


def _run_status(work: Path, capsys: Capture) -> tuple[list[str], dict[str, str]]:
    shutil.copytree(EXAMPLES / "weekly-report", work / "weekly")
    started = run(["run", "start", "report", "-m", "weekly", "--state", "r.json"], capsys)
    assert started[0] == 0, started
    return ["run", "status", "--state", "r.json"], {"MANIFEST": "weekly"}


def _resource_locate(work: Path, capsys: Capture) -> tuple[list[str], dict[str, str]]:
    shutil.copytree(EXAMPLES / "context-views", work / "views")
    code, out, err = run(["evaluate", "status", "-m", "views", "--format", "json"], capsys)
    assert code == 0, err
    revision = json.loads(out)["revision"]
    args = ["resource", "locate", "acme.workspace-status", "-m", "views"]
    return args, {"<rev>": revision, "<dir>": str(work / "cache")}


SCENARIOS: dict[str, Scenario] = {
    "init": _init,
    "missing-manifest": _missing_manifest,
    "import-skill": _import_skill,
    "migrate-check": _migrate_check,
    "blocked-evaluate": _blocked_evaluate,
    "run-status-without-provider": _run_status,
    "resource-locate": _resource_locate,
}


def hints(text: str) -> list[str]:
    return [m.group("command") for m in map(HINT.search, text.splitlines()) if m]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_hint_of_the_command_runs_as_printed(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    args, fill = SCENARIOS[name](work, capsys)
    _, out, err = run(args, capsys)
    printed = hints(out) + hints(err)
    assert printed, (out, err)
    for command in printed:
        for placeholder in re.findall(r"<[a-z]+>|\b[A-Z]{4,}\b", command):
            assert placeholder in PLACEHOLDERS, command
            assert placeholder in fill, command
        for placeholder, value in fill.items():
            command = command.replace(placeholder, shlex.quote(value))
        words = shlex.split(command)
        assert words[0] == "agc"
        code, pasted_out, pasted_err = run(words[1:], capsys)
        assert code == 0, (command, pasted_out, pasted_err)


#: Every CLI module that prints a hint line, and where its hints are pasted.
COVERED = {
    "context.py": "tests/cli/test_every_hint_runs.py::missing-manifest",
    "render.py": "tests/cli/test_every_hint_runs.py::missing-manifest (detail.next)",
    "evaluation_report.py": "tests/cli/test_hints.py (evaluate, route) and blocked-evaluate",
    "evaluate.py": "tests/cli/test_hints.py (evaluate from another directory)",
    "flow_run.py": "tests/flow (flow/runtime/hints.py: each hint run from another directory)",
    "importcmd.py": "tests/cli/test_every_hint_runs.py::import-skill",
    "init.py": "tests/cli/test_every_hint_runs.py::init",
    "migrate.py": "tests/cli/test_every_hint_runs.py::migrate-check",
    "resource.py": "tests/cli/test_every_hint_runs.py::resource-locate",
    "run.py": "tests/cli/test_hints.py::test_run_hints_after_every_command_run_as_printed",
}


def test_every_module_that_prints_a_hint_has_its_hints_pasted() -> None:
    cli = ROOT / "src" / "agent_graph" / "cli"
    printing = re.compile(r"""f?["'](Next|Resolve it|Record it|Resume it|Run it again)[^"']*: """)
    found = {
        path.name
        for path in cli.glob("*.py")
        if printing.search(path.read_text(encoding="utf-8"))
        or '"next": shell_command' in path.read_text(encoding="utf-8")
        or "agc resource materialize" in path.read_text(encoding="utf-8")
    }
    assert found <= set(COVERED), sorted(found - set(COVERED))
    for where in COVERED.values():
        scenario = where.rsplit("::", 1)[-1].split(" ")[0]
        if where.startswith("tests/cli/test_every_hint_runs.py"):
            assert scenario in SCENARIOS, where
