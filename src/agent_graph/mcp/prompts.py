"""Prompts: the Skill bootstrap contract, written against this server's tools.

``follow-graph`` tells an agent how to follow a served Graph through the tools, and each
served Skill gets ``skill-<name>``, the same contract bound to the Skill's Provider, Graph
and Entry, so the agent never infers them from prose. Claude Code offers prompts as slash
commands. Plain data and text: the SDK adapter only wraps them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import codes
from ..errors import AgentGraphError
from .providers import ProviderSet

_CONTRACT = """\
Follow the Agent Graph {target} for this task: {task}

1. Call run_start{start}, choosing a new handle for the Run.
2. Every result begins with next: do what next.say says and make the call in next.tool
   with next.arguments.
3. Before a step, read every resource the route lists as required (resource_read when you
   cannot read MCP resources; graph_route with inContext names those you still hold),
   then do the step with your own tools; run a command plan with your own shell tool: the
   server never runs one.
4. Report the step with run_record (the route's afterAction.recordNode, the revision and
   sequence you acted on). A report is not proof: the host's observers decide the Facts.
5. When next.waitsFor is user, call gate_resolve: only the user decides a Gate. Never set
   Facts, hold authorities or decide Gates yourself, and never run agc commands that would.
6. Stop when next.waitsFor is nothing (the Run is complete) or host (tell the user what the
   host still has to observe).
"""

_RUN_FLOW = """\
Run the Flow {flow} for this task: {task}

1. Call flow_start with {{"flow": {flow_json}, "task": <the task>, "run": <a new handle>}}.
   A Flow with commands runs only after the user consents in a form; if the result says
   awaiting-consent, tell the user the terminal command in fallback and stop. Never run
   the Flow's commands yourself.
2. Every result begins with next: do what next.say says and make the call in next.tool.
3. When state is awaiting-agent, do the work step.prompt asks with your own tools, in
   step.cwd, then call flow_answer with the step's visit, one of step.results as result,
   and the content that result asks for.
4. When state is running, call flow_status with waitSeconds; when it is interrupted, call
   flow_control with action resume. Stop when it is completed or failed and report the
   result to the user.
"""

_TASK = {"name": "task", "description": "What the user wants done", "required": True}


def listing(providers: ProviderSet, *, flows: bool = False) -> list[dict[str, Any]]:
    prompts = [
        {
            "name": "follow-graph",
            "title": "Follow an Agent Graph",
            "description": "Work on a task by following a served Graph step by step",
            "arguments": [
                _TASK,
                {"name": "provider", "description": "Provider id (omit when one is served)"},
                {"name": "graph", "description": "Graph id (omit when the Provider has one)"},
                {"name": "entry", "description": "Graph entry (default: default)"},
            ],
        }
    ]
    prompts.extend(
        {
            "name": f"skill-{skill.name}",
            "title": f"Skill {skill.name}",
            "description": f"Follow {served.id} {skill.graph} ({skill.entry}) for a task",
            "arguments": [_TASK],
        }
        for served in providers.served
        for skill in served.skills
    )
    if flows:
        prompts.append(
            {
                "name": "run-flow",
                "title": "Run a Flow",
                "description": "Run a served Flow, doing its Agent steps yourself",
                "arguments": [
                    {"name": "flow", "description": "Flow id (flow_list)", "required": True},
                    _TASK,
                ],
            }
        )
    return prompts


def text(
    providers: ProviderSet, name: str, arguments: Mapping[str, str], *, flows: bool = False
) -> str:
    """The prompt's one user message (``prompt-unknown`` for a name not listed)."""
    task = arguments.get("task") or "(ask the user what to do)"
    if flows and name == "run-flow":
        flow = arguments.get("flow") or "(call flow_list and ask the user which)"
        return _RUN_FLOW.format(flow=flow, flow_json=json.dumps(flow), task=task)
    if name == "follow-graph":
        selector = {k: arguments[k] for k in ("provider", "graph", "entry") if arguments.get(k)}
        target = "Graph " + (selector.get("graph") or "the server serves")
        start = f" with {json.dumps(selector)}" if selector else ""
        return _CONTRACT.format(target=target, task=task, start=start)
    for served in providers.served:
        for skill in served.skills:
            if name == f"skill-{skill.name}":
                target = f"Skill {skill.name} ({served.id}, Graph {skill.graph})"
                start = f" with {json.dumps({'skill': skill.name})}"
                return _CONTRACT.format(target=target, task=task, start=start)
    raise AgentGraphError(codes.PROMPT_UNKNOWN, f"This server has no prompt {name}")
