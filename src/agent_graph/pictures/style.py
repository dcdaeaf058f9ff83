"""Colours and strokes of the overlay, shared by the Mermaid and Graphviz writers.

Every status is also written in the node's label, so a picture printed in grey (or
read by someone who does not tell these colours apart) still says it; colour only
speeds up the glance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from .model import Picture


class Look(NamedTuple):
    fill: str
    stroke: str
    text: str
    dashed: bool = False


LOOKS: Final[dict[str, Look]] = {
    "completed": Look("#d8f0dc", "#2e7d32", "#1b5e20"),
    "partial": Look("#fff4cc", "#b58900", "#5c4400"),
    "failed": Look("#f9d6d5", "#c62828", "#7f0000"),
    "unverified": Look("#ffe3c2", "#e65100", "#7a2e00"),
    "skipped": Look("#eeeeee", "#757575", "#424242"),
    "pending": Look("#ffffff", "#1565c0", "#0d2c5e"),
    "blocked": Look("#f3d1e0", "#ad1457", "#560027"),
    "waiting-user": Look("#dcf1fb", "#0277bd", "#01395c"),
    "unreached": Look("#f7f7f7", "#b0b0b0", "#8a8a8a", dashed=True),
    "visited": Look("#d8f0dc", "#2e7d32", "#1b5e20"),
    "current": Look("#fff4cc", "#f57f17", "#5c3a00"),
    "unknown": Look("#f3e5f5", "#6a1b9a", "#4a148c", dashed=True),
}

#: The primary route's node: a thick dark-blue border; alternatives: a thinner one.
PRIMARY_STROKE: Final = "#0d47a1"
PRIMARY_WIDTH: Final = 4
ALTERNATIVE_WIDTH: Final = 2
#: Edges that fired (their source's outcome is one they list) and those that did not.
FIRED: Final = "#2e7d32"
UNFIRED: Final = "#9e9e9e"

#: Graphviz's font, then families that hold CJK glyphs (Flow labels are often Chinese);
#: an SVG viewer takes the first it has, as Graphviz's own renderer does.
FONTS: Final = "Helvetica,Noto Sans CJK SC,PingFang SC,Microsoft YaHei,sans-serif"

#: What each shape means, in the legend.
SHAPE_MEANINGS: Final = {
    "action": "rounded box: an Action step",
    "gate": "diamond: a Gate (a user decides)",
    "subgraph": "double box: a call of another Graph",
    "terminal": "double ellipse: a terminal",
    "start": "circle: start",
    "finish": "double circle: finish",
    "fork": "hexagon: a fork into parallel branches, or their join",
    "join": "hexagon: a fork into parallel branches, or their join",
    "call": "double rounded box: a child Flow",
    "note": "note: a note",
}


#: A diamond must hold its label's rectangle, so it is about twice as wide and as tall as
#: the label: one long line makes it very wide. Lines of a diamond are wrapped to this many
#: characters (the weekly-report Gate drawn by dot: 394 x 88 pt before, 266 x 112 after).
DIAMOND_LINE: Final = 22


def diamond_lines(lines: list[str]) -> list[str]:
    """``lines`` wrapped at spaces to :data:`DIAMOND_LINE` characters (a word longer than
    that stays whole: an id is never broken)."""
    import textwrap

    out: list[str] = []
    for line in lines:
        wrapped = textwrap.wrap(line, DIAMOND_LINE, break_long_words=False, break_on_hyphens=False)
        out += wrapped or [line]
    return out


def legend(picture: Picture) -> list[str]:
    """The legend of ``picture``: the shapes it uses, then (with a state) what the fill,
    the thick border and the edge colours say. Every line is plain text."""
    shapes = list(dict.fromkeys(node.shape for node in picture.nodes))
    lines = list(dict.fromkeys(SHAPE_MEANINGS[s] for s in shapes if s in SHAPE_MEANINGS))
    if picture.overlay:
        statuses = list(dict.fromkeys(n.status for n in picture.nodes if n.status in LOOKS))
        if statuses:
            named = ", ".join(s.replace("unreached", "not reached") for s in statuses if s)
            lines.append(f"fill: the status each label names ({named})")
        if any(node.emphasis == "primary" for node in picture.nodes):
            lines.append("thick blue border: the primary route; thinner: an alternative")
        lines.append("green edge: fired by the recorded outcome; grey: not")
    return lines
