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
   cannot read MCP resources), then do the step with your own tools; run a command plan
   with your own shell tool: the server never runs one.
4. Report the step with run_record (the route's afterAction.recordNode, the revision and
   sequence you acted on). A report is not proof: the host's observers decide the Facts.
5. When next.waitsFor is user, call gate_resolve: only the user decides a Gate. Never set
   Facts, hold authorities or decide Gates yourself, and never run agc commands that would.
6. Stop when next.waitsFor is nothing (the Run is complete) or host (tell the user what the
   host still has to observe).
"""

_TASK = {"name": "task", "description": "What the user wants done", "required": True}


def listing(providers: ProviderSet) -> list[dict[str, Any]]:
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
    return prompts


def text(providers: ProviderSet, name: str, arguments: Mapping[str, str]) -> str:
    """The prompt's one user message (``prompt-unknown`` for a name not listed)."""
    task = arguments.get("task") or "(ask the user what to do)"
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
