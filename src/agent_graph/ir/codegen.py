"""Generated code for the IR, compiled once per machine instead of once per process.

The IR's decoders and bounds checks (:mod:`.decoders`) and its records' methods
(:func:`record`) are Python source generated from the records' declarations. Compiling
that source is most of what a fresh process spends on the IR before it reads a byte
(a third of a cold ``agc evaluate`` over ``python -c pass``), so the code objects are
cached the way Python caches a module's bytecode (:func:`compile_cached`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import marshal
import os
import sys
from types import CodeType
from typing import Any, TypeVar, dataclass_transform

__all__ = ["compile_cached", "record"]

T = TypeVar("T")


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
    """``@dataclass(frozen=True, slots=True)``, cheaper to create: for the IR's records
    and the other small records on the cold path of ``agc``.

    A frozen dataclass compiles six methods from source each time its module is
    imported (about 0.8 ms a class; the IR has thirteen). Here ``dataclasses`` does
    what needs no compiling (fields, slots, ``__match_args__``), and the methods, with
    the dataclass semantics (``FrozenInstanceError`` on assignment, field-wise equality
    and hash between instances of one class over the fields with ``compare``, a repr
    of the fields with ``repr``, plain defaults; no default factories), come from
    :func:`compile_cached`. ``dataclasses.fields``, ``replace`` and ``is_dataclass``
    work as on any dataclass; copies and pickles go through the constructor. (Its
    ``__dataclass_params__`` says not frozen: nothing reads it, and no record has a
    subclass, which is what it would decide.)
    """
    made: Any = dataclasses.dataclass(slots=True, init=False, repr=False, eq=False)(cls)
    fields = dataclasses.fields(made)
    if any(f.default_factory is not dataclasses.MISSING for f in fields):
        raise TypeError(f"{made.__name__}: a record field has no default factory")
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    names = [f.name for f in fields]
    compared = [f.name for f in fields if f.compare]  # as a dataclass's __eq__ and __hash__

    def values(owner: str, chosen: list[str]) -> str:
        return "".join(f"{owner}.{name}, " for name in chosen)

    params = [f"{n}=defaults[{n!r}]" if n in defaults else n for n in names]
    shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields if f.repr)
    lines = [
        "def make(cls, FrozenInstanceError, setter, defaults):",
        f"    def __init__(self, {', '.join(params)}):",
        *(f"        setter(self, {name!r}, {name})" for name in names),
        "    def __repr__(self):",
        f'        return f"{{type(self).__qualname__}}({shown})"',
        "    def __eq__(self, other):",
        "        if other.__class__ is self.__class__:",
        f"            return ({values('self', compared)}) == ({values('other', compared)})",
        "        return NotImplemented",
        "    def __hash__(self):",
        f"        return hash(({values('self', compared)}))",
        "    def __setattr__(self, name, value):",
        "        raise FrozenInstanceError(f'cannot assign to field {name!r}')",
        "    def __delattr__(self, name):",
        "        raise FrozenInstanceError(f'cannot delete field {name!r}')",
        "    def __reduce__(self):",
        f"        return (type(self), ({values('self', names)}))",
        "    return __init__, __repr__, __eq__, __hash__, __setattr__, __delattr__, __reduce__",
    ]
    namespace: dict[str, Any] = {}
    exec(compile_cached("\n".join(lines), f"<agent_graph.ir.record {made.__name__}>"), namespace)
    make = namespace["make"]
    methods = make(made, dataclasses.FrozenInstanceError, object.__setattr__, defaults)
    for method in methods:
        method.__qualname__ = f"{made.__qualname__}.{method.__name__}"
        type.__setattr__(made, method.__name__, method)
    result: type[T] = made
    return result
