"""Corpus: one tiny invalid Provider per error code, with the expected code and position.

Each ``tests/corpus/<case>/expected.yaml`` names the error code, the provider-relative
path and the 1-based line/column of the first diagnostic. The case runs through the
real CLI (``agc validate --format json``), so the envelope shape is checked too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_graph.cli import main

CORPUS = Path(__file__).parent / "corpus"
CASES = (
    sorted(p for p in CORPUS.iterdir() if (p / "expected.yaml").is_file())
    if CORPUS.is_dir()
    else []
)


def _expected(case: Path) -> dict[str, Any]:
    value: dict[str, Any] = yaml.safe_load((case / "expected.yaml").read_text(encoding="utf-8"))
    return value


def run_validate(
    case: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any] | None]:
    expected = _expected(case)
    args = ["validate", "--format", "json"]
    if "skill" in expected:
        args += ["--skill", str(case / expected["skill"])]
        if "registry" in expected:
            args += ["--registry", str(case / expected["registry"])]
    else:
        args += ["-m", str(case / expected.get("manifest", "provider.yaml"))]
    code = main(args)
    captured = capsys.readouterr()
    envelope = json.loads(captured.err) if captured.err.strip() else None
    return code, envelope


def test_corpus_is_not_empty() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _expected(case)
    code, envelope = run_validate(case, capsys)
    assert code == 1
    assert envelope is not None
    assert envelope["schema"] == "agent-graph.error.v1"
    error = envelope["error"]
    assert error["code"] == expected["code"], error
    first = next(d for d in error["diagnostics"] if d["severity"] == "error")
    if "skill" in expected:
        # Skill and registry files may lie outside any Provider: their paths are cwd-relative
        assert (Path.cwd() / first["path"]).resolve() == (case / expected["path"]).resolve()
    else:
        assert first["path"] == expected["path"], first
    detail = first.get("detail", {})
    assert (detail.get("line"), detail.get("column")) == (expected["line"], expected["column"]), (
        first
    )


def test_every_corpus_code_is_documented() -> None:
    documented = (Path(__file__).parent.parent / "docs" / "error-codes.md").read_text("utf-8")
    codes = {_expected(case)["code"] for case in CASES}
    assert codes
    assert sorted(c for c in codes if f"`{c}`" not in documented) == []
