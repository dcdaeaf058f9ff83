"""How an IR record declares its wire form: one marker on each field, read by everyone.

A record field's Python type says what it holds; the marker in its ``Annotated`` type
says what that means to the codec and the verifier: a string to intern, a plain
integer, an index into a table (and whether NONE is allowed), a code within an
enumeration, a set of names as bits, a nested record. The codec's positional layout,
the generated decoders and bounds checks, and the dump's names for indexes are all
read from these markers through :func:`describe`. Before, each of those was its own
hand-kept table that had to agree with the records; now a new field is one
declaration, and nothing downstream can forget it.

Optionality comes from the type, not from the marker: ``str | None`` already says "may
be absent", and a second flag could disagree with it. Only an index's NONE (-1) does
not show in the type (the field is an ``int`` either way), so ``index(...,
optional=True)`` states it. :func:`describe` checks that marker and type agree, so a
field declared ``str`` with an index marker fails on import, not on a user's bytes.

An index names its table as (record, field), e.g. ``Graph.nodes``, and resolves in the
nearest enclosing record of that type: "this graph's nodes" and "the Program's
actions" are the same mechanism, so a second IR (a Flow IR, say) can declare its own
scoped tables. :func:`table_needs` works out, per record, which enclosing tables its
subtree indexes; a record set refuses an index that could be reached with no such
enclosing record, and the generated bounds checks pass exactly those table sizes down.
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from ..frozen import is_record, record, record_fields

NONE = -1  # "no index" in optional index fields


@record
class Table:
    """A list-of-records field that index fields point into: ``record.field``."""

    record: str
    field: str

    def __str__(self) -> str:
        return f"{self.record}.{self.field}"


@record
class Wire:
    """The marker on one field: its ``kind`` and, for index-like kinds, what it points at.

    ``table``: the table an ``index``/``indexes``/``named_indexes`` field points into.
    ``names``: the enumeration a ``code`` indexes, or whose members a ``bits`` mask holds.
    ``none``: an ``index`` may be NONE.
    """

    kind: str
    table: Table | None = None
    names: tuple[str, ...] | None = None
    none: bool = False


TEXT = Wire("text")  # str; interned
INTEGER = Wire("integer")  # int, no bound
FLAG = Wire("flag")  # bool
JSON = Wire("json")  # a JSON value, stored as itself (decoding checks it is JSON data)
TEXTS = Wire("texts")  # tuple[str, ...]
TEXT_PAIR = Wire("pair")  # tuple[str, str] | None
RECORD = Wire("record")  # a nested record (its class is the field's type)
RECORDS = Wire("records")  # a tuple of nested records


def index(table: Table, *, optional: bool = False) -> Wire:
    """An int indexing ``table``; ``optional``: NONE is allowed too."""
    return Wire("index", table=table, none=optional)


def indexes(table: Table) -> Wire:
    """A tuple of ints, each indexing ``table``."""
    return Wire("indexes", table=table)


def named_indexes(table: Table) -> Wire:
    """A tuple of (name, int) pairs, each int indexing ``table``."""
    return Wire("named_indexes", table=table)


def code(names: tuple[str, ...]) -> Wire:
    """An int naming one of ``names`` by position."""
    return Wire("code", names=names)


def bits(names: tuple[str, ...]) -> Wire:
    """A non-empty set of ``names`` as an int, bit ``i`` standing for ``names[i]``."""
    return Wire("bits", names=names)


@record
class Field:
    """One described field: its ``name``, ``wire`` marker, layout ``code`` (``s``, ``s?``,
    ``R?:Gate`` …, see :data:`CODES`), whether its value may be None (``optional``) and,
    for nested records, their class (``record``)."""

    name: str
    wire: Wire
    code: str
    optional: bool
    record: type | None


#: Layout codes, as the codec writes them: s str, s? optional str, i int, b bool,
#: b? optional bool, j JSON value, I tuple of ints, S tuple of str, P (str, int) pairs,
#: E optional (str, str), R:X record, R?:X optional record, L:X tuple of records,
#: L?:X optional tuple of records.
CODES = ("s", "s?", "i", "b", "b?", "j", "I", "S", "P", "E", "R:", "R?:", "L:", "L?:")

# Plain kinds: (the type the field must have, its code, its code when optional).
_PLAIN: dict[str, tuple[Any, str | None, str | None]] = {
    "text": (str, "s", "s?"),
    "integer": (int, "i", None),
    "index": (int, "i", None),
    "code": (int, "i", None),
    "bits": (int, "i", None),
    "flag": (bool, "b", "b?"),
    "json": (Any, "j", None),
    "texts": (tuple[str, ...], "S", None),
    "indexes": (tuple[int, ...], "I", None),
    "named_indexes": (tuple[tuple[str, int], ...], "P", None),
    "pair": (tuple[str, str], None, "E"),
}


def _field(cls: type, name: str, hint: Any) -> Field:
    where = f"{cls.__name__}.{name}"
    if get_origin(hint) is not Annotated:
        raise TypeError(f"{where} has no wire marker (declare it as Annotated[type, marker])")
    base, *extras = get_args(hint)
    markers = [extra for extra in extras if isinstance(extra, Wire)]
    if len(markers) != 1:
        raise TypeError(f"{where} needs exactly one wire marker, has {len(markers)}")
    wire = markers[0]
    members = get_args(base) if isinstance(base, types.UnionType) else ()
    optional = type(None) in members
    if optional:
        rest = [member for member in members if member is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"{where}: a union of several types has no wire form")
        base = rest[0]
    if wire.kind in _PLAIN:
        expected, plain, when_optional = _PLAIN[wire.kind]
        layout = when_optional if optional else plain
        if base != expected or layout is None:
            wanted = f"{expected} | None" if plain is None else str(expected)
            raise TypeError(f"{where}: a {wire.kind} field must be {wanted}, not {hint}")
        return Field(name, wire, layout, optional, None)
    if wire.kind == "record":
        record = base
        prefix = "R"
    elif wire.kind == "records":
        # tuple[Record, ...]; or Sequence[Record] where a reader may hand out a lazy
        # sequence (Program.graphs: see codec.LazyGraphs) instead of a tuple
        args = get_args(base)
        if get_origin(base) is Sequence and len(args) == 1:
            args = (args[0], Ellipsis)
        elif get_origin(base) is not tuple or len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"{where}: a records field must be tuple[Record, ...], not {hint}")
        record = args[0]
        prefix = "L"
    else:
        raise TypeError(f"{where}: unknown wire kind {wire.kind!r}")
    if not is_record(record):
        raise TypeError(f"{where}: {record!r} is not a record")
    code_ = f"{prefix}{'?' if optional else ''}:{record.__name__}"
    return Field(name, wire, code_, optional, record)


_DESCRIBED: dict[type, tuple[Field, ...]] = {}


def describe(cls: type) -> tuple[Field, ...]:
    """The fields of record ``cls`` in declaration (wire) order, with their markers."""
    found = _DESCRIBED.get(cls)
    if found is None:
        names = record_fields(cls)
        hints = get_type_hints(cls, include_extras=True)
        found = _DESCRIBED[cls] = tuple(_field(cls, name, hints[name]) for name in names)
    return found


def table_needs(records: Mapping[type, tuple[Field, ...]]) -> dict[type, frozenset[Table]]:
    """Per record, the tables its fields and nested records index that it does not own
    (a record owns the tables that are its own list-of-records fields).

    What a record needs must be passed down by the records around it; a root that
    still needs a table indexes it outside any record that has one.
    """
    owned = {
        cls: frozenset(Table(cls.__name__, f.name) for f in fields if f.wire.kind == "records")
        for cls, fields in records.items()
    }
    needs: dict[type, frozenset[Table]] = {cls: frozenset() for cls in records}
    changed = True
    while changed:  # a fixpoint, so records that nest themselves are fine
        changed = False
        for cls, fields in records.items():
            wanted = {f.wire.table for f in fields if f.wire.table is not None}
            for f in fields:
                if f.record is not None:
                    wanted |= needs[f.record]
            result = frozenset(wanted) - owned[cls]
            if result != needs[cls]:
                needs[cls], changed = result, True
    return needs
