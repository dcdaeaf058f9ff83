"""Frozen records, and generated code compiled once per machine instead of once per process.

A fresh ``agc evaluate`` is short enough that the cost of making its classes shows: the
``dataclasses`` module alone loads ``inspect`` (and with it ``ast``, ``dis`` and
``tokenize``), and each dataclass compiles its methods from source as its module is
imported. :func:`record` gives the frozen-dataclass semantics without either: its
methods come from :func:`compile_cached`, which keeps their code objects the way Python
keeps a module's bytecode, and ``dataclasses`` is imported only when somebody asks a
record for its dataclass fields.

What that buys on the shipped examples (``benchmarks/machinery_bench.py``: medians of 31
fresh processes, clean virtualenv, 2-core machine, ``python -c pass`` 11 ms): a cold
``agc evaluate`` on each example's bundle takes 57-61 ms; 27-29 ms more with the records
made by ``@dataclass(frozen=True, slots=True)``, and 15-17 ms more with the records kept
but their methods and the IR decoders compiled in every process instead of cached.
``agc validate`` of those Providers (129-193 ms; it loads ``dataclasses`` anyway) pays
8-12 ms and 5-7 ms more, ``agc flow check`` of the shipped Flows (163-171 ms) 9-10 ms
and 4-6 ms.

This module imports nothing of the package, so every layer may use it.
"""

from __future__ import annotations

import binascii
import collections
import contextlib
import marshal
import operator
import os
import sys
from collections.abc import Callable
from types import CodeType

__all__ = [
    "compile_cached",
    "field",
    "is_record",
    "make_record",
    "record",
    "record_fields",
    "replace",
    "slotted",
]

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if not TYPE_CHECKING:
    # At run time both only mark functions for type checkers: the last definition of an
    # overloaded name is the one that runs, and a dataclass_transform changes nothing.
    def overload(function: object) -> object:
        return function

    def dataclass_transform(**_: object) -> object:
        return overload


if TYPE_CHECKING:  # after the stand-ins, so linters see typing's names
    from typing import Any, Final, TypeVar, dataclass_transform, overload

    T = TypeVar("T")


if TYPE_CHECKING:

    def make_record(cls: type[T], fields: tuple[object, ...], /) -> T:
        """A :func:`record` instance of ``cls`` from all its field values, in order."""
        ...

else:
    # A record is a tuple of its fields: tuple.__new__ makes one without the Python frame
    # of its constructor (0.13 instead of 0.27 us). For the few readers that make
    # thousands a call (a Flow's Markdown items, its graph's occurrences and edges); no
    # defaults are filled in and nothing is checked, so every field comes, in order.
    make_record = tuple.__new__


def _frozen_error() -> type[AttributeError]:
    # What a frozen dataclass raises, so callers catch the class they know; loaded only
    # on this error path (assigning to a record's field is a bug in the caller).
    import dataclasses

    return dataclasses.FrozenInstanceError


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: No default given (and, as a parameter default, "call the factory").
MISSING: Final = _Missing()


class Field:
    """What :func:`field` declares for one record field."""

    __slots__ = ("compare", "default", "default_factory", "repr")

    def __init__(
        self,
        default: Any,
        default_factory: Callable[[], Any] | _Missing,
        compare: bool,
        repr: bool,  # the dataclasses spelling
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr


@overload
def field(*, default: T, compare: bool = True, repr: bool = True) -> T: ...
@overload
def field(*, default_factory: Callable[[], T], compare: bool = True, repr: bool = True) -> T: ...
@overload
def field(*, compare: bool = True, repr: bool = True) -> Any: ...
def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | _Missing = MISSING,
    compare: bool = True,
    repr: bool = True,  # the dataclasses spelling
) -> Any:
    """A record field with options, as ``dataclasses.field`` spells them."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("a field takes a default or a default factory, not both")
    return Field(default, default_factory, compare, repr)


def compile_cached(source: str, filename: str) -> CodeType:
    """``source`` compiled (``exec`` mode), through a cache beside this module's bytecode.

    Kept as Python keeps a ``.pyc``: in the ``__pycache__`` that ``cache_from_source``
    names (so ``PYTHONPYCACHEPREFIX`` applies), not written under
    ``PYTHONDONTWRITEBYTECODE``. An entry is named by the interpreter's cache tag and a
    CRC-32 of the source, and holds the interpreter's version and the source itself
    beside the code: only an entry of this interpreter for this very source is used, so a
    checksum collision, a changed record or another build of Python compiles afresh. An
    unreadable entry is compiled afresh; a cache that cannot be written is skipped. It is
    as trusted as the ``.pyc`` files beside it.

    A CRC from ``binascii`` rather than a SHA-256 from ``hashlib``, and the folder from
    this module's own spec rather than ``importlib.util``: ``hashlib`` (OpenSSL) is
    3.2 ms of CPU to import and ``importlib.util`` 0.4-0.8 ms, ``binascii`` 0.4 ms, and
    a cold ``agc flow check`` (about 47 ms in a clean virtualenv) used neither otherwise.
    """
    encoded = source.encode()
    folder = _cache_folder()
    if folder is None:  # this interpreter caches no bytecode
        return compile(source, filename, "exec")
    key = f"{sys.implementation.cache_tag}-{binascii.crc32(encoded):08x}-{len(encoded):x}"
    path = os.path.join(folder, f"agent_graph.ir.generated-{key}.bin")
    try:
        with open(path, "rb") as handle:
            kept = marshal.loads(handle.read())
        if (
            isinstance(kept, tuple)
            and len(kept) == 3
            and kept[0] == sys.version
            and kept[1] == source
            and isinstance(kept[2], CodeType)
            and kept[2].co_filename == filename
        ):
            code: CodeType = kept[2]
            return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    if not sys.dont_write_bytecode:
        temporary = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(folder, exist_ok=True)
            with open(temporary, "wb") as handle:
                handle.write(marshal.dumps((sys.version, source, code)))
            os.replace(temporary, path)  # a reader sees the whole entry or none
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return code


#: ``sys.pycache_prefix`` as this module was imported, when its spec's ``cached`` path
#: was computed with it.
_PREFIX_AT_IMPORT: Final = sys.pycache_prefix


def _cache_folder() -> str | None:
    """The ``__pycache__`` folder of this module's bytecode, ``None`` when there is none."""
    cached: str | None = getattr(__spec__, "cached", None)
    if cached and sys.pycache_prefix == _PREFIX_AT_IMPORT:
        return os.path.dirname(cached)
    # the prefix changed since (or the spec names no bytecode): ask as the import system does
    from importlib.util import cache_from_source

    try:
        return os.path.dirname(cache_from_source(__file__))
    except (NotImplementedError, ValueError):
        return None


def _field_getter(index: int, doc: str) -> Any:
    """A class attribute reading field ``index``: the C accessor namedtuple uses."""
    fast = getattr(collections, "_tuplegetter", None)
    if fast is not None:
        return fast(index, doc)
    return property(operator.itemgetter(index), doc=doc)  # pragma: no cover - other Pythons


class _DataclassFields:
    """``__dataclass_fields__`` of a record, made on first use, so that
    ``dataclasses.fields``, ``replace`` and ``is_dataclass`` work on records while a
    process that never calls them never loads ``dataclasses``."""

    def __init__(self, annotations: dict[str, Any], fields: dict[str, Field]) -> None:
        self.annotations = annotations
        self.fields = fields
        self.made: dict[str, Any] | None = None

    def __get__(self, instance: object, owner: type) -> dict[str, Any]:
        if self.made is None:
            import dataclasses

            body: dict[str, Any] = {"__annotations__": dict(self.annotations)}
            for name, spec in self.fields.items():
                body[name] = (
                    dataclasses.field(default_factory=spec.default_factory)
                    if not isinstance(spec.default_factory, _Missing)
                    else dataclasses.field(default=spec.default)
                    if spec.default is not MISSING
                    else dataclasses.field()
                )
                body[name].compare, body[name].repr = spec.compare, spec.repr
            shadow: Any = dataclasses.dataclass(init=False, repr=False, eq=False)(
                type(owner.__name__, (), body)
            )
            self.made = shadow.__dataclass_fields__
        return self.made


def record_fields(cls: type) -> tuple[str, ...]:
    """The field names of ``cls``, a record or a dataclass, in declaration order
    (TypeError: neither)."""
    names = cls.__dict__.get("__record_fields__")
    if isinstance(names, tuple):
        return names
    if isinstance(cls, type) and hasattr(cls, "__dataclass_fields__"):
        import dataclasses  # a dataclass was made, so this costs nothing more

        return tuple(f.name for f in dataclasses.fields(cls))
    raise TypeError(f"{getattr(cls, '__name__', cls)!r} is not a record")


def is_record(cls: object) -> bool:
    """Whether ``cls`` is a record class or a dataclass (the IR takes either)."""
    return isinstance(cls, type) and (
        "__record_fields__" in cls.__dict__ or hasattr(cls, "__dataclass_fields__")
    )


def replace(obj: T, /, **changes: Any) -> T:
    """``dataclasses.replace`` for a record, without loading ``dataclasses``."""
    cls: Any = type(obj)
    values = {name: getattr(obj, name) for name in record_fields(cls)}
    unknown = changes.keys() - values.keys()
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    values.update(changes)
    made: T = cls(**values)
    return made


#: How annotations that declare no field start, as source text.
_NOT_FIELDS: Final = ("ClassVar", "typing.ClassVar", "InitVar", "dataclasses.InitVar")


def _is_class_var(hint: object) -> bool:
    # a ClassVar that is an object, not text: whoever wrote it has imported typing
    class_var = getattr(sys.modules.get("typing"), "ClassVar", None)
    return class_var is not None and (
        hint is class_var or getattr(hint, "__origin__", None) is class_var
    )


def _declared(cls: type) -> tuple[dict[str, Any], dict[str, Field]]:
    # the class's own annotations, unevaluated (inspect.get_annotations would load inspect)
    annotations: dict[str, Any] = dict(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063
    for name, hint in annotations.items():
        special = hint.startswith(_NOT_FIELDS) if isinstance(hint, str) else _is_class_var(hint)
        if special:
            raise TypeError(f"{cls.__name__}.{name}: a record has no class or init-only fields")
    if any("__record_fields__" in base.__dict__ for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__name__}: a record does not extend another record")
    fields: dict[str, Field] = {}
    for name in annotations:
        value = cls.__dict__.get(name, MISSING)
        fields[name] = value if isinstance(value, Field) else Field(value, MISSING, True, True)
    return annotations, fields


def _defaults(cls: type, fields: dict[str, Field]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields' defaults and default factories; a field without one after a field
    with one is refused, as a dataclass refuses it."""
    defaults = {n: f.default for n, f in fields.items() if f.default is not MISSING}
    factories = {
        n: f.default_factory
        for n, f in fields.items()
        if not isinstance(f.default_factory, _Missing)
    }
    seen_default = False
    for name in fields:
        if name in defaults or name in factories:
            seen_default = True
        elif seen_default:
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with")
    return defaults, factories


def _parameters(
    names: list[str], defaults: dict[str, Any], factories: dict[str, Any]
) -> tuple[list[str], str]:
    """The constructor's parameters and the lines that call the default factories."""
    params = [
        f"{n}=defaults[{n!r}]" if n in defaults else f"{n}=MISSING" if n in factories else n
        for n in names
    ]
    made = "".join(
        f"        if {n} is MISSING:\n            {n} = factories[{n!r}]()\n" for n in factories
    )
    return params, made


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
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
    repr of the fields with ``repr``, defaults and default factories), come from
    :func:`compile_cached`. ``dataclasses.fields``, ``replace`` and ``is_dataclass``
    work as on any dataclass; copies and pickles go through the constructor. Not a
    sequence to its users: iterating one is a ``TypeError``, as on a dataclass.
    """
    annotations, fields = _declared(cls)
    names = list(fields)
    specs = list(fields.values())
    defaults, factories = _defaults(cls, fields)
    compared = [i for i, f in enumerate(specs) if f.compare]

    def items(owner: str, chosen: list[int]) -> str:
        return "".join(f"{owner}[{i}], " for i in chosen)

    params, made_defaults = _parameters(names, defaults, factories)
    shown = ", ".join(f"{n}={{self[{i}]!r}}" for i, (n, f) in enumerate(fields.items()) if f.repr)
    every = len(compared) == len(specs)
    lines = [
        "def make(cls, frozen, new, defaults, factories, MISSING):",
        f"    def __new__(cls, {', '.join(params)}):",
        made_defaults + f"        return new(cls, ({''.join(f'{n}, ' for n in names)}))",
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
        "        raise frozen()(f'cannot assign to field {name!r}')",
        "    def __delattr__(self, name):",
        "        raise frozen()(f'cannot delete field {name!r}')",
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
    exec(compile_cached("\n".join(lines), f"<agent_graph.record {cls.__name__}>"), namespace)
    methods = namespace["make"](cls, _frozen_error, tuple.__new__, defaults, factories, MISSING)
    body = {
        key: value
        for key, value in cls.__dict__.items()
        if key not in ("__dict__", "__weakref__") and key not in fields
    }
    body["__slots__"] = ()
    body["__qualname__"] = cls.__qualname__
    body["__match_args__"] = tuple(names)
    body["__record_fields__"] = tuple(names)
    body["__dataclass_fields__"] = _DataclassFields(annotations, fields)
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


@dataclass_transform(field_specifiers=(field,))
def slotted(cls: type[T]) -> type[T]:
    """A mutable record: ``@dataclass(slots=True)`` semantics without ``dataclasses``.

    For the Flow front end's working records, made on every ``agc flow check``: its
    sixteen slotted dataclasses were the last users of ``dataclasses`` (and, through it,
    ``inspect``) on a cold check, about 13 ms of a 67 ms one in a clean virtualenv. The
    instance holds its fields in slots; ``__init__`` (defaults and default factories),
    ``__repr__`` and ``__eq__`` (field-wise, between instances of one class, over the
    fields with ``compare``) come from :func:`compile_cached`; unhashable, unordered, as a
    dataclass with ``eq=True``. ``dataclasses.fields`` works as on a dataclass.
    """
    annotations, fields = _declared(cls)
    names = list(fields)
    defaults, factories = _defaults(cls, fields)
    params, made_defaults = _parameters(names, defaults, factories)
    assigned = "".join(f"        self.{n} = {n}\n" for n in names) or "        pass\n"
    shown = ", ".join(f"{n}={{self.{n}!r}}" for n, f in fields.items() if f.repr)
    compared = [n for n, f in fields.items() if f.compare]

    def values(owner: str) -> str:
        return "(" + "".join(f"{owner}.{n}, " for n in compared) + ")"

    lines = [
        "def make(defaults, factories, MISSING):",
        f"    def __init__(self, {', '.join(params)}):",
        made_defaults + assigned.rstrip("\n"),
        "    def __repr__(self):",
        f'        return f"{{type(self).__qualname__}}({shown})"',
        "    def __eq__(self, other):",
        "        if other.__class__ is self.__class__:",
        f"            return {values('self')} == {values('other')}",
        "        return NotImplemented",
        "    return (__init__, __repr__, __eq__)",
    ]
    namespace: dict[str, Any] = {}
    exec(compile_cached("\n".join(lines), f"<agent_graph.slotted {cls.__name__}>"), namespace)
    methods = namespace["make"](defaults, factories, MISSING)
    body = {
        key: value
        for key, value in cls.__dict__.items()
        if key not in ("__dict__", "__weakref__") and key not in fields
    }
    body["__slots__"] = tuple(names)
    body["__qualname__"] = cls.__qualname__
    body["__match_args__"] = tuple(names)
    body["__hash__"] = None
    body["__dataclass_fields__"] = _DataclassFields(annotations, fields)
    for method in methods:
        body[method.__name__] = method
    made: Any = type(cls.__name__, cls.__bases__, body)
    for method in methods:
        method.__qualname__ = f"{made.__qualname__}.{method.__name__}"
    result: type[T] = made
    return result
