"""JavaScript numbers in Python: ECMAScript ``Number::toString`` and the value a JS
``Number`` holds. :mod:`.canonical` re-exports both.

Apart from :mod:`.canonical` because the JSON readers (``documents.json_text``, the Flow
checks' templates) need :func:`to_js_number` alone, and :mod:`.canonical` builds its
collation tables as it loads: 1.1 ms of CPU of a cold ``agc flow check`` (35 ms).
"""

from __future__ import annotations

import math

EXACT_INT = 2**53  # JavaScript numbers are doubles; beyond this ints round


def js_number(x: int | float) -> str:
    """ECMAScript ``Number::toString(x)`` for an int or float.

    Python ints are first rounded to the nearest double, as ``JSON.parse`` would
    do; ints too large for a double become ``Infinity``. ``NaN`` and
    ``Infinity`` print as in JavaScript; ``stable_stringify`` maps them to
    ``null`` like ``JSON.stringify``.
    """
    if isinstance(x, bool):
        raise TypeError("js_number() does not accept bool")
    if isinstance(x, int):
        if -EXACT_INT <= x <= EXACT_INT:
            return str(int(x))
        try:
            x = float(x)
        except OverflowError:
            return "Infinity" if x > 0 else "-Infinity"
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"  # also -0
    sign = "-" if x < 0 else ""
    # repr() gives the shortest round-tripping digits, the same digit string
    # that ECMAScript requires; only the layout differs.
    mantissa, _, exponent = repr(abs(x)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    # Now x = 0.<digits> * 10**point, i.e. ECMAScript's s, k and n.
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = f"{head}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


_SAFE_INTEGER = 2**53


def to_js_number(value: int | float) -> int | float:
    """Map a number onto what a JS ``Number`` holds, in Python's best type for it.

    Integral values within ±2**53 become ``int`` (``1.0`` -> 1) except negative zero,
    which stays ``-0.0`` because JavaScript keeps it (``Object.is(-0, 0)`` is false);
    integers outside that range become the nearest ``float`` (``inf`` past the
    double range), as ``Number("123…")`` would.
    """
    if isinstance(value, int):
        if -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
            return value
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if value == 0 and math.copysign(1.0, value) < 0:
        return value
    if value.is_integer() and -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
        return int(value)
    return value
