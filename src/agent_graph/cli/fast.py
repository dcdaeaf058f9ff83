"""``agc evaluate`` without click, for the plain forms hosts use once per step.

It takes ``evaluate [GRAPH]`` with ``-m``/``--manifest``, ``--format``, ``--entry``,
``--state``, ``--facts``, ``--outcomes`` and ``--authority`` (variadic, as click reads it),
each option given once as separate words. Anything else (``--help``, ``--skill``,
``--registry``, ``--color``, ``--opt=value``, a value that looks like an option, a second
graph, an unknown option) returns ``None`` before anything is read, and the click
application handles the whole command. What runs then is the same code as the click
command (:func:`.evaluation_report.report_evaluation`, :func:`.failures.failure_exit`),
so output and exit codes are the same; ``tests/cli/test_cli_fast.py`` compares the two.
"""

from __future__ import annotations

from collections.abc import Sequence

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

#: Options taking one value: their name in the click command's parameters.
_VALUE_OPTIONS: Final = {
    "-m": "manifest",
    "--manifest": "manifest",
    "--format": "fmt",
    "--entry": "entry",
    "--state": "state_path",
    "--facts": "facts",
    "--outcomes": "outcomes",
}
_FORMATS: Final = ("human", "json")


def parse(args: Sequence[str]) -> tuple[str | None, dict[str, Any]] | None:
    """``(graph, options)`` for an argv the fast path takes, else ``None``."""
    if not args or args[0] != "evaluate":
        return None
    found: dict[str, Any] = {}
    authorities: list[str] = []
    graph = None
    index, end = 1, len(args)
    while index < end:
        word = args[index]
        name = _VALUE_OPTIONS.get(word)
        if name is not None or word == "--authority":
            if index + 1 >= end or args[index + 1].startswith("-") or name in found:
                return None
            if name is None:  # --authority: the value, then every word up to an option
                index += 1
                while index < end and not args[index].startswith("-"):
                    authorities.append(args[index])
                    index += 1
                continue
            found[name] = args[index + 1]
            index += 2
            continue
        if word.startswith("-") or graph is not None:
            return None
        graph = word
        index += 1
    if found.get("fmt", "human") not in _FORMATS:
        return None
    return graph, found | {"authorities": tuple(authorities)}


def evaluate_fast(args: Sequence[str]) -> int | None:
    """Run ``agc evaluate`` when :func:`parse` takes ``args``; the exit code, or ``None``."""
    parsed = parse(args)
    if parsed is None:
        return None
    graph, found = parsed
    from .colour import CHOICE
    from .context import Options, load
    from .evaluation_report import report_evaluation
    from .failures import failure_exit

    CHOICE.set("auto")  # as the click application starts every invocation
    fmt = found.pop("fmt", "human")
    opts = Options(found.pop("manifest", None), None, None, fmt)
    local = {"entry": None, "state_path": None, "facts": None, "outcomes": None} | found
    try:
        loaded = load(opts)
        report_evaluation(opts, loaded.binding, loaded.runnable, graph, local)
    except (KeyboardInterrupt, Exception) as exc:  # AgentGraphError too: failure_exit says how
        return failure_exit(exc, fmt, args)
    return 0
