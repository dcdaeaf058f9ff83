"""The run-time VM: evaluate and route a compiled Provider.

Imports nothing heavier than msgpack (no yaml, jsonschema, lark or click), so hosts
that ship compiled IR pay only for what evaluation needs.
"""

from .evaluate import Candidate, node_state_key
from .locations import (
    host_action_input_digest,
    host_action_output_digest,
    host_action_read_receipt,
    validate_host_action_result,
)
from .program import Evaluation, Program, load_program
from .route import Route
from .state import RoutingState

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
