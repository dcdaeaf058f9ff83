"""A stable, readable rendering of the IR, for people and for golden tests.

:func:`dump` prints one line per record, with names where the IR stores indexes
(node ids for edge ends, action and resource ids for references), so a diff of two
dumps reads as a diff of meaning. Nested records sit on indented lines under their
owner. Optional members that are absent are left out; strings are printed bare when
they are plain identifiers and as JSON strings otherwise, so a line never becomes
ambiguous. :func:`to_json` is the same content as JSON values.

The rendering depends only on the records, never on the encoding, so it is stable
across codec changes that keep the meaning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from . import records as r

_BARE = re.compile(r"^[A-Za-z0-9_.:/@+-]+\Z")


def _q(text: str) -> str:
    return text if _BARE.match(text) else json.dumps(text, ensure_ascii=False)


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _outcomes(mask: int) -> list[str]:
    return [name for name in r.OUTCOMES if mask & r.OUTCOME_BIT[name]]


def _check(check: r.FactCheck) -> str:
    path = ".".join(check.path)
    if check.kind == r.EXISTS:
        return f"{_q(path)} exists"
    if check.kind == r.ABSENT:
        return f"{_q(path)} absent"
    return f"{_q(path)} == {_value(check.value)}"


def _checks_json(checks: tuple[r.FactCheck, ...] | None) -> list[dict[str, Any]] | None:
    if checks is None:
        return None
    out: list[dict[str, Any]] = []
    for check in checks:
        item: dict[str, Any] = {"path": list(check.path)}
        if check.kind == r.EQUALS:
            item["equals"] = check.value
        else:
            item["exists"] = check.kind == r.EXISTS
        out.append(item)
    return out


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]"


class _Names:
    """Index -> name lookups for one Program (``-`` stands for NONE)."""

    def __init__(self, program: r.Program) -> None:
        self.program = program

    def action(self, index: int) -> str | None:
        return None if index == r.NONE else self.program.actions[index].id

    def resource(self, index: int) -> str:
        return self.program.resources[index].id

    def graph(self, index: int) -> str | None:
        return None if index == r.NONE else self.program.graphs[index].id

    def resources(self, lists: r.ResourceLists) -> tuple[list[str], list[str]]:
        return (
            [self.resource(i) for i in lists.required],
            [self.resource(i) for i in lists.recommended],
        )


# -- text ---------------------------------------------------------------------------------


def _fields(pairs: Sequence[tuple[str, str | None]]) -> str:
    return "".join(f" {key}={value}" for key, value in pairs if value is not None)


def _resource_fields(names: _Names, lists: r.ResourceLists | None) -> list[tuple[str, str | None]]:
    if lists is None:
        return []
    required, recommended = names.resources(lists)
    return [("required", _list(required)), ("recommended", _list(recommended))]


def _node_lines(names: _Names, graph: r.Graph, node: r.Node) -> list[str]:
    def ends(edges: tuple[int, ...], attr: str) -> str:
        return _list([_q(graph.nodes[getattr(graph.edges[e], attr)].id) for e in edges])

    pairs: list[tuple[str, str | None]] = [
        ("action", names.action(node.action)),
        ("graph", names.graph(node.subgraph)),
        ("entry", _q(node.entry) if node.entry is not None else None),
        ("outcome", node.terminal_outcome),
        ("reason", node.reason_code),
        ("priority", str(node.priority) if node.priority else None),
        ("join", "any" if node.join_any else None),
        ("requires", _list([_check(c) for c in node.requires]) if node.requires else None),
        (
            "satisfiedBy",
            _list([_check(c) for c in node.satisfied_by]) if node.satisfied_by else None,
        ),
        *_resource_fields(names, node.resources),
        ("in", ends(node.incoming, "source") if node.incoming else None),
        ("out", ends(node.outgoing, "target") if node.outgoing else None),
        ("repeat", ends(node.repeats, "target") if node.repeats else None),
        ("label", _q(node.description) if node.description is not None else None),
    ]
    lines = [f"  node {_q(node.id)} {r.NODE_KINDS[node.kind]}{_fields(pairs)}"]
    gate = node.gate
    if gate is not None:
        lines.append(
            f"    gate {_q(gate.id)}"
            + _fields(
                [
                    ("authority", gate.authority),
                    (
                        "delegatable",
                        None if gate.delegatable is None else str(gate.delegatable).lower(),
                    ),
                    ("inspection", names.action(gate.inspection)),
                    ("resolution", names.action(gate.resolution)),
                    ("prompt", _q(gate.prompt)),
                ]
            )
        )
        if gate.delegated is not None:
            delegated = gate.delegated
            lines.append(
                "    delegated"
                + _fields(
                    [
                        ("inspection", "skip" if delegated.skip_inspection else None),
                        ("resolution", names.action(delegated.resolution)),
                        *_resource_fields(names, delegated.resources),
                    ]
                )
            )
    return lines


def _graph_lines(names: _Names, graph: r.Graph) -> list[str]:
    lines = [
        f"graph {_q(graph.id)} path={_q(graph.path)} digest={graph.digest}"
        + (f" calls={_list([_q(d) for d in graph.dependencies])}" if graph.dependencies else "")
    ]
    lines += [f"  entry {_q(name)} -> {_q(graph.nodes[i].id)}" for name, i in graph.entrypoints]
    for node in graph.nodes:
        lines += _node_lines(names, graph, node)
    for edge in graph.edges:
        lines.append(
            f"  edge {_q(graph.nodes[edge.source].id)} -> {_q(graph.nodes[edge.target].id)}"
            f" {r.EDGE_KINDS[edge.kind]} on={_list(_outcomes(edge.mask))}"
        )
    return lines


def _file_ref(ref: r.FileRef | None) -> str | None:
    if ref is None:
        return None
    text = f"{_q(ref.id)}({ref.kind} {_q(ref.media_type)} {_q(ref.path)} {ref.digest}"
    if ref.error is not None:
        text += f" error={ref.error[0]}"
    return text + ")"


def _action_line(action: r.Action) -> str:
    return f"action {_q(action.id)}" + _fields(
        [
            ("runner", action.runner),
            ("effect", action.effect),
            ("cwd", action.cwd),
            ("command", _q(action.command) if action.command is not None else None),
            ("runtime", action.runtime),
            ("entry", _q(action.entry) if action.entry is not None else None),
            ("args", _list([_q(a) for a in action.args]) if action.args else None),
            ("handler", _q(action.handler) if action.handler is not None else None),
            ("skill", _file_ref(action.skill)),
            ("inputSchema", _file_ref(action.input_schema)),
            ("outputSchema", _file_ref(action.output_schema)),
        ]
    )


def _resource_lines(names: _Names, resource: r.Resource) -> list[str]:
    line = f"resource {_q(resource.id)}" + _fields(
        [
            ("protocol", r.PROTOCOLS[resource.protocol]),
            ("kind", resource.kind),
            ("media", _q(resource.media_type)),
            ("path", _q(resource.path)),
            ("content", _q(resource.content) if resource.content is not None else None),
            ("digest", resource.digest),
            ("materializer", names.action(resource.materializer)),
        ]
    )
    lines = [line]
    host = resource.host
    if host is not None:
        lines.append(
            f"  host handler={_q(host.handler)} input={_q(host.input_schema)}"
            f" output={_q(host.output_schema)} value={_value(host.value)}"
        )
    return lines


def _catalog_line(names: _Names, entry: r.CatalogEntry) -> str:
    return f"code {_q(entry.code)}" + _fields(
        [
            ("kind", entry.kind),
            ("severity", entry.severity),
            ("document", None if entry.document == r.NONE else names.resource(entry.document)),
            ("summary", _q(entry.summary)),
        ]
    )


def dump(program: r.Program) -> str:
    """The text rendering: one line per record, names instead of indexes, ``\\n``-terminated."""
    names = _Names(program)
    lines = [
        f"program {_q(program.provider_id)} {_q(program.provider_version)}"
        f" digest={program.provider_digest}"
    ]
    for graph in program.graphs:
        lines += _graph_lines(names, graph)
    lines += [_action_line(a) for a in program.actions]
    for resource in program.resources:
        lines += _resource_lines(names, resource)
    if program.catalog is None:
        lines.append("catalog none")
    else:
        lines += [_catalog_line(names, e) for e in program.catalog]
    return "\n".join(lines) + "\n"


# -- JSON ---------------------------------------------------------------------------------


def _drop_none(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if v is not None}


def _lists_json(names: _Names, lists: r.ResourceLists | None) -> dict[str, list[str]] | None:
    if lists is None:
        return None
    required, recommended = names.resources(lists)
    return {"required": required, "recommended": recommended}


def _gate_json(names: _Names, gate: r.Gate) -> dict[str, Any]:
    delegated = gate.delegated
    return _drop_none(
        {
            "id": gate.id,
            "prompt": gate.prompt,
            "authority": gate.authority,
            "delegatable": gate.delegatable,
            "inspection": names.action(gate.inspection),
            "resolution": names.action(gate.resolution),
            "delegated": None
            if delegated is None
            else _drop_none(
                {
                    "skipInspection": delegated.skip_inspection,
                    "resolution": names.action(delegated.resolution),
                    "resources": _lists_json(names, delegated.resources),
                }
            ),
        }
    )


def _node_json(names: _Names, graph: r.Graph, node: r.Node) -> dict[str, Any]:
    def ends(edges: tuple[int, ...], attr: str) -> list[str]:
        return [graph.nodes[getattr(graph.edges[e], attr)].id for e in edges]

    return _drop_none(
        {
            "id": node.id,
            "kind": r.NODE_KINDS[node.kind],
            "description": node.description,
            "reasonCode": node.reason_code,
            "priority": node.priority,
            "join": "any" if node.join_any else "all",
            "requiresFacts": _checks_json(node.requires),
            "satisfiedBy": _checks_json(node.satisfied_by),
            "terminalOutcome": node.terminal_outcome,
            "action": names.action(node.action),
            "gate": None if node.gate is None else _gate_json(names, node.gate),
            "graph": names.graph(node.subgraph),
            "entry": node.entry,
            "resources": _lists_json(names, node.resources),
            "incoming": ends(node.incoming, "source"),
            "outgoing": ends(node.outgoing, "target"),
            "repeats": ends(node.repeats, "target"),
        }
    )


def _file_ref_json(ref: r.FileRef | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return _drop_none(
        {
            "id": ref.id,
            "kind": ref.kind,
            "mediaType": ref.media_type,
            "path": ref.path,
            "digest": ref.digest,
            "error": None if ref.error is None else {"code": ref.error[0], "message": ref.error[1]},
        }
    )


def to_json(program: r.Program) -> dict[str, Any]:
    """The same rendering as JSON values (names instead of indexes)."""
    names = _Names(program)
    graphs = [
        {
            "id": g.id,
            "path": g.path,
            "digest": g.digest,
            "entrypoints": {name: g.nodes[i].id for name, i in g.entrypoints},
            "dependencies": list(g.dependencies),
            "nodes": [_node_json(names, g, n) for n in g.nodes],
            "edges": [
                {
                    "from": g.nodes[e.source].id,
                    "to": g.nodes[e.target].id,
                    "kind": r.EDGE_KINDS[e.kind],
                    "outcomes": _outcomes(e.mask),
                }
                for e in g.edges
            ],
        }
        for g in program.graphs
    ]
    actions = [
        _drop_none(
            {
                "id": a.id,
                "runner": a.runner,
                "effect": a.effect,
                "cwd": a.cwd,
                "command": a.command,
                "runtime": a.runtime,
                "entry": a.entry,
                "args": list(a.args) if a.args else None,
                "handler": a.handler,
                "skill": _file_ref_json(a.skill),
                "inputSchema": _file_ref_json(a.input_schema),
                "outputSchema": _file_ref_json(a.output_schema),
            }
        )
        for a in program.actions
    ]
    resources = [
        _drop_none(
            {
                "id": res.id,
                "protocol": r.PROTOCOLS[res.protocol],
                "kind": res.kind,
                "mediaType": res.media_type,
                "path": res.path,
                "content": res.content,
                "digest": res.digest,
                "materializer": names.action(res.materializer),
                "host": None
                if res.host is None
                else {
                    "handler": res.host.handler,
                    "inputSchema": res.host.input_schema,
                    "outputSchema": res.host.output_schema,
                    "value": res.host.value,
                },
            }
        )
        for res in program.resources
    ]
    catalog = None
    if program.catalog is not None:
        catalog = [
            _drop_none(
                {
                    "code": e.code,
                    "kind": e.kind,
                    "summary": e.summary,
                    "severity": e.severity,
                    "document": None if e.document == r.NONE else names.resource(e.document),
                }
            )
            for e in program.catalog
        ]
    return {
        "provider": {
            "id": program.provider_id,
            "version": program.provider_version,
            "digest": program.provider_digest,
        },
        "graphs": graphs,
        "actions": actions,
        "resources": resources,
        "catalog": catalog,
    }
