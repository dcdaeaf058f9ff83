"""Did-you-mean: the known name a mistyped one most likely means.

Every lookup that fails on a name (a node, a Graph, an entry, a resource, a code, a
file) suggests through here, so the suggestions read and rank alike. ``difflib`` is
imported on a failure's path only. This module imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Iterable


def closest(name: object, known: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The known name closest to ``name`` when one is close enough (None for a name
    that is not a string)."""
    if not isinstance(name, str):
        return None
    import difflib

    found = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(name: object, known: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``; did you mean X?`` for the closest known name, else ``""``."""
    found = closest(name, known, cutoff=cutoff)
    return f"; did you mean {found}?" if found is not None else ""
