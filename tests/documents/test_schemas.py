"""The packaged JSON Schemas and :mod:`agent_graph.documents.schema`.

Covers: every schema is valid draft 2020-12 and closed (unknown members rejected
at every level); each schema accepts its positive examples and rejects targeted
negative ones (node kinds, runners, descriptor kinds, location envelopes, host
results); ECMAScript pattern and ajv-formats date-time semantics; diagnostics
(codes, pointers, line/column, params); and that the Rust fast path and the
Python engine agree on acceptance over a generated corpus of valid and invalid
documents (where they would differ, e.g. NaN, Python decides).

The expected values of the date-time and regex tables were produced with
ajv-formats 3.0.1 and JavaScript ``RegExp`` (``u`` flag), the reference's stack.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_graph.documents import schema as S
from agent_graph.documents.formats import ecma_search, is_date_time
from agent_graph.documents.sourcemap import SourceMap, escape_token
from agent_graph.errors import AgentGraphError, Problem

HAVE_RUST = S._rust_validator("graph") is not None
needs_rust = pytest.mark.skipif(not HAVE_RUST, reason="jsonschema-rs is not installed")

Doc = dict[str, Any]

# --------------------------------------------------------------------------- examples

D = "sha256:" + "0123456789abcdef" * 4
R = "sha256:" + "fedcba9876543210" * 4


def file_location(**extra: Any) -> Doc:
    return {
        "schema": "agent-graph.resource-location.file.v1",
        "id": "procedure.weekly",
        "kind": "procedure",
        "mediaType": "text/markdown",
        "digest": D,
        "filePath": "/opt/p/resources/weekly.md",
        **extra,
    }


def view_location(**extra: Any) -> Doc:
    return {
        "schema": "agent-graph.resource-location.graph-action.v1",
        "id": "status.current",
        "kind": "context-view",
        "mediaType": "text/markdown",
        "revision": R,
        "materialize": {"resourceId": "status.current"},
        **extra,
    }


def host_location(**extra: Any) -> Doc:
    return {
        "schema": "agent-graph.resource-location.host-action.v1",
        "id": "digest.weekly",
        "kind": "procedure",
        "mediaType": "application/json",
        "revision": R,
        "materialize": {
            "handler": "acme.build-digest/v1",
            "input": {"schema": "acme.digest-request/v1", "value": {"week": "__runtime__"}},
            "output_schema": "acme.digest/v1",
        },
        **extra,
    }


def plan(**step: Any) -> list[Doc]:
    return [{"effect": "read", "cwd": "workspace", "workingDirectory": "/w", **step}]


GRAPH: Doc = {
    "schema": "agent-graph.graph.v1",
    "id": "weekly",
    "description": "Weekly report.",
    "entrypoints": {"default": "draft", "publish": "approve"},
    "nodes": [
        {
            "id": "draft",
            "kind": "action",
            "action": "actions/draft.yaml",
            "reasonCode": "route.weekly.draft",
            "description": "Write it",
            "priority": 10,
            "join": "any",
            "requiresFacts": [{"path": "week.id", "exists": True}],
            "satisfiedBy": [
                {"path": "draft.digest", "exists": True},
                {"path": "items.0.state", "equals": "done"},
            ],
            "resources": {"required": ["resources/guide.md"], "recommended": ["r/style.md"]},
        },
        {
            "id": "approve",
            "kind": "gate",
            "reasonCode": "route.weekly.approve",
            "gate": {
                "id": "publish",
                "prompt": "Publish?",
                "authority": "lead",
                "delegatable": True,
            },
            "inspectionAction": "actions/inspect.yaml",
            "resolutionAction": "actions/publish.yaml",
            "delegated": {
                "inspection": "skip",
                "resolutionAction": "actions/auto.yaml",
                "resources": {"required": []},
            },
            "satisfiedBy": [{"path": "published", "equals": True}],
            "resources": {"required": ["r.md"]},
        },
        {
            "id": "sub",
            "kind": "subgraph",
            "graph": "child",
            "entry": "default",
            "priority": -1000,
            "join": "all",
            "requiresFacts": [{"path": "n", "equals": 1.5}, {"path": "m", "equals": None}],
        },
        {
            "id": "done",
            "kind": "terminal",
            "terminalOutcome": "completed",
            "requiresFacts": [],
            "priority": 0,
            "join": "any",
            "description": "Done",
        },
    ],
    "edges": [
        {"from": "draft", "to": "approve"},
        {"from": "draft", "to": "draft", "kind": "repeat", "outcomes": ["partial"]},
        {"from": "approve", "to": "sub", "kind": "gatedBy", "outcomes": ["completed", "skipped"]},
        {"from": "sub", "to": "done", "kind": "consumes"},
        {
            "from": "draft",
            "to": "done",
            "kind": "requires",
            "outcomes": ["waiting-user", "blocked"],
        },
        {"from": "draft", "to": "done", "kind": "flow", "outcomes": ["failed", "unverified"]},
    ],
}

ACTIONS: dict[str, Doc] = {
    "command": {
        "schema": "agent-graph.action.v1",
        "id": "inspect",
        "runner": "command",
        "effect": "read",
        "command": "npm pack --dry-run",
        "cwd": "workspace",
        "files": ["scripts/x.sh"],
        "inputSchema": "schemas/in.json",
        "outputSchema": "schemas/out.json",
        "description": "d",
    },
    "script": {
        "schema": "agent-graph.action.v1",
        "id": "build",
        "runner": "script",
        "effect": "write",
        "entry": "scripts/build.py",
        "runtime": "python",
        "args": ["--fast", "it's"],
        "cwd": "provider",
    },
    "agent": {
        "schema": "agent-graph.action.v1",
        "id": "write",
        "runner": "agent",
        "effect": "external",
        "skill": "skills/writer/SKILL.md",
    },
    "host": {
        "schema": "agent-graph.action.v1",
        "id": "check",
        "runner": "host",
        "effect": "read",
        "handler": "acme.check/v1",
        "inputSchema": "schemas/in.json",
        "outputSchema": "schemas/out.json",
    },
}

HOST_RESULT: Doc = {
    "schema": "agent-graph.host-action-result.v1",
    "handler": "acme.build-digest/v1",
    "input_digest": D,
    "output": {"schema": "acme.digest/v1", "inline": {"items": []}},
    "receipt": {"adapter": "example-host", "adapter_version": "1.0.0"},
}

RUN: Doc = {
    "schema": "agent-graph.run.v1",
    "id": "4f1c2b9e-0000-4000-8000-000000000000",
    "provider": "p",
    "graph": "g",
    "entry": "default",
    "workspace": "/w",
    "createdAt": "2024-02-29T10:00:00.000Z",
    "updatedAt": "2024-03-01 10:00:00+01:00",
    "facts": {"a": {"b": [1, None]}},
    "outcomes": {
        "g/n": {"outcome": "completed", "recordedAt": "2024-03-01T10:00:00Z", "detail": {"x": 1}}
    },
    "authorities": ["lead"],
    "events": [
        {"sequence": 1, "at": "2024-02-29T10:00:00.000Z", "type": "run.started"},
        {
            "sequence": 2,
            "at": "2024-03-01t10:00:00z",
            "type": "node.outcome-recorded",
            "node": "g/n",
            "outcome": "completed",
            "detail": None,
        },
    ],
}

_DIGEST = "sha256:" + "0" * 64
FLOW_RUN: Doc = {
    "schema": "agent-graph.flow-run.v1",
    "runId": "run-3fa9c2d1e0",
    "flow": "ship",
    "entryPath": "/p/ship/FLOW.md",
    "packageRoot": "/p/ship",
    "fingerprint": _DIGEST,
    "fingerprintVersion": 1,
    "packageFingerprint": _DIGEST,
    "program": _DIGEST,
    "task": {"version": "1.0.0"},
    "cwd": "/w",
    "status": "interrupted",
    "agentBinding": None,
    "parent": None,
    "cursor": {"at": "node", "node": "notes", "input": "x", "from": "route", "visit": "v1"},
    "conclusion": None,
    "error": None,
    "startedAt": "2026-01-01T10:00:00.000Z",
    "updatedAt": "2026-01-01T10:00:03.120Z",
    "completedAt": None,
    "revision": 3,
    "visits": [
        {
            "id": "v1",
            "node": "notes",
            "kind": "agent-new",
            "input": "x",
            "status": "interrupted",
            "enteredFrom": "start",
            "round": None,
            "retryOf": None,
            "result": None,
            "error": None,
            "startedAt": "2026-01-01T10:00:00.100Z",
            "endedAt": "2026-01-01T10:00:03.100Z",
        }
    ],
    "rounds": [],
    "recoveries": [],
    "events": [
        {
            "seq": 1,
            "type": "run-started",
            "at": "2026-01-01T10:00:00.000Z",
            "runId": "run-3fa9c2d1e0",
            "flow": "ship",
            "task": {"version": "1.0.0"},
            "cwd": "/w",
            "agent": None,
        },
        {
            "seq": 2,
            "type": "visit-started",
            "at": "2026-01-01T10:00:00.100Z",
            "runId": "run-3fa9c2d1e0",
            "flow": "ship",
            "node": "notes",
            "visit": "v1",
        },
    ],
    "checksum": _DIGEST,
}

VALID: dict[str, list[Doc]] = {
    "flow-run": [FLOW_RUN],
    "provider": [
        {
            "schema": "agent-graph.provider.v1",
            "id": "acme.release",
            "version": "2.10.3-rc.1",
            "name": "Release",
            "description": "Ships things.",
            "graphs": ["graphs/a.yaml", "./graphs/b.yaml", "a//c.yaml"],
            "catalogs": {"codes": "codes.yaml"},
            "compatibility": {"agentGraph": "^0.3.0", "node": ">=20"},
        },
        {
            "schema": "agent-graph.provider.v1",
            "id": "acme/weekly",
            "version": "0.1.0",
            "graphs": ["graphs/main.yaml"],
        },
    ],
    "graph": [
        GRAPH,
        {
            "schema": "agent-graph.graph.v1",
            "id": "g",
            "entrypoints": {"default": "t"},
            "nodes": [{"id": "t", "kind": "terminal", "terminalOutcome": "partial"}],
            "edges": [],
        },
    ],
    "action": list(ACTIONS.values()),
    "resource": [
        {
            "schema": "agent-graph.resource.v1",
            "id": "guide",
            "kind": "procedure",
            "mediaType": "text/markdown",
            "path": "resources/guide.md",
            "description": "d",
        },
        {
            "schema": "agent-graph.resource.v1",
            "id": "status",
            "kind": "context-view",
            "mediaType": "text/plain",
            "materializer": "actions/status.yaml",
        },
    ],
    "resource.file": [
        {
            "schema": "agent-graph.resource.file.v1",
            "id": "acme.contract",
            "kind": "schema",
            "mediaType": "application/schema+json",
            "path": "schemas/contract.schema.json",
            "description": "d",
        },
    ],
    "resource.graph-action": [
        {
            "schema": "agent-graph.resource.graph-action.v1",
            "id": "status.current",
            "kind": "context-view",
            "mediaType": "text/markdown",
            "materializer": "actions/read-status.yaml",
            "description": "d",
        },
    ],
    "resource.host-action": [
        {
            "schema": "agent-graph.resource.host-action.v1",
            "id": "digest.weekly",
            "kind": "procedure",
            "mediaType": "application/json",
            "materializer": "actions/build-digest.yaml",
            "input": {"protocol": "acme.digest-request/v1", "week": "__runtime__", "id": None},
        },
        {
            "schema": "agent-graph.resource.host-action.v1",
            "id": "t",
            "kind": "template",
            "mediaType": "text/plain",
            "materializer": "a.yaml",
            "input": None,
            "description": "a bare null input",
        },
    ],
    "resource-location.file": [
        file_location(),
        file_location(readState="current", id="skill.Writer Name", kind="skill"),
    ],
    "resource-location.graph-action": [
        view_location(),
        view_location(readState="read-required"),
        {
            "schema": "agent-graph.resource-location.graph-action.v1",
            "id": "status.current",
            "kind": "context-view",
            "mediaType": "text/markdown",
            "revision": R,
            "digest": D,
            "filePath": "/cache/x.md",
        },
        {
            "schema": "agent-graph.resource-location.graph-action.v1",
            "id": "v",
            "kind": "context-view",
            "mediaType": "text/markdown",
            "materialize": {"resourceId": "v"},
        },
    ],
    "resource-location.host-action": [
        host_location(),
        host_location(readState="current"),
        {
            "schema": "agent-graph.resource-location.host-action.v1",
            "id": "h",
            "kind": "schema",
            "mediaType": "application/json",
            "materialize": {
                "handler": "h/v1",
                "input": {"schema": "s/v1", "value": "scalar"},
                "output_schema": "o/v1",
                "input_digest": D,
            },
        },
    ],
    "resource-read-receipts": [
        {
            "schema": "agent-graph.resource-read-receipts.v1",
            "provider": "acme/weekly",
            "receipts": [
                {"id": "guide", "digest": D},
                {"id": "status.current", "digest": D, "revision": R},
            ],
        },
    ],
    "host-action-result": [
        HOST_RESULT,
        {
            **HOST_RESULT,
            "output": {"schema": "o/v1", "resource": {"ref": "host-resource://x/y", "digest": R}},
            "receipt": {"adapter": "codex", "adapter_version": "0.7.4-beta.1+build.5"},
        },
        {**HOST_RESULT, "output": {"schema": "o/v1", "inline": None}},
    ],
    "code-catalog": [
        {
            "schema": "agent-graph.code-catalog.v1",
            "codes": [
                {
                    "code": "route.weekly.draft",
                    "kind": "route-reason",
                    "summary": "The draft is due.",
                    "document": "resources/guide.md",
                },
                {
                    "code": "weekly.late",
                    "kind": "diagnostic",
                    "summary": "Late.",
                    "severity": "info",
                },
                {"code": "route.x", "kind": "diagnostic", "summary": "s", "severity": "error"},
            ],
        },
        {"schema": "agent-graph.code-catalog.v1", "codes": []},
    ],
    "evaluation": [
        {
            "schema": "agent-graph.evaluation.v1",
            "provider": "p",
            "graph": "g",
            "entry": "default",
            "revision": R,
            "statusCode": "actionable",
            "primaryRoute": {
                "routeId": "route:0123456789abcdef0123",
                "graph": "g",
                "node": "n",
                "statusCode": "actionable",
                "reasonCode": "route.g.n",
                "hint": "Do it.",
                "availability": "immediate",
                "label": "N",
            },
            "alternativeRoutes": [],
            "diagnostics": [
                {
                    "code": "route-alternatives-truncated",
                    "severity": "info",
                    "message": "m",
                    "detail": {"available": 5, "returned": 3},
                }
            ],
        },
        {
            "schema": "agent-graph.evaluation.v1",
            "provider": "p",
            "graph": "g",
            "entry": "e",
            "revision": R,
            "statusCode": "complete",
            "outcome": "completed",
            "alternativeRoutes": [],
            "diagnostics": [],
        },
    ],
    "route": [
        {
            "schema": "agent-graph.route.v1",
            "provider": "p",
            "revision": R,
            "routeId": "route:0123456789abcdef0123",
            "graph": "g",
            "node": "n",
            "statusCode": "actionable",
            "reasonCode": "route.g.n",
            "hint": "h",
            "availability": "immediate",
            "callPath": ["main/sub"],
            "action": {
                "id": "write",
                "runner": "agent",
                "effect": "write",
                "skill": file_location(id="skill.w", kind="skill", readState="read-required"),
                "inputSchema": file_location(
                    id="schema.w.input", kind="schema", readState="current"
                ),
            },
            "commandPlan": [],
            "resources": {
                "required": [
                    file_location(readState="current"),
                    view_location(readState="read-required"),
                    host_location(readState="read-required"),
                ],
                "recommended": [],
            },
            "diagnostics": [],
            "afterAction": {"evaluate": True, "recordNode": "g/n"},
        },
        {
            "schema": "agent-graph.route.v1",
            "provider": "p",
            "revision": R,
            "routeId": "route:0123456789abcdef0123",
            "graph": "g",
            "node": "approve",
            "statusCode": "waiting-user",
            "reasonCode": "route.g.approve",
            "availability": "requires-user",
            "callPath": [],
            "commandPlan": [],
            "resources": {
                "required": [],
                "recommended": [file_location(readState="read-required")],
            },
            "gate": {
                "id": "publish",
                "prompt": "Publish?",
                "authority": "lead",
                "delegatable": True,
                "resolution": "user",
                "inspectionAction": {
                    "action": {"id": "i", "runner": "command", "effect": "read"},
                    "commandPlan": plan(command="ls"),
                },
                "resolutionAction": {
                    "action": {"id": "r", "runner": "host", "effect": "write"},
                    "commandPlan": plan(handler="acme.publish", effect="write", cwd="provider"),
                },
            },
            "diagnostics": [],
            "afterAction": {"evaluate": True},
        },
    ],
    "run": [RUN],
    "test-case": [
        {
            "schema": "agent-graph.test.v1",
            "name": "draft is next",
            "graph": "weekly",
            "entry": "default",
            "state": {
                "facts": {"week": {"id": "2024-w01"}},
                "outcomes": {
                    "weekly/draft": "partial",
                    "weekly/x": {"outcome": "failed", "recordedAt": "2024-01-01T00:00:00Z"},
                },
                "authorities": ["lead"],
            },
            "expect": {
                "statusCode": "actionable",
                "primaryNode": "draft",
                "primaryReasonCode": "route.weekly.draft",
                "alternativeNodes": [],
                "availability": "immediate",
                "outcome": "completed",
                "diagnosticsInclude": ["no-route"],
                "command": "ls",
                "requiredResources": ["a"],
                "gateResolution": "session-authority",
                "inspectionInputSchema": "i",
                "resolutionHandler": "h",
                "recordNode": "weekly/draft",
            },
        },
        {
            "schema": "agent-graph.test.v1",
            "name": "n",
            "graph": "g",
            "entry": "e",
            "expect": {"statusCode": "error"},
        },
    ],
    "bundle": [
        {
            "schema": "agent-graph.bundle.v1",
            "provider": {"id": "p", "version": "0.1.0"},
            "providerManifest": "provider.yaml",
            "graphs": [{"id": "main", "path": "graphs/main.yaml", "digest": D}],
            "actions": [{"id": "a", "path": "actions/a.yaml", "digest": D}],
            "resources": [],
            "schemas": [{"id": "./schemas/x.json", "path": "schemas/x.json", "digest": D}],
            "files": [
                {"path": "provider.yaml", "digest": D},
                {"path": "graphs/main.yaml", "digest": R},
            ],
            "graphDependencies": {"main": ["child"], "child": []},
            "digest": R,
        },
    ],
    "error": [
        {
            "schema": "agent-graph.error.v1",
            "state": "error",
            "error": {
                "code": "schema-invalid",
                "message": "graphs/g.yaml does not match graph.schema.json",
                "diagnostics": [
                    {
                        "code": "schema.required",
                        "severity": "error",
                        "message": "/ m",
                        "path": "graphs/g.yaml",
                        "detail": {"line": 3, "column": 5, "pointer": "/nodes/0"},
                    }
                ],
            },
        },
    ],
    "code-location": [
        {
            "schema": "agent-graph.code-location.v1",
            "provider": "p",
            "code": "route.g.n",
            "kind": "route-reason",
            "summary": "s",
            "document": file_location(),
        },
    ],
    "mcp-config": [
        {"schema": "agent-graph.mcp-config.v1"},
        {
            "schema": "agent-graph.mcp-config.v1",
            "observers": [
                {"id": "report-draft", "writes": ["report.digest"], "file": "REPORT.md"},
                {
                    "id": "publication",
                    "description": "looks for the published report",
                    "writes": ["publication"],
                    "command": ["python3", "observe.py"],
                    "timeoutMs": 5000,
                    "maxOutputBytes": 4096,
                },
            ],
            "gates": {
                "report-approval": {"via": "elicitation", "onApprove": {"facts": {"a.b": True}}},
                "legal-signoff": {"via": "cli"},
            },
        },
    ],
    "materialization": [
        {
            "schema": "agent-graph.materialization.v1",
            "provider": "p",
            "resource": "status.current",
            "revision": R,
            "digest": D,
            "mediaType": "text/markdown",
            "file": "/cache/0123.md",
        },
    ],
    "skill-binding": [
        {
            "schema": "agent-graph.skill-binding.v1",
            "skillPath": "/s/SKILL.md",
            "locator": "path:../../provider.yaml",
            "graph": "g",
            "entry": "default",
            "manifestPath": "/p/provider.yaml",
            "provider": "p",
        },
    ],
    "explain": [
        {
            "schema": "agent-graph.explain.v1",
            "provider": "p",
            "graph": "main",
            "entry": "default",
            "revision": "sha256:" + "0" * 64,
            "statusCode": "actionable",
            "nodes": [
                {
                    "graph": "main",
                    "node": "n",
                    "stateKey": "main/n",
                    "callPath": [],
                    "status": "pending",
                    "candidate": True,
                    "primary": True,
                    "reasons": [
                        {"code": "explain-entry", "message": "n is the entry", "entry": "default"}
                    ],
                }
            ],
        }
    ],
    "reach": [
        {
            "schema": "agent-graph.reach.v1",
            "graph": "report",
            "entry": "default",
            "node": "report/publish",
            "kind": "action",
            "status": "reached",
            "explored": 4,
            "limit": 5000,
            "size": 2,
            "added": 1,
            "state": {
                "facts": {"report": {"digest": True}},
                "outcomes": {"report/draft": "completed"},
                "authorities": ["lead"],
            },
            "path": [
                {
                    "node": "report/draft",
                    "adds": "outcome",
                    "recorded": "completed",
                    "outcome": "completed",
                },
                {
                    "node": "report/approve",
                    "adds": "facts",
                    "facts": {"report.approved": True},
                    "outcome": None,
                },
                {
                    "node": "report/sign",
                    "adds": "authority",
                    "authority": "lead",
                    "outcome": "completed",
                },
            ],
            "evaluation": {
                "statusCode": "actionable",
                "revision": "sha256:" + "0" * 64,
            },
            "test": "tests/reach-publish.yaml",
        },
        {
            "schema": "agent-graph.reach.v1",
            "graph": "report",
            "entry": "default",
            "node": "report/never",
            "kind": "terminal",
            "status": "unreachable",
            "explored": 0,
            "limit": 5000,
            "reason": "no edge leads to it",
            "test": None,
        },
    ],
    "inspect": [
        {
            "schema": "agent-graph.inspect.v1",
            "state": "valid",
            "provider": {"id": "p", "version": "0.1.0", "manifest": "/p/provider.yaml"},
            "counts": {
                "graphs": 1,
                "nodes": 2,
                "edges": 1,
                "actions": 1,
                "resources": 1,
                "codes": 1,
            },
            "graphs": [
                {
                    "id": "main",
                    "description": "d",
                    "path": "graphs/main.yaml",
                    "entrypoints": {"default": "n"},
                    "nodes": [
                        {"id": "n", "kind": "action", "reasonCode": "route.main.n", "priority": 0},
                        {"id": "t", "kind": "terminal", "priority": 0},
                    ],
                    "dependencies": [],
                }
            ],
            "actions": [
                {"id": "a", "runner": "agent", "effect": "write", "path": "actions/a.yaml"}
            ],
            "resources": [
                {"id": "guide", "kind": "procedure", "dynamic": False, "path": "resources/guide.md"}
            ],
            "codes": [{"code": "route.main.n", "kind": "route-reason", "summary": "s"}],
        },
    ],
}

# Members whose value is free-form JSON (not a v1 object), per schema.
FREE_FORM = {"facts", "detail", "inline", "value"}
# Members that map names to values (entries are data, not fields).
MAPS = {"entrypoints", "outcomes", "graphDependencies", "branches", "retry", "gates"}


def free_form(name: str, path: tuple[str | int, ...]) -> bool:
    if name == "resource.host-action" and path[:1] == ("input",):
        return True
    if name == "flow-run" and any(t in ("task", "input", "content", "conclusion") for t in path):
        return True  # a Run's task and the contents its visits pass on are any JSON
    return any(token in FREE_FORM for token in path)


def examples() -> Iterator[tuple[str, int, Doc]]:
    for name, docs in VALID.items():
        for index, doc in enumerate(docs):
            yield name, index, doc


def put(doc: Doc, pointer: str, value: Any) -> Doc:
    """Copy of ``doc`` with ``value`` at JSON pointer ``pointer`` (``...`` deletes it)."""
    out = copy.deepcopy(doc)
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    node: Any = out
    for token in tokens[:-1]:
        node = node[int(token) if isinstance(node, list) else token]
    last: Any = int(tokens[-1]) if isinstance(node, list) else tokens[-1]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return out


def problem(name: str, doc: Any, source: SourceMap | None = None) -> Problem:
    found = S.validate(name, doc, path=f"{name}.yaml", source=source)
    assert found is not None, f"{name} accepted {doc!r}"
    return found


def findings(name: str, doc: Any) -> set[tuple[str, str]]:
    return {(d.code, d.pointer or "") for d in problem(name, doc).diagnostics}


def python_accepts(name: str, doc: Any) -> bool:
    return not S._python_findings(name, doc)


# --------------------------------------------------------------------------- the files


def test_schema_names_are_the_packaged_files() -> None:
    files = sorted(p.name[: -len(".schema.json")] for p in S.schema_root().glob("*.schema.json"))
    assert list(S.SCHEMA_NAMES) == files
    assert list(S.SCHEMA_NAMES) == sorted(S.SCHEMA_NAMES)
    assert set(VALID) == set(S.SCHEMA_NAMES)
    assert len(S.SCHEMA_NAMES) == 27


@pytest.mark.parametrize("name", S.SCHEMA_NAMES)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    document = S.schema_document(name)
    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"] == f"https://agent-graph.dev/schemas/{name}.schema.json"
    assert S.schema_path(name).name == f"{name}.schema.json"
    assert document["title"].strip()
    assert len(document["description"]) > 40


def _subschemas(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _subschemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _subschemas(value, f"{where}/{index}")


def _dispatches_by_reference(schema: dict[str, Any]) -> bool:
    """The route's location union: each branch `$ref`s a closed location schema."""
    branches = schema.get("allOf", [])
    return bool(branches) and all("$ref" in b.get("then", {}) for b in branches)


@pytest.mark.parametrize("name", S.SCHEMA_NAMES)
def test_every_object_schema_declares_its_members(name: str) -> None:
    document = S.schema_document(name)
    for where, schema in _subschemas(document):
        if schema.get("type") != "object" or "$ref" in schema or _dispatches_by_reference(schema):
            continue
        assert "additionalProperties" in schema, f"{name} {where} leaves members open"
        extra = schema["additionalProperties"]
        if extra is True:  # deliberate free-form JSON object, documented as such
            assert "any JSON object" in schema["description"], where


def test_shared_definitions_are_identical_everywhere() -> None:
    seen: dict[str, tuple[str, Any]] = {}
    for name in S.SCHEMA_NAMES:
        for key, value in S.schema_document(name).get("$defs", {}).items():
            if key in {"id", "relativePath", "digest", "reasonCode", "readState", "outcome"}:
                if key == "relativePath":  # the bundle's wording names the bundle root
                    value = {k: v for k, v in value.items() if k != "description"}
                first = seen.setdefault(key, (name, value))
                assert value == first[1], f"$defs/{key} of {name} differs from {first[0]}"
    assert {"id", "relativePath", "digest", "reasonCode", "outcome"} <= set(seen)


def test_schema_document_is_a_private_copy() -> None:
    document = S.schema_document("graph")
    document["required"].append("mutated")
    assert "mutated" not in S.schema_document("graph")["required"]


@pytest.mark.parametrize(
    "call",
    [S.schema_path, S.schema_document, lambda n: S.validate(n, {}, path="x.yaml")],
    ids=["schema_path", "schema_document", "validate"],
)
def test_unknown_schema_name(call: Callable[[str], Any]) -> None:
    with pytest.raises(AgentGraphError) as caught:
        call("resource-location")
    assert caught.value.code == "schema-type-unknown"
    assert caught.value.message == "Unknown schema type: resource-location"


# --------------------------------------------------------------------------- examples


@pytest.mark.parametrize(("name", "index", "doc"), list(examples()))
def test_valid_example_is_accepted(name: str, index: int, doc: Doc) -> None:
    assert S.validate(name, doc, path="x") is None
    assert python_accepts(name, doc)


@pytest.mark.parametrize(("name", "index", "doc"), list(examples()))
def test_unknown_member_rejected_at_every_level(name: str, index: int, doc: Doc) -> None:
    checked = 0
    for path, value in _positions(doc):
        if not isinstance(value, dict) or free_form(name, path):
            continue
        pointer = "".join(f"/{escape_token(t)}" for t in path)
        target = {**value, "sneaky": 1}
        mutated = put(doc, pointer, target) if path else target
        found = findings(name, mutated)
        if path and path[-1] in MAPS:  # a new map entry: its value (1) is what is wrong
            assert {p for _, p in found} == {f"{pointer}/sneaky"}
        else:
            assert ("schema.additionalProperties", f"{pointer}/sneaky") in found
        checked += 1
    assert checked >= 1


def _positions(doc: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[Any, Any]]:
    yield path, doc
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _positions(value, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _positions(value, (*path, index))


# Per node kind: (index in GRAPH, members it must not carry).
NODE_FORBIDDEN = {
    "action": (0, ["graph", "entry", "gate", "inspectionAction", "resolutionAction",
                   "delegated", "terminalOutcome"]),
    "gate": (1, ["action", "graph", "entry", "terminalOutcome"]),
    "subgraph": (2, ["action", "gate", "inspectionAction", "resolutionAction", "delegated",
                     "reasonCode", "terminalOutcome", "satisfiedBy", "resources"]),
    "terminal": (3, ["action", "graph", "entry", "gate", "inspectionAction", "resolutionAction",
                     "delegated", "reasonCode", "satisfiedBy", "resources"]),
}  # fmt: skip
NODE_REQUIRED = {
    "action": ["action", "reasonCode"],
    "gate": ["gate", "reasonCode"],
    "subgraph": ["graph", "entry"],
    "terminal": ["terminalOutcome"],
}
SAMPLE_VALUES = {
    "action": "actions/x.yaml",
    "graph": "child",
    "entry": "default",
    "gate": {"id": "g", "prompt": "ok?"},
    "inspectionAction": "actions/i.yaml",
    "resolutionAction": "actions/r.yaml",
    "delegated": {},
    "terminalOutcome": "completed",
    "reasonCode": "route.x",
    "satisfiedBy": [{"path": "a", "exists": True}],
    "resources": {"required": []},
}


@pytest.mark.parametrize("kind", NODE_FORBIDDEN)
def test_node_kind_branch_forbids_other_kinds_members(kind: str) -> None:
    index, forbidden = NODE_FORBIDDEN[kind]
    for member in forbidden:
        doc = put(GRAPH, f"/nodes/{index}/{member}", SAMPLE_VALUES[member])
        found = problem("graph", doc).diagnostics
        assert [(d.code, d.pointer) for d in found] == [("schema.not", f"/nodes/{index}/{member}")]
        assert found[0].message == f'/nodes/{index}/{member} is not allowed when kind is "{kind}"'


@pytest.mark.parametrize("kind", NODE_REQUIRED)
def test_node_kind_branch_requires_its_members(kind: str) -> None:
    index, _ = NODE_FORBIDDEN[kind]
    for member in NODE_REQUIRED[kind]:
        found = problem("graph", put(GRAPH, f"/nodes/{index}/{member}", ...)).diagnostics
        assert [(d.code, d.pointer, d.detail["params"]) for d in found] == [
            ("schema.required", f"/nodes/{index}", {"missingProperty": member})
        ]


def test_node_kinds_allow_shared_members() -> None:
    # Terminals and subgraphs may carry requiresFacts, priority and join; gates
    # may carry satisfiedBy and resources like actions.
    for index in (2, 3):
        doc = put(GRAPH, f"/nodes/{index}/requiresFacts", [{"path": "x", "equals": "y"}])
        assert S.validate("graph", put(doc, f"/nodes/{index}/priority", 5), path="g") is None


# (pointer, value, expected): a code means one finding at the mutated pointer.
GRAPH_NEGATIVE: list[tuple[str, Any, str | set[tuple[str, str]]]] = [
    ("/nodes/0/kind", "acton", "schema.enum"),
    ("/nodes/0/kind", ..., {("schema.required", "/nodes/0")}),
    ("/nodes/0/priority", 1001, "schema.maximum"),
    ("/nodes/0/priority", True, "schema.type"),
    ("/nodes/0/priority", 1.5, "schema.type"),
    ("/nodes/0/reasonCode", "weekly.draft", "schema.pattern"),
    ("/nodes/0/satisfiedBy", [], "schema.minItems"),
    ("/nodes/0/satisfiedBy/0/equals", 1, {("schema.oneOf", "/nodes/0/satisfiedBy/0")}),
    ("/nodes/0/satisfiedBy/0/exists", ..., {("schema.oneOf", "/nodes/0/satisfiedBy/0")}),
    ("/nodes/0/satisfiedBy/1/equals", [1], "schema.type"),
    ("/nodes/0/requiresFacts/0/path", "a b", "schema.pattern"),
    ("/nodes/0/resources/required", ["a", "a"], "schema.uniqueItems"),
    ("/nodes/0/resources/required/0", "/abs.md", "schema.not"),
    ("/nodes/0/action", "C:x.yaml", "schema.not"),
    ("/nodes/0/action", "a/../../x", "schema.not"),
    ("/nodes/0/action", "", "schema.minLength"),
    ("/nodes/1/gate/delegatable", "yes", "schema.type"),
    ("/nodes/1/delegated/inspection", "never", "schema.enum"),
    ("/nodes/3/terminalOutcome", "done", "schema.enum"),
    ("/edges/0/kind", "loop", "schema.enum"),
    ("/edges/1/outcomes", [], "schema.minItems"),
    ("/edges/2/outcomes/1", "success", "schema.enum"),
    ("/edges/0/to", ..., {("schema.required", "/edges/0")}),
    ("/entrypoints", {}, "schema.minProperties"),
    ("/entrypoints/Bad", "draft", "schema.propertyNames"),
    ("/nodes", [], "schema.minItems"),
    ("/edges", ..., {("schema.required", "")}),
    ("/schema", "agent-graph.graph.v2", "schema.const"),
]


@pytest.mark.parametrize(("pointer", "value", "expected"), GRAPH_NEGATIVE)
def test_graph_negative_examples(
    pointer: str, value: Any, expected: str | set[tuple[str, str]]
) -> None:
    wanted = {(expected, pointer)} if isinstance(expected, str) else expected
    assert findings("graph", put(GRAPH, pointer, value)) == wanted


RUNNER_FORBIDDEN = {
    "command": ["entry", "runtime", "args", "skill", "handler"],
    "script": ["command", "skill", "handler"],
    "agent": ["command", "entry", "runtime", "args", "handler"],
    "host": ["command", "entry", "runtime", "args", "skill"],
}
RUNNER_REQUIRED = {
    "command": ["command"],
    "script": ["entry", "runtime"],
    "agent": ["skill"],
    "host": ["handler"],
}
RUNNER_VALUES = {
    "command": "make",
    "entry": "scripts/x.py",
    "runtime": "node",
    "args": ["a"],
    "skill": "skills/s/SKILL.md",
    "handler": "acme.h/v1",
}


@pytest.mark.parametrize("runner", RUNNER_FORBIDDEN)
def test_action_runner_branches(runner: str) -> None:
    base = ACTIONS[runner]
    for member in RUNNER_FORBIDDEN[runner]:
        found = problem("action", {**base, member: RUNNER_VALUES[member]}).diagnostics
        assert [(d.code, d.pointer) for d in found] == [("schema.not", f"/{member}")]
        assert f'when runner is "{runner}"' in found[0].message
    for member in RUNNER_REQUIRED[runner]:
        assert findings("action", put(base, f"/{member}", ...)) == {("schema.required", "")}
    allowed = set(RUNNER_VALUES) - set(RUNNER_FORBIDDEN[runner]) - set(RUNNER_REQUIRED[runner])
    for member in allowed:  # script args are the only optional runner member
        assert S.validate("action", {**base, member: RUNNER_VALUES[member]}, path="a") is None


@pytest.mark.parametrize(
    ("pointer", "value", "expected"),
    [
        ("/runner", "shell", {("schema.enum", "/runner")}),
        ("/effect", "delete", {("schema.enum", "/effect")}),
        ("/cwd", "home", {("schema.enum", "/cwd")}),
        ("/command", "", {("schema.minLength", "/command")}),
        ("/files", ["a", "a"], {("schema.uniqueItems", "/files")}),
        ("/inputSchema", "../in.json", {("schema.not", "/inputSchema")}),
        ("/id", "Inspect", {("schema.pattern", "/id")}),
        ("/id", "x" * 161, {("schema.maxLength", "/id")}),
    ],
)
def test_action_negative_examples(pointer: str, value: Any, expected: set[tuple[str, str]]) -> None:
    assert findings("action", put(ACTIONS["command"], pointer, value)) == expected


STATIC_KINDS = ["procedure", "diagnostic", "template", "schema", "skill"]


@pytest.mark.parametrize("kind", [*STATIC_KINDS, "context-view"])
def test_descriptor_kinds(kind: str) -> None:
    file_doc = {**VALID["resource.file"][0], "kind": kind}
    host_doc = {**VALID["resource.host-action"][0], "kind": kind}
    view_doc = {**VALID["resource.graph-action"][0], "kind": kind}
    static = kind in STATIC_KINDS
    assert (S.validate("resource.file", file_doc, path="r") is None) is static
    assert (S.validate("resource.host-action", host_doc, path="r") is None) is static
    assert (S.validate("resource.graph-action", view_doc, path="r") is None) is not static
    legacy = {**VALID["resource"][0 if static else 1], "kind": kind}
    assert S.validate("resource", legacy, path="r") is None


def test_descriptor_required_members() -> None:
    assert findings("resource.file", put(VALID["resource.file"][0], "/path", ...)) == {
        ("schema.required", "")
    }
    assert findings(
        "resource.graph-action", {**VALID["resource.graph-action"][0], "path": "x"}
    ) == {("schema.additionalProperties", "/path")}
    host = VALID["resource.host-action"][0]
    assert findings("resource.host-action", put(host, "/input", ...)) == {("schema.required", "")}
    assert findings("resource.host-action", put(host, "/materializer", "/abs.yaml")) == {
        ("schema.not", "/materializer")
    }


def test_legacy_descriptor_branches() -> None:
    static, view = VALID["resource"]
    assert findings("resource", {**static, "materializer": "a.yaml"}) == {
        ("schema.not", "/materializer")
    }
    assert findings("resource", {**view, "path": "a.md"}) == {("schema.not", "/path")}
    assert findings("resource", put(view, "/materializer", ...)) == {("schema.required", "")}
    assert findings("resource", put(static, "/path", ...)) == {("schema.required", "")}


def test_location_envelopes() -> None:
    located, materialized = (
        VALID["resource-location.graph-action"][0],
        VALID["resource-location.graph-action"][2],
    )
    assert findings("resource-location.graph-action", {**located, "filePath": "/x"}) == {
        ("schema.not", "/filePath")
    }
    assert findings("resource-location.graph-action", put(materialized, "/digest", ...)) == {
        ("schema.required", "")
    }
    assert findings("resource-location.graph-action", {**located, "kind": "procedure"}) == {
        ("schema.const", "/kind")
    }
    assert findings("resource-location.file", put(file_location(), "/digest", D + "\n")) == {
        ("schema.pattern", "/digest")
    }
    assert findings("resource-location.file", file_location(kind="context-view")) == {
        ("schema.enum", "/kind")
    }
    host = host_location()
    assert findings(
        "resource-location.host-action", put(host, "/materialize/input/value", ...)
    ) == {("schema.required", "/materialize/input")}
    assert findings("resource-location.host-action", put(host, "/materialize/handler", "H")) == {
        ("schema.pattern", "/materialize/handler")
    }


def test_route_resources_keep_the_complete_envelope_with_read_state() -> None:
    route = VALID["route"][0]
    assert findings("route", put(route, "/resources/required/0/readState", ...)) == {
        ("schema.required", "/resources/required/0")
    }
    assert findings("route", put(route, "/resources/required/2/materialize/extra", 1)) == {
        ("schema.additionalProperties", "/resources/required/2/materialize/extra")
    }
    assert findings("route", put(route, "/resources/required/1/schema", "x")) == {
        ("schema.enum", "/resources/required/1/schema")
    }
    assert findings("route", put(route, "/action/skill/readState", ...)) == {
        ("schema.required", "/action/skill")
    }
    gate = VALID["route"][1]
    both = put(gate, "/gate/inspectionAction/commandPlan/0/handler", "h")
    assert findings("route", both) == {("schema.oneOf", "/gate/inspectionAction/commandPlan/0")}


def test_host_action_result_needs_exactly_one_output() -> None:
    both = put(HOST_RESULT, "/output/resource", {"ref": "x", "digest": D})
    neither = put(HOST_RESULT, "/output/inline", ...)
    for doc in (both, neither):
        found = problem("host-action-result", doc).diagnostics
        assert [(d.code, d.pointer) for d in found] == [("schema.oneOf", "/output")]
        assert "exactly one of the properties 'inline', 'resource'" in found[0].message
    assert findings("host-action-result", put(HOST_RESULT, "/receipt/adapter_version", "1")) == {
        ("schema.pattern", "/receipt/adapter_version")
    }
    assert findings("host-action-result", put(HOST_RESULT, "/receipt/adapter", ...)) == {
        ("schema.required", "/receipt")
    }


def test_code_catalog_route_reason_rules() -> None:
    catalog = VALID["code-catalog"][0]
    assert findings("code-catalog", put(catalog, "/codes/0/severity", "info")) == {
        ("schema.not", "/codes/0/severity")
    }
    assert findings("code-catalog", put(catalog, "/codes/0/code", "weekly.draft")) == {
        ("schema.pattern", "/codes/0/code")
    }
    assert findings("code-catalog", put(catalog, "/codes/1/summary", "x" * 161)) == {
        ("schema.maxLength", "/codes/1/summary")
    }


# (schema, pointer, value, expected): a code means one finding at the mutated
# pointer, a tuple names the pointer, None means the value is accepted.
OTHER_NEGATIVE: list[tuple[str, str, Any, str | tuple[str, str] | None]] = [
    ("provider", "/version", 1.0, "schema.type"),
    ("provider", "/version", "1.0", "schema.pattern"),
    ("provider", "/graphs", [], "schema.minItems"),
    ("provider", "/compatibility/agentGraph", "", "schema.minLength"),
    ("provider", "/compatibility/node", 20, "schema.type"),
    ("provider", "/name", "", "schema.minLength"),
    ("run", "/events/0/sequence", 0, "schema.minimum"),
    ("run", "/events/0/sequence", 1.0, None),
    ("run", "/authorities", ["a", "a"], "schema.uniqueItems"),
    ("run", "/outcomes/g~1n/recordedAt", ..., ("schema.required", "/outcomes/g~1n")),
    ("test-case", "/expect/statusCode", "done", "schema.enum"),
    ("test-case", "/state/outcomes/weekly~1draft", "done", "schema.enum"),
    ("test-case", "/state/outcomes/weekly~1x/recordedAt", ..., "schema.required"),
    ("resource-read-receipts", "/receipts/0/digest", ..., ("schema.required", "/receipts/0")),
    ("resource-read-receipts", "/provider", "P", "schema.pattern"),
    ("evaluation", "/primaryRoute/routeId", "route:x", "schema.pattern"),
    ("bundle", "/files/0/path", "/etc/passwd", "schema.not"),
    ("bundle", "/graphDependencies/main", ["a", "a"], "schema.uniqueItems"),
    ("error", "/state", "failed", "schema.const"),
    ("skill-binding", "/locator", "file:x", "schema.pattern"),
    ("skill-binding", "/locator", "path:\n", "schema.pattern"),
    ("inspect", "/counts/codes", -1, "schema.minimum"),
    ("code-location", "/document/readState", "stale", "schema.enum"),
]


@pytest.mark.parametrize(("name", "pointer", "value", "expected"), OTHER_NEGATIVE)
def test_other_negative_examples(
    name: str, pointer: str, value: Any, expected: str | tuple[str, str] | None
) -> None:
    doc = put(VALID[name][0], pointer, value)
    if expected is None:
        assert S.validate(name, doc, path="x") is None
    elif isinstance(expected, str):
        wanted = pointer.rsplit("/", 1)[0] if expected == "schema.required" else pointer
        assert findings(name, doc) == {(expected, wanted)}
    else:
        assert findings(name, doc) == {expected}


# --------------------------------------------------------------------------- ECMAScript semantics

# (pattern, text, JavaScript RegExp(pattern, "u").test(text))
REGEX_TABLE = [
    ("^a$", "a", True),
    ("^a$", "a\n", False),
    ("a$", "ba\n", False),
    ("^a.b$", "a\nb", False),
    ("^a.b$", "a\rb", False),
    ("^a.b$", "a\u2028b", False),
    ("^a.b$", "a\u0085b", True),
    ("^\\d+$", "\u0661\u0662\u0663", False),
    ("^\\w+$", "h\u00e9llo", False),
    ("^\\w+$", "hello_1", True),
    ("^\\s$", "\u00a0", True),
    ("^\\s$", "\ufeff", True),
    ("^\\s$", "\u0085", False),
    ("^\\S$", "\u001c", True),
    ("^[\\d]$", "\u0663", False),
    ("^[^]$", "\n", True),
    ("a[]", "a", False),
    ("^[$]$", "$", True),
    ("^[.]$", "x", False),
    ("^(?:/|[A-Za-z]:|.*(?:^|/)\\.\\.(?:/|$))", "a\r/../b", False),
    ("^(?:/|[A-Za-z]:|.*(?:^|/)\\.\\.(?:/|$))", "a/../b", True),
    ("^(?:/|[A-Za-z]:|.*(?:^|/)\\.\\.(?:/|$))", "a/..\n", False),
    ("x|$", "abc", True),
]


@pytest.mark.parametrize(("pattern", "text", "expected"), REGEX_TABLE)
def test_patterns_follow_ecmascript(pattern: str, text: str, expected: bool) -> None:
    assert ecma_search(pattern, text) is expected


@pytest.mark.parametrize(
    ("name", "pointer"),
    [
        ("provider", "/id"),
        ("provider", "/version"),
        ("graph", "/nodes/0/id"),
        ("graph", "/nodes/0/reasonCode"),
        ("graph", "/nodes/0/requiresFacts/0/path"),
        ("resource-read-receipts", "/receipts/0/digest"),
        ("host-action-result", "/input_digest"),
        ("evaluation", "/primaryRoute/routeId"),
    ],
)
def test_trailing_newline_never_matches_an_anchored_pattern(name: str, pointer: str) -> None:
    doc = VALID[name][0]
    tokens = [int(t) if t.isdigit() else t for t in pointer.split("/")[1:]]
    node: Any = doc
    for token in tokens:
        node = node[token]
    bad = put(doc, pointer, f"{node}\n")
    assert findings(name, bad) == {("schema.pattern", pointer)}
    assert not python_accepts(name, bad)
    if HAVE_RUST:
        assert S._rust_verdict(name, bad) is False


# (value, ajv-formats 3.0.1 "date-time" verdict)
DATE_TIME_TABLE = [
    ("2024-01-01T00:00:00Z", True),
    ("2024-01-01t00:00:00z", True),
    ("2024-01-01 10:00:00Z", True),
    ("2024-01-01 10:00:00+01:00", True),
    ("2024-01-01T10:00:00", False),
    ("2024-01-01T10:00:00+0100", True),
    ("2024-01-01T10:00:00+01", True),
    ("2024-01-01T10:00:00.123456789-05:30", True),
    ("2024-02-29T00:00:00Z", True),
    ("2023-02-29T00:00:00Z", False),
    ("2024-02-30T00:00:00Z", False),
    ("1900-02-29T00:00:00Z", False),
    ("2000-02-29T00:00:00Z", True),
    ("2024-04-31T00:00:00Z", False),
    ("2024-13-01T00:00:00Z", False),
    ("2024-01-00T00:00:00Z", False),
    ("2024-01-01T24:00:00Z", False),
    ("2024-01-01T23:60:00Z", False),
    ("2024-01-01T23:59:60Z", True),
    ("2024-01-01T22:59:60Z", False),
    ("2024-01-01T23:59:60+01:00", False),
    ("2024-01-01T00:59:60+01:00", True),
    ("2024-01-01T23:59:61Z", False),
    ("2024-01-01T10:00:00+24:00", False),
    ("2024-01-01T10:00:00Z\n", False),
    ("2024-01-01T10:00:00Z ", False),
    ("2024-01-01\t10:00:00Z", True),
    ("2024-01-01\u00a010:00:00Z", True),
    ("2024-01-01\ufeff10:00:00Z", True),
    ("2024-01-01\u008510:00:00Z", False),
    ("2024-01-01TT10:00:00Z", False),
    ("2024-1-01T10:00:00Z", False),
    ("2024-01-01T10:00:00,5Z", False),
    ("\uff12\uff10\uff12\uff14-01-01T10:00:00Z", False),
    ("2024-01-01", False),
    ("", False),
    ("2024-01-01T10:00:00-00:00", True),
    ("0000-01-01T00:00:00Z", True),
]


@pytest.mark.parametrize(("value", "expected"), DATE_TIME_TABLE)
def test_date_time_follows_ajv_formats(value: str, expected: bool) -> None:
    assert is_date_time(value) is expected
    run = {**RUN, "createdAt": value}
    if expected:
        assert S.validate("run", run, path="run.json") is None
    else:
        assert findings("run", run) == {("schema.format", "/createdAt")}
    if HAVE_RUST:
        assert S._rust_verdict("run", run) is expected


def test_numbers_follow_json_typing() -> None:
    node = "/nodes/0/priority"
    assert S.validate("graph", put(GRAPH, node, 7.0), path="g") is None
    assert findings("graph", put(GRAPH, node, False)) == {("schema.type", node)}
    fact = "/nodes/0/satisfiedBy/1/equals"
    for value in (math.nan, math.inf, -math.inf, 2**70, -0.0):
        # JSON Schema numbers: the Rust engine refuses non-finite floats, Python decides.
        assert S.validate("graph", put(GRAPH, fact, value), path="g") is None
    # Infinity is not an integer here (ajv would call it one and report only the
    # bound); both reject it, and every integer member that YAML can reach is bounded.
    assert findings("graph", put(GRAPH, node, math.inf)) == {
        ("schema.type", node),
        ("schema.maximum", node),
    }


# --------------------------------------------------------------------------- diagnostics


def test_diagnostics_carry_pointer_position_and_params() -> None:
    source = SourceMap(
        {
            "": (1, 1),
            "/nodes": (5, 1),
            "/nodes/0": (6, 5),
            "/nodes/0/kind": (7, 11),
            "/nodes/0/graph": (12, 12),
            "/nodes/1": (20, 5),
            "/entrypoints": (3, 3),
        }
    )
    doc = put(GRAPH, "/nodes/0/graph", "child")
    doc = put(doc, "/nodes/0/reasonCode", ...)
    doc = put(doc, "/nodes/0/notes", "x")
    doc = put(doc, "/nodes/1/priority", "high")
    doc = put(doc, "/entrypoints/Bad", "draft")
    found = problem("graph", doc, source)
    assert found.code == "schema-invalid"
    assert found.message == "graph.yaml does not match graph.schema.json"
    rows = [(d.code, d.pointer, d.line, d.column, d.message) for d in found.diagnostics]
    assert rows == [
        (
            "schema.propertyNames",
            "/entrypoints/Bad",
            3,
            3,
            '/entrypoints/Bad property name "Bad" does not have the required form. '
            "Identifier: lowercase letters, digits and . _ / - inside, starting and ending "
            "with a letter or digit.",
        ),
        (
            "schema.required",
            "/nodes/0",
            6,
            5,
            "/nodes/0 must have required property 'reasonCode' when kind is \"action\"",
        ),
        (
            "schema.not",
            "/nodes/0/graph",
            12,
            12,
            '/nodes/0/graph is not allowed when kind is "action"',
        ),
        (
            "schema.additionalProperties",
            "/nodes/0/notes",
            6,
            5,
            "/nodes/0 has an unknown member `notes`",
        ),
        ("schema.type", "/nodes/1/priority", 20, 5, "/nodes/1/priority must be integer"),
    ]
    by_code = {d.code: d for d in found.diagnostics}
    assert all(d.path == "graph.yaml" and d.severity == "error" for d in found.diagnostics)
    assert by_code["schema.required"].detail == {
        "schemaPath": "#/properties/nodes/items/oneOf/0/required",
        "params": {"missingProperty": "reasonCode"},
    }
    assert by_code["schema.additionalProperties"].detail["params"] == {
        "additionalProperty": "notes"
    }
    assert by_code["schema.type"].detail["params"] == {"type": "integer"}
    assert by_code["schema.propertyNames"].detail["params"] == {"propertyName": "Bad"}
    as_dict = by_code["schema.not"].to_dict()
    assert as_dict["detail"]["line"] == 12
    assert as_dict["detail"]["pointer"] == "/nodes/0/graph"


def test_root_diagnostics_use_slash_and_no_source_means_no_position() -> None:
    found = problem("provider", {"schema": "agent-graph.provider.v1"}).diagnostics
    assert [d.message for d in found] == [
        "/ must have required property 'id'",
        "/ must have required property 'version'",
        "/ must have required property 'graphs'",
    ]
    assert all(d.line is None and d.column is None and d.pointer == "" for d in found)
    assert problem("provider", []).diagnostics[0].message == "/ must be object"


def test_params_for_common_keywords() -> None:
    doc = put(VALID["provider"][1], "/graphs", ["a.yaml", "a.yaml"])
    doc = put(doc, "/schema", "agent-graph.provider.v2")
    doc = put(doc, "/name", "")
    params = {d.code: d.detail["params"] for d in problem("provider", doc).diagnostics}
    assert params == {
        "schema.const": {"allowedValue": "agent-graph.provider.v1"},
        "schema.minLength": {"limit": 1},
        "schema.uniqueItems": {"i": 0, "j": 1},
    }
    triple = put(RUN, "/authorities", ["a", "b", "b", "a"])
    (diag,) = problem("run", triple).diagnostics
    assert diag.detail["params"] == {"i": 1, "j": 2}  # as ajv reports it
    assert diag.message == (
        "/authorities must NOT have duplicate items (items ## 2 and 1 are identical)"
    )
    event = put(RUN, "/events/0/sequence", 0)
    (diag,) = problem("run", event).diagnostics
    assert diag.detail["params"] == {"comparison": ">=", "limit": 1}
    assert diag.message == "/events/0/sequence must be >= 1"


def test_diagnostics_are_in_document_order() -> None:
    # jsonschema visits unknown members in set order; the report must not depend on it.
    doc = {**VALID["provider"][0], "zeta": 1, "alpha": 2, "mid": 3}
    pointers = [d.pointer for d in problem("provider", doc).diagnostics]
    assert pointers == ["/zeta", "/alpha", "/mid"]


def test_errors_are_values_not_exceptions_for_hostile_input() -> None:
    for value in (None, "text", 42, [1, 2], {"schema": {"nested": [None]}}):
        assert isinstance(S.validate("graph", value, path="g.yaml"), Problem)
    deep: list[Any] = []
    cursor = deep
    for _ in range(5000):
        cursor.append([])
        cursor = cursor[0]
    run = {**RUN, "authorities": [deep, deep]}
    found = problem("run", run)
    assert found.code == "schema-invalid"
    assert found.diagnostics


# --------------------------------------------------------------------------- engines agree


def _pool() -> list[Any]:
    words: set[str] = set()
    for name in S.SCHEMA_NAMES:
        for _, schema in _subschemas(S.schema_document(name)):
            if isinstance(schema.get("const"), str):
                words.add(schema["const"])
            words.update(v for v in schema.get("enum", []) if isinstance(v, str))
    tricky: list[Any] = [
        "", "g\n", "a", "A", "route.x", "/abs", "a/../b", "a\n/../b", "C:x", "./x",
        D, D.upper(), D + "\n", "x" * 161, "2024-02-30T00:00:00Z", "2024-01-01 10:00:00+01:00",
        "2024-01-01T10:00:00", "2024-01-01T23:59:60Z", "1.0.0\n", "path:x", "provider:",
        0, 1, -1, 1.5, 1001, 1.0, True, False, None, [], {}, ["a", "a"], {"k": 1},
    ]  # fmt: skip
    return tricky + sorted(words)


def _mutations(doc: Doc, pool: list[Any], stride: int, offset: int) -> Iterator[Any]:
    for n, (path, value) in enumerate(_positions(doc)):
        pointer = "".join(f"/{escape_token(t)}" for t in path)
        if isinstance(value, dict):
            yield put(doc, pointer, {**value, "unknownField": 1}) if path else {**value, "x": 1}
            for key in value:
                yield put(doc, f"{pointer}/{escape_token(key)}", ...)
        if isinstance(value, list) and value and path:
            yield put(doc, pointer, [*value, copy.deepcopy(value[0])])
        if path:
            for j, replacement in enumerate(pool):
                if (j + n + offset) % stride == 0:
                    yield put(doc, pointer, copy.deepcopy(replacement))


@pytest.mark.slow
@needs_rust
def test_rust_and_python_engines_agree_on_acceptance() -> None:
    pool = _pool()
    verdicts = {True: 0, False: 0}
    disagreements = []
    for name, index, doc in examples():
        for mutated in _mutations(doc, pool, stride=9, offset=index):
            python = python_accepts(name, mutated)
            rust = S._rust_verdict(name, mutated)
            verdicts[python] += 1
            if rust is not python:
                disagreements.append((name, mutated, python, rust))
    assert disagreements == []
    assert verdicts[True] > 1000
    assert verdicts[False] > 3000


@needs_rust
def test_python_alone_gives_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = put(GRAPH, "/nodes/0/graph", "x")
    doc = put(doc, "/edges/0/kind", "loop")
    with_rust = [d.to_dict() for d in problem("graph", doc).diagnostics]
    monkeypatch.setattr(S, "_rust_validator", lambda name: None)
    assert [d.to_dict() for d in problem("graph", doc).diagnostics] == with_rust
    assert S.validate("graph", GRAPH, path="g") is None


def _chain(count: int) -> Doc:
    nodes: list[Doc] = [
        {"id": f"n{i}", "kind": "action", "action": "a.yaml", "reasonCode": f"route.n{i}"}
        for i in range(count)
    ]
    nodes.append({"id": "done", "kind": "terminal", "terminalOutcome": "completed"})
    edges = [{"from": f"n{i}", "to": f"n{i + 1}"} for i in range(count - 1)]
    return {
        "schema": "agent-graph.graph.v1",
        "id": "chain",
        "entrypoints": {"default": "n0"},
        "nodes": nodes,
        "edges": edges,
    }


@needs_rust
def test_large_documents_report_original_positions() -> None:
    graph = _chain(3000)
    assert S.validate("graph", graph, path="g") is None
    graph["nodes"][1234]["kind"] = "gate"
    graph["edges"][2999 - 7]["kind"] = "loop"
    graph["nodes"][2999]["extra"] = True
    found = findings("graph", graph)
    assert found == {
        ("schema.required", "/nodes/1234"),
        ("schema.not", "/nodes/1234/action"),
        ("schema.additionalProperties", "/nodes/2999/extra"),
        ("schema.enum", "/edges/2992/kind"),
    }


@needs_rust
def test_many_invalid_items_are_counted_beyond_the_explained_ones() -> None:
    graph = _chain(1000)
    for node in graph["nodes"][:400]:
        node["stray"] = 1
    diagnostics = problem("graph", graph).diagnostics
    explained = [d for d in diagnostics if d.code == "schema.additionalProperties"]
    assert [d.pointer for d in explained] == [
        f"/nodes/{i}/stray" for i in range(S.MAX_EXPLAINED_ITEMS)
    ]
    (tail,) = [d for d in diagnostics if d.code == "schema.truncated"]
    assert tail.pointer == "/nodes"
    assert tail.detail == {"hidden": 400 - S.MAX_EXPLAINED_ITEMS}


# --------------------------------------------------------------------------- words for people


def _patterned(node: Any, where: str = "#") -> Iterator[tuple[str, Any]]:
    """Every schema object that holds a ``pattern`` (or a ``not`` of only one), by location."""
    if isinstance(node, dict):
        holds = isinstance(node.get("pattern"), str)
        negated = isinstance(node.get("not"), dict) and set(node["not"]) == {"pattern"}
        if holds or negated:
            yield where, node
        for key, value in node.items():
            if key != "not" or not negated:
                yield from _patterned(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _patterned(value, f"{where}/{index}")


@pytest.mark.parametrize("name", S.SCHEMA_NAMES)
def test_every_pattern_is_described_in_words(name: str) -> None:
    undescribed = [
        where
        for where, node in _patterned(S.schema_document(name))
        if not (isinstance(node.get("description"), str) and node["description"].strip())
    ]
    assert undescribed == []


def test_pattern_findings_fall_back_to_the_pattern_without_a_description() -> None:
    from agent_graph.documents.schema_findings import findings

    validator = Draft202012Validator({"properties": {"a": {"pattern": "^x$"}}})
    (error,) = validator.iter_errors({"a": "y"})
    (found,) = findings(error)
    assert (found.keyword, found.params, found.text) == (
        "pattern",
        {"pattern": "^x$"},
        'must match pattern "^x$"',
    )


def test_unevaluated_members_are_named_with_a_suggestion() -> None:
    from agent_graph.documents.schema_findings import findings

    validator = Draft202012Validator(
        {
            "allOf": [{"properties": {"satisfiedBy": {}}}],
            "properties": {"id": {}},
            "unevaluatedProperties": False,
        }
    )
    (error,) = validator.iter_errors({"id": 1, "satisfiedby": 2, "zzz": 3})
    found = [(f.keyword, f.path, f.params, f.text) for f in findings(error)]
    assert found == [
        (
            "unevaluatedProperties",
            ("satisfiedby",),
            {"unevaluatedProperty": "satisfiedby"},
            "has an unknown member `satisfiedby`; did you mean `satisfiedBy`?",
        ),
        (
            "unevaluatedProperties",
            ("zzz",),
            {"unevaluatedProperty": "zzz"},
            "has an unknown member `zzz`",
        ),
    ]


def test_member_names_with_odd_characters_are_quoted() -> None:
    from agent_graph.documents.schema_findings import unknown_member_text

    assert unknown_member_text("a b", []) == "unknown member `a b`"
    assert unknown_member_text(" x", []) == 'unknown member `" x"`'
    assert unknown_member_text("a`b", []) == 'unknown member `"a`b"`'
    assert unknown_member_text("Id\t", ["id"]) == 'unknown member `"Id\\t"`; did you mean `id`?'
