"""Parity with the Node reference CLI on its own public examples.

Runs only when ``AGC_REFERENCE_CLI`` (the built ``agent-graph.mjs``) and
``AGC_REFERENCE_DIR`` (its checkout, for ``examples/``) are set; nothing of the
reference is part of this repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_graph.cli import main
from corpus_support import corpus_cases, expected, validate_args
from slow_support import fast_sample

REF_CLI = os.environ.get("AGC_REFERENCE_CLI")
REF_DIR = os.environ.get("AGC_REFERENCE_DIR")

pytestmark = pytest.mark.skipif(
    not (REF_CLI and REF_DIR and shutil.which("node")), reason="reference CLI not configured"
)


def _manifests() -> list[Path]:
    if not REF_DIR:
        return []
    return sorted(Path(REF_DIR, "examples").glob("*/provider.yaml"))


def reference(args: list[str]) -> tuple[int, dict[str, Any]]:
    assert REF_CLI is not None
    done = subprocess.run(
        ["node", REF_CLI, *args, "--format", "json"], capture_output=True, text=True, check=False
    )
    text = done.stdout if done.returncode == 0 else done.stderr
    return done.returncode, json.loads(text)


def ours(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main([*args, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out if code == 0 else captured.err)


@pytest.mark.reference
@pytest.mark.parametrize("manifest", fast_sample(_manifests(), 1), ids=lambda p: p.parent.name)
def test_reference_example_validates_the_same(
    manifest: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref_code, ref_doc = reference(["validate", "-m", str(manifest)])
    our_code, our_doc = ours(["validate", "-m", str(manifest)], capsys)
    assert our_code == ref_code
    if ref_code != 0:
        assert our_doc["error"]["code"] == ref_doc["error"]["code"]
        return
    our_doc.pop("diagnostics", None)  # our 0.2-compatibility warnings; the reference has none
    assert our_doc == ref_doc


@pytest.mark.reference
def test_reference_examples_found() -> None:
    assert len(_manifests()) >= 10


def _bound_skills() -> list[Path]:
    if not REF_DIR:
        return []
    return sorted(
        p
        for p in Path(REF_DIR, "examples").rglob("SKILL.md")
        if "agent-graph.graph" in p.read_text(encoding="utf-8")
    )


def _skill_args(skill: Path) -> list[str]:
    args = ["inspect", "skill", str(skill)]
    registry = next(
        (d / "registry.yaml" for d in skill.parents if (d / "registry.yaml").is_file()), None
    )
    return [*args, "--registry", str(registry)] if registry else args


@pytest.mark.reference
@pytest.mark.parametrize(
    "skill", fast_sample(_bound_skills(), 1), ids=lambda p: f"{p.parents[2].name}-{p.parent.name}"
)
def test_reference_skill_binding_resolves_the_same(
    skill: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref_code, ref_doc = reference(_skill_args(skill))
    our_code, our_doc = ours(_skill_args(skill), capsys)
    assert (our_code, our_doc) == (ref_code, ref_doc)


@pytest.mark.reference
@pytest.mark.parametrize("case", fast_sample(corpus_cases(), 4), ids=lambda p: p.name)
def test_corpus_reference_column_is_what_the_reference_says(case: Path) -> None:
    """The corpus records the reference's answer; keep that record true."""
    code, doc = reference(validate_args(case))
    assert code == 1
    assert doc["error"]["code"] == expected(case)["reference"]
