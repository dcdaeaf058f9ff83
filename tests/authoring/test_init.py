"""``agc init``: the reference's slug rule, refusals and layout, writing a 0.3.1 Provider.

The Provider it writes is checked with the real CLI (a child ``agc`` process): the
``Next: agc …`` lines it prints run as printed from the same working directory, and
``agc validate`` (no warning) and ``agc test`` pass. Refusals leave every byte where it
was; a write that fails part-way takes back exactly what it created.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agent_graph.authoring import writes
from agent_graph.authoring.slug import slug
from agent_graph.documents.yaml12 import parse_yaml
from agent_graph.errors import AgentGraphError
from cli_support import ROOT, bash_block, error_of, ok_json, run, run_bash
from tree_support import write_tree

#: The reference's ``init`` layout, plus the 0.3.1 descriptor of the procedure.
LAYOUT = {
    "provider.yaml",
    "graphs/main.yaml",
    "actions/work.yaml",
    "skills/getting-started/SKILL.md",
    "resources/procedure.yaml",
    "resources/procedure.md",
    "tests/main.yaml",
    "codes.yaml",
}


def agc(words: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A printed ``agc …`` command, run by a child process of this interpreter's ``agc``."""
    assert words[0] == "agc", words
    return subprocess.run(
        [sys.executable, "-m", "agent_graph", *words[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``: file bytes, or what a non-file is."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = f"link:{os.readlink(path)}"
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = path.read_bytes()
    return out


def written(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


# -- the slug rule ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My Provider!", "my-provider"),  # the reference's examples (§9.1)
        ("My_Skill", "my_skill"),
        ("../../outside", "outside"),
        ("company/release", "company-release"),
        ("acme.weekly..notes", "acme.weekly-notes"),  # never ".." inside
        ("  Ünïcode  Names ", "n-code-names"),
        ("v1.", "v1"),
    ],
)
def test_slug_rule(text: str, expected: str) -> None:
    assert slug(text) == expected


@pytest.mark.parametrize("text", ["!!!", "", "...", "-_-", "ü"])
def test_an_id_that_slugs_to_nothing_writes_nothing(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = error_of(["init", str(tmp_path / "p"), "--id", text], capsys)
    assert error["code"] == "id-invalid"
    assert error["message"] == f"Cannot derive an id from {text!r}"
    assert list(tmp_path.iterdir()) == []


def test_ids_the_provider_schema_would_refuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in ("a" * 161, "A b" * 41, "ok\udcff"):  # id over 160, name over 120, not UTF-8
        assert error_of(["init", str(tmp_path / "p"), "--id", text], capsys)["code"] == (
            "id-invalid"
        )
    assert list(tmp_path.iterdir()) == []
    ok_json(["init", str(tmp_path / "p"), "--id", "a" * 120], capsys)  # the limits themselves


# -- a Provider that validates and passes its test ----------------------------------------


@pytest.mark.parametrize("directory", ["p", ".", "nested/with space", "-dash", "p/"])
def test_the_printed_next_commands_validate_and_test_the_new_provider(
    directory: str, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = agc(["agc", "init", "--id", "My Provider!", "--", directory], work)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    root = (work / directory).resolve()
    assert lines[0] == f"Created Agent Graph provider: {root / 'provider.yaml'}"
    commands = [line.removeprefix("Next: ") for line in lines if line.startswith("Next: agc ")]
    assert len(commands) == 2, lines
    if directory == ".":
        assert commands == ["agc validate", "agc test"]
    else:
        assert all("provider.yaml" in command for command in commands)
    validated, tested = (agc(shlex.split(command), work) for command in commands)
    assert validated.returncode == 0, validated.stderr
    assert validated.stdout.splitlines() == [
        "Valid provider my-provider@0.1.0",  # and no warning line after the counts
        "1 graph(s), 1 action(s), 1 resource(s), 1 code(s)",
    ]
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.splitlines()[0] == "1/1 graph test(s) passed"
    assert written(root) == LAYOUT
    assert not list(work.rglob(".*agc-init-*"))  # no staging folder left


def test_validate_json_has_no_warning_and_the_files_are_0_3_1(tmp_path: Path) -> None:
    assert agc(["agc", "init", "p", "--id", "acme.notes"], tmp_path).returncode == 0
    done = agc(["agc", "validate", "-m", "p", "--format", "json"], tmp_path)
    document = json.loads(done.stdout)
    assert (document["state"], document.get("diagnostics", [])) == ("valid", [])
    root = tmp_path / "p"
    manifest = parse_yaml((root / "provider.yaml").read_text(encoding="utf-8"))[0]
    assert manifest["compatibility"] == {"agentGraph": "^0.3.0"}
    assert (manifest["id"], manifest["name"]) == ("acme.notes", "acme.notes")
    descriptor = parse_yaml((root / "resources/procedure.yaml").read_text(encoding="utf-8"))[0]
    assert descriptor["schema"] == "agent-graph.resource.file.v1"
    for rel in LAYOUT - {"skills/getting-started/SKILL.md", "resources/procedure.md"}:
        identity = parse_yaml((root / rel).read_text(encoding="utf-8"))[0]["schema"]
        assert identity != "agent-graph.resource.v1", rel


@pytest.mark.parametrize("text", ["true", "0o17", "null", "Ünï: #x", 'quote " and \\'])
def test_names_that_are_not_plain_yaml_read_back(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = ok_json(["init", str(tmp_path / "p"), "--id", text], capsys)
    manifest = parse_yaml((tmp_path / "p/provider.yaml").read_text(encoding="utf-8"))[0]
    assert (manifest["id"], manifest["name"]) == (document["id"], text)
    assert ok_json(["validate", "-m", str(tmp_path / "p")], capsys)["state"] == "valid"


def test_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = ok_json(["init", str(tmp_path / "p"), "--id", "Acme"], capsys)
    root = tmp_path / "p"
    assert document["state"] == "created"  # the reference's two members first
    assert document["manifest"] == str(root / "provider.yaml")
    assert (document["id"], document["root"]) == ("acme", str(root))
    assert set(document["files"]) == written(root) == LAYOUT
    assert document["next"] == [
        f"agc validate -m {root}/provider.yaml",
        f"agc test {root}/tests -m {root}/provider.yaml",
    ]


def test_an_existing_folder_keeps_what_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, {"README.md": "mine\n", "graphs/other.yaml": "x: 1\n"})
    ok_json(["init", str(tmp_path), "--id", "acme"], capsys)
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "mine\n"
    assert (tmp_path / "graphs/other.yaml").read_text(encoding="utf-8") == "x: 1\n"
    assert written(tmp_path) == LAYOUT | {"README.md", "graphs/other.yaml"}


# -- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize("existing", sorted(LAYOUT))
def test_refuses_to_replace_any_file_it_writes(
    existing: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, {existing: "what the user wrote\n", "notes.txt": "keep\n"})
    before = snapshot(tmp_path)
    error = error_of(["init", str(tmp_path), "--id", "acme"], capsys)
    assert error["code"] == "provider-target-exists"
    assert error["message"] == (
        f"Provider initialization refuses to replace existing content: {tmp_path / existing}"
    )
    assert snapshot(tmp_path) == before


def test_refuses_a_folder_on_the_way_that_is_a_file_or_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p/graphs").write_text("not a folder\n", encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "q").mkdir()
    (tmp_path / "q/actions").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "file").write_text("x\n", encoding="utf-8")
    before = snapshot(tmp_path)
    for target, why in [("p/graphs", "not a directory"), ("q/actions", "a symbolic link")]:
        error = error_of(["init", str(tmp_path / target.split("/")[0]), "--id", "a"], capsys)
        assert error["code"] == "provider-target-exists"
        assert error["message"].endswith(f"{tmp_path / target} ({why})")
    error = error_of(["init", str(tmp_path / "file"), "--id", "a"], capsys)
    assert error["message"].endswith(f"{tmp_path / 'file'} (not a directory)")
    assert snapshot(tmp_path) == before


def test_human_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {"codes.yaml": "mine\n"})
    code, out, err = run(["init", str(tmp_path), "--id", "a"], capsys)
    assert (code, out) == (1, "")
    assert err == (
        "ERROR provider-target-exists: Provider initialization refuses to replace existing "
        f"content: {tmp_path / 'codes.yaml'}\n"
    )


def test_missing_id_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["init", str(tmp_path / "p"), "--format", "json"], capsys)
    assert code == 2
    assert json.loads(err)["error"]["code"] == "usage-invalid"
    assert not (tmp_path / "p").exists()


# -- nothing partially written ------------------------------------------------------------


def test_a_failing_write_into_an_existing_folder_takes_back_what_it_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"README.md": "mine\n", "graphs/keep.yaml": "k: 1\n"})
    before = snapshot(tmp_path)
    real_link = os.link
    calls: list[str] = []

    def failing_link(src: str | Path, dst: str | Path) -> None:
        calls.append(str(dst))
        if len(calls) == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_link(src, dst)

    monkeypatch.setattr(os, "link", failing_link)
    error = error_of(["init", str(tmp_path), "--id", "acme"], capsys)
    assert error["code"] == "file-write-failed"
    assert "No space left on device" in error["message"]
    assert len(calls) == 4  # three files were in place, and are gone again
    assert snapshot(tmp_path) == before


def test_a_failing_write_of_a_new_folder_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_rename(src: str | Path, dst: str | Path) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "rename", failing_rename)
    error = error_of(["init", str(tmp_path / "a/b/p"), "--id", "acme"], capsys)
    assert error["code"] == "file-write-failed"
    assert list(tmp_path.iterdir()) == []  # neither the staging folder nor a/b


def test_a_file_that_appears_meanwhile_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_link = os.link

    def racing_link(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name == "codes.yaml":  # someone writes it between check and link
            Path(dst).write_text("theirs\n", encoding="utf-8")
        real_link(src, dst)

    monkeypatch.setattr(os, "link", racing_link)
    error = error_of(["init", str(tmp_path), "--id", "acme"], capsys)
    assert error["code"] == "provider-target-exists"
    assert error["message"].endswith(str(tmp_path / "codes.yaml"))
    assert snapshot(tmp_path) == {"codes.yaml": b"theirs\n"}


def test_without_hard_links_files_are_created_exclusively(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: str | Path, dst: str | Path) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    (tmp_path / "p").mkdir()
    ok_json(["init", str(tmp_path / "p"), "--id", "acme"], capsys)
    assert written(tmp_path / "p") == LAYOUT
    assert ok_json(["validate", "-m", str(tmp_path / "p")], capsys)["state"] == "valid"


def test_refusal_callback_names_the_target(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("", encoding="utf-8")
    with pytest.raises(AgentGraphError) as caught:
        writes.create_files(tmp_path, {"y": b"", "x": b""})
    assert caught.value.code == "provider-target-exists"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x"]


# -- the hint where no Provider is ----------------------------------------------------------


@pytest.mark.parametrize("given", [None, "fresh", "fresh/"])
def test_validate_without_a_manifest_suggests_init_and_the_hint_runs(
    given: str | None, tmp_path: Path
) -> None:
    work = tmp_path / "Work Dir"
    (work / "fresh").mkdir(parents=True)
    args = ["agc", "validate"] + ([] if given is None else ["-m", given])
    cwd = work / "fresh" if given is None else work
    failed = agc(args, cwd)
    assert failed.returncode == 1
    hints = [line for line in failed.stderr.splitlines() if line.startswith("Next: ")]
    assert hints == [
        "Next: agc init --id fresh" if given is None else f"Next: agc init {given} --id fresh"
    ]
    assert agc(shlex.split(hints[0].removeprefix("Next: ")), cwd).returncode == 0
    assert agc(args, cwd).returncode == 0


def test_no_init_hint_where_init_would_refuse(tmp_path: Path) -> None:
    write_tree(tmp_path, {"codes.yaml": "mine\n"})
    failed = agc(["agc", "validate"], tmp_path)
    assert failed.returncode == 1
    assert "file-missing" in failed.stderr
    assert "agc init" not in failed.stderr


@pytest.mark.parametrize("page", ["README.md", "docs/providers.md"])
def test_the_start_a_provider_block_runs_as_written(tmp_path: Path, page: str) -> None:
    """The "Start a Provider" block of README.md and docs/providers.md: init, validate, test,
    run by bash exactly as written."""
    block = bash_block("Start a Provider", ROOT / page)
    assert len(block.strip().splitlines()) == 3  # init -> validate -> test
    done = run_bash(block, tmp_path)
    printed = done.stdout.splitlines()
    commands = [line.removeprefix("Next: ") for line in printed if line.startswith("Next: ")]
    assert commands == block.strip().splitlines()[1:]  # init printed the page's next lines
    assert "Valid provider acme-notes@0.1.0" in printed
    assert "1/1 graph test(s) passed" in printed
