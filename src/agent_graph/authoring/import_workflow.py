"""``agc import workflow <file>``: a legacy ``steps``/``dependsOn`` workflow as a graph
(docs/import.md).

The checks and their codes are the reference's, in its order; each problem also
points at the offending value of the workflow file (line, column, pointer), which the
reference does not. Nothing is written before every check has passed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import codes
from ..documents.paths import Origin, display_path
from ..documents.sources import read_structured
from ..errors import AgentGraphError
from .import_plan import ImportPlan, ImportResult, open_provider
from .slug import slug

__all__ = ["import_workflow"]

_EFFECTS = ("read", "write", "external")
_COMPLETED = ["completed"]


def _check_shape(value: Any, here: Origin) -> list[dict[str, Any]]:
    """The reference's ``workflow-invalid`` checks, in its order."""

    def invalid(pointer: str, message: str) -> AgentGraphError:
        return here.at(pointer).fail(codes.WORKFLOW_INVALID, message)

    steps = value.get("steps") if isinstance(value, dict) else None
    if not isinstance(steps, list) or not steps:
        raise invalid(
            "/steps" if isinstance(value, dict) else "",
            ("Workflow must contain a non-empty steps array"),
        )
    if "id" in value and not (isinstance(value["id"], str) and value["id"]):
        raise invalid("/id", "Workflow id must be a non-empty string when present")
    for index, step in enumerate(steps):
        at = f"/steps/{index}"
        if not (
            isinstance(step, dict)
            and isinstance(step.get("id"), str)
            and step["id"]
            and isinstance(step.get("command"), str)
            and step["command"]
        ):
            raise invalid(
                at, f"Workflow step {index + 1} must declare non-empty id and command strings"
            )
        sid = step["id"]
        if "description" in step and not isinstance(step["description"], str):
            raise invalid(f"{at}/description", f"Workflow step {sid} description must be a string")
        depends = step.get("dependsOn")
        if "dependsOn" in step and not (
            isinstance(depends, list) and all(isinstance(d, str) for d in depends)
        ):
            raise invalid(
                f"{at}/dependsOn", f"Workflow step {sid} dependsOn must be a string array"
            )
        if "effect" in step and step["effect"] not in _EFFECTS:
            raise invalid(f"{at}/effect", f"Workflow step {sid} has an invalid effect")
    return steps


def _check_ids(steps: list[dict[str, Any]], here: Origin) -> dict[str, str]:
    """Step id -> node id (slugged), unique, not reserved."""
    first: dict[str, int] = {}
    for index, step in enumerate(steps):
        if step["id"] in first:
            raise here.at(f"/steps/{index}/id").fail(
                codes.WORKFLOW_STEP_DUPLICATE,
                f"Workflow step ids must be unique: {step['id']} is also step "
                f"{first[step['id']] + 1}",
            )
        first[step["id"]] = index
    normalized: dict[str, str] = {}
    owners: dict[str, int] = {}
    for index, step in enumerate(steps):
        node = slug(step["id"])
        if node in owners:
            raise here.at(f"/steps/{index}/id").fail(
                codes.WORKFLOW_STEP_ID_COLLISION,
                f"Workflow step ids must remain unique after normalization: {step['id']} and "
                f"{steps[owners[node]]['id']} both become {node}",
            )
        owners[node] = index
        normalized[step["id"]] = node
    for index, step in enumerate(steps):
        if normalized[step["id"]] in ("start", "done"):
            raise here.at(f"/steps/{index}/id").fail(
                codes.WORKFLOW_STEP_ID_RESERVED,
                f"Workflow step ids may not normalize to start or done: {step['id']}",
            )
    return normalized


def _check_dependencies(steps: list[dict[str, Any]], here: Origin) -> None:
    """Every dependency exists; no cycle (depth first, in step order, as the reference)."""
    by_id = {step["id"]: (index, step) for index, step in enumerate(steps)}
    visited: set[str] = set()
    for start in steps:
        if start["id"] in visited:
            continue
        # iterative depth-first search: (step id, next dependency index); ``trail`` the path
        trail: list[str] = []
        on_trail: set[str] = set()
        stack: list[tuple[str, int]] = [(start["id"], 0)]
        trail.append(start["id"])
        on_trail.add(start["id"])
        while stack:
            sid, next_index = stack[-1]
            index, step = by_id[sid]
            depends = step.get("dependsOn") or []
            if next_index >= len(depends):
                stack.pop()
                trail.pop()
                on_trail.discard(sid)
                visited.add(sid)
                continue
            stack[-1] = (sid, next_index + 1)
            dependency = depends[next_index]
            pointer = f"/steps/{index}/dependsOn/{next_index}"
            if dependency not in by_id:
                raise here.at(pointer).fail(
                    codes.WORKFLOW_DEPENDENCY_MISSING,
                    f"Step {sid} depends on missing step {dependency}",
                )
            if dependency in on_trail:
                cycle = [*trail[trail.index(dependency) :], dependency]
                raise here.at(pointer).fail(
                    codes.WORKFLOW_CYCLE,
                    f"Workflow dependencies contain a cycle: {' -> '.join(cycle)}",
                )
            if dependency in visited:
                continue
            stack.append((dependency, 0))
            trail.append(dependency)
            on_trail.add(dependency)


def import_workflow(workflow: str, into: str, graph: str | None = None) -> ImportResult:
    """Turn a legacy workflow into a graph: a start node, one command Action per step."""
    source = Path(os.path.abspath(workflow))
    shown = display_path(source)
    doc = read_structured(source, display=shown)
    here = Origin(shown, doc.source)
    steps = _check_shape(doc.value, here)
    root, provider = open_provider(into)
    named = doc.value.get("id")
    gid = slug(graph if graph is not None else named if named is not None else source.stem)
    normalized = _check_ids(steps, here)
    _check_dependencies(steps, here)
    graph_rel, start_rel = f"graphs/{gid}.yaml", f"actions/{gid}-start.yaml"
    step_rels = {sid: f"actions/{gid}-{node}.yaml" for sid, node in normalized.items()}
    plan = ImportPlan("workflow", root, provider, graph_rel)
    plan.refuse_existing([graph_rel, start_rel, *step_rels.values()])
    plan.add_yaml(
        start_rel,
        {
            "schema": "agent-graph.action.v1",
            "id": f"{gid}.start",
            "runner": "command",
            "effect": "read",
            "command": "true",
        },
    )
    nodes: list[dict[str, Any]] = [
        {
            "id": "start",
            "kind": "action",
            "action": start_rel,
            "description": "Start imported workflow",
            "reasonCode": f"route.{gid}.start",
        }
    ]
    edges: list[dict[str, Any]] = []
    plan.add_reason(f"route.{gid}.start", "The imported workflow is ready to start.")
    for step in steps:
        node_id = normalized[step["id"]]
        plan.add_yaml(
            step_rels[step["id"]],
            {
                "schema": "agent-graph.action.v1",
                "id": f"{gid}.{node_id}",
                "runner": "command",
                "effect": step.get("effect", "write"),
                "command": step["command"],
            },
        )
        node: dict[str, Any] = {"id": node_id, "kind": "action", "action": step_rels[step["id"]]}
        if "description" in step:
            node["description"] = step["description"]
        node["reasonCode"] = f"route.{gid}.{node_id}"
        nodes.append(node)
        plan.add_reason(node["reasonCode"], "The imported workflow step is ready to run.")
        edges.extend(
            {"from": normalized[dependency], "to": node_id, "outcomes": _COMPLETED}
            for dependency in step.get("dependsOn") or []
        )
    edges.extend(
        {"from": "start", "to": normalized[step["id"]], "outcomes": _COMPLETED}
        for step in steps
        if not step.get("dependsOn")
    )
    depended = {d for step in steps for d in step.get("dependsOn") or []}
    nodes.append({"id": "done", "kind": "terminal", "terminalOutcome": "completed", "join": "all"})
    edges.extend(
        {"from": normalized[step["id"]], "to": "done", "outcomes": _COMPLETED}
        for step in steps
        if step["id"] not in depended
    )
    plan.add_yaml(
        graph_rel,
        {
            "schema": "agent-graph.graph.v1",
            "id": gid,
            "entrypoints": {"default": "start"},
            "nodes": nodes,
            "edges": edges,
        },
    )
    body = (
        f"Imported workflow `{source}` as graph `{gid}`.\n\n"
        "The importer preserved declared commands and dependencies. Review effects, outcomes, "
        "gates, recovery routes, resources, and fact-backed completion before production use."
    )
    return plan.commit(f"Workflow {gid}", body)
