"""docs/graph-tests.md shows what the commands print: each ``$ agc …`` transcript of its
``text`` blocks is run from the repository root and must print exactly the lines below it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cli_support import run

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "graph-tests.md"


def transcripts() -> list[tuple[str, str]]:
    found = []
    for block in re.findall(r"```text\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S):
        command, _, output = block.partition("\n")
        assert command.startswith("$ agc "), command
        found.append((command[len("$ ") :], output))
    return found


TRANSCRIPTS = transcripts()


def test_the_page_has_both_transcripts() -> None:
    assert [command.split()[1] for command, _ in TRANSCRIPTS] == ["explain", "test"]


@pytest.mark.parametrize(("command", "output"), TRANSCRIPTS, ids=["reach", "coverage"])
def test_each_transcript_prints_what_the_page_shows(
    command: str, output: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(shlex.split(command)[1:], capsys)
    assert (code, err) == (0, "")
    assert out == output
