"""The host behind the tools: Providers, Runs, observers, Gates and Flows, without the SDK.

:class:`Host` is the server's state and one method per tool, assembled from the parts
named for what they do: :mod:`.run_tools` (Graph Runs, observation, routes),
:mod:`.gate_tools` (Gates), :mod:`.resource_tools` (what is served to read) and
:mod:`.flow_tools` (Flow Runs). The SDK adapter runs each call on a worker thread, so a
Run lock held by a terminal's ``agc run …`` delays one call, not the server. The server
never runs a Route's command plan: the agent runs it through its client, under the
client's own permission prompts.
"""

from __future__ import annotations

from .gate_tools import GateTools
from .resource_tools import ResourceTools
from .run_tools import LOCK_TIMEOUT_S
from .serve_options import Client, ServeOptions

__all__ = ["LOCK_TIMEOUT_S", "Client", "Host", "ServeOptions"]


class Host(GateTools, ResourceTools):
    """One server: every tool of :mod:`.tools` as ``_<name>``, dispatched by ``call``."""
