"""A :class:`~.model.Picture` as Graphviz DOT (``dot -Tsvg`` draws it).

Strings are always quoted with ``"`` and ``\\`` escaped, so user text never becomes
DOT syntax; a label's lines are joined with ``\\n`` (centred). Clusters are DOT
``cluster_`` subgraphs. Layout is Graphviz's own: nothing here positions a node.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import Cluster, Edge, Node, Picture
from .style import (
    ALTERNATIVE_WIDTH,
    FIRED,
    FONTS,
    LOOKS,
    PRIMARY_STROKE,
    PRIMARY_WIDTH,
    UNFIRED,
    diamond_lines,
    legend,
)

_SHAPES: dict[str, str] = {
    "action": 'shape=box, style="rounded,filled"',
    "gate": 'shape=diamond, style="filled"',
    "subgraph": 'shape=box, peripheries=2, style="filled"',
    "terminal": 'shape=ellipse, peripheries=2, style="filled"',
    "start": 'shape=circle, style="filled"',
    "finish": 'shape=doublecircle, style="filled"',
    "fork": 'shape=hexagon, style="filled"',
    "join": 'shape=hexagon, style="filled"',
    "call": 'shape=box, peripheries=2, style="rounded,filled"',
    "note": 'shape=note, style="filled"',
}


def quote(value: str) -> str:
    """A DOT double-quoted string holding ``value`` literally (one line)."""
    clean = "".join(c if c.isprintable() else " " for c in value)
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label(lines: list[str]) -> str:
    # each line escaped on its own, then joined by DOT's centred line break
    return "\\n".join(quote(line)[1:-1] for line in lines)


def _node(node: Node) -> str:
    lines = diamond_lines(node.lines) if node.shape == "gate" else node.lines
    attributes = [_SHAPES[node.shape], f'label="{_label(lines)}"']
    look = LOOKS.get(node.status or "")
    if look is not None:
        attributes.append(
            f'fillcolor="{look.fill}", color="{look.stroke}", fontcolor="{look.text}"'
        )
        if look.dashed:
            style = "rounded,filled,dashed" if node.shape in ("action", "call") else "filled,dashed"
            attributes.append(f'style="{style}"')
    else:
        attributes.append('fillcolor="#ffffff"')
    if node.emphasis == "primary":
        attributes.append(f'color="{PRIMARY_STROKE}", penwidth={PRIMARY_WIDTH}')
    elif node.emphasis == "alternative":
        attributes.append(f'color="{PRIMARY_STROKE}", penwidth={ALTERNATIVE_WIDTH}')
    return f"{node.id} [{', '.join(attributes)}];"


def _edge(edge: Edge, overlay: bool) -> str:
    attributes = []
    if edge.label:
        attributes.append(f"label={quote(edge.label)}")
    if edge.style in ("repeat", "intent", "call"):
        attributes.append("style=dashed")
    if edge.style == "repeat":
        attributes.append("constraint=false")  # a back edge must not pull the layout upwards
    if overlay:
        colour = FIRED if edge.fired else UNFIRED
        attributes.append(f'color="{colour}", fontcolor="{colour}"')
        if edge.fired:
            attributes.append("penwidth=2")
    tail = f" [{', '.join(attributes)}]" if attributes else ""
    return f"{edge.source} -> {edge.target}{tail};"


def _cluster(cluster: Cluster, nodes: dict[str, Node], indent: str) -> Iterator[str]:
    yield f"{indent}subgraph cluster_{cluster.id} {{"
    yield f"{indent}  label={quote(cluster.title)};"
    look = LOOKS.get(cluster.status or "")
    colour = look.stroke if look is not None else "#9e9e9e"
    yield f'{indent}  style="rounded,dashed"; color="{colour}"; fontcolor="{colour}";'
    for node_id in cluster.nodes:
        yield indent + "  " + _node(nodes[node_id])
    for inner in cluster.clusters:
        yield from _cluster(inner, nodes, indent + "  ")
    yield f"{indent}}}"


def render(picture: Picture) -> str:
    """The DOT text of ``picture`` (a ``digraph``), ending in a newline."""
    nodes = {node.id: node for node in picture.nodes}
    lines = [f"digraph {quote(picture.title)} {{"]
    lines += [f"  // {note}" for note in picture.notes if "\n" not in note]
    fonts = quote(FONTS)
    lines += [
        f"  graph [label={quote(picture.title)}, labelloc=t, fontname={fonts}, "
        "rankdir=TB, nodesep=0.3, ranksep=0.4];",
        f"  node [fontname={fonts}, fontsize=11];",
        f"  edge [fontname={fonts}, fontsize=9];",
    ]
    lines += ["  " + _node(nodes[node_id]) for node_id in picture.top]
    for cluster in picture.clusters:
        lines += _cluster(cluster, nodes, "  ")
    lines += ["  " + _edge(edge, picture.overlay) for edge in picture.edges]
    entries = legend(picture)
    if entries:  # a note at the bottom: drawn in the SVG, read in the DOT text
        text = _label(["Legend", *entries]).replace("\\n", "\\l") + "\\l"
        lines.append(
            f'  legend__ [shape=note, fontsize=9, color="#9e9e9e", fontcolor="#616161", '
            f'label="{text}"];'
        )
        lines.append("  { rank=sink; legend__; }")
    lines.append("}")
    return "\n".join(lines) + "\n"
