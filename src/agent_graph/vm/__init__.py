"""The run-time VM: evaluate and route a compiled Provider.

Imports nothing heavier than msgpack (no yaml, jsonschema, lark or click), so hosts
that ship compiled IR pay only for what evaluation needs. Route and host-action names
load on first use, which keeps a cold ``evaluate`` short.
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
