"""Shared reading of the invalid-Provider corpus (``tests/corpus/*/expected.yaml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).parent / "corpus"


def corpus_cases() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if (p / "expected.yaml").is_file())


def expected(case: Path) -> dict[str, Any]:
    value: dict[str, Any] = yaml.safe_load((case / "expected.yaml").read_text(encoding="utf-8"))
    return value


def validate_args(case: Path) -> list[str]:
    """``validate`` arguments for a case: its manifest, or its Skill (and registry)."""
    spec = expected(case)
    if "skill" in spec:
        args = ["validate", "--skill", str(case / spec["skill"])]
        if "registry" in spec:
            args += ["--registry", str(case / spec["registry"])]
        return args
    return ["validate", "-m", str(case / spec.get("manifest", "provider.yaml"))]
