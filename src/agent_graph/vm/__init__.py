"""The run-time VM: evaluate and route a compiled Provider.

Imports nothing heavier than msgpack (no yaml, jsonschema, lark or click), so hosts
that ship compiled IR pay only for what evaluation needs.
"""

from .evaluate import Candidate, node_state_key
from .program import Evaluation, Program, load_program
from .state import RoutingState

__all__ = ["Candidate", "Evaluation", "Program", "RoutingState", "load_program", "node_state_key"]
