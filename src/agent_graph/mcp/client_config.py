"""``agc mcp config CLIENT``: the snippet that installs this server in an MCP client.

Configuration goes in arguments, never in environment variables: Codex passes only a
short list of variables to a server. Paths are printed as given, so a project-scoped
snippet stays valid for everyone who checks the project out.
"""

from __future__ import annotations

import json
import shlex
from typing import Final

from .. import codes
from ..errors import AgentGraphError

CLIENTS: Final = ("claude", "codex", "vscode", "cursor", "desktop")


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def snippet(client: str, serve_args: list[str], name: str = "agent-graph") -> str:
    args = ["mcp", "serve", *serve_args]
    if client == "claude":
        command = shlex.join(["claude", "mcp", "add", "--transport", "stdio", "--scope", "project"])
        return (
            f"# Claude Code: run in the project (writes .mcp.json)\n"
            f"{command} {name} -- {shlex.join(['agc', *args])}\n"
        )
    if client == "codex":
        listed = ", ".join(_toml_string(a) for a in args)
        return (
            "# Codex: ~/.codex/config.toml, or .codex/config.toml in a trusted project\n"
            f"[mcp_servers.{name}]\n"
            'command = "agc"\n'
            f"args = [{listed}]\n"
            "startup_timeout_sec = 20\n"
            "tool_timeout_sec = 60\n"
        )
    if client in ("vscode", "cursor", "desktop"):
        key = "servers" if client == "vscode" else "mcpServers"
        where = {
            "vscode": ".vscode/mcp.json",
            "cursor": ".cursor/mcp.json",
            "desktop": "claude_desktop_config.json (Claude Desktop has no elicitation: "
            "Gates are decided with agc run decide)",
        }[client]
        entry: dict[str, object] = {"command": "agc", "args": args}
        if client == "vscode":
            entry = {"type": "stdio", **entry}
        body = json.dumps({key: {name: entry}}, indent=2, ensure_ascii=False)
        return f"// {where}\n{body}\n"
    raise AgentGraphError(
        codes.USAGE_INVALID, f"Unknown client {client}: one of {', '.join(CLIENTS)}"
    )
