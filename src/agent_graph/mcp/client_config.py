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


#: Where the Codex and Cursor snippets expect the bearer token (read from --token-file)
TOKEN_VARIABLE: Final = "AGENT_GRAPH_MCP_TOKEN"


def http_snippet(
    client: str, serve_args: list[str], url: str, token_file: str, name: str = "agent-graph"
) -> str:
    """The snippet for a server the user runs with ``--http``: the command that starts it,
    then the client's entry. The token is never printed: each snippet reads it from the
    token file the server writes at start (a new one each time)."""
    start = f"# start the server first (it writes a new token to {token_file} each start):\n"
    start += f"#   {shlex.join(['agc', 'mcp', 'serve', *serve_args])}\n"
    export = f'#   export {TOKEN_VARIABLE}="$(cat {shlex.quote(token_file)})"\n'
    if client == "claude":
        header = f"Authorization: Bearer $(cat {shlex.quote(token_file)})"
        words = shlex.join(["claude", "mcp", "add", "--transport", "http", "--scope", "project"])
        return (
            f"{start}# Claude Code: run in the project (writes .mcp.json; the token it "
            "stores changes with each server start, so run it again then)\n"
            f'{words} {name} {url} --header "{header}"\n'
        )
    if client == "codex":
        return (
            f"{start}# and start Codex where the token is exported:\n{export}"
            "# Codex: ~/.codex/config.toml, or .codex/config.toml in a trusted project\n"
            f"[mcp_servers.{name}]\n"
            f"url = {_toml_string(url)}\n"
            f"bearer_token_env_var = {_toml_string(TOKEN_VARIABLE)}\n"
            "tool_timeout_sec = 60\n"
        )
    if client == "vscode":
        body = {
            "inputs": [
                {
                    "type": "promptString",
                    "id": f"{name}-token",
                    "description": f"The token in {token_file}",
                    "password": True,
                }
            ],
            "servers": {
                name: {
                    "type": "http",
                    "url": url,
                    "headers": {"Authorization": f"Bearer ${{input:{name}-token}}"},
                }
            },
        }
        return f"{start}// .vscode/mcp.json\n{json.dumps(body, indent=2)}\n"
    if client == "cursor":
        entry = {"url": url, "headers": {"Authorization": f"Bearer ${{env:{TOKEN_VARIABLE}}}"}}
        text = json.dumps({"mcpServers": {name: entry}}, indent=2)
        return (
            f"{start}# and start Cursor where the token is exported:\n{export}"
            f"// .cursor/mcp.json\n{text}\n"
        )
    raise AgentGraphError(
        codes.USAGE_INVALID,
        f"{client} takes only stdio servers here: drop --http (claude, codex, vscode and "
        "cursor take --http)",
    )
