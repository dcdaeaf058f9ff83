"""A SKILL.md's binding to a Graph: ``metadata.agent-graph`` (the locator), ``.graph``, ``.entry``.

Reading a binding needs no Provider, so the checks that look at Skills inside a Provider
(:mod:`.loose_ends`) read it here; resolving it (locating and compiling the Provider)
is :mod:`.skills`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ... import codes
from ...documents.paths import Origin, display_path
from ...documents.sources import parse_frontmatter, read_markdown

_BINDING_KEYS = (
    ("agent-graph", "locator"),
    ("agent-graph.graph", "graph"),
    ("agent-graph.entry", "entry"),
)


@dataclass(frozen=True, slots=True)
class SkillBinding:
    skill_path: Path
    locator: str
    graph: str
    entry: str
    origin: Origin


def read_skill_binding(skill_path: str | os.PathLike[str], text: str | None = None) -> SkillBinding:
    """The binding a SKILL.md declares; ``text``: its contents, when the caller read them."""
    absolute = Path(os.path.abspath(skill_path))
    display = display_path(absolute)
    if text is None:
        doc = read_markdown(absolute, display=display)
    else:
        doc = parse_frontmatter(text, absolute, display=display)
    here = Origin(display, doc.source)
    metadata = doc.value.get("metadata")
    if not isinstance(metadata, dict):
        raise here.at("/metadata").fail(
            codes.SKILL_BINDING_MISSING, f"Skill {absolute} does not declare Agent Graph metadata"
        )
    values: dict[str, str] = {}
    for key, name in _BINDING_KEYS:
        value = metadata.get(key)
        if not isinstance(value, str) or not value.strip():
            raise here.at(f"/metadata/{key}" if key in metadata else "/metadata").fail(
                codes.SKILL_BINDING_MISSING, f"Skill {absolute} does not declare metadata.{key}"
            )
        values[name] = value.strip()
    return SkillBinding(
        absolute,
        values["locator"],
        values["graph"],
        values["entry"],
        here.at("/metadata/agent-graph"),
    )
