"""``agc lsp``: the language server, over stdio (docs/editors.md).

Only this command imports pygls, through :mod:`agent_graph.lsp.server`; without the
``agent-graph[lsp]`` extra it fails with ``lsp-server-missing`` and the install command.
"""

from __future__ import annotations

import click

from .. import codes
from ..errors import AgentGraphError
from .options import format_option


@click.command("lsp")
@click.option(
    "--stdio",
    is_flag=True,
    default=True,
    help="Speak the protocol on stdin/stdout (the only transport; editors pass it).",
)
@format_option  # shapes a start-up error; the server itself speaks the protocol
def lsp_command(stdio: bool, fmt: str | None) -> None:
    """Serve Provider files and FLOW.md packages to an editor: diagnostics as you type,
    definition, references, hover, rename and completion."""
    from ..lsp import INSTALL_HINT

    try:
        from ..lsp import server
    except ImportError as error:
        missing = (error.name or "").split(".")[0]
        if missing in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise AgentGraphError(
                codes.LSP_SERVER_MISSING,
                f"agc lsp needs pygls, which is not installed ({error.name}): {INSTALL_HINT}",
            ) from None
        raise
    server.serve_stdio()
