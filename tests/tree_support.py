"""Writing fixture files: one helper for a tree of text files, one for a JSON document."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def write_tree(root: Path, files: Mapping[str, str], *, dedent: bool = False) -> Path:
    """Write ``{relative path: text}`` under ``root`` (parents created); returns ``root``."""
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if dedent:
            text = textwrap.dedent(text).lstrip("\n")
        target.write_text(text, encoding="utf-8")
    return root


def write_json(path: Path, value: Any) -> Path:
    """``value`` as indented JSON (also YAML 1.2, so ``.yaml`` names go through the YAML loader)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
