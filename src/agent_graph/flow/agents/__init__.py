"""Agent adapters for the Flow runtime: the protocol, and the adapters ``--agent`` names."""

from .protocol import AgentAdapter, AgentAnswer, AgentFailure, AgentRequest, ResultChoice

__all__ = ["AgentAdapter", "AgentAnswer", "AgentFailure", "AgentRequest", "ResultChoice"]
