"""``agc mcp serve``: an MCP server that is the Agent Graph host for MCP clients.

The host logic is plain Python, testable without the SDK: :mod:`.host` (the tools),
:mod:`.tools` (their names, annotations and schemas), :mod:`.gates` (how only the user
decides a Gate), :mod:`.observers` (the only source of Facts), :mod:`.next` (the
sentence every result leads with), :mod:`.results` (errors and the size cap) and
:mod:`.config` (``agent-graph.mcp-config.v1``). :mod:`.sdk_adapter` is the one module
that imports the ``mcp`` SDK (the ``agent-graph[mcp]`` extra); nothing else here does,
so ``import agent_graph`` and every other command stay free of it (docs/mcp.md).
"""

from __future__ import annotations

INSTALL_HINT = "pip install 'agent-graph[mcp]'"
SERVER_NAME = "agent-graph"

__all__ = ["INSTALL_HINT", "SERVER_NAME"]
