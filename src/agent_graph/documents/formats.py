"""ECMAScript regular-expression and ajv-formats ``date-time`` semantics in Python.

Schema files are written for JSON Schema validators that use ECMAScript regular
expressions (ajv in the reference toolchain). Python's :mod:`re` differs in ways
that change accept/reject decisions: ``$`` also matches before a final ``\\n``
(so an id ``"g\\n"`` would pass), ``.`` matches ``\\r`` and U+2028/U+2029, and
``\\d``/``\\w``/``\\s`` are Unicode-aware. :func:`ecma_regex` rewrites a pattern so
Python decides the way ECMAScript does.

:func:`is_date_time` is the ``date-time`` check of ajv-formats 3 in "full" mode:
a date and a time split on ``T``/``t`` or whitespace, impossible dates rejected,
the time-zone offset mandatory, a leap second only at 23:59:60 UTC.
"""

from __future__ import annotations

import functools
import re

# ECMAScript WhiteSpace + LineTerminator, the set `\s` matches in JavaScript.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_LINE_TERMINATORS = "\n\r\u2028\u2029"

# Escapes whose meaning must be spelled out for Python (outside / inside a class).
_CLASS_ESCAPES_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "s": f"[{_JS_SPACE}]",
    "S": f"[^{_JS_SPACE}]",
}
_CLASS_ESCAPES_INSIDE = {"d": "0-9", "w": "A-Za-z0-9_", "s": _JS_SPACE}


@functools.lru_cache(maxsize=512)
def ecma_regex(pattern: str) -> re.Pattern[str]:
    """Compile an ECMAScript pattern (no flags) into an equivalent Python regex.

    Handled: ``$`` (end of input only), ``.`` (anything but a line terminator),
    ``\\d \\w \\s`` and their negations (ASCII digits/word characters, the
    JavaScript whitespace set). Inside a character class the negated shorthands
    keep Python's meaning, which differs only for non-ASCII digits and letters.
    Raises :class:`re.error` for patterns Python cannot compile.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            table = _CLASS_ESCAPES_INSIDE if in_class else _CLASS_ESCAPES_OUTSIDE
            out.append(table.get(nxt, ch + nxt))
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
            # A leading `]` or `^]` is literal in Python but closes the class in
            # JavaScript (`[]` never matches, `[^]` matches anything).
            rest = pattern[i + 1 :]
            if rest.startswith("]"):
                out[-1] = "(?!)"
                in_class = False
                i += 2
                continue
            if rest.startswith("^]"):
                out[-1] = "[\\s\\S]"
                in_class = False
                i += 3
                continue
        elif ch == "$":
            out.append(r"\Z")
        elif ch == ".":
            out.append(f"[^{_JS_LINE_TERMINATORS}]")
        else:
            out.append(ch)
        i += 1
    return re.compile("".join(out))


def ecma_search(pattern: str, text: str) -> bool:
    """True when ``pattern`` matches somewhere in ``text`` (JSON Schema ``pattern``)."""
    return ecma_regex(pattern).search(text) is not None


_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_TIME = re.compile(
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)([zZ]|([+-])([0-9]{2})(?::?([0-9]{2}))?)?\Z"
)
_DATE_TIME_SEPARATOR = re.compile(f"[tT{_JS_SPACE}]")
_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def is_date(text: str) -> bool:
    """RFC 3339 ``full-date`` with real calendar days (30 February fails)."""
    match = _DATE.match(text)
    if match is None:
        return False
    year, month, day = (int(g) for g in match.groups())
    if not 1 <= month <= 12:
        return False
    last = 29 if month == 2 and _is_leap_year(year) else _DAYS_IN_MONTH[month]
    return 1 <= day <= last


def is_time(text: str) -> bool:
    """RFC 3339 ``full-time`` with a mandatory offset; 60 seconds only at 23:59 UTC."""
    match = _TIME.match(text)
    if match is None:
        return False
    hour, minute = int(match[1]), int(match[2])
    second = float(match[3])
    sign = -1 if match[5] == "-" else 1
    tz_hour = int(match[6] or 0)
    tz_minute = int(match[7] or 0)
    if tz_hour > 23 or tz_minute > 59 or not match[4]:
        return False
    if hour <= 23 and minute <= 59 and second < 60:
        return True
    utc_minute = minute - tz_minute * sign
    utc_hour = hour - tz_hour * sign - (1 if utc_minute < 0 else 0)
    return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61


def is_date_time(value: object) -> bool:
    """ajv-formats ``date-time`` (full mode); non-strings pass, as JSON Schema formats do."""
    if not isinstance(value, str):
        return True
    parts = _DATE_TIME_SEPARATOR.split(value)
    return len(parts) == 2 and is_date(parts[0]) and is_time(parts[1])
