"""Canonical msgpack encoding of a set of IR records, and a decoder that trusts nothing.

Layout: ``[MAGIC, FORMAT_VERSION, sha256(body), body]`` where ``body`` is the msgpack
of ``[strings, root]``. Records are positional arrays in field order; strings are
interned in ``strings`` and stored as indexes; JSON values are stored as themselves.

None of this is specific to the Program: a :class:`RecordSet` names a magic, a
version, a root record and the records below it, and everything else (the layout,
the decoders, the bounds checks) is derived from the records' wire markers
(:mod:`.schema`). Another kind of compiled document declares its own records and its
own verifier and gets the same interning, digesting and distrust for free.

Decoding checks the magic, the version, the body digest, every field's type (a JSON
field must hold JSON data, nested no deeper than a source can be), every index bound
and then the record set's own ``verify`` (the semantic rules that are not per-field
bounds), so damaged or truncated bytes raise ``ir-corrupt`` instead of an IndexError,
a RecursionError or a wrong answer. A document's digest is the SHA-256 of its whole
bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from hashlib import sha256
from typing import Any, Final, Generic, TypeVar

import msgpack

from .. import codes
from ..collector import collector_paused
from ..errors import AgentGraphError
from .decoders import (
    Checker,
    Decoder,
    PartChecker,
    build_checker,
    build_checkers,
    build_decoders,
    corrupt,
)
from .schema import Field, Table, describe, table_needs

__all__ = [
    "RecordSet",
    "Span",
    "corrupt",
    "decode",
    "digest_of",
    "encode",
    "unpack",
    "unpack_deferring",
]

T = TypeVar("T")


class RecordSet(Generic[T]):
    """One kind of compiled document: its header and the records it is made of.

    ``records``: every record type reachable from ``root`` (``root`` included), so the
    set is visible where it is declared. ``verify``: semantic checks run after decoding
    and the generated bounds checks (it may assume every index is in range).
    ``rebuild``: what the version error tells a reader to do.
    """

    def __init__(
        self,
        *,
        magic: str,
        version: int,
        root: type[T],
        records: tuple[type, ...],
        verify: Callable[[T], None] | None = None,
        rebuild: str = "recompile it",
    ) -> None:
        self.magic, self.version, self.root = magic, version, root
        self.verify, self.rebuild = verify, rebuild
        self.fields: dict[type, tuple[Field, ...]] = {cls: describe(cls) for cls in records}
        self.by_name: dict[str, type] = {cls.__name__: cls for cls in records}
        self.layout: dict[type, tuple[str, ...]] = {
            cls: tuple(f.code for f in fields) for cls, fields in self.fields.items()
        }
        self._plan = {
            cls: tuple((f.code, f.name) for f in fields) for cls, fields in self.fields.items()
        }
        self._check_closed()
        self._decoders: dict[type, Decoder] | None = None
        self._encoders: dict[type, _Encode] | None = None
        self._checker: Checker | None = None
        self._checkers: dict[type, PartChecker] | None = None

    def _check_closed(self) -> None:
        if len(self.by_name) != len(self.fields):
            raise TypeError("two records of one set share a name")
        reached, todo = {self.root}, [self.root]
        while todo:
            for f in describe(todo.pop()):
                if f.record is not None and f.record not in reached:
                    reached.add(f.record)
                    todo.append(f.record)
        if reached != set(self.fields):
            missing = sorted(c.__name__ for c in reached ^ set(self.fields))
            raise TypeError(f"records must be exactly those reachable from the root: {missing}")
        for fields in self.fields.values():
            for f in fields:
                table = f.wire.table
                if table is None:
                    continue
                owner = self.by_name.get(table.record)
                kinds = {g.name: g.wire.kind for g in describe(owner)} if owner else {}
                if kinds.get(table.field) != "records":
                    raise TypeError(f"{f.name} points into {table}, which is not a table")
        stray = table_needs(self.fields)[self.root]
        if stray:
            raise TypeError(f"indexes into {sorted(map(str, stray))} outside their owner")

    def decoders(self) -> dict[type, Decoder]:
        if self._decoders is None:  # generated on first use: importing stays cheap
            self._decoders = build_decoders(self.fields)
        return self._decoders

    def check_part(self, cls: type, value: Any, sizes: Mapping[Table, int]) -> None:
        """The generated bounds and code checks of one ``cls`` record inside the root,
        ``sizes`` giving the lengths of the enclosing tables it indexes (a lazy decoder
        checks a part when it decodes it; ``verify`` is then the caller's)."""
        if self._checkers is None:
            self._checkers = build_checkers(self.fields, self.root)
        found = self._checkers.get(cls)
        if found is not None:
            check, tables = found
            check(value, *(sizes[table] for table in tables))

    def check(self, value: T) -> None:
        """Refuse ``value`` unless every index is within its table and every code within
        its enumeration, and ``verify`` accepts it (raises ``ir-corrupt``)."""
        if self._checker is None:
            self._checker = build_checker(self.fields, self.root)
        self._checker(value)
        if self.verify is not None:
            self.verify(value)


# -- encoding -----------------------------------------------------------------------------


_Encode = Callable[[Any, dict[str, int], dict[type, Any]], list[Any]]


def _field_expression(code: str, name: str) -> str:
    """The wire value of field ``name`` of ``v`` (strings interned in ``D``, records
    encoded by ``E``), left to right as the fields come: the string table's order."""
    intern = "D.setdefault({0}, len(D))"
    if code in ("i", "b", "b?", "j"):
        return f"v.{name}"
    if code in ("s", "s?"):
        value = intern.format("x")
    elif code == "I":
        value = "list(x)"
    elif code == "S":
        value = f"[{intern.format('t')} for t in x]"
    elif code == "P":
        value = f"[[{intern.format('t')}, k] for t, k in x]"
    elif code == "E":
        value = f"[{intern.format('x[0]')}, {intern.format('x[1]')}]"
    elif code.startswith(("L:", "L?:")):
        value = "[E[type(t)](t, D, E) for t in x]"
    else:  # R:/R?:
        value = "E[type(x)](x, D, E)"
    return f"None if (x := v.{name}) is None else {value}"


def _build_encoders(plan: dict[type, tuple[tuple[str, str], ...]]) -> dict[type, _Encode]:
    """``enc(record, strings, encoders)`` per record type, generated once: one list
    display per record instead of a Python call per field (a 10,000-node IR is 260,000
    fields)."""
    source = []
    for cls, fields in plan.items():
        values = ", ".join(_field_expression(code, name) for code, name in fields)
        source.append(f"def enc_{cls.__name__}(v, D, E):\n    return [{values}]")
    namespace: dict[str, Any] = {}
    exec(compile("\n\n".join(source), "<agent_graph.ir.encoders>", "exec"), namespace)
    return {cls: namespace[f"enc_{cls.__name__}"] for cls in plan}


def encode(records: RecordSet[T], value: T) -> bytes:
    if records._encoders is None:
        records._encoders = _build_encoders(records._plan)
    encoders = records._encoders
    strings: dict[str, int] = {}  # insertion order is the string table's order
    with collector_paused():
        tree = encoders[type(value)](value, strings, encoders)
    body = msgpack.packb([list(strings), tree], use_bin_type=True)
    header = [records.magic, records.version, sha256(body).digest(), body]
    return bytes(msgpack.packb(header, use_bin_type=True))


def digest_of(data: bytes) -> str:
    return "sha256:" + sha256(data).hexdigest()


# -- decoding -----------------------------------------------------------------------------


def decode(records: RecordSet[T], data: bytes, *, expected_digest: str | None = None) -> T:
    """Decode and verify bytes (``expected_digest`` pins the whole bytes, as a bundle does)."""
    with collector_paused():  # cuts a cold load of a large Program by about a third
        return _decode(records, data, expected_digest)


_ONLY_STR: Final = frozenset((str,))


def _decode(records: RecordSet[T], data: bytes, expected_digest: str | None) -> T:
    strings, tree = unpack(records, data, expected_digest)
    value: T = records.decoders()[records.root](tree, strings, len(strings))
    records.check(value)
    return value


def _checked_body(records: RecordSet[Any], data: bytes, expected_digest: str | None) -> bytes:
    """The body of ``data`` after checking the digest pin and the header (magic, version,
    body digest)."""
    if expected_digest is not None and digest_of(data) != expected_digest:
        raise corrupt(f"digest {digest_of(data)} does not match the expected {expected_digest}")
    try:
        outer = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True)
    except Exception as exc:  # msgpack raises several unrelated types
        raise corrupt(f"not a msgpack document ({type(exc).__name__})") from None
    if not isinstance(outer, list) or len(outer) != 4 or outer[0] != records.magic:
        raise corrupt(f"missing the {records.magic} header")
    if type(outer[1]) is not int or outer[1] != records.version:
        raise AgentGraphError(
            codes.IR_VERSION_UNSUPPORTED,
            f"Compiled IR format {outer[1]!r} is not supported "
            f"(this build reads {records.version}); {records.rebuild}",
        )
    body = outer[3]
    if not isinstance(body, bytes) or not isinstance(outer[2], bytes):
        raise corrupt("malformed header")
    if sha256(body).digest() != outer[2]:
        raise corrupt("body digest mismatch")
    return body


def _check_strings(strings: Any) -> list[str]:
    if not isinstance(strings, list):
        raise corrupt("missing string table")
    if not set(map(type, strings)) <= _ONLY_STR:  # one C pass, not a generator a string
        raise corrupt("string table holds a non-string")
    return strings


def unpack(
    records: RecordSet[Any], data: bytes, expected_digest: str | None = None
) -> tuple[list[str], Any]:
    """The string table and the undecoded root of ``data``, after checking the digest
    pin, the header (magic, version, body digest) and the string table: what a decoder
    that decodes parts later (a lazy one) must still check up front."""
    body = _checked_body(records, data, expected_digest)
    try:
        strings, tree = msgpack.unpackb(body, raw=False, strict_map_key=True, use_list=True)
    except Exception as exc:
        raise corrupt(f"body is not msgpack ({type(exc).__name__})") from None
    return _check_strings(strings), tree


class Span:
    """Where one undecoded value lies in an IR body (left unread by :func:`unpack_deferring`)."""

    __slots__ = ("body", "end", "start")

    def __init__(self, body: bytes, start: int, end: int) -> None:
        self.body, self.start, self.end = body, start, end

    def read(self) -> Any:
        try:
            return msgpack.unpackb(
                self.body[self.start : self.end], raw=False, strict_map_key=True, use_list=True
            )
        except Exception as exc:
            raise corrupt(f"body is not msgpack ({type(exc).__name__})") from None


def unpack_deferring(
    records: RecordSet[Any],
    data: bytes,
    expected_digest: str | None,
    field: Field,
    deferred: frozenset[str],
) -> tuple[list[str], list[Any]]:
    """:func:`unpack` for a lazy decoder: the root's records field ``field`` is a list of
    records whose ``deferred`` fields are left unread, each a :class:`Span` (msgpack skips
    them without building their objects: a Program's graphs' nodes and edges, most of a
    large IR). Malformed data is ``ir-corrupt``, as from :func:`unpack`."""
    root = records.root.__name__
    fields = [f.name for f in describe(records.root)]
    at = fields.index(field.name)
    assert field.record is not None
    item_name = field.record.__name__
    skipped = frozenset(i for i, f in enumerate(describe(field.record)) if f.name in deferred)
    body = _checked_body(records, data, expected_digest)
    unpacker = msgpack.Unpacker(
        raw=False, strict_map_key=True, use_list=True, max_buffer_size=max(len(body), 1)
    )
    unpacker.feed(body)
    try:
        if unpacker.read_array_header() != 2:
            raise corrupt("body is not msgpack (a string table and a root)")
        strings = _check_strings(unpacker.unpack())
        tree: list[Any] = []
        width = _array_header(unpacker, f"malformed {root} record")
        for index in range(width):
            if index != at:
                tree.append(unpacker.unpack())
                continue
            items: list[Any] = []
            for _ in range(_array_header(unpacker, f"{root}.{field.name}: expected a list")):
                item: list[Any] = []
                for position in range(_array_header(unpacker, f"malformed {item_name} record")):
                    if position in skipped:
                        start = unpacker.tell()
                        unpacker.skip()
                        item.append(Span(body, start, unpacker.tell()))
                    else:
                        item.append(unpacker.unpack())
                items.append(item)
            tree.append(items)
        if unpacker.tell() != len(body):
            raise corrupt("body is not msgpack (ExtraData)")
    except AgentGraphError:
        raise
    except Exception as exc:  # msgpack raises several unrelated types
        raise corrupt(f"body is not msgpack ({type(exc).__name__})") from None
    return strings, tree


def _array_header(unpacker: Any, problem: str) -> int:
    try:
        size: int = unpacker.read_array_header()
    except Exception:  # not an array (or truncated): a malformed record
        raise corrupt(problem) from None
    return size
