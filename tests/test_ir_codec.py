"""The IR codec: exact round trips, deterministic bytes, and no trust in what it reads.

Damaged bytes (truncated, flipped, overwritten header) and crafted bodies (re-packed
with a correct digest but out-of-range indexes or wrong types) must all end in an
``AgentGraphError`` with code ``ir-corrupt`` (``ir-version-unsupported`` for the
version field): never another exception, never a Program.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import msgpack
import pytest

import agent_graph
from agent_graph.errors import AgentGraphError
from agent_graph.ir import codec
from agent_graph.ir import records as r
from agent_graph.vm import load_program

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
MANIFESTS = sorted(EXAMPLES.glob("*/provider.yaml"))
NAMES = [m.parent.name for m in MANIFESTS]
SRC = Path(agent_graph.__file__).resolve().parent.parent


@cache
def compiled(name: str) -> bytes:
    return agent_graph.compile_provider(EXAMPLES / name / "provider.yaml").to_bytes()


def smallest() -> str:
    return min(NAMES, key=lambda name: len(compiled(name)))


def decode_error(data: bytes) -> AgentGraphError:
    """Decode ``data``, which must fail with an AgentGraphError (anything else is a bug)."""
    try:
        program = codec.decode(data)
    except AgentGraphError as exc:
        return exc
    raise AssertionError(f"damaged IR decoded to a Program of {program.provider_id}")


# -- helpers for crafting bodies --------------------------------------------------------


def unpack(data: bytes) -> tuple[list[Any], list[Any]]:
    outer = msgpack.unpackb(data, raw=False)
    strings, tree = msgpack.unpackb(outer[3], raw=False)
    return strings, tree


def repack(strings: Any, tree: Any, *, version: Any = codec.FORMAT_VERSION) -> bytes:
    """IR bytes around an arbitrary body, with the header digest that body deserves."""
    return pack_body([strings, tree], version=version)


def pack_body(body_value: Any, *, version: Any = codec.FORMAT_VERSION) -> bytes:
    body = msgpack.packb(body_value, use_bin_type=True)
    return bytes(
        msgpack.packb(
            [codec.MAGIC, version, hashlib.sha256(body).digest(), body], use_bin_type=True
        )
    )


@dataclasses.dataclass(frozen=True)
class Leaf:
    """One field of one record in the encoded tree: where it is and what it holds."""

    path: tuple[int, ...]
    record: str
    field: str
    code: str
    value: Any


def leaves(cls: type, value: list[Any], path: tuple[int, ...] = ()) -> Iterator[Leaf]:
    """Every field of every record under ``value`` (a ``cls`` record), depth first."""
    names = [f.name for f in dataclasses.fields(cls)]
    for i, (code, name, item) in enumerate(zip(codec.LAYOUT[cls], names, value, strict=True)):
        here = (*path, i)
        yield Leaf(here, cls.__name__, name, code, item)
        if item is None or ":" not in code:
            continue
        child = codec.BY_NAME[code.split(":", 1)[1]]
        if code.startswith(("L:", "L?:")):
            for j, element in enumerate(item):
                yield from leaves(child, element, (*here, j))
        else:
            yield from leaves(child, item, here)


def at(cls: type, name: str) -> int:
    """Position of field ``name`` in the encoded ``cls`` record."""
    return [f.name for f in dataclasses.fields(cls)].index(name)


def replaced(tree: Any, path: tuple[int, ...], value: Any) -> Any:
    out = copy.deepcopy(tree)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


# Integer fields that index a table or an enumeration (all but Node.priority).
INDEX_FIELDS = {
    ("FactCheck", "kind"),
    ("Delegated", "resolution"),
    ("Gate", "inspection"),
    ("Gate", "resolution"),
    ("Node", "kind"),
    ("Node", "action"),
    ("Node", "subgraph"),
    ("Edge", "source"),
    ("Edge", "target"),
    ("Edge", "kind"),
    ("Edge", "mask"),
    ("Resource", "protocol"),
    ("Resource", "materializer"),
    ("CatalogEntry", "document"),
}


# -- round trips ------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_round_trip_is_exact(name: str) -> None:
    program = agent_graph.compile_provider(EXAMPLES / name / "provider.yaml")
    data = program.to_bytes()
    decoded = codec.decode(data)
    assert decoded == program.ir
    assert codec.encode(decoded) == data
    assert codec.digest_of(data) == program.digest
    assert codec.decode(data, expected_digest=program.digest) == program.ir


@pytest.mark.parametrize("name", NAMES)
def test_loaded_program_evaluates_like_the_compiled_one(name: str) -> None:
    compiled_program = agent_graph.compile_provider(EXAMPLES / name / "provider.yaml")
    loaded = load_program(compiled_program.to_bytes(), EXAMPLES / name)
    assert loaded.digest == compiled_program.digest
    for graph in compiled_program.ir.graphs:
        for entry, _ in graph.entrypoints:
            ours = loaded.evaluate(graph.id, entry, {}).to_dict()
            assert ours == compiled_program.evaluate(graph.id, entry, {}).to_dict()


def test_every_record_type_is_covered_by_the_examples() -> None:
    """The damage tests below only mean something if the examples use every record."""
    seen = set()
    for name in NAMES:
        _, tree = unpack(compiled(name))
        seen |= {leaf.record for leaf in leaves(r.Program, tree)}
    assert seen == {cls.__name__ for cls in codec.LAYOUT}


# -- determinism ------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_compiling_twice_gives_identical_bytes(name: str) -> None:
    manifest = EXAMPLES / name / "provider.yaml"
    first = agent_graph.compile_provider(manifest).to_bytes()
    assert agent_graph.compile_provider(manifest).to_bytes() == first


@pytest.mark.parametrize("name", NAMES)
def test_bytes_do_not_depend_on_where_the_provider_lives(name: str, tmp_path: Path) -> None:
    copied = tmp_path / "some" / "other place" / name
    shutil.copytree(EXAMPLES / name, copied)
    assert agent_graph.compile_provider(copied / "provider.yaml").to_bytes() == compiled(name)


@pytest.mark.parametrize("seed", ["0", "4242"])
def test_bytes_do_not_depend_on_the_hash_seed(seed: str) -> None:
    script = (
        "import hashlib, sys, agent_graph\n"
        "for manifest in sys.argv[1:]:\n"
        "    data = agent_graph.compile_provider(manifest).to_bytes()\n"
        "    print(hashlib.sha256(data).hexdigest())\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, MANIFESTS)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    expected = [hashlib.sha256(compiled(name)).hexdigest() for name in NAMES]
    assert done.stdout.split() == expected


# -- damaged bytes ----------------------------------------------------------------------


def header_length(data: bytes) -> int:
    """Bytes before the body's first byte: array, magic, version, digest, body length."""
    body = msgpack.unpackb(data, raw=False)[3]
    return len(data) - len(body)


def version_offset() -> int:
    # fixarray marker, then the magic as a fixstr (marker + text), then the version
    return 1 + 1 + len(codec.MAGIC.encode())


def test_version_offset_is_where_the_version_is() -> None:
    data = compiled(smallest())
    assert data[version_offset()] == codec.FORMAT_VERSION
    assert codec.FORMAT_VERSION < 0x80  # a positive fixint: one byte


@pytest.mark.parametrize("name", NAMES)
def test_every_truncation_is_corrupt(name: str) -> None:
    data = compiled(name)
    for length in range(len(data)):
        error = decode_error(data[:length])
        assert error.code == "ir-corrupt", (length, error.code)


@pytest.mark.parametrize("name", NAMES)
def test_trailing_bytes_are_corrupt(name: str) -> None:
    data = compiled(name)
    for tail in (b"\x00", b"\xc0", data[:10], data):
        assert decode_error(data + tail).code == "ir-corrupt"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mask", [0x01, 0x80, 0xFF])
def test_every_flipped_byte_is_detected(name: str, mask: int) -> None:
    data = compiled(name)
    for offset in range(len(data)):
        damaged = bytearray(data)
        damaged[offset] ^= mask
        error = decode_error(bytes(damaged))
        if offset == version_offset():
            # 0x00 and 0xfe are other versions; 0x81 is a map that swallows what follows
            assert error.code in ("ir-version-unsupported", "ir-corrupt"), (offset, mask)
            assert (error.code == "ir-version-unsupported") == (mask != 0x80)
        else:
            assert error.code == "ir-corrupt", (offset, mask, error.code)


def test_every_value_of_every_header_byte_is_detected() -> None:
    data = compiled(smallest())
    failures = []
    for offset in range(header_length(data)):
        for value in range(256):
            if value == data[offset]:
                continue
            if offset == version_offset() and value == 0xC3:
                continue  # msgpack true == 1: see test_a_version_equal_to_but_not…
            damaged = bytearray(data)
            damaged[offset] = value
            try:
                error = decode_error(bytes(damaged))
            except AssertionError:
                failures.append((offset, value, "decoded"))
                continue
            allowed = {"ir-corrupt"}
            if offset == version_offset():
                allowed.add("ir-version-unsupported")
            if error.code not in allowed:
                failures.append((offset, value, error.code))
    assert failures == []


@pytest.mark.parametrize("version", [0, 2, 255, -1, "1", 2.0, None, [1]])
def test_other_versions_are_unsupported(version: Any) -> None:
    strings, tree = unpack(compiled(smallest()))
    error = decode_error(repack(strings, tree, version=version))
    assert error.code == "ir-version-unsupported"
    assert "recompile" in error.message


@pytest.mark.parametrize("version", [True, 1.0])
def test_a_version_equal_to_but_not_the_integer_1_is_unsupported(version: Any) -> None:
    strings, tree = unpack(compiled(smallest()))
    assert decode_error(repack(strings, tree, version=version)).code == "ir-version-unsupported"


def test_a_different_magic_is_corrupt() -> None:
    data = compiled(smallest())
    outer = msgpack.unpackb(data, raw=False)
    for magic in ("agent-graph.IR", "", None, 1, b"agent-graph.ir"):
        packed = msgpack.packb([magic, *outer[1:]], use_bin_type=True)
        assert decode_error(packed).code == "ir-corrupt"
    assert decode_error(msgpack.packb([*outer, 0], use_bin_type=True)).code == "ir-corrupt"
    assert decode_error(msgpack.packb(outer[:3], use_bin_type=True)).code == "ir-corrupt"


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00", b"\xc1", b"not msgpack at all", msgpack.packb({"a": 1}), msgpack.packb([])],
    ids=["empty", "zero", "never-used", "text", "map", "empty-array"],
)
def test_things_that_are_not_ir_are_corrupt(data: bytes) -> None:
    assert decode_error(data).code == "ir-corrupt"


def test_expected_digest_pins_the_bytes() -> None:
    name = smallest()
    data = compiled(name)
    digest = codec.digest_of(data)
    assert codec.decode(data, expected_digest=digest) == codec.decode(data)
    other = "sha256:" + "0" * 64
    error = decode_error_with(lambda: codec.decode(data, expected_digest=other))
    assert error.code == "ir-corrupt"
    assert other in error.message
    # a Provider compiled elsewhere is a mismatch too, even though its bytes are valid IR
    another = next(n for n in NAMES if n != name)
    error = decode_error_with(lambda: codec.decode(compiled(another), expected_digest=digest))
    assert error.code == "ir-corrupt"
    with pytest.raises(AgentGraphError) as info:
        load_program(compiled(another), EXAMPLES / another, expected_digest=digest)
    assert info.value.code == "ir-corrupt"


def decode_error_with(call: Callable[[], object]) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as info:
        call()
    return info.value


# -- crafted bodies (valid digest, invalid content) -------------------------------------


@pytest.mark.parametrize(
    "body",
    [5, "text", [1, 2, 3], [[]], {"a": 1, "b": 2}, None, [["s"], 7], [[1, 2], []]],
    ids=["int", "str", "triple", "single", "map", "nil", "tree-int", "int-strings"],
)
def test_bodies_of_the_wrong_shape_are_corrupt(body: Any) -> None:
    assert decode_error(pack_body(body)).code == "ir-corrupt"


@pytest.mark.parametrize("name", NAMES)
def test_out_of_range_indexes_are_corrupt(name: str) -> None:
    strings, tree = unpack(compiled(name))
    cases = 0
    for leaf in leaves(r.Program, tree):
        bad_values: list[Any]
        if leaf.code in ("s", "s?") and leaf.value is not None:
            bad_values = [len(strings), len(strings) + 10**6, -1]
        elif leaf.code == "i" and (leaf.record, leaf.field) in INDEX_FIELDS:
            bad_values = [10**6, -2]
            if leaf.record == "Edge" or leaf.field in ("kind", "protocol"):
                bad_values.append(-1)  # no NONE in these
            if leaf.field == "mask":
                bad_values = [0, 1 << len(r.OUTCOMES), -1]
        elif leaf.code in ("I", "S") and leaf.value:
            # one element out of range (every list of ints here indexes a table)
            bad_values = [[*leaf.value[:-1], 10**6], [*leaf.value[:-1], -1]]
        elif leaf.code == "P" and leaf.value:
            name_index, node_index = leaf.value[0]
            bad_values = [[[name_index, 10**6], *leaf.value[1:]], [[10**6, node_index]]]
        elif leaf.code == "E" and leaf.value is not None:
            bad_values = [[leaf.value[0], 10**6], [-1, leaf.value[1]]]
        else:
            continue
        for bad in bad_values:
            cases += 1
            error = decode_error(repack(strings, replaced(tree, leaf.path, bad)))
            assert error.code == "ir-corrupt", (leaf, bad, error.code)
    assert cases > 100


def wrong_values(code: str) -> list[Any]:
    """Values of the wrong type for a field code (``None`` when the field is required)."""
    optional = code.endswith("?") or "?:" in code or code == "E"
    values: list[Any]
    if code in ("s", "s?", "i"):
        values = ["x", 1.5, True, [], {}, b"\x00"]
    elif code in ("b", "b?"):
        values = [0, 1, "true", [], 1.5]
    elif code in ("I", "S"):
        values = ["x", 5, {}, True, ["x"], [1.5], [None], [True]]
    elif code == "P":
        values = ["x", 5, [1], [[0]], [[0, 0, 0]], [["x", 0]], [[0, "x"]], [[0, True]]]
    elif code == "E":
        values = ["x", 5, [], [0], [0, 0, 0], ["a", "b"]]
    elif code.startswith(("L:", "L?:")):
        values = ["x", 5, {}, True, [5], [[]], [None]]
    else:  # R: / R?:
        values = ["x", 5, [], {}, True, [None]]
    return values if optional else [*values, None]


@pytest.mark.parametrize("name", NAMES)
def test_fields_of_the_wrong_type_are_corrupt(name: str) -> None:
    strings, tree = unpack(compiled(name))
    cases = 0
    for leaf in leaves(r.Program, tree):
        if leaf.code == "j":
            continue  # any JSON value is a value
        for bad in wrong_values(leaf.code):
            cases += 1
            error = decode_error(repack(strings, replaced(tree, leaf.path, bad)))
            assert error.code == "ir-corrupt", (leaf, bad, error.code)
    assert cases > 500


@pytest.mark.parametrize("name", NAMES)
def test_records_of_the_wrong_length_are_corrupt(name: str) -> None:
    strings, tree = unpack(compiled(name))
    for leaf in leaves(r.Program, tree):
        if ":" not in leaf.code or leaf.value is None:
            continue
        if leaf.code.startswith(("L:", "L?:")):
            if not leaf.value:
                continue
            path, record = (*leaf.path, 0), leaf.value[0]
        else:
            path, record = leaf.path, leaf.value
        for bad in (record[:-1], [*record, None]):
            error = decode_error(repack(strings, replaced(tree, path, bad)))
            assert error.code == "ir-corrupt", (leaf, len(bad))
    for bad in (tree[:-1], [*tree, None]):
        assert decode_error(repack(strings, bad)).code == "ir-corrupt"


def test_a_string_table_with_a_non_string_is_corrupt() -> None:
    strings, tree = unpack(compiled(smallest()))
    for bad in (1, None, b"bytes", ["nested"]):
        assert decode_error(repack([*strings, bad], tree)).code == "ir-corrupt"
    assert decode_error(repack({"0": "x"}, tree)).code == "ir-corrupt"


def test_kind_data_mismatches_are_corrupt() -> None:
    """An action node without an Action, a gate without gate data, a subgraph without a
    call, a terminal without an outcome (and the reverse) cannot be evaluated."""
    strings, tree = unpack(compiled("release-train"))
    ir = codec.decode(compiled("release-train"))
    checked = set()
    for g, graph in enumerate(ir.graphs):
        for n, node in enumerate(graph.nodes):
            for other in range(len(r.NODE_KINDS)):
                if other == node.kind:
                    continue
                path = (at(r.Program, "graphs"), g, at(r.Graph, "nodes"), n, at(r.Node, "kind"))
                error = decode_error(repack(strings, replaced(tree, path, other)))
                assert error.code == "ir-corrupt", (graph.id, node.id, other)
                checked.add((node.kind, other))
    assert len(checked) == 12  # every ordered pair of distinct kinds


# -- crafted bodies that decode today although a VM could not trust them ----------------
#
# Each case keeps every index in range and every type right, so ``check_bounds`` lets
# it through; each then makes the VM give a wrong answer or raise something other than
# an AgentGraphError if the decoder let it through; the decoder refuses each one.


def _craft_release_train(edit: Callable[[list[Any], list[Any], r.Program], None]) -> bytes:
    data = compiled("release-train")
    strings, tree = unpack(data)
    edit(strings, tree, codec.decode(data))
    return repack(strings, tree)


def _set_string(strings: list[Any], text: str) -> int:
    strings.append(text)
    return len(strings) - 1


def _host_action(ir: r.Program) -> int:
    """The Action of the route a fresh ``train`` evaluation offers (a host Action)."""
    train = next(g for g in ir.graphs if g.id == "train")
    node = train.nodes[dict(train.entrypoints)["default"]]
    assert ir.actions[node.action].runner == "host"
    return node.action


def _adjacency_lie(strings: list[Any], tree: list[Any], ir: r.Program) -> None:
    # the first node claims the outgoing edges of another node
    nodes = tree[at(r.Program, "graphs")][0][at(r.Graph, "nodes")]
    outgoing = at(r.Node, "outgoing")
    donor = next(i for i, n in enumerate(ir.graphs[0].nodes) if i and n.outgoing)
    nodes[0][outgoing] = list(nodes[0][outgoing]) + list(nodes[donor][outgoing])


def _unknown_runner(strings: list[Any], tree: list[Any], ir: r.Program) -> None:
    action = tree[at(r.Program, "actions")][_host_action(ir)]
    action[at(r.Action, "runner")] = _set_string(strings, "cobol")


def _command_without_command(strings: list[Any], tree: list[Any], ir: r.Program) -> None:
    action = tree[at(r.Program, "actions")][_host_action(ir)]
    action[at(r.Action, "runner")] = _set_string(strings, "command")


def _unknown_runtime(strings: list[Any], tree: list[Any], ir: r.Program) -> None:
    action = tree[at(r.Program, "actions")][_host_action(ir)]
    action[at(r.Action, "runner")] = _set_string(strings, "script")
    action[at(r.Action, "entry")] = _set_string(strings, "scripts/x.sh")
    action[at(r.Action, "runtime")] = _set_string(strings, "cobol")


def _escaping_path(strings: list[Any], tree: list[Any], ir: r.Program) -> None:
    action = tree[at(r.Program, "actions")][_host_action(ir)]
    action[at(r.Action, "runner")] = _set_string(strings, "script")
    action[at(r.Action, "entry")] = _set_string(strings, "../../outside.sh")
    action[at(r.Action, "runtime")] = _set_string(strings, "shell")


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(
            _adjacency_lie,
            id="adjacency-disagrees-with-edges",
        ),
        pytest.param(
            _unknown_runner,
            id="unknown-runner",
        ),
        pytest.param(
            _command_without_command,
            id="command-runner-without-command",
        ),
        pytest.param(
            _unknown_runtime,
            id="unknown-script-runtime",
        ),
        pytest.param(
            _escaping_path,
            id="path-leaves-the-provider",
        ),
    ],
)
def test_inconsistent_but_in_range_bodies_are_corrupt(
    edit: Callable[[list[Any], list[Any], r.Program], None],
) -> None:
    data = _craft_release_train(edit)
    with pytest.raises(AgentGraphError) as info:  # today: no error, or a raw exception
        _load_evaluate_route(data)
    assert info.value.code == "ir-corrupt"


def _load_evaluate_route(data: bytes) -> None:
    program = load_program(data, EXAMPLES / "release-train")
    evaluation = program.evaluate("train", "default", {})
    assert evaluation.primary is not None
    program.route("train", "default", evaluation.primary.route_id, {})
