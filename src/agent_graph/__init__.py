"""agent-graph: compiler, IR and deterministic VM for the Agent Graph protocol."""

__version__ = "0.1.0"
PROTOCOL_VERSION = "0.3.1"

__all__ = ["PROTOCOL_VERSION", "__version__"]
