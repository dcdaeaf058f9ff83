"""``agc import skill`` and ``agc import scripts`` (docs/import.md).

Each builds the same graph as the reference importer (ids, nodes, edges, entry,
reason codes, catalog summaries); what differs is how it writes: nothing is written
until everything is known to be valid (:class:`.import_plan.ImportPlan`), and the
copied Skill's frontmatter is edited in place rather than re-dumped.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from .. import codes
from ..documents.files import read_bytes, read_text
from ..documents.paths import display_path, list_files_recursive, portable
from ..documents.sources import parse_frontmatter
from ..errors import AgentGraphError
from .import_plan import ImportPlan, ImportResult, open_provider
from .slug import slug
from .yaml_edits import YamlEditor

__all__ = ["import_scripts", "import_skill", "runtime_for"]

LOCATOR = "path:../../provider.yaml"
_REVIEW_GRAPH = (
    "Review action effects, graph outcomes, recovery paths, gates, and fact-backed "
    "completion before production use."
)


def _terminal_graph(gid: str, entry: str, nodes: list[dict[str, Any]], edges: list[Any]) -> Any:
    return {
        "schema": "agent-graph.graph.v1",
        "id": gid,
        "entrypoints": {"default": entry},
        "nodes": nodes,
        "edges": edges,
    }


def _bound_skill(text: str, source: Path, display: str, graph: str) -> tuple[str, str]:
    """The Skill text with its binding set (frontmatter edited in place) and its name."""
    doc = parse_frontmatter(text, source, display=display)
    normalized = text.replace("\r\n", "\n")
    end = normalized.find("\n---\n", 4)
    header = normalized[4 : end + 1]
    edits = YamlEditor(header, display=display)
    meta = doc.value
    name = meta.get("name")
    if not isinstance(name, str):
        name = source.parent.name
        if "name" in meta:
            edits.replace_scalar("/name", name)
        else:
            edits.add_key("", "name", name)
    binding = {"agent-graph": LOCATOR, "agent-graph.graph": graph, "agent-graph.entry": "default"}
    extension = meta.get("metadata")
    if not isinstance(extension, dict):
        if "metadata" in meta:
            edits.replace_scalar("/metadata", binding)
        else:
            edits.add_key("", "metadata", binding)
    else:
        for key, value in binding.items():
            if key in extension:
                if extension[key] != value:
                    edits.replace_scalar(f"/metadata/{key}", value)
            else:
                edits.add_key("/metadata", key, value)
    return normalized[:4] + edits.result() + normalized[end + 1 :], name


def import_skill(skill: str, into: str, graph: str | None = None) -> ImportResult:
    """Copy a Skill's folder into the Provider, bind it, and give it a one-step graph."""
    source = Path(os.path.abspath(skill))
    shown = display_path(source)
    text = read_text(source, display=shown)
    parse_frontmatter(text, source, display=shown)  # a Skill without frontmatter fails here
    gid = slug(graph if graph is not None else source.parent.name)
    root, provider = open_provider(into)
    skill_dir, action_rel, graph_rel = f"skills/{gid}", f"actions/{gid}.yaml", f"graphs/{gid}.yaml"
    plan = ImportPlan("skill", root, provider, graph_rel)
    plan.refuse_existing([skill_dir, action_rel, graph_rel])
    skill_rel = f"{skill_dir}/SKILL.md"
    for file in list_files_recursive(source.parent):
        if file == source:
            continue
        rel = f"{skill_dir}/{portable(source.parent, file)}"
        plan.stage.put(rel, read_bytes(file, display_path(file)), executable=_executable(file))
    bound, name = _bound_skill(text, source, shown, gid)
    plan.stage.text(skill_rel, bound)
    plan.add_yaml(
        action_rel,
        {
            "schema": "agent-graph.action.v1",
            "id": f"skill.{gid}",
            "runner": "agent",
            "effect": "write",
            "skill": skill_rel,
        },
    )
    reason = f"route.{gid}.use-skill"
    node = {
        "id": "use-skill",
        "kind": "action",
        "action": action_rel,
        "description": f"Use {name}",
        "reasonCode": reason,
    }
    terminal = {"id": "done", "kind": "terminal", "terminalOutcome": "completed"}
    edge = {"from": "use-skill", "to": "done", "outcomes": ["completed"]}
    plan.add_yaml(graph_rel, _terminal_graph(gid, "use-skill", [node, terminal], [edge]))
    plan.add_reason(reason, "The imported Skill route is ready to use.")
    body = "\n".join(
        [
            f"- Imported Skill: `{source}`",
            f"- Generated graph: `{graph_rel}`",
            f"- Generated action: `{action_rel}`",
            f"- Added Skill binding: Provider `{LOCATOR}`, Graph `{gid}`, Entry `default`",
            "",
            _REVIEW_GRAPH,
        ]
    )
    return plan.commit(f"Skill {gid}", body)


def runtime_for(path: str) -> str:
    extension = os.path.splitext(path)[1].lower()
    if extension in (".js", ".mjs", ".cjs"):
        return "node"
    if extension in (".ts", ".mts", ".cts"):
        return "bun"
    return "python" if extension == ".py" else "shell"


def _executable(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & stat.S_IXUSR)
    except OSError:
        return False


def import_scripts(
    scripts: list[str], into: str, graph: str | None = "imported-scripts"
) -> ImportResult:
    """Copy scripts into the Provider as a sequential graph, one script Action per step."""
    if not scripts:
        raise AgentGraphError(codes.IMPORT_EMPTY, "At least one script is required")
    root, provider = open_provider(into)
    gid = slug(graph if graph is not None else "imported-scripts")
    graph_rel = f"graphs/{gid}.yaml"
    plan = ImportPlan("scripts", root, provider, graph_rel)
    sources = [Path(os.path.abspath(s)) for s in scripts]
    targets = [f"scripts/{gid}/{i:02d}-{s.name}" for i, s in enumerate(sources, start=1)]
    actions = [f"actions/{gid}-{i}.yaml" for i in range(1, len(sources) + 1)]
    plan.refuse_existing(
        [graph_rel, *(x for pair in zip(targets, actions, strict=True) for x in pair)]
    )
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for index, (source, target, action_rel) in enumerate(
        zip(sources, targets, actions, strict=True), 1
    ):
        shown = display_path(source)
        plan.stage.put(target, read_bytes(source, shown), executable=_executable(source))
        node_id = f"step-{index}"
        plan.add_yaml(
            action_rel,
            {
                "schema": "agent-graph.action.v1",
                "id": f"{gid}.{node_id}",
                "runner": "script",
                "effect": "write",
                "entry": target,
                "runtime": runtime_for(target),
            },
        )
        reason = f"route.{gid}.{node_id}"
        nodes.append(
            {
                "id": node_id,
                "kind": "action",
                "action": action_rel,
                "description": source.name,
                "reasonCode": reason,
            }
        )
        plan.add_reason(reason, f"Imported script step {index} is ready to run.")
        if index > 1:
            edges.append({"from": f"step-{index - 1}", "to": node_id, "outcomes": ["completed"]})
    nodes.append({"id": "done", "kind": "terminal", "terminalOutcome": "completed"})
    edges.append({"from": f"step-{len(sources)}", "to": "done", "outcomes": ["completed"]})
    plan.add_yaml(graph_rel, _terminal_graph(gid, "step-1", nodes, edges))
    body = (
        f"Imported {len(sources)} scripts as a sequential graph `{gid}`.\n\n"
        "Review effects, arguments, working directories, branching, recovery, and completion "
        "facts before production use."
    )
    return plan.commit(f"Scripts {gid}", body)
