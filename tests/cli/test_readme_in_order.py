"""README.md runs top to bottom in one directory, as a reader types it (issue 27 item 4):
every ``sh``/``bash`` block in order, in one copy of the repository's examples, then the
upgrade block of docs/migrate.md the README links to. Before, the migrate demo copied a
0.2 fixture into the ``my-provider`` the README's first block had made, and migrate found
nothing to do."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from cli_support import run_bash

ROOT = Path(__file__).resolve().parents[2]
#: Blocks a reader runs once, outside any one directory: installing and the test suite.
SETUP = ("pip install", "python -m pytest")


def blocks(page: Path, section: str | None = None) -> list[str]:
    text = page.read_text(encoding="utf-8")
    if section is not None:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S)
    return [b for b in found if not b.strip().startswith(SETUP)]


def test_the_readme_then_the_migrate_page_run_in_one_directory(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples", symlinks=True)
    shutil.copytree(ROOT / "tests" / "legacy", tmp_path / "tests" / "legacy")
    readme = blocks(ROOT / "README.md")
    assert len(readme) >= 4  # start a Provider, route, run a Flow, an Agent Flow
    migrate = blocks(ROOT / "docs" / "migrate.md", "Upgrade a 0.2 Provider")
    assert len(migrate) == 1
    outputs = [run_bash(block, tmp_path).stdout for block in [*readme, *migrate]]
    assert "+++ b/provider.yaml" in outputs[-1]  # migrate found the 0.2 Provider to change
    assert (tmp_path / "my-provider" / "provider.yaml").is_file()  # and left the first alone
