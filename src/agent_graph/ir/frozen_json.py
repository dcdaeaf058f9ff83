"""Read-only JSON values for the IR: what a compiled Program shares must stay intact.

Apart from the records (:mod:`.records`) so that a front end that only freezes JSON
(the Flow lowering) does not define the Provider IR's record classes on a cold
``agc flow check`` (4.5 ms of its 57-63 in a clean virtualenv).
"""

from __future__ import annotations

from typing import Any


def _read_only(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError("JSON values inside a compiled Program are read-only")


class FrozenDict(dict):  # type: ignore[type-arg]
    """A JSON object inside the IR: a dict that refuses changes (copies are plain dicts)."""

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        from copy import deepcopy

        return {key: deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A JSON array inside the IR: a list that refuses changes (copies are plain lists)."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _read_only
    clear = reverse = sort = __iadd__ = __imul__ = _read_only

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        from copy import deepcopy

        return [deepcopy(value, memo) for value in self]

    def __reduce__(self) -> Any:
        return (list, (list(self),))


def freeze_json(value: Any) -> Any:
    """``value`` with every object and array made read-only, so a shared Program stays intact.

    Iterative, so no nesting depth exhausts the interpreter's stack: each frozen container
    is created empty, linked into its parent in order, and filled when its turn comes (the
    base ``dict``/``list`` methods fill it; the frozen ones refuse every change).
    """
    if not isinstance(value, (dict, list)):
        return value
    root = FrozenDict() if isinstance(value, dict) else FrozenList()
    todo: list[tuple[Any, Any]] = [(value, root)]
    while todo:
        source, target = todo.pop()
        if isinstance(source, dict):
            for key, child in source.items():
                if isinstance(child, (dict, list)):
                    frozen = FrozenDict() if isinstance(child, dict) else FrozenList()
                    todo.append((child, frozen))
                    child = frozen
                dict.__setitem__(target, key, child)
        else:
            for child in source:
                if isinstance(child, (dict, list)):
                    frozen = FrozenDict() if isinstance(child, dict) else FrozenList()
                    todo.append((child, frozen))
                    child = frozen
                list.append(target, child)
    return root
