"""``agc flow check`` without click, for the plain form an editor or a hook runs on save.

It takes ``flow check ENTRY`` with ``--format human|json`` and ``--lenient``, each at
most once, as separate words, in any order after ``check``. Anything else (``--help``,
``--format=json``, ``--color``, a global option, a second entry, an unknown option, an
entry that looks like an option) returns ``None`` before anything is read, and the
click application handles the whole command. What runs is the click command's own
code (:func:`.flow_check.check_flow`, :func:`.failures.failure_exit`), so output and exit
codes are the same; ``tests/cli/test_cli_fast_flow.py`` compares the two.
"""

from __future__ import annotations

from collections.abc import Sequence

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

_FORMATS: Final = ("human", "json")


def parse(args: Sequence[str]) -> tuple[str, bool, str] | None:
    """``(entry, lenient, format)`` for an argv the fast path takes, else ``None``."""
    if len(args) < 3 or args[0] != "flow" or args[1] != "check":
        return None
    entry: str | None = None
    lenient = False
    fmt: str | None = None
    index = 2
    while index < len(args):
        word = args[index]
        if word == "--format":
            if fmt is not None or index + 1 >= len(args) or args[index + 1] not in _FORMATS:
                return None
            fmt = args[index + 1]
            index += 2
            continue
        if word == "--lenient" and not lenient:
            lenient = True
        elif word.startswith("-") or entry is not None:
            return None
        else:
            entry = word
        index += 1
    if entry is None:
        return None
    return entry, lenient, fmt or "human"


def check_fast(args: Sequence[str]) -> int | None:
    """Run ``agc flow check`` when :func:`parse` takes ``args``; the exit code, or ``None``."""
    parsed = parse(args)
    if parsed is None:
        return None
    entry, lenient, fmt = parsed
    from .colour import CHOICE
    from .failures import failure_exit
    from .flow_check import check_flow

    CHOICE.set("auto")  # as the click application starts every invocation
    try:
        return check_flow(entry, lenient, fmt)
    except (KeyboardInterrupt, Exception) as exc:  # AgentGraphError too: failure_exit says how
        return failure_exit(exc, fmt, args)
