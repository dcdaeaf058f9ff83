"""``resource locate`` and ``resource materialize`` (docs/resources.md).

:func:`locate` finds a loaded Resource by exact id, else by its contained descriptor
path, and returns its 0.3.1 location envelope (no revision, no read state).
:func:`materialize` runs a context view's read-only materializer once, explicitly, and
caches its output under ``<cache>/<hex><ext>`` with ``<cache>/<hex>.receipt.json``.

Not imported by :mod:`agent_graph.vm`: evaluation and routing never run anything.
"""

from __future__ import annotations

from .cache import extension_for
from .locate import find_resource, locate
from .run import (
    DEFAULT_MAX_ERROR_BYTES,
    DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_TIMEOUT_MS,
    MATERIALIZATION_SCHEMA,
    Materialized,
    materialize,
)

__all__ = [
    "DEFAULT_MAX_ERROR_BYTES",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_TIMEOUT_MS",
    "MATERIALIZATION_SCHEMA",
    "Materialized",
    "extension_for",
    "find_resource",
    "locate",
    "materialize",
]
