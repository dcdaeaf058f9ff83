"""Versions: of this package and of the protocol it implements (a leaf module, imports nothing)."""

from __future__ import annotations

__version__ = "0.1.0"
PROTOCOL_VERSION = "0.3.1"
