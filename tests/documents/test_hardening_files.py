"""Reading files we are pointed at: never hang, never read past a cap, never hide a
permission problem (audit findings 4, 9 and 10 of the hardening issue).

Commands that could block run in a child process with a deadline, so a regression
fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agent_graph
from agent_graph.compiler import load_provider
from agent_graph.documents.files import MAX_FILE_BYTES, digest_file, read_bytes
from agent_graph.errors import AgentGraphError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WEEKLY = EXAMPLES / "weekly-report"
DEADLINE = 60  # seconds; every command here answers in about one

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def agc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_graph", *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        cwd=cwd,
        check=False,
    )


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter, under the deadline (a hang fails, never blocks)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )


def error_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    envelope: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    error: dict[str, Any] = envelope["error"]
    return error


@needs_fifo
@pytest.mark.parametrize("command", ["evaluate", "route", "validate"])
def test_a_fifo_named_like_a_bundle_manifest_is_refused_not_waited_on(
    tmp_path: Path, command: str
) -> None:
    fifo = tmp_path / "manifest.json"
    os.mkfifo(fifo)
    args = [command, "report"] if command != "validate" else [command]
    done = agc(*args, "-m", str(fifo), "--format", "json")
    assert done.returncode == 1
    assert error_of(done)["code"] in ("file-missing", "file-read-failed")
    assert fifo.is_fifo()


@needs_fifo
def test_compile_provider_on_a_fifo_raises(tmp_path: Path) -> None:
    fifo = tmp_path / "provider.json"
    os.mkfifo(fifo)
    code = (
        "import sys, agent_graph\n"
        "from agent_graph.errors import AgentGraphError\n"
        "try:\n"
        "    agent_graph.compile_provider(sys.argv[1])\n"
        "except AgentGraphError as exc:\n"
        "    print(exc.code)\n"
    )
    done = python(code, str(fifo))
    assert done.stdout.strip() in ("file-missing", "file-read-failed"), done.stderr


@needs_fifo
def test_build_into_a_folder_whose_manifest_is_a_fifo_does_not_hang(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "manifest.json")
    done = agc("build", str(out), "-m", str(WEEKLY / "provider.yaml"), "--format", "json")
    assert done.returncode == 1
    assert (out / "manifest.json").is_fifo()  # left as it was


@needs_fifo
def test_ir_build_refuses_a_fifo_target(tmp_path: Path) -> None:
    fifo = tmp_path / "out.agir"
    os.mkfifo(fifo)
    done = agc("ir", "build", "-o", str(fifo), "-m", str(WEEKLY / "provider.yaml"))
    assert done.returncode == 1
    assert "ir-target-exists" in done.stderr
    assert fifo.is_fifo()


@needs_fifo
def test_readers_refuse_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "data.bin"
    os.mkfifo(fifo)
    code = (
        "import sys\n"
        "from agent_graph.documents.files import digest_file, read_bytes\n"
        "from agent_graph.errors import AgentGraphError\n"
        "for read in (digest_file, lambda p: read_bytes(p, 'data.bin')):\n"
        "    try:\n"
        "        read(sys.argv[1])\n"
        "    except AgentGraphError as exc:\n"
        "        print(exc.code)\n"
    )
    done = python(code, str(fifo))
    assert done.stdout.split() == ["file-read-failed", "file-read-failed"], done.stderr


def test_ir_dump_caps_what_it_reads(tmp_path: Path) -> None:
    huge = tmp_path / "huge.agir"
    with huge.open("wb") as handle:
        handle.truncate(8 * 1024**3)  # sparse: costs no disk, would cost 8 GiB of memory
    done = agc("ir", "dump", str(huge), "--format", "json")
    assert done.returncode == 1
    error = error_of(done)
    assert error["code"] == "file-too-large"
    assert error["diagnostics"][0]["detail"]["limit"] == MAX_FILE_BYTES


def test_read_bytes_never_reads_past_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "grows.bin"
    path.write_bytes(b"x" * 101)
    with pytest.raises(AgentGraphError) as info:
        read_bytes(path, "grows.bin", limit=100)
    assert info.value.code == "file-too-large"
    assert read_bytes(path, "grows.bin", limit=101) == b"x" * 101


def _copy_weekly(tmp_path: Path) -> Path:
    root = tmp_path / "weekly"
    shutil.copytree(WEEKLY, root)
    return root


def test_an_unreadable_manifest_is_a_read_failure_not_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = _copy_weekly(tmp_path) / "provider.yaml"
    real_stat = Path.stat

    def stat(self: Path, *args: Any, **kwargs: Any) -> os.stat_result:
        if self == manifest:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    with pytest.raises(AgentGraphError) as info:
        load_provider(manifest)
    assert info.value.code == "file-read-failed"
    assert "Permission denied" in info.value.message
    assert "does not exist" not in info.value.message


def test_an_unlistable_folder_in_a_skill_fails_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy_weekly(tmp_path)
    skill = next(p.parent for p in (root / "skills").rglob("SKILL.md"))
    hidden = skill / "private"
    hidden.mkdir()
    (hidden / "notes.md").write_text("kept\n", encoding="utf-8")
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        if Path(path) == hidden:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(AgentGraphError) as info:
        load_provider(root / "provider.yaml")
    assert info.value.code == "file-read-failed"
    assert str(hidden) in info.value.message


@pytest.mark.skipif(
    os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads anything"
)
def test_a_mode_000_skill_folder_fails_the_build(tmp_path: Path) -> None:
    root = _copy_weekly(tmp_path)
    skill = next(p.parent for p in (root / "skills").rglob("SKILL.md"))
    hidden = skill / "private"
    hidden.mkdir()
    (hidden / "notes.md").write_text("kept\n", encoding="utf-8")
    hidden.chmod(0)
    try:
        done = agc("build", str(tmp_path / "out"), "-m", str(root / "provider.yaml"))
    finally:
        hidden.chmod(0o755)
    assert done.returncode == 1
    assert "file-read-failed" in done.stderr


def test_a_readable_provider_still_compiles_the_same(tmp_path: Path) -> None:
    # the stricter readers change nothing for ordinary files
    root = _copy_weekly(tmp_path)
    assert agent_graph.compile_provider(root / "provider.yaml").to_bytes() == (
        agent_graph.compile_provider(WEEKLY / "provider.yaml").to_bytes()
    )
    assert digest_file(root / "provider.yaml") == digest_file(WEEKLY / "provider.yaml")


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_manifest_that_is_not_a_regular_file_says_so_not_missing(
    tmp_path: Path, kind: str
) -> None:
    manifest = tmp_path / "provider.yaml"
    if kind == "fifo":
        os.mkfifo(manifest)
    elif kind == "directory":
        manifest.mkdir()
    else:
        manifest = Path(os.devnull)
    with pytest.raises(AgentGraphError) as info:
        load_provider(manifest)  # returns at once: a FIFO is never opened
    assert info.value.code == "file-missing"
    what = {"fifo": "a FIFO", "directory": "a directory", "device": "a device"}[kind]
    assert info.value.message == f"provider manifest is {what}, not a regular file: {manifest}"


def test_a_bundle_file_that_is_a_fifo_says_so(tmp_path: Path) -> None:
    from agent_graph.cli import main

    bundle = tmp_path / "b"
    assert main(["build", "-m", str(WEEKLY / "provider.yaml"), str(bundle)]) == 0
    binding = bundle / "ir" / "binding.json"
    binding.unlink()
    os.mkfifo(binding)
    with pytest.raises(AgentGraphError) as info:
        load_provider(bundle / "manifest.json")
    assert info.value.code == "file-missing"
    assert info.value.message.endswith(f"is a FIFO, not a regular file: {binding}")


def test_the_sweep_of_abandoned_temp_files_keeps_what_a_live_writer_may_own(
    tmp_path: Path,
) -> None:
    """Only a temp file whose writer pid is surely gone is removed; a pid no process can
    have (too big for kill) or this process's own counts as alive, never as a crash."""
    from agent_graph.documents.durable import sweep_abandoned

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    gone = int(done.stdout)
    names = {
        "gone": f".r.json.agc-{gone}-0123456789abcdef.tmp",
        "huge": ".r.json.agc-99999999999999999999-0123456789abcdef.tmp",
        "mine": f".r.json.agc-{os.getpid()}-0123456789abcdef.tmp",
        "zero": ".r.json.agc-0-0123456789abcdef.tmp",
    }
    for name in names.values():
        (tmp_path / name).write_text("x", encoding="utf-8")
    sweep_abandoned(tmp_path)
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {names["huge"], names["mine"], names["zero"]}
