"""Per-record decoders and bounds checks, generated from the records' wire markers.

A generic field interpreter spends most of a cold load dispatching on field codes;
straight-line functions, one per record type, check the same things (shape, every
type, every string index) several times faster. The same holds for the bounds pass:
a walk that asks each field's marker what it points at would cost more than the
decoding. So both are generated once per record set, on first use, from
:func:`.schema.describe`, and the markers stay the single description.

A bounds check needs the size of the table an index points into, and the table lives
in an enclosing record (``Graph.nodes`` for an edge's ends). Each generated checker
takes, as arguments, the sizes of exactly the tables its subtree needs
(:func:`.schema.table_needs`) and computes the sizes of the tables it owns; records
whose subtree holds no index are not visited at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from .. import codes
from ..errors import AgentGraphError
from ..frozen import compile_cached as _compile
from . import records as r
from .schema import NONE, Field, Table, table_needs

Decoder = Callable[[Any, list[str], int], Any]
Checker = Callable[[Any], None]


def corrupt(message: str) -> AgentGraphError:
    return AgentGraphError(codes.IR_CORRUPT, f"Compiled IR is damaged: {message}")


def _bad(message: str) -> NoReturn:
    raise corrupt(message)


def _string(value: Any, strings: list[str], count: int, where: str) -> str:
    if type(value) is not int or not 0 <= value < count:
        _bad(f"{where}: string index out of range")
    return strings[value]


def _json(value: Any, where: str) -> Any:
    """``value``, which must be JSON data as a compiled value holds it, frozen.

    JSON data: None, booleans, strings, integers within ±:data:`~.records.MAX_JSON_INT`,
    floats, arrays, and objects with string keys, nested at most
    :data:`~.records.MAX_JSON_DEPTH` deep. msgpack can carry more (bytes, extension
    types and timestamps, bytes keys, 64-bit integers, any depth), and none of it may
    reach the VM or the dump. Strings need no check: msgpack's strings are UTF-8, which
    cannot encode a lone surrogate, so the unpacker already refused one.

    Floats may be NaN or infinite: a valid Provider can hold them (YAML ``.nan`` and
    ``.inf`` are numbers to the graph and input schemas), so its IR must keep decoding.
    """
    kind = type(value)
    if kind is str or kind is bool or kind is float or value is None:
        return value  # most values are scalars: no walk
    todo: list[tuple[Any, int]] = [(value, 0)]  # (item, containers around it)
    while todo:
        item, around = todo.pop()
        kind = type(item)
        if kind is str or kind is bool or kind is float or item is None:
            continue
        if kind is int:
            if not -r.MAX_JSON_INT <= item <= r.MAX_JSON_INT:
                _bad(f"{where}: the integer {item} is outside the JSON number range")
        elif kind is list or kind is dict:
            if around >= r.MAX_JSON_DEPTH:
                _bad(f"{where}: nested more than {r.MAX_JSON_DEPTH} levels deep")
            if kind is dict:
                if any(type(key) is not str for key in item):
                    _bad(f"{where}: an object key is not a string")
                item = item.values()
            todo.extend((child, around + 1) for child in item)
        else:
            _bad(f"{where}: a {kind.__name__} is not JSON data")
    return r.freeze_json(value)


def _out_of_range(record: Any, field: str, value: Any) -> NoReturn:
    ident = getattr(record, "id", None)
    name = type(record).__name__ + (f" {ident}" if isinstance(ident, str) else "")
    _bad(f"{name}: {field} {value!r} out of range")


# -- decoders -----------------------------------------------------------------------------


def _field(code: str, src: str, where: str) -> tuple[list[str], str]:
    """Statements checking ``src`` and the expression of the decoded value."""
    optional = code.endswith("?") or "?:" in code or code == "E"
    guard = f"{src} is None" if optional else None
    lines: list[str] = []
    if code in ("s", "s?"):
        expr = f"_string({src}, S, n, {where!r})"
    elif code == "i":
        lines.append(f"if type({src}) is not int: _bad({where + ': expected an integer'!r})")
        expr = src
    elif code in ("b", "b?"):
        lines.append(
            f"if {src} is not None and type({src}) is not bool: "
            f"_bad({where + ': expected a boolean'!r})"
            if optional
            else f"if type({src}) is not bool: _bad({where + ': expected a boolean'!r})"
        )
        return lines, src
    elif code == "j":
        return lines, f"_json({src}, {where!r})"
    elif code == "I":
        lines.append(
            f"if type({src}) is not list or any(type(e) is not int for e in {src}): "
            f"_bad({where + ': expected a list of integers'!r})"
        )
        expr = f"tuple({src})"
    elif code == "S":
        lines.append(f"if type({src}) is not list: _bad({where + ': expected a list'!r})")
        expr = f"tuple([_string(e, S, n, {where!r}) for e in {src}])"
    elif code == "P":
        lines.append(
            f"if type({src}) is not list or any(type(p) is not list or len(p) != 2 "
            f"or type(p[1]) is not int for p in {src}): _bad({where + ': expected pairs'!r})"
        )
        expr = f"tuple([(_string(p[0], S, n, {where!r}), p[1]) for p in {src}])"
    elif code == "E":
        lines.append(
            f"if {src} is not None and (type({src}) is not list or len({src}) != 2): "
            f"_bad({where + ': expected a pair'!r})"
        )
        expr = f"(_string({src}[0], S, n, {where!r}), _string({src}[1], S, n, {where!r}))"
    else:
        kind, name = code.split(":", 1)
        if kind.startswith("L"):
            lines.append(f"if {src} is not None and type({src}) is not list: "
                         f"_bad({where + ': expected a list'!r})")  # fmt: skip
            expr = f"tuple([dec_{name}(e, S, n) for e in {src}])"
        else:
            expr = f"dec_{name}({src}, S, n)"
    if guard is None:
        lines.append(f"if {src} is None: _bad({where + ': missing value'!r})")
        return lines, expr
    return lines, f"(None if {guard} else {expr})"


def _namespace(records: Mapping[type, tuple[Field, ...]]) -> dict[str, Any]:
    return {
        "_bad": _bad,
        "_string": _string,
        "_range": _out_of_range,
        "_json": _json,
        **{cls.__name__: cls for cls in records},
    }


def build_decoders(records: Mapping[type, tuple[Field, ...]]) -> dict[type, Decoder]:
    """``dec(value, strings, len(strings))`` per record: shape, types, string indexes."""
    source: list[str] = []
    for cls, fields in records.items():
        name = cls.__name__
        args = [f"v{i}" for i in range(len(fields))]
        body = [
            f"def dec_{name}(v, S, n):",
            f"    if type(v) is not list or len(v) != {len(fields)}: "
            f"_bad('malformed {name} record')",
            f"    {', '.join(args)}{',' if len(args) == 1 else ''} = v",
        ]
        values = []
        for arg, f in zip(args, fields, strict=True):
            lines, expr = _field(f.code, arg, f"{name}.{f.name}")
            body += [f"    {line}" for line in lines]
            values.append(expr)
        body.append(f"    return {name}({', '.join(values)})")
        source.append("\n".join(body))
    namespace = _namespace(records)
    exec(_compile("\n\n".join(source), "<agent_graph.ir.decoders>"), namespace)
    return {cls: namespace[f"dec_{cls.__name__}"] for cls in records}


# -- bounds checks ------------------------------------------------------------------------


def _size(table: Table) -> str:
    return f"t_{table.record}_{table.field}"


def _bound(f: Field) -> list[str]:
    """Statements refusing ``v``, the value of ``f``, when it is outside its table or enum."""
    wire, fail = f.wire, f"_range(x, {f.name!r}, v)"
    if wire.kind == "code":
        assert wire.names is not None
        return [f"if not 0 <= v < {len(wire.names)}: {fail}"]
    if wire.kind == "bits":  # a non-empty set of the names
        assert wire.names is not None
        return [f"if not 0 < v < {1 << len(wire.names)}: {fail}"]
    assert wire.table is not None
    size = _size(wire.table)
    if wire.kind == "index":
        none = f" and v != {NONE}" if wire.none else ""
        return [f"if not 0 <= v < {size}{none}: {fail}"]
    if wire.kind == "indexes":
        return [f"if v and (min(v) < 0 or max(v) >= {size}): {fail}"]
    assert wire.kind == "named_indexes"
    return ["for p in v:", f"    if not 0 <= p[1] < {size}: {fail}"]


def build_checker(records: Mapping[type, tuple[Field, ...]], root: type) -> Checker:
    """A function refusing a ``root`` value with any index outside its table or enum."""
    checkers = build_checkers(records, root)
    if root not in checkers:
        return lambda value: None
    check, tables = checkers[root]
    assert not tables  # the record set refuses a root that needs an enclosing table
    return lambda value: check(value)


#: A record's generated check and the tables (enclosing records' lists) whose sizes it
#: takes, in argument order.
PartChecker = tuple[Callable[..., None], tuple[Table, ...]]


def build_checkers(
    records: Mapping[type, tuple[Field, ...]], root: type
) -> dict[type, PartChecker]:
    """Per record with an index or code in its subtree, its generated check: a lazy
    decoder checks one part (a graph) with the sizes of the tables around it."""
    needs = table_needs(records)
    bounded = {cls for cls, fields in records.items() if any(_bounded(f) for f in fields)}
    changed = True
    while changed:  # and every record with a bounded record inside
        changed = False
        for cls, fields in records.items():
            if cls not in bounded and any(f.record in bounded for f in fields):
                bounded.add(cls)
                changed = True
    if root not in bounded:
        return {}

    def ordered(cls: type) -> list[Table]:
        return sorted(needs[cls], key=_size)

    def params(cls: type) -> list[str]:
        return [_size(table) for table in ordered(cls)]

    source: list[str] = []
    for cls, fields in records.items():
        if cls not in bounded:
            continue
        body = [f"def chk_{cls.__name__}({', '.join(['x', *params(cls)])}):"]
        used = {f.wire.table for f in fields if _bounded(f) and f.wire.table is not None}
        for f in fields:
            if f.record is not None:
                used |= needs[f.record]
        for f in fields:  # the sizes of the tables this record owns and something uses
            if f.wire.kind == "records" and Table(cls.__name__, f.name) in used:
                size = f"len(x.{f.name})"
                if f.optional:
                    size = f"({size} if x.{f.name} is not None else 0)"
                body.append(f"    {_size(Table(cls.__name__, f.name))} = {size}")
        for f in fields:
            if _bounded(f):
                body += [f"    v = x.{f.name}", *(f"    {line}" for line in _bound(f))]
            elif f.record in bounded:
                assert f.record is not None
                call = f"chk_{f.record.__name__}({', '.join(['{}', *params(f.record)])})"
                indent = "    "
                body.append(f"    v = x.{f.name}")
                if f.optional:
                    body.append("    if v is not None:")
                    indent += "    "
                if f.wire.kind == "records":
                    body += [f"{indent}for e in v:", f"{indent}    {call.format('e')}"]
                else:
                    body.append(f"{indent}{call.format('v')}")
        source.append("\n".join(body))
    namespace = _namespace(records)
    exec(_compile("\n\n".join(source), "<agent_graph.ir.checks>"), namespace)
    return {cls: (namespace[f"chk_{cls.__name__}"], tuple(ordered(cls))) for cls in bounded}


def _bounded(f: Field) -> bool:
    return f.wire.kind in ("index", "indexes", "named_indexes", "code", "bits")
