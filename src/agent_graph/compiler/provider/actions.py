"""Action loading and the files an Action carries into graph closures and bundles."""

from __future__ import annotations

from pathlib import Path

from ...documents.paths import Origin, contained_file, list_files_recursive, portable
from ...documents.sources import read_markdown, read_structured
from ...errors import AgentGraphError
from .model import LoadedAction
from .resources import check_schema, locate

_FILE_FIELDS = ("entry", "inputSchema", "outputSchema")


def load_action(root: Path, reference: str, origin: Origin) -> LoadedAction:
    path = locate(root, reference, ("action reference", "action"), origin)
    rel = portable(root, path)
    doc = read_structured(path, display=rel)
    check_schema("action", doc.value, rel, doc.source)
    return LoadedAction(doc.value["id"], path, rel, doc)


def action_files(
    root: Path, action: LoadedAction, label: str, problems: list[AgentGraphError] | None = None
) -> list[Path]:
    """The action file, its entry, schemas, ``files[]`` and Skill (directory) files.

    A Skill in its own directory brings the whole directory; a Skill at the Provider
    root brings only itself. The first reference that fails raises, unless
    ``problems`` is given: then every failing reference is appended to it, in order.
    """
    definition = action.definition
    here = Origin(action.rel, action.doc.source)
    out = [action.path]
    refs: list[tuple[str, str]] = [
        (f"/{name}", definition[name]) for name in _FILE_FIELDS if name in definition
    ]
    refs += [(f"/files/{i}", ref) for i, ref in enumerate(definition.get("files", []))]
    for pointer, ref in refs:
        try:
            out.append(locate(root, ref, (label, label), here.at(pointer)))
        except AgentGraphError as error:
            if problems is None:
                raise
            problems.append(error)
    if "skill" in definition:
        try:
            skill = locate(
                root,
                definition["skill"],
                ("agent skill reference", "agent skill"),
                here.at("/skill"),
            )
            if skill.parent == root:
                out.append(skill)
            else:
                out.extend(list_files_recursive(skill.parent))
        except AgentGraphError as error:
            if problems is None:
                raise
            problems.append(error)
    return out


def skill_problem(root: Path, action: LoadedAction) -> AgentGraphError | None:
    """Why the agent Skill of ``action`` (a contained, existing file) cannot be read.

    Routes read a SKILL.md's frontmatter; one without (or with a broken one) would
    load and fail only at route time, unpositioned. Here it fails at load time with
    two diagnostics: at the Action's ``/skill`` and in the SKILL.md itself.
    """
    here = Origin(action.rel, action.doc.source, "/skill")
    reference = action.definition.get("skill")
    if not isinstance(reference, str):
        return None
    try:
        path = contained_file(root, reference, ("agent skill reference", "agent skill"), here)
    except AgentGraphError:
        return None  # action_files reported it
    rel = portable(root, path)
    try:
        read_markdown(path, display=rel)
    except AgentGraphError as error:
        message = f"Action {action.id} skill {rel} cannot be read: {error.message}"
        at = here.diagnostic(error.code, message)
        return AgentGraphError(error.code, message, [at, *error.diagnostics])
    return None
