"""State keys of a Graph: which keys a Run may record an Outcome under.

``agc run record`` and ``agc mcp serve``'s ``run_record`` refuse a key that names no
node of the Run's Graph (or of a Graph it calls, under the call path): a typo would
otherwise be recorded and never read.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING

from .. import codes
from ..errors import AgentGraphError
from ..ir.records import NONE

if TYPE_CHECKING:
    from ..ir import records as r
    from ..vm import Program


def state_keys(program: Program, graph: r.Graph, frame: str = "") -> Iterator[str]:
    """Every state key of ``graph``'s nodes, its children's under their call paths too."""
    for node in graph.nodes:
        yield f"{frame}{graph.id}/{node.id}"
        if node.subgraph != NONE:
            child = program.ir.graphs[node.subgraph]
            yield from state_keys(program, child, f"{frame}{graph.id}/{node.id}>")


def is_state_key(program: Program, graph: r.Graph, key: str) -> bool:
    """``key`` names a node of ``graph`` or, through subgraph nodes, of a Graph it calls.

    Ids may hold ``/``, so the key is matched node by node rather than split; each step
    into a child consumes a prefix, so the work is bounded by the key's length.
    """
    prefix = f"{graph.id}/"
    if not key.startswith(prefix):
        return False
    rest = key[len(prefix) :]
    for node in graph.nodes:
        if rest == node.id:
            return True
        call = f"{node.id}>"
        if (
            node.subgraph != NONE
            and rest.startswith(call)
            and is_state_key(program, program.ir.graphs[node.subgraph], rest[len(call) :])
        ):
            return True
    return False


def check_graph_state_key(program: Program, graph_id: str, key: str) -> None:
    """``state-key-invalid`` unless ``key`` is a state key of Graph ``graph_id``."""
    graph = program.graph(graph_id)  # graph-missing when the Provider lacks the Graph
    if is_state_key(program, graph, key):
        return
    known = list(islice(state_keys(program, graph), 2000))
    close = difflib.get_close_matches(key, known, n=1)
    guess = f" (did you mean {close[0]}?)" if close else ""
    raise AgentGraphError(
        codes.STATE_KEY_INVALID,
        f"{key!r} is not a state key of Graph {graph.id} in Provider {program.provider_id}"
        f"{guess}: record the route's afterAction.recordNode exactly",
    )
