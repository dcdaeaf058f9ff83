"""Every command ``agc`` prints for a person to run next runs as printed.

The ``sh`` blocks of README.md, of every page of docs/ and of each example's README are run
command by command in a temporary copy of the examples (``VAR="…"`` lines, ``$VAR``, ``#``
comments and ``&&`` as a shell reads them). Every hint line they print (``Next: agc …``,
``Resolve it: agc …``, ``Record it: agc …``) is split with :func:`shlex.split` and run in
the same working directory, on the directory as it was when the hint was printed (restored
afterwards, so hints that record outcomes do not change the page's story), and so are
the hints those print: each must exit 0. A block a reader cannot run as written from the
repository root (it needs an Agent CLI and a login, a project of the reader's own, or
values to fill in) is fenced ``shell``, not ``sh``. docs/providers.md's ``pytest.ini``
snippet is pasted into a project and run with pytest.

The golden tests below assert the exact hint lines for the cases a new user met: a
Provider in another directory, ``--skill``, every state option, a Run, and no Provider.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cli_support import ok_json, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
READMES = sorted(EXAMPLES.glob("*/README.md"))
#: README.md and every docs page with ``sh`` blocks, by path from the repository root.
PAGES = [
    path.relative_to(ROOT).as_posix()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    if "```sh\n" in path.read_text(encoding="utf-8")
]
#: A line that holds a command to run: its label, then the command.
HINT = re.compile(r"^(Next|Resolve it|Record it): (agc\b.*)$")
#: Text that names ``agc`` commands without being one (checked so no new hint form is missed).
NOT_COMMANDS = ("Nothing can run now:", "Next: evaluate the run with agc run status")
#: Commands of the pages that are not ``agc`` and are not run here.
NOT_RUN = {
    "pip install -e '.[dev]'",
    "python -m pytest -m 'not slow'",  # the fast set (README.md, docs/testing.md)
    "python -m pytest -m slow",
}
DEPTH = 2  # hints, and the hints they print


def sh_blocks(path: Path, section: str | None = None) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if section is not None:
        text = text.split(f"\n## {section}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", text, re.S)


def commands(block: str) -> Iterator[list[str]]:
    """The words of each command of a block, as a POSIX shell would split them."""
    variables: dict[str, str] = {}
    for raw in block.splitlines():
        line = raw.strip()
        assignment = re.fullmatch(r'([A-Z_]+)="([^"$`\\]*)"', line)
        if assignment is not None:
            variables[assignment.group(1)] = assignment.group(2)
            continue
        for name, value in variables.items():  # unquoted $VAR: split into words
            line = line.replace(f"${name}", value)
        assert not re.search(r"\$[A-Za-z_{]", line), line  # only the variables set above
        command: list[str] = []
        for word in [*shlex.split(line, comments=True), "&&"]:
            if word != "&&":
                command.append(word)
            elif command:
                yield command
                command = []


@contextlib.contextmanager
def restored(work: Path) -> Iterator[None]:
    """Run something in ``work`` and put every file back as it was afterwards."""
    backup = Path(tempfile.mkdtemp(dir=work.parent)) / "before"  # hints of hints nest
    shutil.copytree(work, backup, symlinks=True)
    try:
        yield
    finally:
        os.chdir(work.parent)
        shutil.rmtree(work)
        backup.rename(work)
        backup.parent.rmdir()
        os.chdir(work)


@dataclass
class Session:
    """Runs commands in ``work`` (in process, as ``agc`` would) and every hint they print."""

    work: Path
    capsys: pytest.CaptureFixture[str]
    ran: list[str] = field(default_factory=list)
    labels: set[str] = field(default_factory=set)

    def agc(self, words: list[str]) -> str:
        assert words[0] == "agc", words
        code, out, err = run(words[1:], self.capsys)
        assert code == 0, (shlex.join(words), err)
        return out

    def hints(self, out: str, depth: int, seen: set[str]) -> None:
        for line in out.splitlines():
            match = HINT.match(line)
            if match is None:
                if not line.startswith(NOT_COMMANDS):
                    assert not re.search(r"\bagc (route|run|evaluate) ", line), line
                continue
            label, command = match.groups()
            if command in seen:
                continue
            seen.add(command)
            self.labels.add(label)
            with restored(self.work):
                printed = self.agc(shlex.split(command))
                self.ran.append(command)
                if depth > 1:
                    self.hints(printed, depth - 1, seen)

    def block(self, block: str) -> list[str]:
        """Run a page's block and the hints of each command; their human output."""
        outputs = []
        for words in commands(block):
            out = self.agc(words)
            outputs.append(out)
            self.hints(out, DEPTH, set())
        return outputs


@pytest.fixture
def session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Session:
    work = tmp_path / "work"
    shutil.copytree(EXAMPLES, work / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(work)
    return Session(work, capsys)


def runnable(blocks: list[str]) -> list[str]:
    """The blocks that are ``agc`` commands (every other one is listed in NOT_RUN)."""
    out = []
    for block in blocks:
        words = list(commands(block))
        if all(shlex.join(w) in NOT_RUN for w in words):
            continue
        assert all(w[0] == "agc" for w in words), block
        out.append(block)
    return out


# -- the READMEs and the docs, as written -------------------------------------------------

#: How many runnable ``sh`` blocks each page has (a page that gains or loses one says so).
RUNNABLE = {
    "README.md": 1,  # route an example
    "docs/providers.md": 3,  # route an example, validate and inspect, build
    "docs/runs.md": 1,  # keep a Run
}


def test_every_page_with_sh_blocks_is_run() -> None:
    assert {page: len(runnable(sh_blocks(ROOT / page))) for page in PAGES} == {
        **dict.fromkeys(PAGES, 0),
        **RUNNABLE,
    }


def test_page_commands_and_their_hints(session: Session) -> None:
    """Every page's blocks in one session, in order, as the README's once were."""
    blocks = [block for page in PAGES for block in runnable(sh_blocks(ROOT / page))]
    assert len(blocks) == sum(RUNNABLE.values())
    outputs = [out for block in blocks for out in session.block(block)]
    assert session.labels == {"Next", "Resolve it", "Record it"}
    assert len(session.ran) >= 15
    text = "".join(outputs)
    assert "Next: evaluate the run with" not in text  # the pages name their Provider
    assert "Checked only that the key" not in text  # ... so every key is checked
    run_loop = sh_blocks(ROOT / "docs" / "runs.md", "Keep a Run")[0]
    assert run_loop in blocks


@pytest.mark.parametrize("readme", READMES, ids=lambda p: p.parent.name)
def test_example_readme_commands_and_their_hints(session: Session, readme: Path) -> None:
    blocks = runnable(sh_blocks(readme))
    for block in blocks:
        session.block(block)
    assert "Resolve it" in session.labels  # each example shows an evaluation to resolve
    if readme.parent.name == "release-train":
        assert session.labels == {"Next", "Resolve it", "Record it"}
        recorded = [c for c in session.ran if c.startswith("agc run record ")]
        assert any("'train/verify-candidate>verify/" in c for c in recorded), recorded


def test_providers_page_pytest_ini_snippet(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    section = text.split("\n## Graph tests in pytest", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```ini\n(.*?)```", section, re.S)
    assert match is not None
    (tmp_path / "pytest.ini").write_text(match.group(1), encoding="utf-8")
    shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "graph")
    cases = len(list((tmp_path / "graph" / "tests").glob("*.yaml")))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{cases} passed" in done.stdout, done.stdout


# -- exact hint lines ---------------------------------------------------------------------


def lines(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, out, err = run(args, capsys)
    assert code == 0, err
    return out.splitlines()


def hint(lines_: list[str], label: str) -> str:
    found = [line for line in lines_ if line.startswith(f"{label}: agc ")]
    assert len(found) == 1, lines_
    return found[0]


def run_hint(line: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    words = shlex.split(line.split(": ", 1)[1])
    assert words[0] == "agc"
    return lines(words[1:], capsys)


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory next to a copy of the examples, not holding a Provider."""
    shutil.copytree(EXAMPLES, tmp_path / "ex", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    return tmp_path


def test_evaluate_from_another_directory_repeats_every_option(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = elsewhere / "ex" / "weekly-report" / "provider.yaml"
    Path("facts.json").write_text('{"report":{"digest":"it\'s 1f"}}', encoding="utf-8")
    ok_json(["run", "start", "report", "-m", str(manifest), "--state", "r.json"], capsys)
    args = ["evaluate", "report", "-m", "../ex/weekly-report/provider.yaml", "--entry", "default"]
    args += ["--state", "r.json", "--facts", "@facts.json", "--outcomes", "{}"]
    args += ["--authority", "x.y", "report.publish"]
    doc = ok_json(args, capsys)
    printed = lines(args, capsys)
    assert printed[-1] == (
        f"Resolve it: agc route report {doc['primaryRoute']['routeId']} --revision "
        f"{doc['revision']} --entry default --state r.json --facts @facts.json --outcomes '{{}}' "
        f"--authority x.y --authority report.publish -m {manifest}"
    )
    routed = run_hint(printed[-1], capsys)
    assert routed[0] == "Next: approve (immediate)"
    assert "Resolution: session-authority (authority report.publish is held by this session)" in (
        routed
    )
    inline = ["evaluate", "report", "-m", str(manifest), "--facts", '{"report":{"digest":"it\'s"}}']
    printed = lines(inline, capsys)
    assert """ --facts '{"report":{"digest":"it'"'"'s"}}' -m """ in printed[-1]
    assert run_hint(printed[-1], capsys)[0] == "Next: approve (requires-user)"


def test_evaluate_through_a_skill_names_no_graph(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = elsewhere / "ex" / "weekly-report" / "skills" / "weekly-report" / "SKILL.md"
    given = os.path.relpath(skill)
    for graph in ([], ["report"]):  # a graph equal to the binding's is allowed, not repeated
        args = ["evaluate", *graph, "--skill", given]
        doc = ok_json(args, capsys)
        printed = lines(args, capsys)
        assert printed[-1] == (
            f"Resolve it: agc route {doc['primaryRoute']['routeId']} --revision {doc['revision']} "
            f"--skill {skill}"
        )
        assert run_hint(printed[-1], capsys)[0] == "Next: draft (immediate)"


def test_evaluate_with_the_default_manifest_repeats_no_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    doc = ok_json(["evaluate", "report"], capsys)
    printed = lines(["evaluate", "report"], capsys)
    route_id = doc["primaryRoute"]["routeId"]
    assert printed[-1] == f"Resolve it: agc route report {route_id} --revision {doc['revision']}"
    assert run_hint(printed[-1], capsys)[0] == "Next: draft (immediate)"


def test_route_with_a_run_prints_the_record_command(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = elsewhere / "ex" / "weekly-report" / "provider.yaml"
    given = "../ex/weekly-report/provider.yaml"
    ok_json(["run", "start", "report", "-m", given, "--state", "run.json"], capsys)
    printed = lines(["route", "report", "-m", given, "--state", "run.json"], capsys)
    assert printed[-3:] == [
        "After action: record report/draft, then evaluate again",
        f"Record it: agc run record report/draft completed --state run.json -m {manifest}",
        "  (or partial, failed, unverified, skipped … instead of completed)",
    ]
    assert run_hint(printed[-2], capsys) == [
        "Recorded report/draft: completed",
        "Evaluate the run again; recorded outcomes are not assumed to prove facts.",
        f"Next: agc run status --state {Path('run.json').resolve()} -m {manifest}",
    ]
    status = run_hint(f"Next: agc run status --state run.json -m {manifest}", capsys)
    assert status[1] == "State: blocked"  # recorded, but the digest that proves it is missing
    # without a Run: the --outcomes member to add (not a command)
    printed = lines(["route", "report", "-m", given], capsys)
    assert printed[-1] == (
        """  (e.g. --outcomes '{"report/draft":"completed"}', """
        "or partial, failed, unverified, skipped …)"
    )


def test_route_quotes_a_call_path_key(elsewhere: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = elsewhere / "ex" / "release-train" / "provider.yaml"
    outcomes = {
        f"train/{n}": "completed"
        for n in ("plan", "changelog", "docs", "bump-version", "lint", "license-scan")
    }
    state = {
        "facts": {},
        "outcomes": {k: {"outcome": v, "recordedAt": "2025-01-02T03:04:05.678Z"}
                     for k, v in outcomes.items()},
    }  # fmt: skip
    ok_json(["run", "start", "train", "-m", str(manifest), "--state", "t.json"], capsys)
    doc = json.loads(Path("t.json").read_text(encoding="utf-8"))
    Path("t.json").write_text(json.dumps({**doc, **state}), encoding="utf-8")
    printed = lines(["route", "train", "-m", str(manifest), "--state", "t.json"], capsys)
    record = hint(printed, "Record it")
    assert record == (
        "Record it: agc run record 'train/verify-candidate>verify/unit-tests' completed "
        f"--state t.json -m {manifest}"
    )
    assert run_hint(record, capsys)[0] == (
        "Recorded train/verify-candidate>verify/unit-tests: completed"
    )


def test_run_hints_after_every_command_run_as_printed(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = elsewhere / "ex" / "weekly-report" / "provider.yaml"
    m = ["-m", "../ex/weekly-report/provider.yaml"]
    state = str(Path("w.json").resolve())
    expected = f"Next: agc run status --state {state} -m {manifest}"
    assert lines(["run", "start", "report", *m, "--state", "w.json"], capsys)[-1] == expected
    assert (
        lines(["run", "record", "report/draft", "partial", *m, "--state", "w.json"], capsys)[-1]
        == expected
    )
    ok_json(["run", "checkpoint", "--state", "w.json", "--to", "cp.json"], capsys)
    assert lines(["run", "resume", "cp.json", *m, "--state", "w2.json"], capsys)[-1] == (
        f"Next: agc run status --state {Path('w2.json').resolve()} -m {manifest}"
    )
    status = run_hint(expected, capsys)
    resolve = hint(status, "Resolve it")
    assert resolve.startswith("Resolve it: agc route report route:")
    assert resolve.endswith(f" --state {state} -m {manifest}")
    assert run_hint(resolve, capsys)[0] == "Next: draft (immediate)"


def test_run_hints_without_a_provider_say_what_is_missing(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = elsewhere / "ex" / "weekly-report" / "provider.yaml"
    ok_json(["run", "start", "report", "-m", str(manifest), "--state", "w.json"], capsys)
    printed = lines(["run", "record", "report/drfat", "completed", "--state", "w.json"], capsys)
    assert not [line for line in printed if HINT.match(line)]  # no command that would fail
    assert printed[2:] == [
        "Checked only that the key starts with report/: give -m or --skill to check it "
        "against Graph report's nodes.",
        f"Next: evaluate the run with agc run status --state {Path('w.json').resolve()}, "
        "adding -m MANIFEST or --skill SKILL.md for Provider example.weekly-report "
        "(there is no ./provider.yaml here)",
    ]
    code, _, err = run(["run", "status", "--state", "w.json"], capsys)
    assert code == 1  # what the hint would have printed before: it fails
    assert "file-missing" in err
