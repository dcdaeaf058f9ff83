"""Runs: the optional, host-owned memory of one Graph entry (``agent-graph.run.v1``).

A Run keeps Facts, the latest Outcome per state key, session authorities and an
append-only, numbered event log, so a long task can cross sessions and processes::

    from agent_graph.runs import FileRunStore, evaluation_input

    store = FileRunStore()
    run = store.start("run.json", provider="example.weekly-report", graph="report")
    state = evaluation_input(store.load("run.json"))   # -> vm.RoutingState
    ...                                                 # evaluate, route, act
    store.record("run.json", route["afterAction"]["recordNode"], "completed")

:class:`FileRunStore` writes atomically under an advisory lock (safe for many
processes); :class:`MemoryRunStore` keeps Runs in the process. Both implement
:class:`RunStore` with identical behaviour. Importing this package loads neither
the compiler nor a JSON Schema engine; the stores load the schema check on first use.
"""

from .document import NO_DETAIL, RUN_SCHEMA, Run
from .evaluation import ensure_provider, evaluation_input
from .file import FileRunStore, read_run
from .memory import MemoryRunStore
from .store import BaseRunStore, Checkpoint, RunRef, RunStore

__all__ = [
    "NO_DETAIL",
    "RUN_SCHEMA",
    "BaseRunStore",
    "Checkpoint",
    "FileRunStore",
    "MemoryRunStore",
    "Run",
    "RunRef",
    "RunStore",
    "ensure_provider",
    "evaluation_input",
    "read_run",
]
