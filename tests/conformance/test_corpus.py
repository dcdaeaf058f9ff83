"""Corpus: one tiny invalid Provider per error code, with the expected code and position.

Each ``tests/corpus/<case>/expected.yaml`` names the error code, the provider-relative
path and the 1-based line/column of the first diagnostic. The case runs through the
real CLI (``agc validate --format json``), so the envelope shape is checked too.

``tests/corpus/_beyond-reference/<case>`` holds cases the reference accepts and we do
not: an error it finds only later (a SKILL.md without frontmatter, at route time) or a
warning (``severity: warning``: exit 0, the warning in the validate document). They
are kept apart so the reference-parity run over the corpus stays true.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_graph.cli import main
from corpus_support import corpus_cases, expected, validate_args

CASES = corpus_cases()
BEYOND = Path(__file__).parents[1] / "corpus" / "_beyond-reference"
BEYOND_CASES = sorted(p for p in BEYOND.iterdir() if (p / "expected.yaml").is_file())


def run_validate(
    case: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any] | None]:
    code = main([*validate_args(case), "--format", "json"])
    captured = capsys.readouterr()
    envelope = json.loads(captured.err) if captured.err.strip() else None
    return code, envelope


def test_corpus_is_not_empty() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = expected(case)
    code, envelope = run_validate(case, capsys)
    assert code == 1
    assert envelope is not None
    assert envelope["schema"] == "agent-graph.error.v1"
    error = envelope["error"]
    assert error["code"] == spec["code"], error
    first = next(d for d in error["diagnostics"] if d["severity"] == "error")
    if "skill" in spec:
        # Skill and registry files may lie outside any Provider: their paths are cwd-relative
        assert (Path.cwd() / first["path"]).resolve() == (case / spec["path"]).resolve()
    else:
        assert first["path"] == spec["path"], first
    detail = first.get("detail", {})
    assert (detail.get("line"), detail.get("column")) == (spec["line"], spec["column"]), first


def test_beyond_reference_corpus_is_not_empty() -> None:
    assert len(BEYOND_CASES) >= 3
    assert {expected(case)["severity"] for case in BEYOND_CASES} == {"error", "warning"}


@pytest.mark.parametrize("case", BEYOND_CASES, ids=[c.name for c in BEYOND_CASES])
def test_beyond_reference_case(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = expected(case)
    assert spec["reference"] == "valid"
    assert spec["note"]
    code = main(["validate", "-m", str(case / "provider.yaml"), "--format", "json"])
    captured = capsys.readouterr()
    if spec["severity"] == "warning":
        assert (code, captured.err) == (0, "")
        document = json.loads(captured.out)
        assert document["state"] == "valid"
        found = [d for d in document["diagnostics"] if d["severity"] == "warning"]
    else:
        assert (code, captured.out) == (1, "")
        error = json.loads(captured.err)["error"]
        assert error["code"] == spec["code"]
        found = [d for d in error["diagnostics"] if d["severity"] == "error"]
    first = found[0]
    assert (first["code"], first["path"]) == (spec["code"], spec["path"]), first
    detail = first["detail"]
    assert (detail["pointer"], detail["line"], detail["column"]) == (
        spec["pointer"],
        spec["line"],
        spec["column"],
    )
    if "also" in spec:
        also = found[1]
        assert (also["code"], also["path"]) == (spec["code"], spec["also"]["path"])
        assert (also["detail"]["line"], also["detail"]["column"]) == (
            spec["also"]["line"],
            spec["also"]["column"],
        )


def test_every_corpus_code_is_documented() -> None:
    documented = (Path(__file__).parents[2] / "docs" / "error-codes.md").read_text("utf-8")
    codes = {expected(case)["code"] for case in (*CASES, *BEYOND_CASES)}
    assert codes
    assert sorted(c for c in codes if f"`{c}`" not in documented) == []
