"""docs/pictures.md's picture commands run as written, and the committed pictures are current."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from cli_support import bash_block, run_bash
from mermaid_syntax import check

ROOT = Path(__file__).resolve().parents[2]


PAGE = ROOT / "docs" / "pictures.md"
_HEADING = "From the repository root"


def _texts(svg: str) -> list[str]:
    """The words of an SVG drawing (Graphviz versions differ in coordinates only)."""
    return sorted(re.findall(r"<text[^>]*>([^<]*)</text>", svg))


def test_the_picture_block_runs_as_written(tmp_path: Path) -> None:
    if shutil.which("dot") is None and not os.environ.get("CI"):
        pytest.skip("Graphviz dot is not installed")
    block = bash_block(_HEADING, PAGE)
    assert len(block.strip().splitlines()) == 3  # one command per kind
    for name in ("examples", "docs"):  # from the repository root, writing into tmp_path
        (tmp_path / name).symlink_to(ROOT / name)
    done = run_bash(block, tmp_path)
    assert "train/triage is pending (next: the primary route)" in done.stdout
    check((tmp_path / "ship-release.mmd").read_text(encoding="utf-8"))
    drawn = (tmp_path / "release-train.svg").read_text(encoding="utf-8")
    committed = (ROOT / "docs" / "pictures" / "release-train.svg").read_text(encoding="utf-8")
    assert _texts(drawn) == _texts(committed)  # the committed picture is this command's


def test_the_docs_name_what_they_show() -> None:
    doc = (ROOT / "docs" / "pictures.md").read_text(encoding="utf-8")
    assert "pictures/release-train.svg" in doc
    assert "pictures/draft-review-run.svg" in doc
    run_svg = (ROOT / "docs" / "pictures" / "draft-review-run.svg").read_text(encoding="utf-8")
    assert "▶ failed (agent_execution)" in run_svg
    # no path of the machine that drew it (the checkout, the temporary directory)
    import tempfile

    for machine_path in (str(ROOT.parent), tempfile.gettempdir()):
        assert machine_path not in run_svg
