"""MCP resources of Graph Runs, context views by revision, and the read ledger.

``agent-graph://runs/<handle>/events`` is the Run's event log (what ``agc run events
--format json`` prints), ``…/explain`` why each node has its status now (``agc explain``)
and ``…/picture`` the Graph drawn with that evaluation (Mermaid, ``agc graph``).
``agent-graph://runs/<handle>/views/<revision>/<id>`` is a context view materialized
for exactly that revision: a Run that moved on answers ``route-revision-stale`` instead
of a view of another state. Results whose route requires a view link to it.

The ledger is what this server served (a static file's digest, a view's digest and
revision). ``graph_route``'s ``inContext`` names what the agent says it still holds; the
receipts passed to the VM are that list intersected with the ledger, never more, so a
claim about a resource this server did not serve marks nothing ``current``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, unquote

from .. import codes
from ..errors import AgentGraphError
from .resources import SCHEME
from .tools import HANDLE_PATTERN

if TYPE_CHECKING:
    from ..runs import Run
    from ..vm import Program, RoutingState

RUNS_URI: Final = f"{SCHEME}runs/"
JSON_TYPE: Final = "application/json"
MERMAID_TYPE: Final = "text/vnd.mermaid"
RECEIPTS_SCHEMA: Final = "agent-graph.resource-read-receipts.v1"
MEMBERS: Final = {"events": JSON_TYPE, "explain": JSON_TYPE, "picture": MERMAID_TYPE}


def view_uri(handle: str, revision: str, rid: str) -> str:
    return (
        f"{RUNS_URI}{quote(handle, safe='')}/views/{quote(revision, safe='')}/{quote(rid, safe='')}"
    )


def run_listing(handles: Iterable[str]) -> list[dict[str, Any]]:
    out = []
    for handle in handles:
        base = f"{RUNS_URI}{quote(handle, safe='')}"
        for member, media in MEMBERS.items():
            out.append(
                {"uri": f"{base}/{member}", "name": f"Run {handle} {member}", "mimeType": media}
            )
    return out


def parse(uri: str) -> tuple[str, list[str]] | None:
    """``(handle, rest)`` of a Run resource URI; None for a URI that is not one."""
    if not uri.startswith(RUNS_URI):
        return None
    handle, *rest = [unquote(p) for p in uri.removeprefix(RUNS_URI).split("/")]
    known = (len(rest) == 1 and rest[0] in MEMBERS) or (len(rest) == 3 and rest[0] == "views")
    if not known or not re.fullmatch(HANDLE_PATTERN, handle):
        raise AgentGraphError(codes.RESOURCE_MISSING, f"This server has no resource {uri}")
    return handle, rest


def document(member: str, run: Run, program: Program, state: RoutingState) -> str:
    """The events, explanation or picture of ``run`` as ``state`` evaluates it."""
    if member == "events":
        return json.dumps({"run": run.id, "events": run.events}, ensure_ascii=False, indent=2)
    from ..pictures.explain import explain

    evaluation = program.evaluate(run.graph, run.entry, state, trace=True)
    assert evaluation.trace is not None
    if member == "explain":
        doc = explain(evaluation, evaluation.trace)
        return json.dumps(doc, ensure_ascii=False, indent=2)
    from ..pictures import draw
    from ..pictures.provider import provider_picture

    picture = provider_picture(
        program.ir, run.graph, run.entry, evaluation=evaluation, trace=evaluation.trace
    )
    return draw(picture, "mermaid").decode("utf-8")


class ReadLedger:
    """What this server served, per Provider: resource id -> {(digest, revision)}."""

    def __init__(self) -> None:
        self._served: dict[tuple[str, str], set[tuple[str, str | None]]] = {}
        self._lock = threading.Lock()

    def served(self, provider: str, rid: str, digest: str | None, revision: str | None) -> None:
        if digest is None:
            return
        with self._lock:
            self._served.setdefault((provider, rid), set()).add((digest, revision))

    def receipts(self, provider: str, held: Iterable[str]) -> dict[str, Any] | None:
        """The receipts set for what the agent still holds and this server served."""
        items = []
        with self._lock:
            for rid in sorted(set(held)):
                for digest, revision in sorted(
                    self._served.get((provider, rid), ()), key=lambda x: (x[0], x[1] or "")
                ):
                    item = {"id": rid, "digest": digest}
                    if revision is not None:
                        item["revision"] = revision
                    items.append(item)
        if not items:
            return None
        return {"schema": RECEIPTS_SCHEMA, "provider": provider, "receipts": items}
