"""A :class:`~.model.Picture` as a Mermaid flowchart (pastes into GitHub Markdown).

Labels are always quoted, with the characters Mermaid would read as syntax or HTML
written as its entity codes (``#quot;``, ``#lt;`` …), so no node name can break the
chart. Line breaks inside a label are ``<br/>``.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import Cluster, Edge, Node, Picture
from .style import (
    ALTERNATIVE_WIDTH,
    FIRED,
    LOOKS,
    PRIMARY_STROKE,
    PRIMARY_WIDTH,
    UNFIRED,
    diamond_lines,
    legend,
)

#: Opening and closing brackets per shape (Mermaid's flowchart node shapes).
_SHAPES: dict[str, tuple[str, str]] = {
    "action": ("(", ")"),  # rounded rectangle
    "gate": ("{", "}"),  # rhombus: a decision
    "subgraph": ("[[", "]]"),  # subroutine
    "terminal": ("([", "])"),  # stadium
    "start": ("((", "))"),
    "finish": ("(((", ")))"),  # double circle
    "fork": ("{{", "}}"),  # hexagon
    "join": ("{{", "}}"),
    "call": ("[[", "]]"),
    "note": (">", "]"),  # asymmetric: a flag
}
#: Characters written as entity codes inside a quoted label.
_ENTITIES: dict[str, str] = {
    "#": "#35;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "&": "#amp;",
    "`": "#96;",
    "|": "#124;",
}
_TABLE = str.maketrans(_ENTITIES)


def text(value: str) -> str:
    """User text safe inside a quoted Mermaid label (one line; control characters dropped)."""
    clean = "".join(c if c.isprintable() else " " for c in value)
    return clean.translate(_TABLE)


def _comment(value: str) -> str:
    """A ``%%`` comment's text: one line, no braces (``%%{`` opens a Mermaid directive)."""
    return "".join(c if c.isprintable() and c not in "{}" else " " for c in value)


def _label(lines: list[str]) -> str:
    return '"' + "<br/>".join(text(line) for line in lines) + '"'


def _node(node: Node) -> str:
    opening, closing = _SHAPES[node.shape]
    lines = diamond_lines(node.lines) if node.shape == "gate" else node.lines
    return f"{node.id}{opening}{_label(lines)}{closing}"


def _edge(edge: Edge) -> str:
    arrow = "-.->" if edge.style in ("repeat", "intent", "call") else "-->"
    if edge.label:
        return f'{edge.source} {arrow}|"{text(edge.label)}"| {edge.target}'
    return f"{edge.source} {arrow} {edge.target}"


def _cluster(cluster: Cluster, nodes: dict[str, Node], indent: str) -> Iterator[str]:
    yield f'{indent}subgraph {cluster.id}["{text(cluster.title)}"]'
    for node_id in cluster.nodes:
        yield indent + "  " + _node(nodes[node_id])
    for inner in cluster.clusters:
        yield from _cluster(inner, nodes, indent + "  ")
    yield f"{indent}end"


def _classes(picture: Picture) -> Iterator[str]:
    by_class: dict[str, list[str]] = {}
    for node in picture.nodes:
        if node.status is not None:
            by_class.setdefault(node.status, []).append(node.id)
        if node.emphasis in ("primary", "alternative"):
            by_class.setdefault(node.emphasis, []).append(node.id)
    for name, ids in by_class.items():
        look = LOOKS.get(name)
        if look is not None:
            dash = ",stroke-dasharray:4 3" if look.dashed else ""
            style = f"fill:{look.fill},stroke:{look.stroke},color:{look.text}{dash}"
        elif name == "primary":
            style = f"stroke:{PRIMARY_STROKE},stroke-width:{PRIMARY_WIDTH}px"
        else:
            style = f"stroke:{PRIMARY_STROKE},stroke-width:{ALTERNATIVE_WIDTH}px"
        yield f"  classDef {_class_name(name)} {style}"
        yield f"  class {','.join(ids)} {_class_name(name)}"


def _class_name(status: str) -> str:
    return status.replace("-", "_")  # a class name is a Mermaid identifier


def _cluster_styles(clusters: list[Cluster]) -> Iterator[str]:
    for cluster in clusters:
        look = LOOKS.get(cluster.status or "")
        if look is not None:
            yield f"  style {cluster.id} fill:#fcfcfc,stroke:{look.stroke},color:{look.text}"
        yield from _cluster_styles(cluster.clusters)


def render(picture: Picture) -> str:
    """The Mermaid text of ``picture`` (``flowchart TD``), ending in a newline."""
    nodes = {node.id: node for node in picture.nodes}
    lines = ["flowchart TD"]
    lines += [f"  %% {_comment(note)}" for note in [picture.title, *picture.notes]]
    lines += [f"  %% legend: {_comment(entry)}" for entry in legend(picture)]
    lines += ["  " + _node(nodes[node_id]) for node_id in picture.top]
    for cluster in picture.clusters:
        lines += _cluster(cluster, nodes, "  ")
    lines += ["  " + _edge(edge) for edge in picture.edges]
    if picture.overlay:
        lines += _classes(picture)
        lines += _cluster_styles(picture.clusters)
        fired = [str(i) for i, edge in enumerate(picture.edges) if edge.fired]
        unfired = [str(i) for i, edge in enumerate(picture.edges) if not edge.fired]
        if fired:
            lines.append(f"  linkStyle {','.join(fired)} stroke:{FIRED},stroke-width:2px")
        if unfired:
            lines.append(f"  linkStyle {','.join(unfired)} stroke:{UNFIRED}")
    return "\n".join(lines) + "\n"
