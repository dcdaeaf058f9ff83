"""``agc migrate``: 0.2 Providers to 0.3.1 with targeted edits, all-or-nothing.

The evidence the migrator is judged by, checked on our own 0.2-era fixtures
(``tests/legacy/``) and, when ``AGC_REFERENCE_REPO`` names a checkout or bare mirror
of the reference repository, on every example Provider it ships: after ``--write``
no legacy warning, ``--check`` clean, the same graph-test verdicts, every comment line kept.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

from cli_support import error_of, ok_json, run

LEGACY = Path(__file__).parents[1] / "legacy"
LEGACY_CODES = {"compatibility-range-excludes", "resource-protocol-legacy"}


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def comment_lines(root: Path) -> dict[str, list[str]]:
    out = {}
    for path in root.rglob("*"):
        if path.suffix in (".yaml", ".yml") and path.is_file():
            text = path.read_text(encoding="utf-8")
            out[path.relative_to(root).as_posix()] = [
                line
                for line in text.splitlines()
                if "#" in line and not line.strip().startswith("schema")
            ]
    return out


def verdicts(root: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    if not (root / "tests").is_dir():
        return None
    args = ["test", "-m", str(root), str(root / "tests"), "--format", "json"]
    code, out, _err = run(args, capsys)
    doc = json.loads(out)
    return code, [(r["name"], r["passed"]) for r in doc["results"]]


def legacy_warnings(root: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    doc = ok_json(["validate", "-m", str(root)], capsys)
    return [d["code"] for d in doc.get("diagnostics", []) if d["code"] in LEGACY_CODES]


def check_migration(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Migrate ``root`` in place and assert the done-when evidence."""
    assert legacy_warnings(root, capsys), "a 0.2-era Provider warns before migration"
    before_verdicts = verdicts(root, capsys)
    before_comments = comment_lines(root)
    code, out, _ = run(["migrate", "-m", str(root), "--check"], capsys)
    assert code == 1
    hint = out.splitlines()[-1]  # the printed hint keeps -m, so it runs as printed
    assert hint == f"Next: agc migrate -m {shlex.quote(str(root))} --write"
    words = shlex.split(hint.removeprefix("Next: "))[1:]
    code, out, err = run([*words, "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["state"] == "migrated"
    assert legacy_warnings(root, capsys) == []
    assert run(["migrate", "-m", str(root), "--check"], capsys)[0] == 0
    assert verdicts(root, capsys) == before_verdicts
    after = comment_lines(root)
    for rel, lines in before_comments.items():
        kept = after[rel]
        for line in lines:
            # a comment beside a migrated value keeps its text; the value is what changed
            assert any(line.split("#", 1)[1] in k for k in kept), (rel, line)


def test_legacy_fixtures_migrate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    providers = sorted(p.parent for p in LEGACY.glob("*/provider.yaml"))
    assert len(providers) >= 2
    for source in providers:
        copy = shutil.copytree(source, tmp_path / source.name)
        check_migration(copy, capsys)


def _reference_examples(tmp_path: Path) -> list[Path]:
    repo = os.environ.get("AGC_REFERENCE_REPO")
    if not repo:
        pytest.skip(
            "AGC_REFERENCE_REPO (a clone or bare mirror of context4ai/agent-graph) is not set"
        )
    git_dir = ["--git-dir", repo] if not (Path(repo) / ".git").exists() else ["-C", repo]
    data = subprocess.run(
        ["git", *git_dir, "archive", "HEAD", "examples"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as archive:
        archive.extractall(tmp_path, filter="data")
    return sorted(p.parent for p in (tmp_path / "examples").rglob("provider.yaml"))


def test_reference_examples_migrate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    providers = _reference_examples(tmp_path)
    assert providers
    for root in providers:
        check_migration(root, capsys)


def test_diff_without_a_flag_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = shutil.copytree(LEGACY / "release-notes", tmp_path / "p")
    before = snapshot(root)
    code, out, _ = run(["migrate", "-m", str(root)], capsys)
    assert code == 0
    assert "--- a/provider.yaml\n+++ b/provider.yaml\n" in out
    assert (
        "-  agentGraph: '^0.2.0'  # the 0.2 line\n+  agentGraph: '^0.3.0'  # the 0.2 line\n" in out
    )
    assert (
        '-  "schema": "agent-graph.resource.v1",\n'
        '+  "schema": "agent-graph.resource.graph-action.v1",' in out
    )
    assert '+schema: "agent-graph.resource.file.v1"' in out
    assert snapshot(root) == before
    doc = ok_json(["migrate", "-m", str(root)], capsys)
    assert doc["state"] == "changes"
    assert doc["files"] == [
        "provider.yaml",
        "resources/changes.json",
        "resources/template.yaml",
    ]
    assert {c["code"] for c in doc["changes"]} == {
        "migrate-compatibility-range",
        "migrate-resource-identity",
    }


def test_only_the_values_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = shutil.copytree(LEGACY / "release-notes", tmp_path / "p")
    before = snapshot(root)
    assert run(["migrate", "-m", str(root), "--write"], capsys)[0] == 0
    after = snapshot(root)
    for rel, old in before.items():
        new = after[rel]
        old_lines, new_lines = old.decode().splitlines(), new.decode().splitlines()
        assert len(old_lines) == len(new_lines)
        changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
        assert len(changed) <= 1, rel
        for a, _b in changed:
            assert "0.2.0" in a or "resource.v1" in a


def test_manual_range_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = shutil.copytree(LEGACY / "tilde-range", tmp_path / "p")
    text = (root / "provider.yaml").read_text().replace('"~0.2.4"', '">=0.1.0 <0.3.0"')
    (root / "provider.yaml").write_text(text)
    doc = ok_json(["migrate", "-m", str(root), "--check"], capsys)
    assert doc["state"] == "clean"
    assert doc["files"] == []
    [finding] = doc["findings"]
    assert finding["code"] == "migrate-range-manual"
    assert finding["detail"]["line"] == 6


def test_syntax_error_is_positioned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = shutil.copytree(LEGACY / "tilde-range", tmp_path / "p")
    (root / "graphs/main.yaml").write_text("schema: agent-graph.graph.v1\nid: [main\n")
    before = snapshot(root)
    error = error_of(["migrate", "-m", str(root), "--write"], capsys)
    assert error["code"] == "parse-failed"
    assert error["diagnostics"][0]["path"] == "graphs/main.yaml"
    assert error["diagnostics"][0]["detail"]["line"] >= 2
    assert snapshot(root) == before


def test_bundle_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = shutil.copytree(LEGACY / "tilde-range", tmp_path / "p")
    bundle = tmp_path / "bundle"
    assert run(["build", str(bundle), "-m", str(root)], capsys)[0] == 0
    before = snapshot(bundle)
    for target in (bundle, bundle / "manifest.json"):
        error = error_of(["migrate", "-m", str(target), "--write"], capsys)
        assert error["code"] == "migrate-bundle-refused"
    assert snapshot(bundle) == before


def test_read_only_file_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = shutil.copytree(LEGACY / "release-notes", tmp_path / "p")
    locked = root / "resources/template.yaml"
    locked.chmod(stat.S_IRUSR | stat.S_IRGRP)
    before = snapshot(root)
    try:
        error = error_of(["migrate", "-m", str(root), "--write"], capsys)
    finally:
        locked.chmod(0o644)
    assert error["code"] == "file-read-only"
    assert error["diagnostics"][0]["path"] == "resources/template.yaml"
    assert snapshot(root) == before


@pytest.mark.parametrize("where", ["_write_new", "replace"])
def test_failed_write_is_rolled_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A full disk while the new contents are written, or while the second file is renamed
    in (after the first was): nothing changed, no debris, no journal."""
    from agent_graph.authoring import commit_journal

    root = shutil.copytree(LEGACY / "release-notes", tmp_path / "p")
    before = snapshot(root)
    calls = []
    if where == "_write_new":
        real_write = commit_journal._write_new

        def failing_write(path: Path, data: bytes, mode: int) -> None:
            calls.append(path)
            if len(calls) == 2:
                raise OSError(28, "No space left on device")
            real_write(path, data, mode)

        monkeypatch.setattr(commit_journal, "_write_new", failing_write)
    else:
        real_replace = os.replace

        def failing_replace(src: Any, dst: Any) -> None:
            if ".agc-new-" in str(src):
                calls.append(dst)
                if len(calls) == 2:
                    raise OSError(28, "No space left on device")
            real_replace(src, dst)

        monkeypatch.setattr(commit_journal.os, "replace", failing_replace)
    error = error_of(["migrate", "-m", str(root), "--write"], capsys)
    assert len(calls) == 2  # it failed half-way, as meant
    assert error["code"] == "file-write-failed"
    assert snapshot(root) == before


def test_the_migrate_page_upgrade_section_runs_as_written(tmp_path: Path) -> None:
    page = (Path(__file__).parents[2] / "docs" / "migrate.md").read_text()
    section = page.split("## Upgrade a 0.2 Provider", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    shutil.copytree(LEGACY, tmp_path / "tests" / "legacy")
    script = f'agc() {{ "{sys.executable}" -m agent_graph "$@"; }}\nset -e\n{block}'
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "+++ b/provider.yaml" in done.stdout
    assert "Valid provider fixture.release-notes" in done.stdout
    assert "graph test(s) passed" in done.stdout
