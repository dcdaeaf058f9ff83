"""Finding the answer object in the text a model wrote, in time linear in the text.

A reply is searched only after the agent CLI has exited, so the search must not be
where a timeout or a Ctrl-C goes to wait: a backtracking fence pattern took 31 s for a
97 KiB reply of unclosed fences. Here every stage is one pass (or a bounded number of
passes) over at most :data:`MAX_REPLY_CHARS` characters, each stage runs as Python-level
steps (a signal handler runs between them), and the caller's deadline is checked as it
goes. :class:`Meter` counts the characters each stage examines, so a test can check the
bound on the algorithm rather than on a clock.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Final

from ... import codes
from ...documents.sourcemap import MAX_DEPTH
from .protocol import AgentFailure

#: The longest reply text searched for an answer (characters). An answer that long is
#: far past any result submission; searching more would only move the wait elsewhere.
MAX_REPLY_CHARS: Final = 1 << 20
#: The deepest answer accepted: the project's limit for nested documents. No result
#: submission nests that deep, and an answer nested past the interpreter's stack would
#: make the Run record that holds it unreadable.
MAX_ANSWER_DEPTH: Final = MAX_DEPTH
#: How many characters, per character of the reply, the ``{`` scan may decode in all. A
#: failed decode from one ``{`` can read to the end of the text; without a budget, many
#: of them make the scan quadratic.
SCAN_BUDGET_PER_CHAR: Final = 4
#: How many ``{`` that start no object the scan tries before it gives up: each costs a
#: decoder call, and a reply of a million of them would take seconds.
MAX_SCAN_MISSES: Final = 20_000
#: Candidates decoded between two looks at the clock.
_CLOCK_EVERY: Final = 64

_OPENER = re.compile(r"```|~~~")
# A fence closes on a line of its own that starts (after blanks) with the same fence.
_CLOSER = re.compile(r"\n[ \t]*(```|~~~)")
_TAG = re.compile(r"[ \t]*([A-Za-z0-9_-]*)")
# Where an object can start: a brace before a member name or the closing brace.
_OBJECT_START = re.compile(r'\{\s*["}]')


class Meter:
    """Characters examined by one search, and the deadline it must meet."""

    def __init__(self, deadline: float | None = None) -> None:
        self.steps = 0
        self.deadline = deadline
        self._ticks = 0

    def charge(self, count: int, what: str) -> None:
        self.steps += count
        self._ticks += 1
        if self.deadline is not None and self._ticks % _CLOCK_EVERY == 0:
            self.check(what)

    def check(self, what: str) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AgentFailure(f"{what}: its reply could not be searched before the timeout")


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced block: its info-string tag, its body, and its span in the text."""

    tag: str
    body: str
    start: int
    end: int

    @property
    def is_json(self) -> bool:
        return not self.tag or self.tag.lower().startswith("json")


def find_answer_object(
    text: str, what: str = "The agent", *, meter: Meter | None = None
) -> dict[str, Any] | None:
    """The answer object in what a model wrote, or None.

    Tried in order, because a model asked for "only a JSON object" still sometimes wraps
    it in a fence or a sentence: the whole text; each fenced block (``json`` or
    untagged); then every ``{`` from the left, decoding one JSON value there, until the
    scan budget is spent. In each stage an object with a ``result`` key wins over one
    without, so an example object quoted before the answer does not shadow it.

    Raises :class:`AgentFailure` with code ``agent-reply-too-large`` for a text over
    :data:`MAX_REPLY_CHARS`, ``agent-answer-too-deep`` when JSON nested deeper than
    :data:`MAX_ANSWER_DEPTH` is found and no object with a ``result``, and a plain one
    when ``meter``'s deadline passes.
    """
    meter = Meter() if meter is None else meter
    if len(text) > MAX_REPLY_CHARS:
        raise AgentFailure(
            f"{what} replied with {len(text)} characters, more than the {MAX_REPLY_CHARS} "
            f"searched for an answer ({codes.AGENT_REPLY_TOO_LARGE})",
            code=codes.AGENT_REPLY_TOO_LARGE,
        )
    deep = _DepthNote()
    meter.charge(len(text), what)
    whole = deep.check(_loads(text.strip()))
    if isinstance(whole, dict):
        return whole
    fences = find_fences(text, meter, what)
    fenced: list[dict[str, Any]] = []
    for fence in fences:
        if fence.is_json:
            meter.charge(len(fence.body), what)
            value = deep.check(_loads(fence.body.strip()))
            if isinstance(value, dict):
                fenced.append(value)
    best = _prefer_result(fenced)
    if best is None:
        # objects inside code of another language (```python …) are not the answer
        best = _prefer_result(_scan_objects(_without_code(text, fences), meter, deep, what))
    if deep.seen and (best is None or "result" not in best):
        # a fragment of the deep JSON (its innermost object) is not the answer
        raise too_deep_failure(what)
    return best


def too_deep_failure(what: str) -> AgentFailure:
    """``agent-answer-too-deep``: the answer nests more than :data:`MAX_ANSWER_DEPTH`
    levels (its own code, so it is not reported as "not JSON" or "no answer")."""
    return AgentFailure(
        f"{what} answered with JSON nested more than {MAX_ANSWER_DEPTH} levels deep "
        f"({codes.AGENT_ANSWER_TOO_DEEP})",
        code=codes.AGENT_ANSWER_TOO_DEEP,
    )


def too_deep(value: Any, limit: int = MAX_ANSWER_DEPTH) -> bool:
    """True when ``value`` nests arrays and objects more than ``limit`` levels deep
    (iterative, so any depth json could decode is fine for Python)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, level = stack.pop()
        if isinstance(current, dict):
            children: Any = current.values()
        elif isinstance(current, list):
            children = current
        else:
            continue
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in children)
    return False


def find_fences(text: str, meter: Meter | None = None, what: str = "") -> list[Fence]:
    """The fenced blocks of ``text``, left to right, not overlapping.

    A fence (`````` or ``~~~``) opens anywhere, its info string is the rest of that line,
    and it closes at the first later line that starts (after blanks) with the same fence;
    a fence that never closes is not a block. One pass finds every closing line; openings
    come left to right, so the first closing line after each only moves forward: linear
    in the text however many fences stay open.
    """
    meter = Meter() if meter is None else meter
    meter.charge(2 * len(text), what)
    closers: dict[str, list[int]] = {"```": [], "~~~": []}
    ends: dict[int, int] = {}
    for match in _CLOSER.finditer(text):
        closers[match.group(1)].append(match.start())
        ends[match.start()] = match.end()
    found: list[Fence] = []
    pos = 0
    line_end = -1
    first = {"```": 0, "~~~": 0}  # per fence: the first closing line not yet passed
    while True:
        opener = _OPENER.search(text, pos)
        if opener is None:
            return found
        start = opener.start()
        meter.charge(1, what)
        if start > line_end:
            line_end = text.find("\n", start)
            if line_end == -1:
                return found  # an opening line needs its newline: no block from here on
        fence = opener.group()
        candidates = closers[fence]
        index = first[fence]
        while index < len(candidates) and candidates[index] <= line_end:
            index += 1
            meter.charge(1, what)
        first[fence] = index
        if index == len(candidates):
            pos = start + 1
            continue
        close = candidates[index]
        tag = _TAG.match(text, opener.end())
        found.append(
            Fence(tag.group(1) if tag else "", text[line_end + 1 : close], start, ends[close])
        )
        pos = ends[close]


class _DepthNote:
    """Whether a decoded (or undecodable) candidate was nested too deeply."""

    def __init__(self) -> None:
        self.seen = False

    def check(self, value: Any) -> Any:
        if value is _TOO_DEEP or too_deep(value):
            self.seen = True
            return None
        return value


_TOO_DEEP: Final = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None
    except RecursionError:
        return _TOO_DEEP


def _without_code(text: str, fences: list[Fence]) -> str:
    parts: list[str] = []
    pos = 0
    for fence in fences:
        if not fence.is_json:
            parts.append(text[pos : fence.start])
            pos = fence.end
    parts.append(text[pos:])
    return "".join(parts)


def _prefer_result(candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    for value in candidates:
        if "result" in value:
            return value
    return candidates[0] if candidates else None


def _scan_objects(
    text: str, meter: Meter, deep: _DepthNote, what: str, limit: int = 200
) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    budget = SCAN_BUDGET_PER_CHAR * len(text)
    misses = 0
    pos = 0
    while len(found) < limit and budget > 0 and misses < MAX_SCAN_MISSES:
        candidate = _OBJECT_START.search(text, pos)
        if candidate is None:
            break
        start = candidate.start()
        value, end, cost = _decode_at(decoder, text, start)
        budget -= cost
        meter.charge(cost + candidate.end() - pos, what)
        if value is _TOO_DEEP:
            # every ``{`` on the way down would recurse as deep: go on past the window
            deep.seen = True
            pos = end
            continue
        if isinstance(deep.check(value), dict):
            found.append(value)
            pos = end
            continue
        misses += 1
        pos = start + 1
    return found


def _decode_at(decoder: json.JSONDecoder, text: str, start: int) -> tuple[Any, int, int]:
    """``(value, end, characters read)`` of the JSON value at ``start``; the value is
    None when there is none there, ``_TOO_DEEP`` (``end`` then the end of the window
    read) when it nests past the decoder's stack.

    The decoder reads a window after ``start`` that doubles while the failure could be
    the window's end (an unterminated string, an error in its last characters): its
    error object counts the lines before the error, which on the whole text would cost
    the offset of ``start`` for every failed ``{`` and make the scan quadratic.
    """
    size = _WINDOW
    while True:
        window = text[start : start + size]
        last = start + size >= len(text)
        try:
            value, end = decoder.raw_decode(window)
        except RecursionError:
            return _TOO_DEEP, start + len(window), len(window)
        except json.JSONDecodeError as error:
            truncated = error.pos >= len(window) - _TAIL or error.msg.startswith("Unterminated")
            if last or not truncated:
                return None, start, (len(window) if truncated else error.pos + 1)
            size *= 2
            continue
        return value, start + end, end


#: The first window read at a ``{``, and how close to its end an error may be caused by
#: the cut (a number or literal the window splits).
_WINDOW: Final = 256
_TAIL: Final = 64
