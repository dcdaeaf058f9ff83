"""Unpaired surrogates in JSON text: what no Unicode encoding can hold.

Apart from the positioned JSON reader (:mod:`.json_text`) because the Flow front end and
the Run codec ask this of every block they read and nothing else of that reader: a cold
``agc flow check`` of a package whose blocks are JSON as written no longer imports it
(1.2 ms of CPU of about 35). Its two patterns are compiled on the first text that could
hold a surrogate (0.5 ms), which an ASCII package never has.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["unpaired_surrogate"]


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    # where a surrogate can come from in JSON text, a fast superset: a \uD800-\uDFFF
    # escape, or the character itself (a str from argv holds one per byte that was not
    # UTF-8); then one surrogate escape, other escape (so an escaped backslash is
    # skipped) or surrogate character
    return (
        re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]"),
        re.compile(r"\\u([dD][89a-fA-F][0-9a-fA-F]{2})|\\.|[\ud800-\udfff]"),
    )


def unpaired_surrogate(text: str, start: int = 0, end: int | None = None) -> tuple[int, str] | None:
    """The index and a description of the first unpaired surrogate in JSON text, if any.

    A surrogate is text no Unicode encoding can hold (UTF-8 cannot encode it), so it is
    refused wherever JSON is read, as the YAML reader refuses it. ``\\uD83D\\uDE00`` is
    one character (a pair) and fine; ``\\uD800`` alone, a low surrogate escape first,
    or a surrogate character in the text itself (a byte that was not UTF-8) is not.
    ``text[start:end]`` must be JSON string content or whole JSON text (where every
    backslash is inside a string).
    """
    if end is None and not start and text.isascii() and "\\u" not in text:
        # nothing the pattern below could find (0.07 us, not 0.7, on a command block);
        # whole texts only: a range's caller would pay for the whole text each time
        return None
    stop = len(text) if end is None else end
    maybe, token = _patterns()
    if maybe.search(text, start, stop) is None:
        return None
    pending: tuple[int, str] | None = None  # a high surrogate escape waiting for its low half
    for match in token.finditer(text, start, stop):
        unit = match.group(1)
        if pending is not None:
            if unit is not None and match.start() == pending[0] + 6 and unit[1] in "cCdDeEfF":
                pending = None  # a pair: one astral character
                continue
            return pending
        if unit is not None:
            if unit[1] in "89abAB":
                pending = (match.start(), f"\\u{unit}")
                continue
            return match.start(), f"\\u{unit}"
        if match.group().startswith("\\"):
            continue
        return match.start(), f"U+{ord(match.group()):04X}"
    return pending
