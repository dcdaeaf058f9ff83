"""Pictures of graphs: Provider graphs with their evaluation, Flows with their Runs.

Builders make a :class:`~.model.Picture` (:func:`.provider.provider_picture`,
:func:`.flow.flow_picture`); writers draw it as Mermaid (:func:`.mermaid.render`) or
Graphviz DOT (:func:`.dot.render`), and :func:`.svg.to_svg` runs Graphviz. The
explanation of an evaluation (``agc explain``) is :mod:`.explain`. This part reads the
VM's trace and the Flow IR; it never evaluates anything itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .model import Picture

#: ``agc graph`` / ``agc flow graph`` output formats; Mermaid is the default.
PICTURE_FORMATS: Final = ("mermaid", "dot", "svg")


def draw(picture: Picture, fmt: str) -> bytes:
    """``picture`` in ``fmt`` (one of :data:`PICTURE_FORMATS`), as bytes ready to write."""
    from . import dot, mermaid
    from .svg import to_svg

    if fmt == "mermaid":
        return mermaid.render(picture).encode("utf-8")
    text = dot.render(picture)
    return text.encode("utf-8") if fmt == "dot" else to_svg(text)
