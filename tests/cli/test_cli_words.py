"""The argv readers the fast paths and click share (``agent_graph.cli.words``): where
diagnostics may be relative to, for the caret excerpts of error output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_graph.cli.words import manifest_base, manifest_bases


def test_a_manifest_names_its_folder_and_a_directory_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "provider.yaml").write_text("x: 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    here = os.getcwd()  # what abspath resolves against
    assert manifest_base("p") == os.path.join(here, "p")
    assert manifest_base("p/") == os.path.join(here, "p")
    assert manifest_base("p/provider.yaml") == os.path.join(here, "p")
    # a manifest not (yet) there still names the folder it would be in
    assert manifest_base("q/provider.yaml") == os.path.join(here, "q")


def test_bases_come_from_the_manifest_option_in_each_spelling(tmp_path: Path) -> None:
    manifest = str(tmp_path / "provider.yaml")
    for argv in (["validate", "-m", manifest], ["--manifest", manifest, "validate"],
                 [f"--manifest={manifest}", "build"]):  # fmt: skip
        assert manifest_bases(argv) == [str(tmp_path)], argv
    assert manifest_bases(["validate"]) == []
    assert manifest_bases(["validate", "-m"]) == []  # no value: nothing to be relative to
