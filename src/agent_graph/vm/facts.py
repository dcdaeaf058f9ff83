"""Fact lookup and checks: JSON data only, and ``equals`` with JavaScript ``Object.is``.

Lookups see own members of JSON objects and elements of arrays, never attributes or
methods (the reference leaks prototype members such as ``constructor``; we do not).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..ir.records import ABSENT, EXISTS, FactCheck

MISSING: Any = object()
_SAFE = 2**53


def _is_index(segment: str) -> bool:
    return segment.isdigit() and segment.isascii() and (segment == "0" or segment[0] != "0")


def get_fact(facts: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` or :data:`MISSING` (``null`` is a present value)."""
    current = facts
    for segment in path:
        if type(current) is dict:  # the common case, before the abstract checks
            if segment not in current:
                return MISSING
            current = current[segment]
        elif isinstance(current, (list, tuple)):
            if not _is_index(segment):
                return MISSING
            index = int(segment)
            if index >= len(current):
                return MISSING
            current = current[index]
        elif isinstance(current, Mapping):
            if segment not in current:
                return MISSING
            current = current[segment]
        else:
            return MISSING
    return current


def _as_double(value: int | float) -> float | int:
    return float(value) if isinstance(value, int) and abs(value) > _SAFE else value


def js_is(left: Any, right: Any) -> bool:
    """JavaScript ``Object.is`` on JSON scalars: type-strict, -0 is not 0, NaN is NaN."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        a, b = _as_double(left), _as_double(right)
        if a != a:  # NaN
            return b != b
        if a == 0 and b == 0:
            return math.copysign(1.0, a) == math.copysign(1.0, b)
        return a == b
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    return False


def check_matches(facts: Any, check: FactCheck) -> bool:
    value = get_fact(facts, check.path)
    if check.kind == EXISTS:
        return value is not MISSING
    if check.kind == ABSENT:
        return value is MISSING
    return value is not MISSING and js_is(value, check.value)


def all_match(facts: Any, checks: tuple[FactCheck, ...] | None) -> bool:
    """An absent list passes; otherwise every check must pass."""
    if checks is not None:
        for check in checks:
            if not check_matches(facts, check):
                return False
    return True
