"""Pausing the cyclic garbage collector while a large acyclic structure is built.

Building a document, an IR or a lowered Program allocates hundreds of thousands of
containers and no reference cycles, so every collection those allocations trigger
rescans them for nothing (a third of the time to load a 10,000-node graph). While the
collector is paused, reference counting frees everything as usual.

Turning it back on is not free either: the next allocation starts a collection of the
youngest generation, which now holds everything built during the pause (25 ms after
reading a 10,000-node graph). So when a pause has made more than :data:`PROMOTE_AT`
objects, they go straight to the oldest generation (``gc.freeze`` then ``gc.unfreeze``:
two list splices, no scan). Nothing is lost: a cycle among them is still found, by the
next full collection. This module imports nothing of the package.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["PROMOTE_AT", "collector_paused"]

#: Objects a pause must have made before they skip the young generations on resume; a
#: short pause (one evaluation) leaves the generations as they were.
PROMOTE_AT: Final = 50_000


@contextmanager
def collector_paused(promote_at: int = PROMOTE_AT) -> Iterator[None]:
    """Pause the cyclic collector (unless it is already off) for the block; ``promote_at``:
    the objects it must have made for them to skip the young generations on resume."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] > promote_at:
            gc.freeze()
            gc.unfreeze()
        gc.enable()
