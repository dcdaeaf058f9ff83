"""The fast set and the slow set (docs/testing.md, "Fast and slow").

``python -m pytest -m "not slow"`` is the fast set; ``-m slow`` runs the rest. A long
parametrized comparison (one case per example, per corpus case …) keeps a sample in the fast
set and marks the other cases slow, so every part of it still runs quickly somewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def fast_sample(values: Iterable[T], keep: int | Callable[[T], bool] = 2) -> list[Any]:
    """``values`` for ``parametrize``: those ``keep`` picks as they are, the others slow.

    An int keeps that many, spread evenly from the first value to the last; a predicate keeps
    the values it is true of. The ids do not change (``ids=`` still sees the bare values).
    """
    items = list(values)
    if callable(keep):
        picked = {index for index, value in enumerate(items) if keep(value)}
    else:
        last = len(items) - 1
        picked = {round(k * last / (keep - 1)) for k in range(keep)} if keep > 1 else {0}
    return [
        value if index in picked else pytest.param(value, marks=pytest.mark.slow)
        for index, value in enumerate(items)
    ]
