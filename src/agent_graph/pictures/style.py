"""Colours and strokes of the overlay, shared by the Mermaid and Graphviz writers.

Every status is also written in the node's label, so a picture printed in grey (or
read by someone who does not tell these colours apart) still says it; colour only
speeds up the glance.
"""

from __future__ import annotations

from typing import Final, NamedTuple


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
