"""The tool table: names, descriptions, annotations and schemas, in listing order.

Plain data, so ``agc mcp check`` and the tests read it without the SDK. Input schemas
are JSON Schema 2020-12 with ``additionalProperties: false`` everywhere; the server
validates arguments itself (the SDK does not), and a violation is the tool error
``arguments-invalid`` naming the JSON pointer, so the model can correct the call.
Output schemas are self-contained (no ``$ref`` at all) and deliberately shallow: the
protocol documents inside a result are the unchanged ``agent-graph.evaluation.v1`` /
``route.v1`` documents, named by their ``schema`` member, and their full schemas are
served by ``agc schema``; inlining them would make the listing cost an agent several
times its ~16 KiB budget on every connection.

No input schema has a member through which the agent could set a Fact, grant an
authority or decide a Gate, except ``graph_evaluate``'s hypothetical state, which is a
question and writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .. import codes
from ..errors import AgentGraphError

HANDLE_PATTERN: Final = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
OUTCOMES_REPORTABLE: Final = ("completed", "partial", "failed", "unverified", "skipped", "blocked")

_HANDLE: Final = {
    "type": "string",
    "pattern": HANDLE_PATTERN,
    "description": "The Run's handle (a name you chose, not a path)",
}
_DIGEST: Final = {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}
_SELECTOR: Final = {
    "provider": {"type": "string", "description": "Provider id (omit when one is served)"},
    "graph": {"type": "string", "description": "Graph id (omit when a Skill or one Graph)"},
    "entry": {"type": "string", "description": "Graph entry (default: default)"},
    "skill": {"type": "string", "description": "A served Skill's name: binds all three"},
}


def _object(properties: Mapping[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "properties": dict(properties),
    }
    if required:
        schema["required"] = list(required)
    return schema


def _document(identity: str) -> dict[str, Any]:
    """The protocol document ``identity`` names, unchanged (``agc schema extract`` has its
    schema; the const is all a client needs to tell which it is)."""
    return {"type": "object", "required": ["schema"], "properties": {"schema": {"const": identity}}}


_NEXT: Final = {
    "type": "object",
    "description": "What to do now, who acts, the next call",
    "required": ["say", "waitsFor"],
    "properties": {
        "say": {"type": "string"},
        "waitsFor": {"enum": ["agent", "user", "host", "nothing"]},
        "tool": {"type": "string"},
        "arguments": {"type": "object"},
    },
}
# members are named, not typed: every tool's result repeats these, and the tool list's
# byte budget (16 KiB, what an agent pays on every connection) is shared by all of them
_RUN_REF: Final = {
    "type": "object",
    "required": ["run", "id", "provider", "graph", "entry", "sequence"],
    "properties": {"sequence": {"type": "integer"}, "file": {}, "cli": {}},
}
_OBSERVED: Final = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["observer", "status"],
        "properties": {"status": {"enum": ["ok", "failed", "timeout", "refused"]}},
    },
}
_UNVERIFIED: Final = {
    "type": "array",
    "items": {"type": "object", "required": ["stateKey", "missing"]},
}


def _result(members: Mapping[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["next", *required],
        "properties": {"next": _NEXT, **members},
    }


_STEP_RESULT: Final = _result(
    {
        "run": _RUN_REF,
        "observed": _OBSERVED,
        "evaluation": _document("agent-graph.evaluation.v1"),
        "route": _document("agent-graph.route.v1"),
        "unverified": _UNVERIFIED,
        "recorded": {"type": "object"},
    },
    ["run", "evaluation"],
)


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any]
    read_only: bool
    idempotent: bool
    destructive: bool = False
    profile: str = "core"

    def annotations(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "readOnlyHint": self.read_only}
        if not self.read_only:
            out["destructiveHint"] = self.destructive
        out["idempotentHint"] = self.idempotent
        out["openWorldHint"] = False
        return out

    def listing(self) -> dict[str, Any]:
        """The ``tools/list`` entry, as the wire spells it."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": dict(self.input_schema),
            "outputSchema": dict(self.output_schema),
            "annotations": self.annotations(),
        }


TOOLS: tuple[Tool, ...] = (
    Tool(
        "providers_list",
        "List Providers",
        "What this server serves: Providers, their Graphs and entries, bound Skills, where "
        "Runs are kept. Call it first; then start a Run with run_start.",
        _object({}),
        _result(
            {
                "providers": {"type": "array", "items": {"type": "object"}},
                "runs": {"type": "object"},
                "tools": {"type": "array", "items": {"type": "string"}},
            },
            ["providers", "runs"],
        ),
        read_only=True,
        idempotent=True,
    ),
    Tool(
        "graph_evaluate",
        "Evaluate a hypothetical state",
        "What-if: the steps legal for the Facts, outcomes and authorities you give. It "
        "writes nothing: only observers and the user's answers reach a Run.",
        _object(
            {
                **_SELECTOR,
                "facts": {"type": "object"},
                "outcomes": {
                    "type": "object",
                    "additionalProperties": {
                        "enum": [*OUTCOMES_REPORTABLE, "pending", "waiting-user"]
                    },
                },
                "authorities": {"type": "array", "items": {"type": "string"}, "maxItems": 64},
            }
        ),
        _result(
            {"hypothetical": {"const": True}, "evaluation": _document("agent-graph.evaluation.v1")},
            ["hypothetical", "evaluation"],
        ),
        read_only=True,
        idempotent=True,
        profile="all",
    ),
    Tool(
        "graph_route",
        "Resolve a route",
        "Resolve the Run's primary route (or routeId) at its current revision: what to "
        "run, read and record. Does not observe (run_status does).",
        _object(
            {
                "run": _HANDLE,
                "routeId": {"type": "string", "description": "Omit for the primary route"},
                "revision": {**_DIGEST, "description": "Refuse if the Run moved on"},
                "inContext": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Ids of resources read here you still hold",
                },
            },
            ["run"],
        ),
        _result(
            {
                "run": _RUN_REF,
                "route": _document("agent-graph.route.v1"),
                "resources": {"type": "array", "items": {"type": "object"}},
            },
            ["run", "route"],
        ),
        read_only=True,
        idempotent=True,
    ),
    Tool(
        "run_start",
        "Start a Run",
        "Create a Run under a new handle (kept in the server's runs directory), observe, "
        "evaluate and route its first step. Refuses a handle that exists.",
        _object(
            {
                "run": _HANDLE,
                **_SELECTOR,
                "workspace": {
                    "type": "string",
                    "description": "Workspace-relative directory the Run works in",
                },
            },
            ["run"],
        ),
        _STEP_RESULT,
        read_only=False,
        idempotent=False,
    ),
    Tool(
        "run_status",
        "Observe and evaluate a Run",
        "The loop tool: run the host's observers, evaluate the Run and resolve its primary "
        "route. Follow next.say and make next's call.",
        _object(
            {
                "run": _HANDLE,
                "observe": {"type": "boolean", "default": True},
                "route": {"type": "boolean", "default": True},
            },
            ["run"],
        ),
        _STEP_RESULT,
        read_only=False,
        idempotent=True,
    ),
    Tool(
        "run_record",
        "Record an Outcome",
        "Report the Outcome of the step you did: route.afterAction.recordNode, at the "
        "revision and sequence of the result you acted on. A report is not proof: a "
        "completed step the host's Facts do not confirm evaluates to unverified.",
        _object(
            {
                "run": _HANDLE,
                "recordNode": {"type": "string", "minLength": 1, "maxLength": 512},
                "outcome": {"enum": list(OUTCOMES_REPORTABLE)},
                "revision": _DIGEST,
                "sequence": {"type": "integer", "minimum": 1},
                "note": {"type": "string", "maxLength": 2000},
            },
            ["run", "recordNode", "outcome", "revision", "sequence"],
        ),
        _STEP_RESULT,
        read_only=False,
        idempotent=False,
    ),
    Tool(
        "gate_resolve",
        "Ask the user to decide a Gate",
        "Show the user the Gate the Run waits on (a form in the client) and apply their "
        "decision. You cannot decide it: a form not answered changes nothing and says "
        "how the user can decide in a terminal.",
        _object(
            {"run": _HANDLE, "routeId": {"type": "string"}, "revision": _DIGEST},
            ["run", "routeId", "revision"],
        ),
        _result(
            {
                "decision": {
                    "enum": [
                        "approved",
                        "rejected",
                        "delegated",
                        "declined",
                        "cancelled",
                        "invalid",
                        "unavailable",
                    ]
                },
                "gate": {"type": "object"},
                "fallback": {"type": "string"},
                "recorded": {"type": "object"},
                "run": _RUN_REF,
                "evaluation": _document("agent-graph.evaluation.v1"),
                "route": _document("agent-graph.route.v1"),
            },
            ["decision", "gate", "run", "evaluation"],
        ),
        read_only=False,
        idempotent=False,
    ),
    Tool(
        "resource_read",
        "Read a route resource",
        "A resource a route lists (by id), for clients that cannot read MCP resources; "
        "context views are materialized for the Run's current revision.",
        _object({"run": _HANDLE, "id": {"type": "string", "minLength": 1}}, ["run", "id"]),
        _result(
            {
                "resource": {"type": "object"},
                "text": {"type": "string"},
            },
            ["resource", "text"],
        ),
        read_only=True,
        idempotent=True,
        profile="all",
    ),
)

_WAIT: Final = {"type": "number", "minimum": 0, "maximum": 45}
# next, run, step and events are described in docs/mcp.md, not here: the tool list's
# byte budget is shared by every tool and each of the four results has this shape
_FLOW_VIEW: Final = {
    "type": "object",
    "required": ["next", "run", "state", "events"],
    "properties": {
        "state": {
            "enum": [
                "running",
                "awaiting-agent",
                "awaiting-consent",
                "interrupted",
                "completed",
                "failed",
            ]
        }
    },
}
_FLOW_TOOLS: Final = (
    Tool(
        "flow_list",
        "List Flows",
        "The Flows served, checked: commands, fingerprint, consent.",
        _object({}),
        _result({"flows": {"type": "array", "items": {"type": "object"}}}, ["flows"]),
        read_only=True,
        idempotent=True,
        profile="flows",
    ),
    Tool(
        "flow_start",
        "Start a Flow Run",
        "Start a Flow Run (a new handle) and wait for its first Agent step (answer with "
        "flow_answer) or its end. Commands run once the user consents.",
        _object(
            {
                "flow": {"type": "string", "description": "Flow id (flow_list)"},
                "task": {"description": "Any JSON value; usually text"},
                "run": _HANDLE,
                "cwd": {"type": "string"},
                "agent": {"type": "string"},
                "maxVisits": {"type": "integer", "minimum": 1},
                "waitSeconds": _WAIT,
            },
            ["flow", "task", "run"],
        ),
        _FLOW_VIEW,
        read_only=False,
        idempotent=False,
        destructive=True,
        profile="flows",
    ),
    Tool(
        "flow_status",
        "Flow Run status",
        "Where a Flow Run stands, events after sinceEvent; waitSeconds waits.",
        _object(
            {
                "run": _HANDLE,
                "waitSeconds": _WAIT,
                "sinceEvent": {"type": "integer"},
            },
            ["run"],
        ),
        _FLOW_VIEW,
        read_only=True,
        idempotent=True,
        profile="flows",
    ),
    Tool(
        "flow_answer",
        "Answer a Flow step",
        "Answer the Agent step the Run waits on (step.visit) once done; result: one of "
        "step.results.",
        _object(
            {
                "run": _HANDLE,
                "visit": {"type": "string"},
                "result": {"type": "string", "minLength": 1},
                "content": {},
                "waitSeconds": _WAIT,
            },
            ["run", "visit", "result"],
        ),
        _FLOW_VIEW,
        read_only=False,
        idempotent=False,
        profile="flows",
    ),
    Tool(
        "flow_control",
        "Stop or resume a Flow",
        "Stop a Flow Run (it stays resumable) or resume it; rerunInterrupted reruns an "
        "interrupted command once the user consents.",
        _object(
            {
                "run": _HANDLE,
                "action": {"enum": ["stop", "resume"]},
                "rerunInterrupted": {"type": "boolean"},
                "waitSeconds": _WAIT,
            },
            ["run", "action"],
        ),
        _FLOW_VIEW,
        read_only=False,
        idempotent=False,
        destructive=True,
        profile="flows",
    ),
)
# Flow tools list after the core ones and before the all-only extras
TOOLS = (*TOOLS[:7], *_FLOW_TOOLS, *TOOLS[7:])

BY_NAME: Final = {tool.name: tool for tool in TOOLS}
PROFILES: Final = ("core", "flows", "all")


def select_tools(spec: str, *, read_only: bool) -> tuple[Tool, ...]:
    """The tools ``--tools core|all|NAME,…`` names, in listing order."""
    if spec == "all":
        chosen = list(TOOLS)
    elif spec == "core":
        chosen = [t for t in TOOLS if t.profile == "core"]
    elif spec == "flows":
        chosen = [t for t in TOOLS if t.profile in ("core", "flows")]
    else:
        names = [n.strip() for n in spec.split(",") if n.strip()]
        unknown = [n for n in names if n not in BY_NAME]
        if unknown or not names:
            raise AgentGraphError(
                codes.MCP_TOOLS_INVALID,
                f"--tools takes core, flows, all or tool names ({', '.join(BY_NAME)}); "
                f"unknown: {', '.join(unknown) or '<empty>'}",
            )
        chosen = [t for t in TOOLS if t.name in names]
    if read_only:
        chosen = [t for t in chosen if t.read_only]
    return tuple(chosen)


def check_arguments(tool: Tool, arguments: Any) -> dict[str, Any]:
    """The arguments if they match the input schema; ``arguments-invalid`` otherwise."""
    from jsonschema import Draft202012Validator

    from ..errors import Diagnostic

    value = {} if arguments is None else arguments
    validator = Draft202012Validator(dict(tool.input_schema))
    errors = sorted(validator.iter_errors(value), key=lambda e: (list(e.absolute_path), e.message))
    if not errors:
        assert isinstance(value, dict)
        return value
    diagnostics = []
    for error in errors[:10]:
        pointer = "".join(
            f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in error.absolute_path
        )
        diagnostics.append(
            Diagnostic(
                codes.ARGUMENTS_INVALID, f"{pointer or '/'}: {error.message}", pointer=pointer
            )
        )
    first = diagnostics[0]
    raise AgentGraphError(
        codes.ARGUMENTS_INVALID,
        f"{tool.name} arguments do not match its input schema at {first.message}",
        diagnostics,
    )
