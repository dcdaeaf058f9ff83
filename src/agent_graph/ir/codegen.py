"""Generated code for the IR, compiled once per machine instead of once per process.

The IR's decoders and bounds checks (:mod:`.decoders`) and its records' methods
(:func:`record`) are Python source generated from the records' declarations. Compiling
that source is most of what a fresh process spends on the IR before it reads a byte
(a third of a cold ``agc evaluate`` over ``python -c pass``), so the code objects are
cached the way Python caches a module's bytecode (:func:`compile_cached`).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import importlib.util
import marshal
import operator
import os
import sys
from types import CodeType
from typing import Any, TypeVar, dataclass_transform

__all__ = ["compile_cached", "record"]

T = TypeVar("T")


def _field_getter(index: int, doc: str) -> Any:
    """A class attribute reading field ``index``: the C accessor namedtuple uses."""
    fast = getattr(collections, "_tuplegetter", None)
    if fast is not None:
        return fast(index, doc)
    return property(operator.itemgetter(index), doc=doc)  # pragma: no cover - other Pythons


def compile_cached(source: str, filename: str) -> CodeType:
    """``source`` compiled (``exec`` mode), through a cache beside this module's bytecode.

    Kept as Python keeps a ``.pyc``: in the ``__pycache__`` that ``cache_from_source``
    names (so ``PYTHONPYCACHEPREFIX`` applies), not written under
    ``PYTHONDONTWRITEBYTECODE``, and named by the SHA-256 of the interpreter's bytecode
    magic and the source, so a changed record or another Python never reads a stale
    entry. An unreadable entry is compiled afresh; a cache that cannot be written is
    skipped. It is as trusted as the ``.pyc`` files beside it.
    """
    key = hashlib.sha256(importlib.util.MAGIC_NUMBER + source.encode()).hexdigest()[:32]
    try:
        folder = os.path.dirname(importlib.util.cache_from_source(__file__))
    except (NotImplementedError, ValueError):  # this interpreter caches no bytecode
        return compile(source, filename, "exec")
    path = os.path.join(folder, f"agent_graph.ir.generated-{key}.bin")
    try:
        with open(path, "rb") as handle:
            code = marshal.loads(handle.read())
        if isinstance(code, CodeType) and code.co_filename == filename:
            return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    if not sys.dont_write_bytecode:
        temporary = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(folder, exist_ok=True)
            with open(temporary, "wb") as handle:
                handle.write(marshal.dumps(code))
            os.replace(temporary, path)  # a reader sees the whole entry or none
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return code


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """A frozen record: ``@dataclass(frozen=True)`` semantics on a tuple, several times
    cheaper to create. For the IR's records and the other small records on hot paths
    (the VM creates some per evaluation; a decoder creates tens of thousands).

    A frozen dataclass sets each field through ``object.__setattr__`` (about 0.15 µs a
    field) and compiles six methods from source each time its module is imported (about
    0.8 ms a class). Here the instance is a tuple of the field values made in one C call;
    each field is read through a C accessor, and the methods, with the dataclass
    semantics (``FrozenInstanceError`` on assignment, field-wise equality and hash
    between instances of one class over the fields with ``compare``, no ordering, a
    repr of the fields with ``repr``, plain defaults; no default factories), come from
    :func:`compile_cached`. ``dataclasses.fields``, ``replace`` and ``is_dataclass``
    work as on any dataclass; copies and pickles go through the constructor. Not a
    sequence to its users: iterating one is a ``TypeError``, as on a dataclass.
    """
    shadow: Any = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    fields = dataclasses.fields(shadow)
    if any(f.default_factory is not dataclasses.MISSING for f in fields):
        raise TypeError(f"{cls.__name__}: a record field has no default factory")
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    names = [f.name for f in fields]
    compared = [i for i, f in enumerate(fields) if f.compare]

    def items(owner: str, chosen: list[int]) -> str:
        return "".join(f"{owner}[{i}], " for i in chosen)

    params = [f"{n}=defaults[{n!r}]" if n in defaults else n for n in names]
    shown = ", ".join(f"{f.name}={{self[{i}]!r}}" for i, f in enumerate(fields) if f.repr)
    every = len(compared) == len(fields)
    lines = [
        "def make(cls, FrozenInstanceError, new, defaults):",
        f"    def __new__(cls, {', '.join(params)}):",
        f"        return new(cls, ({''.join(f'{n}, ' for n in names)}))",
        "    def __repr__(self):",
        f'        return f"{{type(self).__qualname__}}({shown})"',
        "    def __eq__(self, other):",
        "        if other.__class__ is self.__class__:",
        "            return tuple.__eq__(self, other)"
        if every
        else f"            return ({items('self', compared)}) == ({items('other', compared)})",
        # as a dataclass: unequal to anything else, plain tuples included (their own
        # comparison would see only the values)
        "        return False if isinstance(other, tuple) else NotImplemented",
        "    def __ne__(self, other):",
        "        if other.__class__ is self.__class__:",
        "            return not self.__eq__(other)",
        "        return True if isinstance(other, tuple) else NotImplemented",
        "    def __hash__(self):",
        "        return tuple.__hash__(self)"
        if every
        else f"        return hash(({items('self', compared)}))",
        "    def __setattr__(self, name, value):",
        "        raise FrozenInstanceError(f'cannot assign to field {name!r}')",
        "    def __delattr__(self, name):",
        "        raise FrozenInstanceError(f'cannot delete field {name!r}')",
        "    def __reduce__(self):",
        "        return (type(self), self[:])",
        "    def __iter__(self):",
        "        raise TypeError(f'{type(self).__name__} is a record, not a sequence')",
        "    def __order__(self, other):",
        "        return NotImplemented",
        "    return (__new__, __repr__, __eq__, __ne__, __hash__, __setattr__, __delattr__,",
        "            __reduce__, __iter__, __order__)",
    ]
    namespace: dict[str, Any] = {}
    exec(compile_cached("\n".join(lines), f"<agent_graph.ir.record {cls.__name__}>"), namespace)
    methods = namespace["make"](cls, dataclasses.FrozenInstanceError, tuple.__new__, defaults)
    body = {
        key: value
        for key, value in shadow.__dict__.items()
        if key not in ("__dict__", "__weakref__") and key not in defaults
    }
    body["__slots__"] = ()
    body["__qualname__"] = cls.__qualname__
    for index, name in enumerate(names):
        body[name] = _field_getter(index, f"the {name} field")
    for method in methods[:-1]:
        body[method.__name__] = method
    for name in ("__lt__", "__le__", "__gt__", "__ge__"):
        body[name] = methods[-1]
    made: Any = type(cls.__name__, (tuple,), body)
    for method in methods:
        method.__qualname__ = f"{made.__qualname__}.{method.__name__}"
    result: type[T] = made
    return result
