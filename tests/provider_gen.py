"""Seeded random Providers and routing states for the differential test.

``generate_case(rng, tmp_dir)`` writes a small-to-medium valid Provider under
``tmp_dir`` and returns its manifest path with a list of states to evaluate.
Everything is decided by ``rng``, so a seed reproduces a case byte for byte
(file contents, ids, states), which is what lets tests pin reference results
per seed.

What the Providers contain (all within the static validation rules, §1.2):

* 1–4 graphs; a graph may call only graphs generated after it, so subgraph
  calls form a DAG; 2–40 nodes each, of all four kinds;
* non-repeat edges (flow/consumes/requires/gatedBy, random outcome lists) that
  only go "forward" in a hidden topological order, while declaration order is
  shuffled (the round algorithm is sensitive to declaration order);
* repeat edges onto actions and gates, self loops included;
* random ``join`` all/any, priorities, descriptions, ``requiresFacts`` and
  ``satisfiedBy`` with ``exists``/``equals`` over a small fact vocabulary whose
  values mix types (``true``/``1``/``"1"``/``1.0``/``null``, and ``-0.0`` in
  facts; in graph files only with ``negative_zero_checks``);
* gates with or without authority and ``delegatable``;
* sometimes a code catalog, which then declares every reason code;
* with ``resources=True`` only (off by default, so the pinned per-seed digests of
  ``test_oracle`` keep their Providers): resource files (Markdown, ``resource.file.v1``
  and legacy ``resource.v1`` descriptors, a ``graph-action`` context view) whose ids
  are often path-like: another resource's path, their own path, the path of a file
  nobody loads, or a ``./`` spelling of a path. Action and gate nodes (and delegated
  gate policies) list them, sometimes spelled ``./<path>``, and catalog entries
  name some as their ``document``, so references collide with ids the way the
  reference's ``locateResource`` (id first, then path) resolves.

The states mix walks (evaluate with the oracle, record an outcome for one of
the candidates, repeat) and random assignments over every real state key,
including child keys through call paths (``main/sub>child/x``), bare child keys
that must be ignored, records ``{outcome, recordedAt}``, unsorted duplicated
authorities and noise facts with non-ASCII keys.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from agent_graph.compiler import load_provider
from agent_graph.compiler.provider.model import LoadedProvider
from agent_graph.ir.records import OUTCOMES
from oracle_eval import MISSING, get_fact, oracle_candidates
from tree_support import write_json as _write

__all__ = [
    "BROKEN_CASES",
    "OUTCOMES",
    "RUN_LOG_SHAPES",
    "Case",
    "State",
    "broken_test_case",
    "foreign_run",
    "generate_case",
    "state_keys",
]

# Recorded outcomes as a host would mostly report them.
_RECORD_WEIGHTS = (50, 12, 12, 4, 5, 3, 5, 9)
AUTHORITIES = ("ops", "review", "lead")
_FACT_PATHS = ("ready", "mode", "count", "env.name", "env.ok", "items.0", "items.1.id", "flag")
_EQUALS_VALUES: tuple[Any, ...] = (True, False, 1, 0, 1.0, -0.0, "x", "y", "1", None)
_OUTCOME_LISTS: tuple[tuple[str, ...], ...] = (
    ("completed",),
    ("failed",),
    ("partial",),
    ("completed", "partial"),
    ("failed", "blocked"),
    ("waiting-user",),
    ("skipped", "completed"),
)


class State(NamedTuple):
    """One evaluation input: root graph, entry and the host-supplied state.

    A tuple, so ``graph, entry, facts, outcomes, authorities = state`` works.
    """

    graph: str
    entry: str
    facts: dict[str, Any]
    outcomes: dict[str, Any]
    authorities: list[str]

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``oracle_evaluate`` and friends."""
        return {"facts": self.facts, "outcomes": self.outcomes, "authorities": self.authorities}

    def outcome_strings(self) -> dict[str, str]:
        """Outcomes with records reduced to their outcome (what the CLI accepts)."""
        return {k: v if isinstance(v, str) else v["outcome"] for k, v in self.outcomes.items()}


@dataclass
class Case:
    """A written Provider (``manifest`` is its absolute path) and the states to evaluate."""

    manifest: Path
    states: list[State]
    graph_ids: list[str] = field(default_factory=list)


# --- Provider -------------------------------------------------------------------


def _is_negative_zero(value: Any) -> bool:
    return isinstance(value, float) and value == 0 and math.copysign(1.0, value) < 0


def _fact_check(rng: random.Random, world: dict[str, Any], negative_zero: bool) -> dict[str, Any]:
    """A check that mostly holds in ``world`` (the facts most states start from)."""
    path = rng.choice(_FACT_PATHS)
    if rng.random() < 0.65:
        present = [p for p in _FACT_PATHS if get_fact(world, p) is not MISSING]
        if present:
            path = rng.choice(present)
            value = get_fact(world, path)
            scalar = value is None or isinstance(value, (bool, int, float, str))
            if scalar and (negative_zero or not _is_negative_zero(value)) and rng.random() < 0.5:
                return {"path": path, "equals": value}
            return {"path": path, "exists": True}
    if rng.random() < 0.4:
        return {"path": path, "exists": rng.random() < 0.6}
    value = rng.choice(_EQUALS_VALUES)
    if _is_negative_zero(value) and not negative_zero:
        value = 0
    return {"path": path, "equals": value}


def _outcome_list(rng: random.Random) -> list[str] | None:
    roll = rng.random()
    if roll < 0.45:
        return None  # the default [completed]
    if roll < 0.85:
        return list(rng.choice(_OUTCOME_LISTS))
    return rng.sample(OUTCOMES, rng.randint(1, 3))


def _node_id(rng: random.Random, kind: str, k: int) -> str:
    stem = {"action": "a", "gate": "gate", "subgraph": "sub", "terminal": "end"}[kind]
    roll = rng.random()
    if roll < 0.1:
        return f"{stem}.{k}"
    if roll < 0.15:
        return f"{stem}/{k}"
    return f"{stem}{k}"


def _graph(
    rng: random.Random,
    gid: str,
    children: list[tuple[str, list[str]]],
    actions: list[str],
    world: dict[str, Any],
    negative_zero: bool,
) -> dict[str, Any]:
    n = rng.choice((rng.randint(2, 8), rng.randint(2, 16), rng.randint(2, 40)))
    kinds: list[str] = ["terminal"] * rng.randint(1, max(1, n // 4))
    if children:
        kinds += ["subgraph"] * min(rng.randint(0, 3), n - len(kinds))
    while len(kinds) < n:
        kinds.append("gate" if rng.random() < 0.22 else "action")
    kinds = kinds[:n]
    rng.shuffle(kinds)
    # Terminals mostly late in the topological order, as in real graphs.
    if rng.random() < 0.7:
        kinds.sort(key=lambda k: (k == "terminal") and rng.random() < 0.8)
    nodes: list[dict[str, Any]] = []
    for k, kind in enumerate(kinds):
        node: dict[str, Any] = {"id": _node_id(rng, kind, k), "kind": kind}
        if rng.random() < 0.3:
            node["description"] = f"Step {k} of {gid}"
        if kind in ("action", "gate"):
            node["reasonCode"] = f"route.{gid}.{kind}-{rng.randint(0, 3)}"
        if rng.random() < 0.35:
            node["priority"] = rng.choice((rng.randint(-3, 3), rng.randint(-3, 3), 1000, -1000))
        if kind == "action":
            node["action"] = rng.choice(actions)
        elif kind == "gate":
            gate: dict[str, Any] = {"id": f"gate-{k}", "prompt": f"Decide step {k}."}
            if rng.random() < 0.65:
                gate["authority"] = rng.choice(AUTHORITIES)
            roll = rng.random()
            if roll < 0.55:
                gate["delegatable"] = True
            elif roll < 0.7:
                gate["delegatable"] = False
            node["gate"] = gate
        elif kind == "subgraph":
            child, entries = rng.choice(children)
            node["graph"] = child
            node["entry"] = rng.choice(entries)
        else:
            node["terminalOutcome"] = rng.choice(
                ("completed", "completed", "completed", "failed", "partial", "skipped", "blocked")
            )
        if rng.random() < 0.12:
            node["requiresFacts"] = [
                _fact_check(rng, world, negative_zero) for _ in range(rng.randint(0, 2))
            ]
        if kind in ("action", "gate") and rng.random() < 0.15:
            node["satisfiedBy"] = [
                _fact_check(rng, world, negative_zero) for _ in range(rng.randint(1, 2))
            ]
        nodes.append(node)

    edges: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add_edge(src: int, dst: int, kind: str | None, outcomes: list[str] | None) -> None:
        key_outcomes = ",".join(outcomes or ["completed"])
        key = f"{kind or 'flow'}:{nodes[src]['id']}:{nodes[dst]['id']}:{key_outcomes}"
        if key in seen:
            return
        seen.add(key)
        edge: dict[str, Any] = {"from": nodes[src]["id"], "to": nodes[dst]["id"]}
        if outcomes is not None:
            edge["outcomes"] = outcomes
        if kind is not None:
            edge["kind"] = kind
        edges.append(edge)

    for src in range(n):
        if kinds[src] == "terminal" or src == n - 1:
            continue
        span = n - 1 - src
        if rng.random() < 0.12 and span >= 5:
            # A wide fan-out: many routes at once (ranking, truncation).
            pool = list(range(src + 1, n))
            if rng.random() < 0.6:
                pool = [i for i in pool if kinds[i] != "terminal"] or pool
            targets = rng.sample(pool, min(len(pool), rng.randint(5, 9)))
        else:
            targets = [
                src
                + 1
                + (rng.randrange(span) if rng.random() < 0.3 else rng.randrange(min(span, 4)))
                for _ in range(0 if rng.random() < 0.08 else rng.choice((1, 1, 2, 2, 3)))
            ]
        for position, dst in enumerate(targets):
            kind_roll = rng.random()
            edge_kind: str | None = None
            if kinds[src] == "gate" and kind_roll < 0.3:
                edge_kind = "gatedBy"
            elif kind_roll < 0.4:
                edge_kind = rng.choice(("flow", "consumes", "requires"))
            # Most nodes move on when completed; the other edges branch on anything.
            first_default = position == 0 and rng.random() < 0.7
            add_edge(src, dst, edge_kind, None if first_default else _outcome_list(rng))
    # Motifs that random edges rarely produce. A fan-out where every branch
    # fires on the same outcome gives many routes at once (ranking and
    # truncation); a fork onto terminals with different outcomes gives
    # terminal-outcome-ambiguous.
    if rng.random() < 0.35 and n >= 6:
        src = 0 if kinds[0] != "terminal" else rng.randrange(n - 5)
        if kinds[src] != "terminal":
            pool = [i for i in range(src + 1, n) if kinds[i] != "terminal"]
            fan_outcomes = _outcome_list(rng) if rng.random() < 0.3 else None
            for dst in rng.sample(pool, min(len(pool), rng.randint(4, 9))):
                add_edge(src, dst, None, fan_outcomes)
    terminals = [i for i in range(n) if kinds[i] == "terminal"]
    if rng.random() < 0.5 and len(terminals) >= 2:
        t1, t2 = rng.sample(terminals, 2)
        sources = [i for i in range(min(t1, t2)) if kinds[i] != "terminal"]
        if sources:
            src = rng.choice(sources[:3])  # early nodes are reached more often
            fork_outcomes = _outcome_list(rng)
            add_edge(src, t1, None, fork_outcomes)
            add_edge(src, t2, None, fork_outcomes)
            if nodes[t1]["terminalOutcome"] == nodes[t2]["terminalOutcome"]:
                nodes[t2]["terminalOutcome"] = (
                    "failed" if nodes[t1]["terminalOutcome"] != "failed" else "completed"
                )

    repeatable = [i for i in range(n) if kinds[i] in ("action", "gate")]
    sources = [i for i in range(n) if kinds[i] != "terminal"]
    if repeatable and sources:
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            dst = rng.choice(repeatable)
            src = dst if rng.random() < 0.3 else rng.choice(sources)
            outcomes = rng.choice((None, ["partial"], ["failed"], ["partial", "failed"], None))
            add_edge(src, dst, "repeat", outcomes)
    rng.shuffle(edges)

    for dst in range(n):
        incoming = sum(
            1 for e in edges if e["to"] == nodes[dst]["id"] and e.get("kind") != "repeat"
        )
        if incoming >= 2 or rng.random() < 0.1:
            # Terminals collect many edges; with join all they are rarely reached.
            roll = rng.random() - (0.3 if kinds[dst] == "terminal" else 0.0)
            if roll < 0.45:
                nodes[dst]["join"] = "any"
            elif roll < 0.65:
                nodes[dst]["join"] = "all"

    entrypoints = {"default": nodes[0]["id"] if rng.random() < 0.85 else rng.choice(nodes)["id"]}
    if rng.random() < 0.35:
        entrypoints["alt"] = rng.choice(nodes)["id"]
    declared = list(nodes)
    if rng.random() < 0.75:
        rng.shuffle(declared)
    graph: dict[str, Any] = {"schema": "agent-graph.graph.v1", "id": gid}
    if rng.random() < 0.3:
        graph["description"] = f"Generated graph {gid}."
    graph["entrypoints"] = entrypoints
    graph["nodes"] = declared
    graph["edges"] = edges
    return graph


# --- resources (only with resources=True) ------------------------------------------


@dataclass
class _Resource:
    rel: str  # the file a reference names (Markdown file or descriptor)
    style: str  # "markdown", "file", "legacy" or "view"
    id: str = ""


def _resource_pool(rng: random.Random) -> list[_Resource]:
    """Resource files and their ids; ids are path-like often enough to collide."""
    pool: list[_Resource] = []
    for i in range(rng.randint(2, 6)):
        folder = rng.choice(("resources", "resources", "docs", "resources/deep"))
        roll = rng.random()
        if roll < 0.6:
            pool.append(_Resource(f"{folder}/r{i}.md", "markdown"))
        elif roll < 0.78:
            pool.append(_Resource(f"{folder}/r{i}.yaml", "file"))
        elif roll < 0.9:
            pool.append(_Resource(f"{folder}/r{i}.json", "legacy"))
        else:
            pool.append(_Resource(f"{folder}/view{i}.yaml", "view"))
    taken: set[str] = set()
    for i, resource in enumerate(pool):
        others = [x.rel for x in pool if x is not resource]
        roll = rng.random()
        if roll < 0.4 and others:
            ident = rng.choice(others)  # another resource's path: the collision
        elif roll < 0.5:
            ident = resource.rel
        elif roll < 0.58:
            ident = f"resources/ghost{i}.md"  # a path no file has
        elif roll < 0.68 and resource.style == "markdown":
            # frontmatter ids are not pattern-checked; this one equals a spelling
            ident = "./" + rng.choice([*others, resource.rel])
        else:
            ident = rng.choice((f"res.{i}", f"res/{i}", f"doc-{i}"))
        if ident in taken:
            ident = f"res.{i}.unique"
        taken.add(ident)
        resource.id = ident
    return pool


def _write_resources(root: Path, pool: list[_Resource], view_action: str) -> None:
    for i, resource in enumerate(pool):
        kind = ("procedure", "template", "diagnostic", "schema", "skill")[i % 5]
        if resource.style == "markdown":
            media = "" if i % 3 else "media-type: text/plain\n"
            text = f"---\nid: {json.dumps(resource.id)}\nkind: {kind}\n{media}---\nBody {i}.\n"
            (root / resource.rel).parent.mkdir(parents=True, exist_ok=True)
            (root / resource.rel).write_text(text, encoding="utf-8")
            continue
        descriptor: dict[str, Any] = {
            "schema": "agent-graph.resource.v1" if resource.style == "legacy" else "",
            "id": resource.id,
            "kind": kind,
            "mediaType": "text/plain",
        }
        if resource.style == "view":
            descriptor.update(
                schema="agent-graph.resource.graph-action.v1",
                kind="context-view",
                materializer=view_action,
            )
        else:
            if resource.style == "file":
                descriptor["schema"] = "agent-graph.resource.file.v1"
            content = f"content/r{i}.txt"
            (root / content).parent.mkdir(parents=True, exist_ok=True)
            (root / content).write_text(f"Content {i}.\n", encoding="utf-8")
            descriptor["path"] = content
        _write(root / resource.rel, descriptor)


def _reference(rng: random.Random, resource: _Resource) -> str:
    return "./" + resource.rel if rng.random() < 0.15 else resource.rel


def _resource_lists(rng: random.Random, pool: list[_Resource]) -> dict[str, Any]:
    lists: dict[str, Any] = {}
    for name in ("required", "recommended"):
        if rng.random() < 0.75:
            picked = rng.sample(pool, rng.randint(0, min(3, len(pool))))
            lists[name] = list(dict.fromkeys(_reference(rng, x) for x in picked))
    return lists


def _add_resources(
    rng: random.Random, graphs: dict[str, dict[str, Any]], pool: list[_Resource]
) -> None:
    """List pool resources on action and gate nodes (and delegated gate policies)."""
    for gid in sorted(graphs):
        for node in graphs[gid]["nodes"]:
            if node["kind"] not in ("action", "gate"):
                continue
            if rng.random() < 0.55:
                node["resources"] = _resource_lists(rng, pool)
            gate = node.get("gate") or {}
            delegatable = gate.get("delegatable") is True and "authority" in gate
            if delegatable and rng.random() < 0.5:
                node["delegated"] = {"resources": _resource_lists(rng, pool)}


def _write_provider(
    rng: random.Random,
    root: Path,
    world: dict[str, Any],
    negative_zero: bool,
    resources: bool = False,
) -> tuple[Path, list[str]]:
    graph_count = rng.choice((1, 2, 2, 3, 3, 4))
    prefix = rng.choice(("g", "g", "flow.", "team/"))
    gids = [f"{prefix}{i}" for i in range(graph_count)]
    actions: list[str] = []
    for i in range(rng.randint(1, 3)):
        rel = f"actions/act{i}.json" if rng.random() < 0.5 else f"actions/act{i}.yaml"
        action: dict[str, Any] = {"schema": "agent-graph.action.v1", "id": f"act{i}"}
        if rng.random() < 0.5:
            action.update(runner="host", effect="write", handler=f"gen.handler-{i}")
        else:
            action.update(runner="command", effect="read", command=f"echo step {i}")
        _write(root / rel, action)
        actions.append(rel)
    graphs: dict[str, dict[str, Any]] = {}
    entries: dict[str, list[str]] = {}
    for i in reversed(range(graph_count)):  # children first, so callers know their entries
        children = [(gids[j], entries[gids[j]]) for j in range(i + 1, graph_count)]
        graph = _graph(rng, gids[i], children, actions, world, negative_zero)
        graphs[gids[i]] = graph
        entries[gids[i]] = list(graph["entrypoints"])
    pool: list[_Resource] = []
    if resources:  # every draw for resources comes after the graphs' own draws
        pool = _resource_pool(rng)
        view_action = "actions/view.yaml"
        if any(x.style == "view" for x in pool):
            view = {"schema": "agent-graph.action.v1", "id": "view", "runner": "command"}
            _write(root / view_action, {**view, "effect": "read", "command": "echo view"})
        _write_resources(root, pool, view_action)
        _add_resources(rng, graphs, pool)
    graph_files: list[str] = []
    for i, gid in enumerate(gids):
        rel = f"graphs/graph{i}.{rng.choice(('yaml', 'json'))}"
        _write(root / rel, graphs[gid])
        graph_files.append(rel)
    manifest: dict[str, Any] = {
        "schema": "agent-graph.provider.v1",
        "id": f"gen.case-{rng.randint(0, 9999)}",
        "version": f"0.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        "graphs": graph_files,
    }
    if rng.random() < 0.5:
        codes = sorted(
            {
                node["reasonCode"]
                for graph in graphs.values()
                for node in graph["nodes"]
                if "reasonCode" in node
            }
        )
        catalog: list[dict[str, Any]] = [
            {"code": code, "kind": "route-reason", "summary": f"Hint for {code}."} for code in codes
        ]
        catalog.append({"code": "gen.diagnostic", "kind": "diagnostic", "summary": "Unused."})
        static = [x for x in pool if x.style != "view"]
        if static:
            # documents are found by path; one only a catalog names still has an id
            # that node references may match
            for entry in catalog:
                if rng.random() < 0.4:
                    entry["document"] = _reference(rng, rng.choice(static))
        rng.shuffle(catalog)
        _write(root / "codes.yaml", {"schema": "agent-graph.code-catalog.v1", "codes": catalog})
        manifest["catalogs"] = {"codes": "codes.yaml"}
    path = root / "provider.yaml"
    _write(path, manifest)
    return path, gids


# --- states ---------------------------------------------------------------------


def _keyed_nodes(
    provider: LoadedProvider, graph_id: str, limit: int = 2000
) -> list[tuple[str, str, str]]:
    """(state key, graph id, node id) for every node reachable through subgraph calls."""
    found: list[tuple[str, str, str]] = []
    stack: list[tuple[str, list[str]]] = [(graph_id, [])]
    while stack and len(found) < limit:
        gid, call_path = stack.pop()
        frame = gid if not call_path else ">".join(call_path) + ">" + gid
        for node in provider.graphs[gid].definition["nodes"]:
            found.append((f"{frame}/{node['id']}", gid, node["id"]))
            if node["kind"] == "subgraph":
                stack.append((node["graph"], [*call_path, f"{gid}/{node['id']}"]))
    return found


def state_keys(provider: LoadedProvider, graph_id: str, limit: int = 2000) -> list[str]:
    """Every state key reachable from ``graph_id`` through subgraph calls (any entry)."""
    return [key for key, _, _ in _keyed_nodes(provider, graph_id, limit)]


def _random_facts(rng: random.Random) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    scalars = _EQUALS_VALUES
    if rng.random() < 0.6:
        facts["ready"] = rng.choice((True, False, 1, "true", None))
    if rng.random() < 0.5:
        facts["mode"] = rng.choice(("x", "y", 1, "1"))
    if rng.random() < 0.5:
        facts["count"] = rng.choice((0, -0.0, 1, 1.0, 2))
    if rng.random() < 0.5:
        facts["flag"] = rng.choice(scalars)
    if rng.random() < 0.5:
        env_roll = rng.random()
        if env_roll < 0.7:
            env: dict[str, Any] = {}
            if rng.random() < 0.7:
                env["name"] = rng.choice(scalars)
            if rng.random() < 0.7:
                env["ok"] = rng.choice(scalars)
            facts["env"] = env
        else:
            facts["env"] = rng.choice((None, "env", []))
    if rng.random() < 0.4:
        items_roll = rng.random()
        if items_roll < 0.5:
            facts["items"] = [rng.choice(scalars), {"id": rng.choice(scalars)}][: rng.randint(0, 2)]
        elif items_roll < 0.8:
            facts["items"] = {"0": rng.choice(scalars), "1": {"id": rng.choice(scalars)}}
        else:
            facts["items"] = rng.choice((None, "items", 3))
    if rng.random() < 0.2:
        # Noise that only moves the revision: non-ASCII and mixed-case keys.
        for key in rng.sample(("é", "Zeta", "alpha", "Ωmega", "中文", "b_2", "B-1"), 2):
            facts[key] = {"nested": [1, 2.5, "ü"]} if rng.random() < 0.3 else rng.choice(scalars)
    return facts


def _copy(value: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(value))
    return copied


def _state_facts(rng: random.Random, world: dict[str, Any]) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.55:
        return _copy(world)
    if roll < 0.7 and world:
        facts = _copy(world)
        key = rng.choice(sorted(facts))
        if rng.random() < 0.5:
            del facts[key]
        else:
            facts[key] = rng.choice(_EQUALS_VALUES)
        return facts
    if roll < 0.85:
        return {}
    return _random_facts(rng)


def _record(rng: random.Random, outcome: str) -> Any:
    if rng.random() < 0.25:
        record: dict[str, Any] = {
            "outcome": outcome,
            "recordedAt": f"2025-03-0{rng.randint(1, 9)}T10:00:00Z",
        }
        if rng.random() < 0.3:
            record["detail"] = {"note": "generated"}
        return record
    return outcome


def _random_outcome(rng: random.Random) -> str:
    return rng.choices(OUTCOMES, weights=_RECORD_WEIGHTS)[0]


def _authorities(rng: random.Random) -> list[str]:
    roll = rng.random()
    if roll < 0.45:
        return []
    picked = [rng.choice(AUTHORITIES) for _ in range(rng.randint(1, 4))]
    return picked  # duplicates and any order on purpose


def _pick_root(rng: random.Random, provider: LoadedProvider, gids: list[str]) -> tuple[str, str]:
    gid = gids[0] if rng.random() < 0.7 else rng.choice(gids)
    entries = list(provider.graphs[gid].definition["entrypoints"])
    roll = rng.random()
    if roll < 0.03:
        return gid, "nope"
    return gid, entries[0] if roll < 0.8 else rng.choice(entries)


def _progress_outcome(
    rng: random.Random, provider: LoadedProvider, graph_id: str, node_id: str
) -> str | None:
    """An outcome that fires one of the node's outgoing edges, if it has any."""
    fired = [
        outcome
        for edge in provider.graphs[graph_id].definition["edges"]
        if edge["from"] == node_id
        for outcome in edge.get("outcomes", ["completed"])
    ]
    return rng.choice(fired) if fired else None


def _walk(
    rng: random.Random,
    provider: LoadedProvider,
    world: dict[str, Any],
    gid: str,
    entry: str,
    out: list[State],
) -> None:
    """Follow candidates like a host would, snapshotting some intermediate states."""
    facts = _state_facts(rng, world)
    authorities = _authorities(rng)
    outcomes: dict[str, Any] = {}
    for _ in range(rng.randint(1, 14)):
        candidates = oracle_candidates(
            provider, gid, entry, facts=facts, outcomes=outcomes, authorities=authorities
        )
        if not candidates:
            break
        chosen = candidates[0] if rng.random() < 0.5 else rng.choice(candidates)
        outcome = _random_outcome(rng)
        if rng.random() < 0.6:
            outcome = _progress_outcome(rng, provider, chosen["graph"], chosen["node"]) or outcome
        outcomes[chosen["stateKey"]] = _record(rng, outcome)
        if rng.random() < 0.08:
            facts = _state_facts(rng, world)
        if rng.random() < 0.45:
            out.append(State(gid, entry, dict(facts), dict(outcomes), list(authorities)))
    out.append(State(gid, entry, facts, outcomes, authorities))


def _random_state(
    rng: random.Random, provider: LoadedProvider, world: dict[str, Any], gid: str, entry: str
) -> State:
    """Outcomes over every real state key; often ones that fire edges, to reach far."""
    keyed = _keyed_nodes(provider, gid)
    outcomes: dict[str, Any] = {}
    density = rng.choice((0.1, 0.3, 0.6, 0.9, 1.0))
    progress = rng.choice((0.0, 0.5, 0.9))
    for key, graph_id, node_id in keyed:
        if rng.random() >= density:
            continue
        outcome = _random_outcome(rng)
        if rng.random() < progress:
            outcome = _progress_outcome(rng, provider, graph_id, node_id) or outcome
        outcomes[key] = _record(rng, outcome)
    if rng.random() < 0.2 and keyed:
        # A child node under its bare key is ignored; unknown keys only move the revision.
        bare = rng.choice(keyed)[0].rsplit(">", 1)[-1]
        outcomes[bare] = _random_outcome(rng)
        outcomes["zz/unknown"] = "completed"
    return State(gid, entry, _state_facts(rng, world), outcomes, _authorities(rng))


def generate_case(
    rng: random.Random,
    tmp_dir: Path,
    *,
    negative_zero_checks: bool = False,
    resources: bool = False,
) -> Case:
    """Write a random valid Provider under ``tmp_dir`` and return it with states.

    ``tmp_dir`` should be empty (it is created if missing). The Provider passes
    ``load_provider`` (and the reference's ``validate``).

    Facts always mix ``0`` and ``-0.0``; ``negative_zero_checks`` also writes
    ``equals: -0.0`` into graph files. It is off by default only because the
    source loaders currently read ``-0.0`` as ``0`` (the reference keeps -0);
    turn it on once they keep the sign.

    ``resources`` adds resource files with colliding path-like ids (see the module
    docstring); without it no resource is written and no draw is spent on them.
    """
    tmp_dir.mkdir(parents=True, exist_ok=True)
    world = _random_facts(rng)
    manifest, gids = _write_provider(rng, tmp_dir, world, negative_zero_checks, resources)
    provider = load_provider(manifest)
    states: list[State] = [State(gids[0], "default", {}, {}, [])]
    for _ in range(rng.randint(2, 4)):
        gid, entry = _pick_root(rng, provider, gids)
        _walk(rng, provider, world, gid, entry, states)
    for _ in range(rng.randint(2, 5)):
        gid, entry = _pick_root(rng, provider, gids)
        states.append(_random_state(rng, provider, world, gid, entry))
    return Case(manifest, states, gids)


# --- what other hosts write: Run files and broken graph test cases ---------------

#: Event logs a schema-valid Run may have that a host other than agc may write.
RUN_LOG_SHAPES = ("started", "empty", "no-start", "late-start", "with-detail")
_AT = "2025-03-01T10:00:00.000Z"


def _run_outcome(rng: random.Random, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    record: dict[str, Any] = {"outcome": value, "recordedAt": _AT}
    if rng.random() < 0.2:
        record["detail"] = {"by": "another host", "n": rng.randint(0, 9)}
    return record


def foreign_run(rng: random.Random, provider_id: str, state: State, shape: str) -> dict[str, Any]:
    """An ``agent-graph.run.v1`` document of ``state`` as another host may write it.

    Valid against the Run schema, whatever ``shape`` (one of :data:`RUN_LOG_SHAPES`):
    the log is agc's own (``started``), empty, without ``run.started`` (``no-start``),
    numbered from a later sequence (``late-start``: older events pruned) or with a
    ``detail`` of any JSON on every event (``with-detail``).
    """
    outcomes = {key: _run_outcome(rng, value) for key, value in state.outcomes.items()}
    recorded = [
        {"type": "node.outcome-recorded", "node": key, "outcome": record["outcome"]}
        for key, record in outcomes.items()
    ]
    if shape == "empty":
        events: list[dict[str, Any]] = []
    elif shape == "no-start":
        events = [{"type": "facts.updated", "detail": {"keys": sorted(state.facts)}}, *recorded]
    else:
        events = [{"type": "run.started"}, *recorded]
    first = rng.randint(2, 40) if shape == "late-start" else 1
    for number, event in enumerate(events, first):
        event["sequence"] = number
        event["at"] = _AT
        if shape == "with-detail":
            event["detail"] = rng.choice(({}, [], None, 0, "x", {"nested": {"a": [1, None]}}))
    events = [
        {k: event[k] for k in ("sequence", "at", "type", "node", "outcome", "detail") if k in event}
        for event in events
    ]
    return {
        "schema": "agent-graph.run.v1",
        "id": f"run-{rng.randrange(16**8):08x}",
        "provider": provider_id,
        "graph": state.graph,
        "entry": state.entry,
        "createdAt": _AT,
        "updatedAt": _AT,
        "facts": state.facts,
        "outcomes": outcomes,
        "authorities": sorted(set(state.authorities)),
        "events": events,
    }


#: Graph test cases that cannot run, and what the reference answers for each.
BROKEN_CASES = ("no-expect", "unknown-graph", "bad-outcome", "unknown-entry")


def broken_test_case(rng: random.Random, state: State, kind: str) -> dict[str, Any]:
    """A graph test case of ``state``'s Graph broken as ``kind`` says (:data:`BROKEN_CASES`).

    ``no-expect`` and ``bad-outcome`` are schema-invalid, ``unknown-graph`` names a
    Graph the Provider lacks: each a command error in the reference. ``unknown-entry``
    is not broken for the reference: it evaluates to status ``error`` (a failed case).
    """
    case: dict[str, Any] = {
        "schema": "agent-graph.test.v1",
        "name": f"{kind} {rng.randrange(1000)}",
        "graph": state.graph,
        "entry": state.entry,
        "state": {"outcomes": state.outcome_strings()},
        "expect": {"statusCode": "actionable"},
    }
    if kind == "no-expect":
        del case["expect"]
    elif kind == "unknown-graph":
        case["graph"] = f"zz-missing-{rng.randrange(100)}"
    elif kind == "bad-outcome":
        case["state"]["outcomes"]["zz/x"] = "finished"
    elif kind == "unknown-entry":
        case["entry"] = "zz-nowhere"
    return case
