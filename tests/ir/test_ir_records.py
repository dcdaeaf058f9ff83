"""The records are the one description of the IR: everything else is derived from them.

Every field carries a wire marker; the layout derived from the markers is exactly
format 1 (written out below as the regression anchor); the layouts of the Program's
and the Flow program's record sets are pinned per FORMAT_VERSION, so a layout change
without a version bump fails; every field whose marker names a table, an enumeration
or a bit set refuses its first out-of-range value; and the codec, the bounds checks
and the dump work for a record set other than the Program's.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, get_args, get_type_hints

import msgpack
import pytest

import agent_graph
from agent_graph.errors import AgentGraphError
from agent_graph.ir import codec, flow_program, wire
from agent_graph.ir import records as r
from agent_graph.ir.dump import Renderer, View
from agent_graph.ir.schema import (
    JSON,
    NONE,
    RECORD,
    RECORDS,
    TEXT,
    TEXTS,
    Table,
    Wire,
    code,
    describe,
    index,
    indexes,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = sorted(m.parent.name for m in EXAMPLES.glob("*/provider.yaml"))

# Format 1, as it was written by hand before the layout was derived from the records.
# If this test fails, the bytes changed: bump codec.FORMAT_VERSION (so older IR is
# "recompile", not "damaged") and write the new layout here.
FORMAT_1 = {
    "FactCheck": "S i j",
    "ResourceLists": "I I",
    "Delegated": "b i R?:ResourceLists",
    "Gate": "s s s? b? i i R?:Delegated S",
    "Node": "s i s? s? i b L?:FactCheck L?:FactCheck s? i R?:Gate i s? R?:ResourceLists I I I",
    "Edge": "i i i i",
    "Graph": "s s s P L:Node L:Edge I S",
    "FileRef": "s s s s s E",
    "Action": "s s s s s? s? s? S s? R?:FileRef R?:FileRef R?:FileRef",
    "HostInput": "s s s j",
    "Resource": "s s s i s s? s? i R?:HostInput",
    "CatalogEntry": "s s s s? i j",
    "ProviderIR": "s s s L:Graph L:Action L:Resource L?:CatalogEntry",
}

BOUNDED = ("index", "indexes", "named_indexes", "code", "bits")


@cache
def compiled(name: str) -> bytes:
    return agent_graph.compile_provider(EXAMPLES / name / "provider.yaml").to_bytes()


def decode_error(data: bytes, records: wire.RecordSet[Any] = codec.PROGRAM) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as info:
        wire.decode(records, data)
    return info.value


def repack(strings: Any, tree: Any, *, magic: str = codec.MAGIC, version: int = 1) -> bytes:
    body = msgpack.packb([strings, tree], use_bin_type=True)
    header = [magic, version, hashlib.sha256(body).digest(), body]
    return bytes(msgpack.packb(header, use_bin_type=True))


# -- the description ----------------------------------------------------------------------


def test_every_record_field_has_exactly_one_wire_marker() -> None:
    for cls in r.PROGRAM_RECORDS:
        hints = get_type_hints(cls, include_extras=True)
        for f in dataclasses.fields(cls):
            markers = [m for m in get_args(hints[f.name])[1:] if isinstance(m, Wire)]
            assert len(markers) == 1, f"{cls.__name__}.{f.name}"
        assert [f.name for f in describe(cls)] == [f.name for f in dataclasses.fields(cls)]


def test_the_derived_layout_is_format_1() -> None:
    assert codec.FORMAT_VERSION == 1
    derived = {cls.__name__: " ".join(codes) for cls, codes in codec.LAYOUT.items()}
    assert derived == FORMAT_1, "the IR layout changed: bump FORMAT_VERSION, update FORMAT_1"


def test_the_record_set_is_every_record_reachable_from_the_program() -> None:
    assert set(codec.LAYOUT) == set(r.PROGRAM_RECORDS)
    assert {cls.__name__: cls for cls in r.PROGRAM_RECORDS} == codec.BY_NAME


# -- a layout change needs a new FORMAT_VERSION -------------------------------------------

#: Per record set (by magic), per FORMAT_VERSION, the fingerprint of its layout. A reader
#: refuses bytes of another version as "recompile"; bytes of the same version in another
#: layout would be "damaged", or worse, read wrongly. So when a fingerprint below stops
#: matching, bump that set's FORMAT_VERSION and pin the new fingerprint under the new
#: version (keep the old pins: they record what each version meant).
PINNED_LAYOUTS: dict[str, dict[int, str]] = {
    "agent-graph.ir": {
        1: "b8fe61f201ec3c6f116d2df35130f65e20433d7a95a38592f80f98f1b2d823c3",
    },
    "agent-graph.flow-ir": {
        1: "474f4c753c3b8296f5a53bcac16d9ea6f1b428806248d3a30e23fc0dca2c1594",
    },
}


def layout_fingerprint(records: wire.RecordSet[Any]) -> str:
    """SHA-256 of what a record set's bytes mean: per record, each field's layout code,
    marker kind, the table it indexes, whether NONE is allowed, and the enumeration its
    integers name. Records are numbered in the order a walk from the root through the
    fields first meets them, and tables are (record number, field position): record and
    field names are not on the wire, so renaming one needs no new version."""
    number: dict[type, int] = {}

    def visit(cls: type) -> None:
        number[cls] = len(number)
        for f in records.fields[cls]:
            if f.record is not None and f.record not in number:
                visit(f.record)

    visit(records.root)
    by_name = {cls.__name__: cls for cls in records.fields}

    def table(t: Table | None) -> list[int] | None:
        if t is None:
            return None
        owner = by_name[t.record]
        return [number[owner], [f.name for f in records.fields[owner]].index(t.field)]

    layout = [
        [
            [
                f.code.partition(":")[0] + ("" if f.record is None else f":{number[f.record]}"),
                f.wire.kind,
                table(f.wire.table),
                f.wire.none,
                None if f.wire.names is None else list(f.wire.names),
            ]
            for f in records.fields[cls]
        ]
        for cls in sorted(number, key=number.__getitem__)
    ]
    return hashlib.sha256(json.dumps(layout, separators=(",", ":")).encode()).hexdigest()


#: Each record set, and the module that declares it and its FORMAT_VERSION.
RECORD_SETS: list[tuple[ModuleType, wire.RecordSet[Any]]] = [
    (codec, codec.PROGRAM),
    (flow_program, flow_program.FLOW_PROGRAM),
]


@pytest.mark.parametrize(("home", "records"), RECORD_SETS, ids=[s.magic for _, s in RECORD_SETS])
def test_a_layout_change_comes_with_a_format_version_bump(
    home: ModuleType, records: wire.RecordSet[Any]
) -> None:
    version = home.FORMAT_VERSION
    assert records.version == version
    found = layout_fingerprint(records)
    pins = PINNED_LAYOUTS[records.magic]
    assert version in pins, f"{records.magic} format {version} has no pin: add {version}: {found!r}"
    assert found == pins[version], (
        f"the {records.magic} record layout changed, but FORMAT_VERSION is still {version}: "
        f"bump FORMAT_VERSION in {home.__name__} (so IR written before reads as 'recompile', "
        f"not as damaged) and re-pin: add {version + 1}: {found!r} to "
        f"PINNED_LAYOUTS[{records.magic!r}]"
    )
    assert len(set(pins.values())) == len(pins), "two format versions pin one layout"


def _toy_records(
    leaf: str = "Leaf",
    root: str = "Root",
    *,
    note: bool = False,
    modes: tuple[str, ...] = ("a", "b"),
) -> wire.RecordSet[Any]:
    fields: list[tuple[str, Any]] = [
        ("name", Annotated[str, TEXT]),
        ("mode", Annotated[int, code(modes)]),
    ]
    if note:
        fields.append(("note", Annotated[str | None, TEXT]))
    leaf_cls = dataclasses.make_dataclass(leaf, fields, frozen=True)
    root_cls = dataclasses.make_dataclass(
        root,
        [
            ("leaves", Annotated[tuple[leaf_cls, ...], RECORDS]),  # type: ignore[valid-type]
            ("first", Annotated[int, index(Table(root, "leaves"), optional=True)]),
        ],
        frozen=True,
    )
    return wire.RecordSet(magic="toy", version=1, root=root_cls, records=(leaf_cls, root_cls))


def test_the_layout_fingerprint_changes_with_the_bytes_and_only_with_them() -> None:
    pinned = layout_fingerprint(_toy_records())
    assert layout_fingerprint(_toy_records(note=True)) != pinned  # a field added
    assert layout_fingerprint(_toy_records(modes=("a", "b", "c"))) != pinned  # a code added
    assert layout_fingerprint(_toy_records("Twig", "Tree")) == pinned  # names: not on the wire


# -- bounds come from the markers ---------------------------------------------------------


@dataclass(frozen=True)
class Bounded:
    """One bounded field in an encoded tree, with the size of what it points into."""

    path: tuple[int, ...]
    where: str
    kind: str
    value: Any
    size: int  # the table's length, the enumeration's, or the number of bits
    none: bool  # NONE is allowed


def bounded(
    cls: type, value: list[Any], scope: dict[str, int], path: tuple[int, ...] = ()
) -> Iterator[Bounded]:
    """Every bounded field under ``value`` (an encoded ``cls``), the tables taken from the
    encoded lists themselves, so this does not trust the decoder it tests."""
    fields = describe(cls)
    scope = scope | {
        f"{cls.__name__}.{f.name}": len(item or [])
        for f, item in zip(fields, value, strict=True)
        if f.wire.kind == "records"
    }
    for i, (f, item) in enumerate(zip(fields, value, strict=True)):
        here, w = (*path, i), f.wire
        if w.kind in BOUNDED:
            size = len(w.names or ()) if w.table is None else scope[str(w.table)]
            yield Bounded(here, f"{cls.__name__}.{f.name}", w.kind, item, size, w.none)
        elif f.record is not None and item is not None:
            items = enumerate(item) if w.kind == "records" else [(None, item)]
            for j, child in items:
                yield from bounded(f.record, child, scope, here if j is None else (*here, j))


def out_of_range(leaf: Bounded) -> list[Any]:
    """The first values past each end of what ``leaf`` may hold."""
    if leaf.kind == "code":
        return [leaf.size, -1]
    if leaf.kind == "bits":
        return [0, 1 << leaf.size, -1]
    if leaf.kind == "index":
        return [leaf.size, -2] if leaf.none else [leaf.size, -1]
    if not leaf.value:
        return []
    if leaf.kind == "indexes":
        return [[*leaf.value[:-1], bad] for bad in (leaf.size, -1)]
    name = leaf.value[0][0]
    return [[[name, bad], *leaf.value[1:]] for bad in (leaf.size, -1)]


def replaced(tree: Any, path: tuple[int, ...], value: Any) -> Any:
    out = copy.deepcopy(tree)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


def test_every_bounded_field_refuses_its_first_out_of_range_values() -> None:
    """Derived from the markers: a field marked as an index, code or bit set is checked
    at exactly its table's (or enumeration's) size, with no list kept by hand."""
    tried: Counter[str] = Counter()
    for name in NAMES:
        outer = msgpack.unpackb(compiled(name), raw=False)
        strings, tree = msgpack.unpackb(outer[3], raw=False)
        per_example: Counter[str] = Counter()
        for leaf in bounded(r.ProviderIR, tree, {}):
            if per_example[leaf.where] >= 3:
                continue  # a few of each field per example keep this fast
            bad_values = out_of_range(leaf)
            per_example[leaf.where] += bool(bad_values)
            for bad in bad_values:
                error = decode_error(repack(strings, replaced(tree, leaf.path, bad)))
                assert error.code == "ir-corrupt", (name, leaf, bad)
                tried[leaf.where] += 1
    marked = {
        f"{cls.__name__}.{f.name}"
        for cls in r.PROGRAM_RECORDS
        for f in describe(cls)
        if f.wire.kind in BOUNDED
    }
    assert set(tried) == marked  # the examples exercise every bounded field


def test_check_bounds_refuses_a_program_value() -> None:
    program = codec.decode(compiled("weekly-report"))
    codec.check_bounds(program)
    graph = program.graphs[0]
    edge = dataclasses.replace(graph.edges[0], target=len(graph.nodes))
    damaged = dataclasses.replace(graph, edges=(edge, *graph.edges[1:]))
    with pytest.raises(AgentGraphError) as info:
        codec.check_bounds(dataclasses.replace(program, graphs=(damaged,)))
    assert info.value.code == "ir-corrupt"
    assert "target" in info.value.message


# -- a second record set ------------------------------------------------------------------

STEPS = Table("Flow", "steps")
TOOLS = Table("Flow", "tools")


@dataclass(frozen=True, slots=True)
class Tool:
    id: Annotated[str, TEXT]
    args: Annotated[tuple[str, ...], TEXTS]
    config: Annotated[Any, JSON]


@dataclass(frozen=True, slots=True)
class Step:
    id: Annotated[str, TEXT]
    mode: Annotated[int, code(("auto", "manual"))]
    tool: Annotated[int, index(TOOLS, optional=True)]
    then: Annotated[tuple[int, ...], indexes(STEPS)]
    note: Annotated[str | None, TEXT]


@dataclass(frozen=True, slots=True)
class Flow:
    id: Annotated[str, TEXT]
    steps: Annotated[tuple[Step, ...], RECORDS]
    tools: Annotated[tuple[Tool, ...], RECORDS]
    start: Annotated[int, index(STEPS)]


def _distinct_steps(flow: Flow) -> None:
    if len({step.id for step in flow.steps}) != len(flow.steps):
        raise wire.corrupt("two steps share an id")


FLOWS = wire.RecordSet(
    magic="agent-graph.flow",
    version=3,
    root=Flow,
    records=(Tool, Step, Flow),
    verify=_distinct_steps,
    rebuild="rebuild the flow",
)
FLOW = Flow(
    "release",
    (
        Step("build", 0, 0, (1,), None),
        Step("ship", 1, NONE, (), 'say "done"'),
    ),
    (Tool("make", ("-j", "4"), {"env": {"CI": "1"}}),),
    0,
)


def test_a_second_record_set_reuses_the_codec() -> None:
    data = wire.encode(FLOWS, FLOW)
    assert wire.decode(FLOWS, data) == FLOW
    assert wire.decode(FLOWS, data, expected_digest=wire.digest_of(data)) == FLOW
    assert msgpack.unpackb(data, raw=False)[:2] == ["agent-graph.flow", 3]
    assert decode_error(data).code == "ir-corrupt"  # not a Program
    assert decode_error(compiled(NAMES[0]), FLOWS).code == "ir-corrupt"  # not a Flow
    strings, tree = msgpack.unpackb(msgpack.unpackb(data, raw=False)[3], raw=False)
    error = decode_error(repack(strings, tree, magic="agent-graph.flow", version=2), FLOWS)
    assert error.code == "ir-version-unsupported"
    assert "rebuild the flow" in error.message


@pytest.mark.parametrize(
    ("path", "bad"),
    [
        ((3,), 2),  # start: index into Flow.steps
        ((1, 0, 1), 2),  # mode: code within ("auto", "manual")
        ((1, 0, 2), 1),  # tool: index into Flow.tools
        ((1, 1, 2), -2),  # tool: NONE is -1, not any negative
        ((1, 0, 3), [2]),  # then: indexes into Flow.steps
    ],
)
def test_a_second_record_set_gets_bounds_from_its_markers(path: tuple[int, ...], bad: Any) -> None:
    strings, tree = msgpack.unpackb(msgpack.unpackb(wire.encode(FLOWS, FLOW))[3], raw=False)
    damaged = repack(strings, replaced(tree, path, bad), magic="agent-graph.flow", version=3)
    assert decode_error(damaged, FLOWS).code == "ir-corrupt"


def test_a_second_record_set_runs_its_own_verifier() -> None:
    twins = dataclasses.replace(FLOW, steps=(FLOW.steps[0], FLOW.steps[0]))
    error = decode_error(wire.encode(FLOWS, twins), FLOWS)
    assert error.code == "ir-corrupt"
    assert "share an id" in error.message


def test_the_dump_renders_records_it_has_no_view_for() -> None:
    """With no presentation table at all, every field shows, indexes as names."""
    plain = Renderer((Tool, Step, Flow), {})
    assert plain.text(FLOW) == (
        "flow id=release start=build\n"
        "  step id=build mode=auto tool=make then=[ship]\n"
        '  step id=ship mode=manual note="say \\"done\\""\n'
        '  tool id=make args=[-j, 4] config={"env":{"CI":"1"}}\n'
    )
    assert plain.json(FLOW) == {
        "id": "release",
        "steps": [
            {"id": "build", "mode": "auto", "tool": "make", "then": ["ship"]},
            {"id": "ship", "mode": "manual", "then": [], "note": 'say "done"'},
        ],
        "tools": [{"id": "make", "args": ["-j", "4"], "config": {"env": {"CI": "1"}}}],
        "start": "build",
    }
    shaped = Renderer((Tool, Step, Flow), {"Step": View("  step {id} {mode}[ then={then!}]")})
    assert shaped.text(FLOW).splitlines()[1:3] == [
        "  step build auto then=[ship] tool=make",
        '  step ship manual note="say \\"done\\""',
    ]


# -- declarations that cannot work are refused where they are written ----------------------


@dataclass(frozen=True, slots=True)
class Unmarked:
    id: str


@dataclass(frozen=True, slots=True)
class Mismarked:
    id: Annotated[str, index(STEPS)]


@dataclass(frozen=True, slots=True)
class OptionalIndex:
    id: Annotated[int | None, index(STEPS)]


@dataclass(frozen=True, slots=True)
class Loose:
    step: Annotated[int, index(STEPS)]


@dataclass(frozen=True, slots=True)
class Holder:
    loose: Annotated[Loose, RECORD]
    flows: Annotated[tuple[Flow, ...], RECORDS]


@pytest.mark.parametrize("cls", [Unmarked, Mismarked, OptionalIndex])
def test_a_field_whose_marker_does_not_fit_its_type_is_refused(cls: type) -> None:
    with pytest.raises(TypeError):
        describe(cls)


def test_an_index_outside_any_record_owning_its_table_is_refused() -> None:
    with pytest.raises(TypeError, match="outside their owner"):
        wire.RecordSet(magic="x", version=1, root=Holder, records=(Loose, Holder, Flow, Step, Tool))


def test_a_record_set_must_list_exactly_its_reachable_records() -> None:
    with pytest.raises(TypeError, match="reachable"):
        wire.RecordSet(magic="x", version=1, root=Flow, records=(Step, Flow))
    with pytest.raises(TypeError, match="reachable"):
        wire.RecordSet(magic="x", version=1, root=Flow, records=(Step, Tool, Flow, Loose))


def test_a_view_naming_a_missing_field_is_refused() -> None:
    with pytest.raises(ValueError, match="names fields"):
        Renderer((Tool, Step, Flow), {"Step": View("  step {name}")})
    with pytest.raises(ValueError, match="names no record"):
        Renderer((Tool, Step, Flow), {"Stage": View("stage")})


# -- JSON values ---------------------------------------------------------------------------


def test_freezing_is_iterative_ordered_and_read_only_at_every_depth() -> None:
    value: Any = {"leaf": True}
    for i in range(5000):  # far deeper than Python recurses
        value = [value] if i % 2 else {"z": value, "a": i}
    frozen = r.freeze_json(value)
    depth, item = 0, frozen
    while not (isinstance(item, dict) and "leaf" in item):
        assert isinstance(item, (r.FrozenList, r.FrozenDict))
        if isinstance(item, dict):
            assert list(item) == ["z", "a"]  # authored order kept
            with pytest.raises(TypeError):
                item["b"] = 1
            item = item["z"]
        else:
            with pytest.raises(TypeError):
                item.append(1)
            item = item[0]
        depth += 1
    assert depth == 5000
    small = {"b": [1, {"c": [None, 2.5]}], "a": "x"}
    assert r.freeze_json(small) == small
    assert json.dumps(r.freeze_json(small)) == json.dumps(small)
    assert r.freeze_json(7) == 7
    assert r.freeze_json("x") == "x"


@pytest.mark.parametrize(
    "config",
    [b"raw", {"env": b"raw"}, {b"env": 1}, [msgpack.ExtType(1, b"")], 2**53 + 1, [[[[]]]]],
    ids=["bytes", "bytes-inside", "bytes-key", "ext", "big-int", "deep"],
)
def test_a_second_record_set_gets_the_json_checks(
    config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JSON fields are checked by the generated decoders, so every record set has them."""
    monkeypatch.setattr(r, "MAX_JSON_DEPTH", 3)
    flow = dataclasses.replace(FLOW, tools=(dataclasses.replace(FLOW.tools[0], config=config),))
    error = decode_error(wire.encode(FLOWS, flow), FLOWS)
    assert error.code == "ir-corrupt"
    assert "Tool.config" in error.message
    decoded = wire.decode(FLOWS, wire.encode(FLOWS, FLOW))
    assert isinstance(decoded.tools[0].config, r.FrozenDict)
