"""A slow, deliberately plain transcription of the reference evaluator.

This is the *oracle* of the differential test: it follows the round algorithm
of the reference evaluator statement by statement, rescanning
every node and every edge in every round, with no precomputed tables, so that
it is easy to check against the specification by reading. Speed is irrelevant.

It works directly on a :class:`LoadedProvider` (plain dict definitions) and
returns plain JSON values:

* :func:`oracle_evaluate` — the ``agent-graph.evaluation.v1`` document;
* :func:`oracle_candidates` — the full sorted candidate list;
* :func:`oracle_run` — both, plus the set of algorithm features the run
  exercised (used to prove that generated states cover the interesting paths);
* :func:`oracle_route_resources` — a candidate's Route ``resources`` (§3.2), each
  reference found as the reference's ``locateResource`` (``src/router.ts``) finds it:
  by exact id over every loaded resource first, then by contained path;
* :func:`oracle_code_document` — a catalog entry's ``document`` location, which the
  reference's loader keeps by path only (``locateCode`` shows that resource).

The one deliberate difference from the 0.2.6 source is the 0.3 candidate rule
(§2.6): only a ``pending`` action or gate is a candidate; a recorded
``waiting-user`` is settled. ``legacy_waiting_user=True`` restores the 0.2.6
rule; it exists only to compare with the Node reference and is not protocol
behaviour.

Inputs are assumed to be what a validated host call would pass: ``facts`` a
JSON object, ``outcomes`` mapping state keys to one of the eight outcome strings
or to a record ``{"outcome": ..., "recordedAt": ...}``, ``authorities`` a list
of strings.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_graph.canonical import digest_value, js_sorted, locale_sort_key
from agent_graph.compiler.provider.model import LoadedGraph, LoadedProvider, LoadedResource
from agent_graph.errors import AgentGraphError

__all__ = [
    "MISSING",
    "OracleResult",
    "get_fact",
    "js_object_is",
    "oracle_candidates",
    "oracle_code_document",
    "oracle_evaluate",
    "oracle_locate_resource",
    "oracle_route_resources",
    "oracle_run",
]

EVALUATION_SCHEMA = "agent-graph.evaluation.v1"
MAX_ALTERNATIVE_ROUTES = 3
DEFAULT_EDGE_OUTCOMES = ["completed"]


class _Missing:
    """JavaScript ``undefined``: a fact that is not there (distinct from null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]*)")


# --- facts (§0.7) ------------------------------------------------------------


def get_fact(facts: Any, path: str) -> Any:
    """``getFact``: walk the dotted path through JSON data only (own keys)."""
    current: Any = facts
    for segment in path.split("."):
        if isinstance(current, list):
            if not _ARRAY_INDEX.fullmatch(segment):
                return MISSING
            index = int(segment)
            if index >= len(current):
                return MISSING
            current = current[index]
            continue
        if not isinstance(current, dict):
            return MISSING  # null, a scalar, or already missing
        if segment not in current:
            return MISSING
        current = current[segment]
    return current


def _as_double(x: int | float) -> float:
    # JSON numbers are doubles in JavaScript; huge ints round (or overflow).
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def js_object_is(a: Any, b: Any) -> bool:
    """JavaScript ``Object.is`` on JSON values (scalars compare by value).

    ``True`` is not ``1``, ``1.0`` is ``1``, ``-0.0`` is not ``0``, NaN is NaN,
    MISSING is not None. Objects and arrays are never equal to anything here
    because a check's ``equals`` is always a scalar.
    """
    if a is MISSING or b is MISSING:
        return a is b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        x, y = _as_double(a), _as_double(b)
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        if x == 0 and y == 0:
            return math.copysign(1.0, x) == math.copysign(1.0, y)
        return x == y
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return False


def _fact_check_matches(facts: Any, check: dict[str, Any]) -> bool:
    value = get_fact(facts, check["path"])
    if "exists" in check:
        return (value is not MISSING) if check["exists"] else (value is MISSING)
    return js_object_is(value, check.get("equals", MISSING))


def _all_facts_match(facts: Any, checks: list[dict[str, Any]] | None) -> bool:
    if checks is None:
        return True
    return all(_fact_check_matches(facts, check) for check in checks)


# --- keys, ids, records (§2.3, §2.9) -------------------------------------------


def _frame_key(graph_id: str, call_path: list[str]) -> str:
    if not call_path:
        return graph_id
    return ">".join(call_path) + ">" + graph_id


def node_state_key(graph_id: str, node_id: str, call_path: list[str]) -> str:
    return _frame_key(graph_id, call_path) + "/" + node_id


def _record_outcome(value: Any) -> Any:
    """An outcome string, or the ``outcome`` of a record; MISSING otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "outcome" in value:
        return value["outcome"]
    return MISSING


def _route_id(revision: str, graph: str, node: str, call_path: list[str]) -> str:
    digest = digest_value(
        {"revision": revision, "graph": graph, "node": node, "callPath": list(call_path)}
    )
    return "route:" + digest[len("sha256:") : len("sha256:") + 20]


def _compute_revision(
    provider: LoadedProvider,
    graph_id: str,
    entry: str,
    facts: Any,
    outcomes: dict[str, Any],
    authorities: list[str],
) -> str:
    reduced: dict[str, Any] = {}
    for key, value in outcomes.items():
        outcome = _record_outcome(value)
        if outcome is not MISSING:  # undefined members vanish in JSON.stringify
            reduced[key] = outcome
    provider_digest = provider.graph_digests.get(graph_id, provider.digest)
    return digest_value(
        {
            "provider": provider_digest,
            "graphId": graph_id,
            "entry": entry,
            "facts": facts,
            "outcomes": reduced,
            "authorities": authorities,
        }
    )


# --- the frame algorithm (§2.4–§2.7) -------------------------------------------


def _diagnostic(code: str, message: str, severity: str = "error", **extra: Any) -> dict[str, Any]:
    """A diagnostic in the reference's key order: code, severity, message, path?, detail?."""
    return {"code": code, "severity": severity, "message": message, **extra}


@dataclass
class _Context:
    provider: LoadedProvider
    facts: Any
    outcomes: dict[str, Any]
    authorities: list[str]
    revision: str
    legacy_waiting_user: bool
    features: set[str] = field(default_factory=set)
    #: every frame evaluated: (frame key, reached node ids in order, outcome by node id),
    #: for checking the VM's evaluation trace (tests/vm/test_graph_trace.py)
    frames: list[tuple[str, list[str], dict[str, str]]] = field(default_factory=list)


@dataclass
class _Frame:
    status: str
    outcome: str | None
    candidates: list[dict[str, Any]]
    diagnostics: list[dict[str, Any]]


def _node_by_id(graph: LoadedGraph, node_id: str) -> dict[str, Any] | None:
    for node in graph.definition["nodes"]:
        if node["id"] == node_id:
            result: dict[str, Any] = node
            return result
    return None


def _edges(graph: LoadedGraph) -> list[dict[str, Any]]:
    edges: list[dict[str, Any]] = graph.definition["edges"]
    return edges


def _edge_matches(outcome: str | None, edge: dict[str, Any]) -> bool:
    return outcome is not None and outcome in edge.get("outcomes", DEFAULT_EDGE_OUTCOMES)


def _outcome_for_simple_node(
    ctx: _Context, graph_id: str, node: dict[str, Any], call_path: list[str]
) -> str:
    recorded = _record_outcome(ctx.outcomes.get(node_state_key(graph_id, node["id"], call_path)))
    is_terminal = node["kind"] == "terminal"
    satisfied_by = node.get("satisfiedBy")
    if not is_terminal and satisfied_by and _all_facts_match(ctx.facts, satisfied_by):
        ctx.features.add("satisfied-by")
        return "completed"
    if not is_terminal and satisfied_by and recorded == "completed":
        ctx.features.add("unverified")
        return "unverified"
    if recorded is not MISSING and recorded:  # JavaScript truthiness of the string
        result: str = recorded
        return result
    if is_terminal:
        terminal: str = node["terminalOutcome"]
        return terminal
    return "pending"


def _candidate(
    ctx: _Context,
    graph_id: str,
    node: dict[str, Any],
    call_path: list[str],
    status: str,
    availability: str,
    resolution: str | None,
) -> dict[str, Any]:
    """A candidate with everything the route summary and the ranking need."""
    candidate: dict[str, Any] = {
        "routeId": _route_id(ctx.revision, graph_id, node["id"], call_path),
        "graph": graph_id,
        "node": node["id"],
        "callPath": list(call_path),
        "stateKey": node_state_key(graph_id, node["id"], call_path),
        "availability": availability,
        "gateResolution": resolution,
        # private to the oracle; stripped before candidates are returned
        "_statusCode": status,
        "_reasonCode": node["reasonCode"],
        "_label": node.get("description") if node.get("description") is not None else node["id"],
        "_priority": node.get("priority", 0),
    }
    catalog = ctx.provider.catalog
    entry = catalog.entries.get(node["reasonCode"]) if catalog is not None else None
    if entry is not None and entry.get("summary"):
        candidate["_hint"] = entry["summary"]
    return candidate


def _rank(candidate: dict[str, Any]) -> tuple[int, int, bytes]:
    availability = candidate["availability"]
    rank = 0 if availability == "immediate" else 1 if availability == "requires-user" else 2
    return (rank, -candidate["_priority"], locale_sort_key(candidate["routeId"]))


def _evaluate_frame(
    ctx: _Context,
    graph: LoadedGraph,
    entry: str,
    call_path: list[str],
    graph_stack: list[str],
) -> _Frame:
    gid: str = graph.definition["id"]
    if gid in graph_stack:
        trail = " -> ".join([*graph_stack, gid])
        message = f"Runtime graph recursion detected: {trail}"
        return _Frame("error", None, [], [_diagnostic("graph-recursion", message)])
    entry_node_id = graph.definition["entrypoints"].get(entry)
    if not entry_node_id:
        message = f"Graph {gid} has no entry {entry}"
        return _Frame("error", None, [], [_diagnostic("entry-missing", message)])

    reached: list[str] = [entry_node_id]  # an insertion-ordered set
    outcomes: dict[str, str] = {}
    child_results: dict[str, _Frame] = {}
    diagnostics: list[dict[str, Any]] = []
    changed = True

    while changed:
        changed = False

        # 1. Outcome pass over a snapshot of `reached` (the reference copies it).
        snapshot = list(reached)
        for node_id in snapshot:
            if node_id in outcomes:
                continue
            node = _node_by_id(graph, node_id)
            assert node is not None
            if not _all_facts_match(ctx.facts, node.get("requiresFacts")):
                outcomes[node_id] = "blocked"
                message = f"Node {gid}/{node_id} requires facts that are not satisfied"
                diagnostics.append(
                    _diagnostic("required-fact-missing", message, path=str(graph.path))
                )
                ctx.features.add("required-fact-missing")
                changed = True
                continue
            if node["kind"] == "subgraph":
                child = ctx.provider.graphs.get(node["graph"])
                if child is None:
                    outcomes[node_id] = "failed"
                    message = f"Missing subgraph {node['graph']}"
                    diagnostics.append(_diagnostic("subgraph-missing", message))
                    changed = True
                    continue
                child_call_path = [*call_path, f"{gid}/{node_id}"]
                result = _evaluate_frame(
                    ctx, child, node["entry"], child_call_path, [*graph_stack, gid]
                )
                child_results[node_id] = result
                ctx.features.add("subgraph-" + result.status)
                if result.status == "complete" and result.outcome:
                    outcomes[node_id] = result.outcome
                elif result.status == "error":
                    outcomes[node_id] = "failed"
                elif result.status == "waiting-user":
                    outcomes[node_id] = "waiting-user"
                else:
                    outcomes[node_id] = "pending"
                changed = True
                continue
            outcomes[node_id] = _outcome_for_simple_node(ctx, gid, node, call_path)
            changed = True

        # 2. Repeat pass, edges in declaration order, seeing earlier resets.
        for edge in _edges(graph):
            if edge.get("kind") != "repeat":
                continue
            if edge["from"] not in reached:
                continue
            if not _edge_matches(outcomes.get(edge["from"]), edge):
                continue
            if edge["to"] not in reached:
                reached.append(edge["to"])
                ctx.features.add("repeat-reach")
                changed = True
            if outcomes.get(edge["to"]) != "pending":
                if edge["to"] in outcomes:
                    ctx.features.add("repeat-reset")
                outcomes[edge["to"]] = "pending"
                changed = True

        # 3. Join pass, nodes in declaration order; no cascade within the pass
        # because a node reached here has no outcome until the next round.
        for node in graph.definition["nodes"]:
            if node["id"] in reached:
                continue
            incoming = [
                edge
                for edge in _edges(graph)
                if edge["to"] == node["id"] and edge.get("kind") != "repeat"
            ]
            if not incoming:
                continue
            matches = [
                edge["from"] in reached and _edge_matches(outcomes.get(edge["from"]), edge)
                for edge in incoming
            ]
            join = node.get("join", "all")
            eligible = any(matches) if join == "any" else all(matches)
            if eligible:
                reached.append(node["id"])
                if len(incoming) > 1:
                    ctx.features.add("join-any-partial" if not all(matches) else f"join-{join}")
                changed = True

    ctx.frames.append((_frame_key(gid, call_path), list(reached), dict(outcomes)))
    # Candidates, in reach order.
    candidates: list[dict[str, Any]] = []
    for node_id in reached:
        node = _node_by_id(graph, node_id)
        assert node is not None
        outcome = outcomes.get(node_id)
        if node["kind"] == "subgraph":
            child_result = child_results.get(node_id)
            if child_result is not None and child_result.status != "complete":
                candidates.extend(child_result.candidates)
                diagnostics.extend(child_result.diagnostics)
            continue
        settled_waiting = outcome == "waiting-user" and not ctx.legacy_waiting_user
        if outcome != "pending" and (outcome != "waiting-user" or settled_waiting):
            if outcome == "waiting-user" and node["kind"] in ("action", "gate"):
                ctx.features.add("waiting-user-settled")
            continue
        if node["kind"] == "action":
            candidates.append(
                _candidate(ctx, gid, node, call_path, "actionable", "immediate", None)
            )
            continue
        if node["kind"] == "gate":
            gate = node["gate"]
            delegated = (
                gate.get("delegatable") is True
                and gate.get("authority") is not None
                and gate["authority"] in ctx.authorities
            )
            if delegated:
                ctx.features.add("delegated-gate")
            candidates.append(
                _candidate(
                    ctx,
                    gid,
                    node,
                    call_path,
                    "actionable" if delegated else "waiting-user",
                    "immediate" if delegated else "requires-user",
                    "session-authority" if delegated else "user",
                )
            )

    # Frame status (§2.7).
    terminal_outcomes_list: list[str] = []
    for node_id in reached:
        node = _node_by_id(graph, node_id)
        assert node is not None
        if node["kind"] == "terminal" and node_id in outcomes:
            terminal_outcomes_list.append(outcomes[node_id])
    terminal_outcomes = js_sorted(dict.fromkeys(terminal_outcomes_list))
    if len(terminal_outcomes) > 1:
        message = f"Graph {gid} reached terminals with conflicting outcomes: " + ", ".join(
            terminal_outcomes
        )
        detail = {"outcomes": terminal_outcomes}
        diagnostics.append(
            _diagnostic("terminal-outcome-ambiguous", message, path=str(graph.path), detail=detail)
        )
        ctx.features.add("terminal-outcome-ambiguous")
        return _Frame("error", None, [], diagnostics)
    if len(terminal_outcomes) == 1:
        if candidates:
            ctx.features.add("complete-with-pending")
        return _Frame("complete", terminal_outcomes[0], [], diagnostics)
    candidates.sort(key=_rank)  # stable, like V8's TimSort
    if candidates:
        if any(c["availability"] == "immediate" for c in candidates):
            status = "actionable"
        elif any(c["availability"] == "requires-user" for c in candidates):
            status = "waiting-user"
        else:
            status = "blocked"
        return _Frame(status, None, candidates, diagnostics)
    if not diagnostics:
        message = f"Graph {gid} cannot reach a terminal or actionable node from entry {entry}"
        diagnostics.append(_diagnostic("no-route", message))
        ctx.features.add("no-route")
    return _Frame("blocked", None, [], diagnostics)


# --- public API -----------------------------------------------------------------


@dataclass
class OracleResult:
    evaluation: dict[str, Any]
    candidates: list[dict[str, Any]]
    features: set[str]
    frames: list[tuple[str, list[str], dict[str, str]]] = field(default_factory=list)


def _route_summary(candidate: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "routeId": candidate["routeId"],
        "graph": candidate["graph"],
        "node": candidate["node"],
        "statusCode": candidate["_statusCode"],
        "reasonCode": candidate["_reasonCode"],
    }
    if candidate.get("_hint"):
        summary["hint"] = candidate["_hint"]
    summary["availability"] = candidate["availability"]
    summary["label"] = candidate["_label"]
    return summary


def _public_candidate(candidate: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in candidate.items() if not k.startswith("_")}


def oracle_run(
    provider: LoadedProvider,
    graph_id: str,
    entry: str = "default",
    *,
    facts: Any = None,
    outcomes: dict[str, Any] | None = None,
    authorities: list[str] | None = None,
    legacy_waiting_user: bool = False,
) -> OracleResult:
    """Evaluate once; return the document, the sorted candidates and the features seen."""
    graph = provider.graphs.get(graph_id)
    if graph is None:
        raise AgentGraphError("graph-missing", f"Provider {provider.id} has no graph {graph_id}")
    facts = {} if facts is None else facts
    outcomes = {} if outcomes is None else outcomes
    sorted_authorities = js_sorted(dict.fromkeys(authorities or []))
    revision = _compute_revision(provider, graph_id, entry, facts, outcomes, sorted_authorities)
    ctx = _Context(provider, facts, outcomes, sorted_authorities, revision, legacy_waiting_user)
    frame = _evaluate_frame(ctx, graph, entry, [], [])
    primary = frame.candidates[0] if frame.candidates else None
    alternatives = frame.candidates[1:]
    diagnostics = list(frame.diagnostics)
    if len(alternatives) > MAX_ALTERNATIVE_ROUTES:
        available = len(alternatives)
        message = f"Evaluation returned {MAX_ALTERNATIVE_ROUTES} of {available} alternative routes"
        detail = {"available": available, "returned": MAX_ALTERNATIVE_ROUTES}
        diagnostics.append(
            _diagnostic("route-alternatives-truncated", message, "info", detail=detail)
        )
        ctx.features.add("route-alternatives-truncated")
    evaluation: dict[str, Any] = {
        "schema": EVALUATION_SCHEMA,
        "provider": provider.id,
        "graph": graph_id,
        "entry": entry,
        "revision": revision,
        "statusCode": frame.status,
    }
    if frame.outcome:
        evaluation["outcome"] = frame.outcome
    if primary is not None:
        evaluation["primaryRoute"] = _route_summary(primary)
    evaluation["alternativeRoutes"] = [
        _route_summary(c) for c in alternatives[:MAX_ALTERNATIVE_ROUTES]
    ]
    evaluation["diagnostics"] = diagnostics
    ctx.features.add("status-" + frame.status)
    candidates = [_public_candidate(c) for c in frame.candidates]
    return OracleResult(evaluation, candidates, ctx.features, ctx.frames)


def oracle_evaluate(
    provider: LoadedProvider,
    graph_id: str,
    entry: str = "default",
    *,
    facts: Any = None,
    outcomes: dict[str, Any] | None = None,
    authorities: list[str] | None = None,
    legacy_waiting_user: bool = False,
) -> dict[str, Any]:
    """The ``agent-graph.evaluation.v1`` document, keys in the reference's order."""
    return oracle_run(
        provider,
        graph_id,
        entry,
        facts=facts,
        outcomes=outcomes,
        authorities=authorities,
        legacy_waiting_user=legacy_waiting_user,
    ).evaluation


def oracle_candidates(
    provider: LoadedProvider,
    graph_id: str,
    entry: str = "default",
    *,
    facts: Any = None,
    outcomes: dict[str, Any] | None = None,
    authorities: list[str] | None = None,
    legacy_waiting_user: bool = False,
) -> list[dict[str, Any]]:
    """All candidates, ranked (§2.8), truncated ones included.

    Each is ``{routeId, graph, node, callPath, stateKey, availability,
    gateResolution}``; ``gateResolution`` is None for actions.
    """
    return oracle_run(
        provider,
        graph_id,
        entry,
        facts=facts,
        outcomes=outcomes,
        authorities=authorities,
        legacy_waiting_user=legacy_waiting_user,
    ).candidates


# --- route resources (§3.2, §3.3, §3.5) -------------------------------------------


def _resolve_contained(root: Path, reference: str) -> Path:
    """``resolveContainedPath``: ``resolve(root, reference)``, refusing what escapes it."""
    if os.path.isabs(reference):
        message = f"resource reference must be relative: {reference}"
        raise AgentGraphError("absolute-path-forbidden", message)
    base = os.path.abspath(root)
    resolved = os.path.normpath(os.path.join(base, reference))
    rel = os.path.relpath(resolved, base)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        message = f"resource reference escapes the provider root: {reference}"
        raise AgentGraphError("path-outside-provider", message)
    return Path(resolved)


def _location(resource: LoadedResource, revision: str | None) -> dict[str, Any]:
    """``locateLoadedResource`` without the location schema identity (0.2 had one, we have
    three): a static one names its content file and that file's digest."""
    if resource.dynamic:
        location: dict[str, Any] = {
            "id": resource.id,
            "kind": resource.kind,
            "mediaType": resource.media_type,
        }
        if revision:
            location["revision"] = revision
        location["materialize"] = {"resourceId": resource.id}
        return location
    content = Path(resource.content_path)
    return {
        "id": resource.id,
        "kind": resource.kind,
        "mediaType": resource.media_type,
        "digest": "sha256:" + hashlib.sha256(content.read_bytes()).hexdigest(),
        "filePath": str(content),
    }


def oracle_locate_resource(
    provider: LoadedProvider,
    reference: str,
    revision: str | None = None,
    features: set[str] | None = None,
) -> dict[str, Any]:
    """``locateResource(provider, referenceOrId, revision)``: the first loaded resource (in
    load order) whose id is exactly ``reference``; else the one loaded from the contained
    path ``reference`` names (the descriptor or Markdown file, never a content file)."""
    by_id = next((x for x in provider.resources.values() if x.id == reference), None)
    found = by_id
    if found is None:
        found = provider.resources.get(_resolve_contained(provider.root, reference))
    if found is None:
        message = f"Provider {provider.id} has no resource {reference}"
        raise AgentGraphError("resource-missing", message)
    if features is not None:
        _note_lookup(provider, reference, by_id, features)
    return _location(found, revision)


def _note_lookup(
    provider: LoadedProvider, reference: str, by_id: LoadedResource | None, features: set[str]
) -> None:
    """Which lookup case a reference exercised (for the generator's coverage test)."""
    at_path = provider.resources.get(_resolve_contained(provider.root, reference))
    if by_id is None:
        features.add("path-spelled" if reference.startswith("./") else "path")
        target = os.path.normpath(reference)
        if any(os.path.normpath(x.id) == target for x in provider.resources.values()):
            features.add("path-over-id-spelled-otherwise")
        return
    features.add("id-own-path" if at_path is by_id else "id-over-path")
    if reference.startswith("./"):
        features.add("id-spelled")
    catalog = provider.catalog
    if catalog is not None and any(by_id is doc for doc in catalog.documents.values()):
        features.add("id-of-catalog-document")


def oracle_route_resources(
    provider: LoadedProvider,
    candidate: dict[str, Any],
    revision: str,
    features: set[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """``resourcesForCandidate``: the Route ``resources`` of one candidate (as returned by
    :func:`oracle_candidates`). A gate resolved by ``session-authority`` that declares
    ``delegated.resources`` uses those lists wholesale, anything else the node's own."""
    seen = features if features is not None else set()
    graph = provider.graphs[candidate["graph"]]
    node = _node_by_id(graph, candidate["node"])
    assert node is not None
    selected = node.get("resources")
    delegated = node.get("delegated")
    if (
        node["kind"] == "gate"
        and candidate["gateResolution"] == "session-authority"
        and delegated is not None
        and delegated.get("resources") is not None
    ):
        selected = delegated["resources"]
        seen.add("delegated-resources")
    selected = selected or {}
    if node["kind"] == "action":
        action_path = _resolve_contained(provider.root, node["action"])
        action = provider.actions[action_path].definition
        # the Skill of an agent action comes first; the generator writes none
        assert action["runner"] != "agent", "agent actions are not transcribed here"
    return {
        name: [
            oracle_locate_resource(provider, reference, revision, seen)
            for reference in selected.get(name, [])
        ]
        for name in ("required", "recommended")
    }


def oracle_code_document(provider: LoadedProvider, code: str) -> dict[str, Any] | None:
    """The ``document`` of ``locateCode``: the loader loads each entry's ``document`` by its
    contained path and keeps that resource (``codeCatalog.documents.set(code, resource)``),
    so a catalog document is never looked up by id."""
    catalog = provider.catalog
    assert catalog is not None
    entry = catalog.entries[code]
    if "document" not in entry:
        return None
    return _location(provider.resources[_resolve_contained(provider.root, entry["document"])], None)
