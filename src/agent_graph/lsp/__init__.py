"""``agc lsp``: a language server for Provider files and ``FLOW.md`` packages.

The server's logic is plain Python, testable without pygls: :mod:`.session` keeps the
editor's buffers and answers every request; :mod:`.owners` finds the Provider (or Flow
package) a file belongs to; :mod:`.checks` runs the compiler's checks over the buffers
(the diagnostics ``agc validate`` / ``agc flow check`` print); :mod:`.provider_index` and
:mod:`.flow_index` say where names are defined and used; :mod:`.navigate`, :mod:`.hover`,
:mod:`.rename` and :mod:`.complete` answer from them. :mod:`.server` is the one module that
imports pygls (the ``agent-graph[lsp]`` extra), so nothing else pays for it (docs/editors.md).
"""

from __future__ import annotations

INSTALL_HINT = "pip install 'agent-graph[lsp]'"
SERVER_NAME = "agent-graph"

__all__ = ["INSTALL_HINT", "SERVER_NAME"]
