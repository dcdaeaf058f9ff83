"""The manifest checker's plain-file shortcut (string operations and lstat) decides every
listed path as the full Path-based check does: the same file, or the same refusal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_graph.bundles.manifest import _Checker
from agent_graph.errors import AgentGraphError

REFERENCES = [
    "graphs/a.yaml", "./graphs/a.yaml", "graphs//a.yaml", "graphs/../graphs/a.yaml",
    "graphs/sub/b.yaml", "graphs", "graphs/", "missing.yaml", "../outside.yaml",
    "graphs/../../outside.yaml", "/etc/passwd", "C:/x.yaml", "\\\\share\\x", "", ".",
    "linked/a.yaml", "out/secret.yaml", "inner-link.yaml", "dangling.yaml", "fifo",
]  # fmt: skip


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    root = tmp_path / "bundle"
    (root / "graphs" / "sub").mkdir(parents=True)
    (root / "graphs" / "a.yaml").write_text("a: 1\n")
    (root / "graphs" / "sub" / "b.yaml").write_text("b: 1\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.yaml").write_text("s: 1\n")
    (tmp_path / "outside.yaml").write_text("o: 1\n")
    (root / "linked").symlink_to(root / "graphs", target_is_directory=True)
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "inner-link.yaml").symlink_to(root / "graphs" / "a.yaml")
    (root / "dangling.yaml").symlink_to(root / "nothing.yaml")
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "fifo")
    return root


def _full(checker: _Checker, reference: str) -> str:
    checker._plain_file = lambda reference: None  # type: ignore[method-assign]
    return _decide(checker, reference)


def _decide(checker: _Checker, reference: str) -> str:
    try:
        return os.path.abspath(checker.contained_file(reference, "bundle file", "/files/0"))
    except AgentGraphError as error:
        return "refused: " + error.code


@pytest.mark.parametrize("reference", REFERENCES)
def test_the_shortcut_decides_as_the_full_check(bundle: Path, reference: str) -> None:
    quick = _decide(_Checker(bundle, "manifest.json", None), reference)
    full = _full(_Checker(bundle, "manifest.json", None), reference)
    assert quick == full


def test_the_shortcut_takes_plain_files_and_leaves_links_to_the_full_check(bundle: Path) -> None:
    checker = _Checker(bundle, "manifest.json", None)
    assert checker._plain_file("graphs/sub/b.yaml") == str(bundle / "graphs" / "sub" / "b.yaml")
    assert checker._plain_file("linked/a.yaml") is None  # through a symlinked directory
    assert checker._plain_file("inner-link.yaml") is None  # a symlink itself
    assert checker._plain_file("../outside.yaml") is None
