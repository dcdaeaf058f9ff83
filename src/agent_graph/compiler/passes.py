"""The pass machinery both front ends share: a table of named passes, run in order.

A row names a pass, says what it needs from the rows above it, and is a function of the
pass state; :func:`run` runs the rows a state has not run yet, up to ``stop_after``, so a
tool can stop after any pass, look at the state, and carry on. The tables themselves are
``compiler/provider/pipeline.py`` (Provider sources) and ``compiler/flow/pipeline.py`` (Flow
packages); this module imports neither front end.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from types import GenericAlias

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic, NamedTuple, Protocol, TypeVar

    class _State(Protocol):
        @property
        def done(self) -> list[str]: ...

    S = TypeVar("S", bound=_State)

    class Pass(NamedTuple, Generic[S]):
        name: str
        needs: str
        run: Callable[[S], None]

else:
    # The same named tuple, made without typing: the class statement above (typing, a
    # Protocol, a generic NamedTuple) is 1.2 ms of CPU of a cold agc flow check (35 ms)
    Pass = namedtuple("Pass", ["name", "needs", "run"], module=__name__)
    Pass.__class_getitem__ = classmethod(GenericAlias)  # Pass[S], as the generic class


def run(passes: tuple[Pass[S], ...], state: S, *, stop_after: str | None = None) -> S:
    """Run every pass ``state`` has not run yet, in table order, up to ``stop_after``."""
    names = [step.name for step in passes]
    if stop_after is not None and stop_after not in names:
        raise ValueError(f"no pass named {stop_after!r}; passes: {', '.join(names)}")
    for step in passes[len(state.done) :]:
        step.run(state)
        state.done.append(step.name)
        if step.name == stop_after:
            break
    return state


def pass_names(passes: tuple[Pass[Any], ...]) -> list[str]:
    return [step.name for step in passes]
