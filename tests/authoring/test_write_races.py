"""Writes that never lose an edit (docs/migrate.md): ``migrate --write`` and ``import``
beside an editor that keeps saving, and killed at every file boundary.

The editor is a thread that reads a file, appends a numbered comment line and saves it
(in place, or by renaming a new file over it, the two ways editors save), every 2 ms to
0.6 s.
Every save it made must be in the file at the end: the command either wrote before
that save was read (the save then keeps the command's change), or refused with
``write-conflict``. Before, 31 saves were lost in 8 such races.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_graph.authoring import commit_journal
from agent_graph.errors import AgentGraphError

ROOT = Path(__file__).resolve().parents[2]
LEGACY = ROOT / "tests" / "legacy" / "release-notes"
SKILL = """---
name: notes
description: Write the notes.
---

# Notes

1. Gather the changes.
2. Write the notes.
"""


class Editor(threading.Thread):
    """Saves ``path`` every 2 ms with one more ``# edit N`` line; ``saved`` is every N
    whose save returned."""

    def __init__(self, path: Path, in_place: bool, every: float = 0.002) -> None:
        super().__init__(daemon=True)
        self.path, self.in_place, self.every = path, in_place, every
        self.saved: list[int] = []
        self.done = threading.Event()

    def run(self) -> None:
        number = 0
        while not self.done.is_set():
            try:
                text = self.path.read_text(encoding="utf-8")
            except OSError:  # a moment without the file: an editor would retry
                continue
            if not text.endswith("\n"):
                continue  # a half-read: never save a torn file
            number += 1
            data = f"{text}# edit {number}\n"
            if self.in_place:
                with open(self.path, "w", encoding="utf-8") as handle:
                    handle.write(data)
            else:
                temp = self.path.with_name(f"{self.path.name}.editor-{number}")
                temp.write_text(data, encoding="utf-8")
                os.replace(temp, self.path)
            self.saved.append(number)
            time.sleep(self.every)

    def stop(self) -> None:
        self.done.set()
        self.join(10)


def agc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_graph", *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def outcome(done: subprocess.CompletedProcess[str]) -> str:
    if done.returncode == 0:
        return "written"
    error = json.loads(done.stderr)["error"]
    if error["code"] == "write-conflict":
        return "refused"
    # an in-place save truncates before it writes: a command reading then sees an empty or
    # cut file and refuses it as such, writing nothing
    # (schema-invalid, parse-failed, yaml-edit-failed …): a coded refusal, never a crash
    assert error["code"] != "unexpected-error", done.stderr
    return "read mid-save"


def assert_no_save_lost(editor: Editor) -> None:
    text = editor.path.read_text(encoding="utf-8")
    lines = set(text.splitlines())
    lost = [n for n in editor.saved if f"# edit {n}" not in lines]
    assert lost == [], f"{len(lost)} of {len(editor.saved)} saves lost"
    assert editor.saved, "the editor saved during the command"


@pytest.mark.slow
@pytest.mark.parametrize("command", ["migrate", "import"])
def test_an_editor_saving_during_the_command_loses_no_edit(tmp_path: Path, command: str) -> None:
    seen = {"written": 0, "refused": 0, "read mid-save": 0}
    for attempt in range(20):
        root = tmp_path / f"p{attempt}"
        if command == "migrate":
            shutil.copytree(LEGACY, root)
            args = ["migrate", "-m", str(root), "--write"]
        else:
            shutil.copytree(ROOT / "examples" / "weekly-report", root)
            (tmp_path / f"SKILL{attempt}.md").write_text(SKILL, encoding="utf-8")
            args = ["import", "skill", str(tmp_path / f"SKILL{attempt}.md"), "--into", str(root)]
        # saves every 2 ms leave no room to write (the command refuses); every 0.2-0.6 s
        # the command writes, with saves landing around its commit
        every = (0.002, 0.02, 0.2, 0.6)[attempt % 4]
        editor = Editor(root / "provider.yaml", in_place=attempt // 4 % 2 == 0, every=every)
        editor.start()
        try:
            done = agc(*args)
        finally:
            editor.stop()
        seen[outcome(done)] += 1
        assert_no_save_lost(editor)
        assert not (root / commit_journal.JOURNAL).exists()
        debris = [p.name for p in root.rglob(".*.agc-*")]
        assert debris == []
    assert seen["written"] > 0, seen  # both ways were taken: writes beside the editor …
    assert seen["refused"] + seen["read mid-save"] > 0, seen  # … and refusals


def test_a_file_saved_after_it_was_read_is_a_conflict_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deterministic race: the plan is made, then the file is saved, then the commit."""
    from agent_graph.authoring.migrate import plan_migration

    root = shutil.copytree(LEGACY, tmp_path / "p")
    plan = plan_migration(root / "provider.yaml")
    assert len(plan.files) == 3
    before = {p: (root / p).read_bytes() for p in plan.files}
    edited = root / plan.files[-1]
    edited.write_bytes(before[plan.files[-1]] + b"# saved meanwhile\n")
    with pytest.raises(AgentGraphError) as info:
        plan.write()
    assert info.value.code == "write-conflict"
    for rel in plan.files[:-1]:
        assert (root / rel).read_bytes() == before[rel]  # nothing written
    assert edited.read_bytes().endswith(b"# saved meanwhile\n")  # the save kept


def test_an_in_place_save_during_the_renames_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor that rewrites the old file in place after the check of it: caught by the
    check after the last rename, the commit rolled back, the edited file restored."""
    from agent_graph.authoring.migrate import plan_migration

    root = shutil.copytree(LEGACY, tmp_path / "p")
    plan = plan_migration(root / "provider.yaml")
    first = root / plan.files[0]
    before = {p: (root / p).read_bytes() for p in plan.files}
    real_place = commit_journal._place
    placed: list[str] = []

    def place(entry: commit_journal.Entry) -> None:
        real_place(entry)
        placed.append(entry.rel)
        if len(placed) == 2 and entry.old is not None:
            first_entry_old = next(first.parent.glob(f".{first.name}.agc-old-*"))
            with open(first_entry_old, "ab") as handle:  # the editor's fd on the old inode
                handle.write(b"# saved in place\n")

    monkeypatch.setattr(commit_journal, "_place", place)
    with pytest.raises(AgentGraphError) as info:
        plan.write()
    assert info.value.code == "write-conflict"
    assert first.read_bytes() == before[plan.files[0]] + b"# saved in place\n"
    for rel in plan.files[1:]:
        assert (root / rel).read_bytes() == before[rel]
    assert not (root / commit_journal.JOURNAL).exists()


@pytest.mark.parametrize("boundary", [1, 2])
def test_a_kill_at_a_file_boundary_leaves_all_or_none(tmp_path: Path, boundary: int) -> None:
    """Killed after the first or second of three renames: the next migrate rolls the
    commit back (none), then migrates all three."""
    root = shutil.copytree(LEGACY, tmp_path / "p")
    before = {
        p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()
    }
    done = agc(
        "migrate", "-m", str(root), "--write", env={commit_journal.CRASH_AFTER: str(boundary)}
    )
    assert done.returncode == -signal.SIGKILL
    journal = json.loads((root / commit_journal.JOURNAL).read_text(encoding="utf-8"))
    assert journal["state"] == "prepared"
    assert len(journal["files"]) == 3

    checked = agc("migrate", "-m", str(root), "--check")  # reads after rolling back
    assert checked.returncode == 1
    assert len(json.loads(checked.stdout)["files"]) == 3  # none had been kept
    after = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert after == before  # none: the old bytes, no journal, no debris

    written = agc("migrate", "-m", str(root), "--write")
    assert written.returncode == 0, written.stderr
    assert json.loads(written.stdout)["state"] == "migrated"
    assert agc("migrate", "-m", str(root), "--check").returncode == 0  # all


def test_a_committed_journal_is_finished_not_undone(tmp_path: Path) -> None:
    root = shutil.copytree(LEGACY, tmp_path / "p")
    target = root / "provider.yaml"
    old = target.with_name(f".{target.name}.agc-old-0")
    os.link(target, old)
    target.write_bytes(target.read_bytes() + b"# new\n")  # as if renamed in
    files = [{"path": "provider.yaml", "new": ".x.agc-new-0", "old": old.name, "digest": "d"}]
    (root / commit_journal.JOURNAL).write_text(
        json.dumps({"schema": commit_journal.JOURNAL_SCHEMA, "state": "committed", "files": files})
    )
    assert commit_journal.recover(root) == "finished"
    assert target.read_bytes().endswith(b"# new\n")
    assert not old.exists()
    assert not (root / commit_journal.JOURNAL).exists()


@pytest.mark.parametrize("bad", ["{", '{"schema": "x", "state": "prepared", "files": []}', "[]"])
def test_a_damaged_journal_is_refused_by_name(tmp_path: Path, bad: str) -> None:
    root = shutil.copytree(LEGACY, tmp_path / "p")
    (root / commit_journal.JOURNAL).write_text(bad)
    done = agc("migrate", "-m", str(root), "--check")
    assert done.returncode == 1
    assert json.loads(done.stderr)["error"]["code"] == "write-journal-invalid"
    assert (root / commit_journal.JOURNAL).exists()  # kept for the person to look at


def test_a_journal_naming_a_path_outside_the_provider_is_refused(tmp_path: Path) -> None:
    root = shutil.copytree(LEGACY, tmp_path / "p")
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    files = [{"path": "../outside.txt", "new": "n", "old": None, "digest": "d"}]
    (root / commit_journal.JOURNAL).write_text(
        json.dumps({"schema": commit_journal.JOURNAL_SCHEMA, "state": "prepared", "files": files})
    )
    with pytest.raises(AgentGraphError) as info:
        commit_journal.recover(root)
    assert info.value.code == "write-journal-invalid"
    assert outside.read_text() == "mine\n"
