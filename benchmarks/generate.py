"""Generators of synthetic Providers for benchmarks (and large-input tests)."""

from __future__ import annotations

from pathlib import Path


def write_chain_provider(root: Path, nodes: int, *, graph_id: str = "chain") -> Path:
    """A Provider whose one graph is a chain of ``nodes`` action nodes ending in a terminal.

    All actions share one Action file and one Markdown procedure, as generated graphs
    usually do; the graph file is written as YAML block style.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "graphs").mkdir(exist_ok=True)
    (root / "actions").mkdir(exist_ok=True)
    (root / "resources").mkdir(exist_ok=True)
    (root / "provider.yaml").write_text(
        "schema: agent-graph.provider.v1\n"
        f"id: bench.{graph_id}\n"
        "version: 1.0.0\n"
        f"graphs: [graphs/{graph_id}.yaml]\n"
        "compatibility:\n  agentGraph: ^0.3.0\n",
        encoding="utf-8",
    )
    (root / "actions" / "step.yaml").write_text(
        "schema: agent-graph.action.v1\nid: step\nrunner: host\neffect: write\n"
        "handler: bench.step\n",
        encoding="utf-8",
    )
    (root / "resources" / "step.md").write_text(
        "---\nid: bench.step\nkind: procedure\nmedia-type: text/markdown\n---\n\nDo the step.\n",
        encoding="utf-8",
    )
    lines = [
        "schema: agent-graph.graph.v1",
        f"id: {graph_id}",
        "entrypoints:",
        "  default: n0",
        "nodes:",
    ]
    for i in range(nodes - 1):
        lines += [
            f"  - id: n{i}",
            "    kind: action",
            f"    reasonCode: route.bench.n{i}",
            "    action: actions/step.yaml",
            "    resources:",
            "      required: [resources/step.md]",
            "    satisfiedBy:",
            f"      - path: done.n{i}",
            "        exists: true",
        ]
    lines += ["  - id: end", "    kind: terminal", "    terminalOutcome: completed", "edges:"]
    for i in range(nodes - 2):
        lines.append(f"  - {{ from: n{i}, to: n{i + 1} }}")
    lines.append(f"  - {{ from: n{nodes - 2}, to: end }}")
    (root / "graphs" / f"{graph_id}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "provider.yaml"
