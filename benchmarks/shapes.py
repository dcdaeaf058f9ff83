"""Benchmark Providers of several shapes, each with a worst-case routing state.

Every generator writes a Provider of about ``nodes`` nodes under ``root`` and returns a
:class:`Shape`: the manifest, the graph and entry to evaluate, a state chosen so the
evaluator has to walk the whole graph (almost everything done, the frontier at the far
end), and what the evaluation must then say, so a benchmark can check that the state
really drove the evaluator to the end instead of timing an early stop.

Shapes:

* ``chain``: one path ``n0 -> … -> end``; every node but the last is satisfied by a fact.
* ``wide``: ``start`` fans out to ``nodes - 3`` branches that all join (``join: all``)
  into one node; every branch is recorded completed, so the join node is the route.
* ``wide-open``: the same Provider with only ``start`` done: every branch is a candidate
  (route ids, ranking and truncation over thousands of candidates).
* ``layered``: a DAG of ten-node layers, each node feeding three nodes of the next layer
  (mixed ``join: all``/``any``); every layer but the last is completed.
* ``nested``: a tree of graphs (four subgraph calls per inner graph, depth ~log4 n), one
  frame per graph; everything is completed except the last leaf's last action.
* ``repeat``: a chain whose every node has a ``repeat`` edge back to its predecessor on
  ``failed``; every node is recorded failed, so every repeat edge fires.
* ``nested-deep`` (not in the default set): a chain of graphs each calling the next,
  ``nodes / 3`` frames deep. Call paths, and so state keys, grow with depth, so its cost
  is quadratic by protocol design; it probes recursion limits, not linearity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from generate import write_chain_provider

ACTION = "actions/step.yaml"


@dataclass(frozen=True)
class Shape:
    """A generated Provider plus the state the benchmark evaluates.

    ``nodes``: the number of declared nodes over all graphs. ``expect``: the evaluation's
    ``statusCode``; ``primary``: the primary route's node id (None to skip the check);
    ``candidates``: the number of ranked candidates (None to skip the check).
    """

    name: str
    manifest: Path
    graph: str
    entry: str
    nodes: int
    state: dict[str, Any]
    expect: str
    primary: str | None
    candidates: int | None = None
    notes: dict[str, Any] = field(default_factory=dict)


# -- writing ----------------------------------------------------------------------------


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    # every generated string is an id, a dotted path or a relative path: plain-safe
    return text


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def _node_lines(node: dict[str, Any]) -> list[str]:
    lines = []
    for i, (key, value) in enumerate(node.items()):
        lead = "  - " if i == 0 else "    "
        lines.append(f"{lead}{key}: {_flow(value)}")
    return lines


def graph_yaml(
    graph_id: str,
    entrypoints: dict[str, str],
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
) -> str:
    """A graph document: nodes in block style (as people write them), edges one a line."""
    lines = ["schema: agent-graph.graph.v1", f"id: {graph_id}", "entrypoints:"]
    lines += [f"  {name}: {node}" for name, node in entrypoints.items()]
    lines.append("nodes:")
    for node in nodes:
        lines += _node_lines(node)
    lines.append("edges:")
    lines += [f"  - {_flow(edge)}" for edge in edges]
    return "\n".join(lines) + "\n"


def write_provider(root: Path, provider_id: str, graphs: dict[str, str]) -> Path:
    """Write ``provider.yaml``, one shared Action and the given graph documents."""
    for sub in ("graphs", "actions"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    listed = ", ".join(f"graphs/{gid}.yaml" for gid in graphs)
    (root / "provider.yaml").write_text(
        "schema: agent-graph.provider.v1\n"
        f"id: bench.{provider_id}\n"
        "version: 1.0.0\n"
        f"graphs: [{listed}]\n"
        "compatibility:\n  agentGraph: ^0.3.0\n",
        encoding="utf-8",
    )
    (root / ACTION).write_text(
        "schema: agent-graph.action.v1\nid: step\nrunner: host\neffect: write\n"
        "handler: bench.step\n",
        encoding="utf-8",
    )
    for gid, text in graphs.items():
        (root / "graphs" / f"{gid}.yaml").write_text(text, encoding="utf-8")
    return root / "provider.yaml"


def _action(node_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": node_id,
        "kind": "action",
        "reasonCode": f"route.bench.{node_id}",
        "action": ACTION,
        **extra,
    }


def _terminal(node_id: str = "end", outcome: str = "completed") -> dict[str, Any]:
    return {"id": node_id, "kind": "terminal", "terminalOutcome": outcome}


# -- shapes -----------------------------------------------------------------------------


def chain(root: Path, nodes: int) -> Shape:
    manifest = write_chain_provider(root, nodes)
    last = nodes - 2  # n0 … n{nodes-2}, then end
    facts = {"done": {f"n{i}": True for i in range(last)}}
    return Shape(
        name="chain",
        manifest=manifest,
        graph="chain",
        entry="default",
        nodes=nodes,
        state={"facts": facts},
        expect="actionable",
        primary=f"n{last}",
        candidates=1,
    )


def _wide(root: Path, nodes: int) -> tuple[Path, int]:
    branches = max(nodes - 3, 1)
    graph_nodes = [_action("start")]
    graph_nodes += [_action(f"b{i}", priority=i % 7) for i in range(branches)]
    graph_nodes += [_action("join"), _terminal()]
    edges = [{"from": "start", "to": f"b{i}"} for i in range(branches)]
    edges += [{"from": f"b{i}", "to": "join"} for i in range(branches)]
    edges.append({"from": "join", "to": "end"})
    text = graph_yaml("wide", {"default": "start"}, graph_nodes, edges)
    return write_provider(root, "wide", {"wide": text}), branches


def wide(root: Path, nodes: int) -> Shape:
    manifest, branches = _wide(root, nodes)
    outcomes = {"wide/start": "completed"} | {f"wide/b{i}": "completed" for i in range(branches)}
    return Shape(
        name="wide",
        manifest=manifest,
        graph="wide",
        entry="default",
        nodes=branches + 3,
        state={"outcomes": outcomes},
        expect="actionable",
        primary="join",
        candidates=1,
    )


def wide_open(root: Path, nodes: int) -> Shape:
    manifest, branches = _wide(root, nodes)
    return Shape(
        name="wide-open",
        manifest=manifest,
        graph="wide",
        entry="default",
        nodes=branches + 3,
        state={"outcomes": {"wide/start": "completed"}},
        expect="actionable",
        primary=None,
        candidates=branches,
    )


def layered(root: Path, nodes: int, width: int = 10) -> Shape:
    width = min(width, max((nodes - 2) // 2, 1))
    body = nodes - 2
    layers = [min(width, body - start) for start in range(0, body, width)]
    graph_nodes = [_action("src")]
    edges: list[dict[str, Any]] = []
    for k, size in enumerate(layers):
        for j in range(size):
            extra = {"join": "any"} if j % 3 == 2 else {}
            graph_nodes.append(_action(f"l{k}x{j}", priority=(j * 7) % 5, **extra))
            if k == 0:
                edges.append({"from": "src", "to": f"l0x{j}"})
        if k + 1 < len(layers):
            following = layers[k + 1]
            edges += [
                {"from": f"l{k}x{j}", "to": f"l{k + 1}x{t}"}
                for j in range(size)
                for t in sorted({(j + d) % following for d in (0, 1, 3)})
            ]
    last = len(layers) - 1
    edges += [{"from": f"l{last}x{j}", "to": "end"} for j in range(layers[last])]
    graph_nodes.append(_terminal())
    manifest = write_provider(
        root, "layered", {"layered": graph_yaml("layered", {"default": "src"}, graph_nodes, edges)}
    )
    outcomes = {"layered/src": "completed"}
    for k, size in enumerate(layers[:-1]):
        outcomes |= {f"layered/l{k}x{j}": "completed" for j in range(size)}
    return Shape(
        name="layered",
        manifest=manifest,
        graph="layered",
        entry="default",
        nodes=len(graph_nodes),
        state={"outcomes": outcomes},
        expect="actionable",
        primary=None,
        candidates=layers[last],
        notes={"layers": len(layers), "width": width},
    )


def nested(root: Path, nodes: int, fanout: int = 4) -> Shape:
    """A tree of graphs: inner graphs ``s -> c0 -> … -> c{fanout-1} -> end`` where each
    ``ci`` calls its own child graph; leaves are ``s -> a -> end``."""
    children: dict[int, list[int]] = {0: []}
    total = 3  # the root starts as a leaf: s, a, end
    order = [0]  # graphs in creation order; expanded breadth first
    cursor = 0
    # turning a leaf into an inner graph: -a, +fanout call nodes, +fanout leaves of 3 nodes
    while cursor < len(order) and total + 4 * fanout - 1 <= nodes:
        g = order[cursor]
        cursor += 1
        for _ in range(fanout):
            child = len(children)
            children[child] = []
            children[g].append(child)
            order.append(child)
        total += 4 * fanout - 1
    pad = max(nodes - total, 0)  # extra actions on the last leaf's chain
    last_leaf = max(g for g, kids in children.items() if not kids)
    docs: dict[str, str] = {}
    for g, kids in children.items():
        gid = f"g{g}"
        if kids:
            graph_nodes = [_action("s")]
            graph_nodes += [
                {"id": f"c{i}", "kind": "subgraph", "graph": f"g{k}", "entry": "default"}
                for i, k in enumerate(kids)
            ]
            chain_ids = ["s", *(f"c{i}" for i in range(len(kids)))]
        else:
            extra = pad if g == last_leaf else 0
            chain_ids = ["s", "a", *(f"p{i}" for i in range(extra))]
            graph_nodes = [_action(n) for n in chain_ids]
        graph_nodes.append(_terminal())
        chain_ids.append("end")
        edges = [{"from": a, "to": b} for a, b in pairwise(chain_ids)]
        docs[gid] = graph_yaml(gid, {"default": "s"}, graph_nodes, edges)
    manifest = write_provider(root, "nested", docs)

    # complete every action of every frame except the last leaf's last action, which is
    # reached only after every other frame has completed (depth-first, last child last)
    outcomes: dict[str, str] = {}
    final = ""

    def visit(g: int, prefix: str) -> None:
        nonlocal final
        frame = f"{prefix}g{g}"
        kids = children[g]
        padding = [f"p{i}" for i in range(pad if g == last_leaf else 0)]
        actions = ["s"] if kids else ["s", "a", *padding]
        for a in actions:
            outcomes[f"{frame}/{a}"] = "completed"
        for i, k in enumerate(kids):
            visit(k, f"{frame}/c{i}>")
        if g == deepest_last:
            final = f"{frame}/{actions[-1]}"

    deepest_last = 0
    while children[deepest_last]:
        deepest_last = children[deepest_last][-1]
    visit(0, "")
    del outcomes[final]
    return Shape(
        name="nested",
        manifest=manifest,
        graph="g0",
        entry="default",
        nodes=sum(_count(d) for d in docs.values()),
        state={"outcomes": outcomes},
        expect="actionable",
        primary=final.rsplit("/", 1)[1],
        candidates=1,
        notes={"graphs": len(docs), "record": final},
    )


def _count(doc: str) -> int:
    return doc.count("\n  - id: ")


def nested_deep(root: Path, nodes: int) -> Shape:
    """Graph ``d{i}`` is ``s -> call -> end`` with ``call`` invoking ``d{i+1}``."""
    depth = max(nodes // 3, 1)
    docs = {}
    for i in range(depth):
        if i + 1 < depth:
            graph_nodes = [
                _action("s"),
                {"id": "call", "kind": "subgraph", "graph": f"d{i + 1}", "entry": "default"},
                _terminal(),
            ]
            edges = [{"from": "s", "to": "call"}, {"from": "call", "to": "end"}]
        else:
            graph_nodes = [_action("s"), _terminal()]
            edges = [{"from": "s", "to": "end"}]
        docs[f"d{i}"] = graph_yaml(f"d{i}", {"default": "s"}, graph_nodes, edges)
    manifest = write_provider(root, "deep", docs)
    outcomes = {}
    prefix = ""
    for i in range(depth - 1):
        outcomes[f"{prefix}d{i}/s"] = "completed"
        prefix += f"d{i}/call>"
    return Shape(
        name="nested-deep",
        manifest=manifest,
        graph="d0",
        entry="default",
        nodes=3 * depth - 1,
        state={"outcomes": outcomes},
        expect="actionable",
        primary="s",
        candidates=1,
        notes={"depth": depth},
    )


def repeat(root: Path, nodes: int) -> Shape:
    """``r0 -> … -> r{k-1} -> end`` on completed or failed, plus ``r{i} -> r{i-1}`` repeat
    edges on failed, declared interleaved with the flow edges."""
    k = max(nodes - 1, 2)
    graph_nodes = [_action(f"r{i}") for i in range(k)] + [_terminal()]
    edges: list[dict[str, Any]] = []
    for i in range(k):
        if i:
            edges.append(
                {"from": f"r{i}", "to": f"r{i - 1}", "kind": "repeat", "outcomes": ["failed"]}
            )
        if i + 1 < k:
            edges.append({"from": f"r{i}", "to": f"r{i + 1}", "outcomes": ["completed", "failed"]})
        else:  # the last failure must not end the graph: its frontier stays open
            edges.append({"from": f"r{i}", "to": "end"})
    manifest = write_provider(
        root, "repeat", {"repeat": graph_yaml("repeat", {"default": "r0"}, graph_nodes, edges)}
    )
    outcomes = {f"repeat/r{i}": "failed" for i in range(k)}
    # every node but the last is reset to pending by its successor's repeat edge
    return Shape(
        name="repeat",
        manifest=manifest,
        graph="repeat",
        entry="default",
        nodes=k + 1,
        state={"outcomes": outcomes},
        expect="actionable",
        primary=None,
        candidates=k - 1,
    )


SHAPES: dict[str, Callable[[Path, int], Shape]] = {
    "chain": chain,
    "wide": wide,
    "wide-open": wide_open,
    "layered": layered,
    "nested": nested,
    "repeat": repeat,
}
EXTRA_SHAPES: dict[str, Callable[[Path, int], Shape]] = {"nested-deep": nested_deep}
