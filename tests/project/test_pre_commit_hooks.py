"""``.pre-commit-hooks.yaml``: each hook's ``entry`` + ``args`` run as pre-commit runs them.

pre-commit installs this repository into a virtual environment (``language: python``)
and runs ``entry`` split into words, plus the hook's ``args``, from the root of the
repository being committed (with ``pass_filenames: false``, no file names after them).
Here that root is a copy of a shipped example: each hook passes on it and fails on a
broken copy, so a hook that checks nothing would be caught.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_graph.documents.yaml12 import parse_yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "weekly-report"
HOOKS: list[dict[str, Any]] = parse_yaml(
    (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
)[0]
BY_ID = {hook["id"]: hook for hook in HOOKS}


def run_hook(hook: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The hook's command as pre-commit builds it, with ``agc`` of this interpreter."""
    words = [*shlex.split(hook["entry"]), *hook.get("args", [])]
    assert words[0] == "agc", words
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        words, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def provider(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "repo"))


def test_the_hooks_are_declared_for_pre_commit() -> None:
    assert list(BY_ID) == ["agc-validate", "agc-test", "agc-migrate-check"]
    entries = {hook["id"]: hook["entry"] for hook in HOOKS}
    assert entries == {
        "agc-validate": "agc validate",
        "agc-test": "agc test",
        "agc-migrate-check": "agc migrate --check",
    }
    for hook in HOOKS:
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False  # agc reads the Provider, not a file list
        assert hook["name"]
        assert hook["description"]
        files = re.compile(hook["files"])
        for changed in ("provider.yaml", "graphs/report.yaml", "tests/01.yml", "a/b.json"):
            assert files.search(changed), (hook["id"], changed)
        assert not files.search("src/app.py")


def test_agc_validate_hook(provider: Path) -> None:
    done = run_hook(BY_ID["agc-validate"], provider)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Valid provider example.weekly-report@")
    graph = provider / "graphs" / "report.yaml"
    graph.write_text(graph.read_text().replace("entrypoints:", "entrypoint:"), encoding="utf-8")
    done = run_hook(BY_ID["agc-validate"], provider)
    assert done.returncode == 1
    assert "graphs/report.yaml" in done.stderr


def test_agc_test_hook(provider: Path) -> None:
    done = run_hook(BY_ID["agc-test"], provider)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.match(r"(\d+)/\1 graph test\(s\) passed", done.stdout), done.stdout
    case = provider / "tests" / "01-fresh-week.yaml"
    case.write_text(case.read_text().replace("primaryNode: draft", "primaryNode: publish"))
    done = run_hook(BY_ID["agc-test"], provider)
    assert done.returncode == 1
    assert "FAIL a new week starts with the draft" in done.stdout


def test_hook_args_name_a_provider_elsewhere(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "graph")
    for hook_id, args in [
        ("agc-validate", ["-m", "graph/provider.yaml"]),
        ("agc-test", ["graph/tests", "-m", "graph/provider.yaml"]),
    ]:  # as docs/pre-commit.md shows them
        done = run_hook({**BY_ID[hook_id], "args": args}, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr


def _has_migrate() -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "agent_graph", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return re.search(r"^\s+migrate\s", done.stdout + done.stderr, re.M) is not None


def test_agc_migrate_check_hook(provider: Path) -> None:
    if not _has_migrate():
        pytest.skip("agc migrate is not in `agc --help` yet (being written): hook not run")
    done = run_hook(BY_ID["agc-migrate-check"], provider)
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = provider / "provider.yaml"
    manifest.write_text(manifest.read_text().replace("^0.3.0", "^0.2.0"), encoding="utf-8")
    done = run_hook(BY_ID["agc-migrate-check"], provider)
    assert done.returncode == 1, done.stdout + done.stderr  # a 0.2 range to rewrite
