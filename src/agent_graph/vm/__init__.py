"""The run-time VM: evaluate and route a compiled Provider.

Imports nothing heavier than msgpack (no yaml, jsonschema, lark or click), so hosts
that ship compiled IR pay only for what evaluation needs. Route and host-action names
load on first use, which keeps a cold ``evaluate`` short.

Host-action helpers, for hosts that produce ``agent-graph.resource.host-action.v1``
Resources themselves (the loop is in ``docs/host-actions.md``; each also resolves from
the ``agent_graph`` root):

* :func:`host_action_input_digest` (location) -> the ``input_digest`` to echo;
* :func:`validate_host_action_result` (location, result) -> ``None``, or raises
  ``host-action-result-invalid`` / ``host-action-location-invalid``;
* :func:`host_action_output_digest` (result) -> the output digest a receipt carries;
* :func:`host_action_read_receipt` (location, result) -> ``{id, revision, digest}``
  for the ``receipts`` state that makes the location ``current``.

Locations may be :class:`~agent_graph.vm.locations.HostActionLocation` objects or the
JSON mappings a Route lists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .evaluate import Candidate, node_state_key
from .program import Evaluation, Program, load_program
from .state import RoutingState

if TYPE_CHECKING:
    from .locations import (
        host_action_input_digest,
        host_action_output_digest,
        host_action_read_receipt,
        validate_host_action_result,
    )
    from .route import Route

_LAZY = {
    "Route": "route",
    "host_action_input_digest": "locations",
    "host_action_output_digest": "locations",
    "host_action_read_receipt": "locations",
    "validate_host_action_result": "locations",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)


__all__ = [
    "Candidate",
    "Evaluation",
    "Program",
    "Route",
    "RoutingState",
    "host_action_input_digest",
    "host_action_output_digest",
    "host_action_read_receipt",
    "load_program",
    "node_state_key",
    "validate_host_action_result",
]
