"""Compatibility declarations: ranges are never enforced, but a 0.2 range earns a warning."""

from __future__ import annotations

import re
from typing import Any

from ... import codes
from ...documents.paths import Origin
from ...errors import Diagnostic
from ...protocol import PROTOCOL_VERSION

_VERSION = re.compile(r"^v?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-[0-9A-Za-z.-]+)?$")
_COMPARATOR = re.compile(r"^(\^|~|>=|<=|>|<|=)?\s*(.+)$")


def _parse(text: str) -> tuple[list[int], int] | None:
    """Version parts and how many were given (wildcards stop the count)."""
    match = _VERSION.match(text.strip())
    if match is None:
        return None
    parts: list[int] = []
    for group in match.groups():
        if group is None or not group.isdigit():
            break
        parts.append(int(group))
    return parts + [0] * (3 - len(parts)), len(parts)


def _satisfies(version: tuple[int, int, int], comparator: str) -> bool | None:
    match = _COMPARATOR.match(comparator.strip())
    if match is None:
        return None
    op, rest = match.group(1) or "=", match.group(2)
    parsed = _parse(rest)
    if parsed is None:
        return None
    bound, given = parsed
    low = tuple(bound)
    if op in ("^", "~", "="):
        # index of the part that may not change (npm semantics); the upper bound bumps it
        if op == "^":
            idx = 0 if bound[0] > 0 or given <= 1 else 1 if bound[1] > 0 or given == 2 else 2
        elif op == "~":
            idx = 1 if given >= 2 else 0
        else:
            idx = max(given - 1, 0)
        high = list(bound[: idx + 1])
        high[idx] += 1
        upper = tuple(high + [0] * (3 - len(high)))
        return low <= version < upper
    return {
        ">=": version >= low,
        "<=": version <= low,
        ">": version > low,
        "<": version < low,
    }[op]


def range_admits(range_text: str, version: str = PROTOCOL_VERSION) -> bool | None:
    """Whether an npm-style range admits ``version``; None when the range is not understood."""
    target_parts = _parse(version)
    if target_parts is None:
        return None
    target = (target_parts[0][0], target_parts[0][1], target_parts[0][2])
    any_known = False
    for alternative in range_text.split("||"):
        comparators = alternative.split()
        if not comparators:
            continue
        results = [_satisfies(target, c) for c in comparators]
        if any(r is None for r in results):
            continue
        any_known = True
        if all(results):
            return True
    return False if any_known else None


def compatibility_warnings(manifest: dict[str, Any], here: Origin) -> list[Diagnostic]:
    compatibility = manifest.get("compatibility")
    if not isinstance(compatibility, dict):
        return []
    declared = compatibility.get("agentGraph")
    # a pin to another 0.3 patch is fine: only ranges that exclude the 0.3 line warn
    if not isinstance(declared, str) or any(
        range_admits(declared, v) is not False for v in ("0.3.0", PROTOCOL_VERSION)
    ):
        return []
    return [
        here.at("/compatibility/agentGraph").diagnostic(
            codes.COMPATIBILITY_RANGE_EXCLUDES,
            f"compatibility.agentGraph {declared!r} does not admit protocol {PROTOCOL_VERSION}; "
            "the Provider is loaded anyway (ranges are declarations, not checks)",
            "warning",
        )
    ]
