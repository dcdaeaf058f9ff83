"""Action loading and the files an Action carries into graph closures and bundles."""

from __future__ import annotations

from pathlib import Path

from ...documents.paths import Origin, contained_file, list_files_recursive, portable
from ...documents.sources import read_structured
from .model import LoadedAction
from .resources import check_schema

_FILE_FIELDS = ("entry", "inputSchema", "outputSchema")


def load_action(root: Path, reference: str, origin: Origin) -> LoadedAction:
    path = contained_file(root, reference, ("action reference", "action"), origin)
    rel = portable(root, path)
    doc = read_structured(path, display=rel)
    check_schema("action", doc.value, rel, doc.source)
    return LoadedAction(doc.value["id"], path, rel, doc)


def action_files(root: Path, action: LoadedAction, label: str) -> list[Path]:
    """The action file, its entry, schemas, ``files[]`` and Skill (directory) files.

    A Skill in its own directory brings the whole directory; a Skill at the Provider
    root brings only itself.
    """
    definition = action.definition
    here = Origin(action.rel, action.doc.source)
    out = [action.path]
    refs: list[tuple[str, str]] = [
        (f"/{name}", definition[name]) for name in _FILE_FIELDS if name in definition
    ]
    refs += [(f"/files/{i}", ref) for i, ref in enumerate(definition.get("files", []))]
    for pointer, ref in refs:
        out.append(contained_file(root, ref, (label, label), here.at(pointer)))
    if "skill" in definition:
        skill = contained_file(
            root, definition["skill"], ("agent skill reference", "agent skill"), here.at("/skill")
        )
        if skill.parent == root:
            out.append(skill)
        else:
            out.extend(list_files_recursive(skill.parent))
    return out
