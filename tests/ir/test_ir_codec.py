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
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import msgpack
import pytest

import agent_graph
from agent_graph.errors import AgentGraphError
from agent_graph.ir import codec
from agent_graph.ir import records as r
from agent_graph.ir.dump import dump, to_json
from agent_graph.vm import load_program

TESTS = Path(__file__).resolve().parents[1]
EXAMPLES = TESTS.parent / "examples"
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
        seen |= {leaf.record for leaf in leaves(r.ProviderIR, tree)}
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
    for leaf in leaves(r.ProviderIR, tree):
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
    for leaf in leaves(r.ProviderIR, tree):
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
    for leaf in leaves(r.ProviderIR, tree):
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
                path = (at(r.ProviderIR, "graphs"), g, at(r.Graph, "nodes"), n, at(r.Node, "kind"))
                error = decode_error(repack(strings, replaced(tree, path, other)))
                assert error.code == "ir-corrupt", (graph.id, node.id, other)
                checked.add((node.kind, other))
    assert len(checked) == 12  # every ordered pair of distinct kinds


# -- crafted bodies that decode today although a VM could not trust them ----------------
#
# Each case keeps every index in range and every type right, so ``check_bounds`` lets
# it through; each then makes the VM give a wrong answer or raise something other than
# an AgentGraphError if the decoder let it through; the decoder refuses each one.


def _craft_release_train(edit: Callable[[list[Any], list[Any], r.ProviderIR], None]) -> bytes:
    data = compiled("release-train")
    strings, tree = unpack(data)
    edit(strings, tree, codec.decode(data))
    return repack(strings, tree)


def _set_string(strings: list[Any], text: str) -> int:
    strings.append(text)
    return len(strings) - 1


def _host_action(ir: r.ProviderIR) -> int:
    """The Action of the route a fresh ``train`` evaluation offers (a host Action)."""
    train = next(g for g in ir.graphs if g.id == "train")
    node = train.nodes[dict(train.entrypoints)["default"]]
    assert ir.actions[node.action].runner == "host"
    return node.action


def _adjacency_lie(strings: list[Any], tree: list[Any], ir: r.ProviderIR) -> None:
    # the first node claims the outgoing edges of another node
    nodes = tree[at(r.ProviderIR, "graphs")][0][at(r.Graph, "nodes")]
    outgoing = at(r.Node, "outgoing")
    donor = next(i for i, n in enumerate(ir.graphs[0].nodes) if i and n.outgoing)
    nodes[0][outgoing] = list(nodes[0][outgoing]) + list(nodes[donor][outgoing])


def _unknown_runner(strings: list[Any], tree: list[Any], ir: r.ProviderIR) -> None:
    action = tree[at(r.ProviderIR, "actions")][_host_action(ir)]
    action[at(r.Action, "runner")] = _set_string(strings, "cobol")


def _command_without_command(strings: list[Any], tree: list[Any], ir: r.ProviderIR) -> None:
    action = tree[at(r.ProviderIR, "actions")][_host_action(ir)]
    action[at(r.Action, "runner")] = _set_string(strings, "command")


def _unknown_runtime(strings: list[Any], tree: list[Any], ir: r.ProviderIR) -> None:
    action = tree[at(r.ProviderIR, "actions")][_host_action(ir)]
    action[at(r.Action, "runner")] = _set_string(strings, "script")
    action[at(r.Action, "entry")] = _set_string(strings, "scripts/x.sh")
    action[at(r.Action, "runtime")] = _set_string(strings, "cobol")


def _escaping_path(strings: list[Any], tree: list[Any], ir: r.ProviderIR) -> None:
    action = tree[at(r.ProviderIR, "actions")][_host_action(ir)]
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
    edit: Callable[[list[Any], list[Any], r.ProviderIR], None],
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


# -- hardening issue 9: JSON values and the invariants the VM relies on -------------------
#
# Each case below decoded before (or raised RecursionError) and then made the VM, the
# dump or a Route fail with something other than an AgentGraphError, or answer wrongly.
# The Programs are edited as records and encoded without verification (the encoder
# trusts its input), so each edit reaches exactly the check it is about.


def _decoded(name: str) -> r.ProviderIR:
    return codec.decode(compiled(name))


def _replace_in(items: Sequence[Any], match: Callable[[Any], bool], **changes: Any) -> Any:
    hits = [i for i, item in enumerate(items) if match(item)]
    assert hits, "the example no longer has what this test edits"
    i = hits[0]
    return (*items[:i], dataclasses.replace(items[i], **changes), *items[i + 1 :])


def _resource(program: r.ProviderIR, rid: str, **changes: Any) -> r.ProviderIR:
    resources = _replace_in(program.resources, lambda x: x.id == rid, **changes)
    return dataclasses.replace(program, resources=resources)


def _action(program: r.ProviderIR, aid: str, **changes: Any) -> r.ProviderIR:
    actions = _replace_in(program.actions, lambda x: x.id == aid, **changes)
    return dataclasses.replace(program, actions=actions)


def _node(program: r.ProviderIR, gid: str, nid: str, **changes: Any) -> r.ProviderIR:
    graph = next(g for g in program.graphs if g.id == gid)
    nodes = _replace_in(graph.nodes, lambda x: x.id == nid, **changes)
    graphs = _replace_in(program.graphs, lambda x: x.id == gid, nodes=nodes)
    return dataclasses.replace(program, graphs=graphs)


def _fact_value(program: r.ProviderIR, value: Any) -> r.ProviderIR:
    """review-desk: the first check of ``collect`` becomes ``equals: value``."""
    node = next(n for n in program.graphs[0].nodes if n.id == "collect")
    assert node.satisfied_by is not None
    check = dataclasses.replace(node.satisfied_by[0], kind=r.EQUALS, value=value)
    return _node(program, "desk", "collect", satisfied_by=(check, *node.satisfied_by[1:]))


def _host_value(program: r.ProviderIR, value: Any) -> r.ProviderIR:
    """context-views: the host-action input becomes ``value``."""
    resource = next(x for x in program.resources if x.host is not None)
    assert resource.host is not None
    host = dataclasses.replace(resource.host, value=value)
    return _resource(program, resource.id, host=host)


def _catalog_raw(program: r.ProviderIR, value: Any) -> r.ProviderIR:
    """review-desk: the first catalog entry's authored JSON becomes ``value``."""
    assert program.catalog is not None
    raw = dataclasses.replace(program.catalog[0], raw=value)
    return dataclasses.replace(program, catalog=(raw, *program.catalog[1:]))


_JSON_FIELDS: dict[str, tuple[str, Callable[[r.ProviderIR, Any], r.ProviderIR]]] = {
    "fact-check": ("review-desk", _fact_value),
    "host-input": ("context-views", _host_value),
    "catalog-raw": ("review-desk", _catalog_raw),
}


def _load_corrupt(name: str, program: r.ProviderIR | bytes) -> AgentGraphError:
    """Loading the edited Program must fail with ir-corrupt, and nothing else."""
    data = program if isinstance(program, bytes) else codec.encode(program)
    with pytest.raises(AgentGraphError) as info:
        load_program(data, EXAMPLES / name)
    assert info.value.code == "ir-corrupt", info.value.message
    return info.value


def _nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


_MARKER = "\x00deep\x00"


def _spliced(program: r.ProviderIR, depth: int) -> bytes:
    """IR bytes of ``program`` with its ``_MARKER`` value replaced by a list nested ``depth``
    deep, spliced in as raw bytes: msgpack's packer nests less deep than its unpacker."""
    strings, tree = unpack(codec.encode(program))
    body = msgpack.packb([strings, tree], use_bin_type=True)
    packed_marker = msgpack.packb(_MARKER, use_bin_type=True)
    assert packed_marker in body
    return pack_body_bytes(body.replace(packed_marker, b"\x91" * depth + b"\x01", 1))


def pack_body_bytes(body: bytes) -> bytes:
    header = [codec.MAGIC, codec.FORMAT_VERSION, hashlib.sha256(body).digest(), body]
    return bytes(msgpack.packb(header, use_bin_type=True))


@pytest.mark.parametrize("field", list(_JSON_FIELDS))
@pytest.mark.parametrize("depth", [201, 450, 1000, 5000])
def test_json_nested_past_the_source_limit_is_corrupt_not_a_recursion_error(
    field: str, depth: int
) -> None:
    """Finding 6: a fact-check value nested ~450 deep made load_program raise RecursionError
    (freeze_json recursed; msgpack unpacks deeper than Python recurses)."""
    name, edit = _JSON_FIELDS[field]
    if depth < 500:
        program = edit(_decoded(name), _nested(depth))
        error = _load_corrupt(name, program)
    else:
        error = _load_corrupt(name, _spliced(edit(_decoded(name), _MARKER), depth))
    if depth > 1010:  # msgpack's unpacker stops at about 1024 levels
        assert "not msgpack" in error.message
    else:
        assert "nested more than 200 levels" in error.message


def test_the_ir_depth_limit_is_the_source_readers_limit() -> None:
    from agent_graph.documents.sourcemap import MAX_DEPTH

    assert r.MAX_JSON_DEPTH == MAX_DEPTH


def test_a_host_input_as_deep_as_a_source_allows_loads_routes_and_dumps() -> None:
    program = _host_value(_decoded("context-views"), {"deep": _nested(r.MAX_JSON_DEPTH - 1)})
    loaded = load_program(codec.encode(program), EXAMPLES / "context-views")
    evaluation = loaded.evaluate("status", "default", {})
    assert evaluation.primary is not None
    route = loaded.route("status", "default", evaluation.primary.route_id, {})
    text = json.dumps(route.to_dict())
    assert "[[[[" in text
    assert json.loads(json.dumps(to_json(loaded.ir))) is not None
    assert "[[[[" in dump(loaded.ir)


_NOT_JSON: list[Any] = [
    b"bytes",
    bytearray(b"x"),
    msgpack.ExtType(5, b"x"),
    msgpack.Timestamp(1, 0),
    2**53 + 1,
    -(2**53) - 1,
    2**64 - 1,
    -(2**63),
]


_PLACES: dict[str, Callable[[Any], Any]] = {
    "itself": lambda bad: bad,
    "in-a-list": lambda bad: [1, [bad]],
    "in-an-object": lambda bad: {"a": {"b": bad}},
    "as-a-key": lambda bad: {"a": {bad: 1}},  # msgpack itself refuses other key types
}
_FIELD_NAMES = {
    "fact-check": "FactCheck.value",
    "host-input": "HostInput.value",
    "catalog-raw": "CatalogEntry.raw",
}


@pytest.mark.parametrize("field", list(_JSON_FIELDS))
@pytest.mark.parametrize(
    ("place", "bad"),
    [(p, b) for p in _PLACES for b in _NOT_JSON if p != "as-a-key" or isinstance(b, bytes)],
    ids=lambda x: x if isinstance(x, str) else type(x).__name__ + repr(x)[:14],
)
def test_what_msgpack_carries_but_json_does_not_is_corrupt(
    field: str, place: str, bad: Any
) -> None:
    """Finding 7: bytes (and extension types, timestamps, integers past the JSON number
    range, bytes keys) decoded into JSON fields; ``agc ir dump --format json`` then failed
    with ``TypeError: Object of type bytes is not JSON serializable``."""
    name, edit = _JSON_FIELDS[field]
    error = _load_corrupt(name, edit(_decoded(name), _PLACES[place](bad)))
    assert _FIELD_NAMES[field] in error.message


def test_bytes_in_a_fact_check_no_longer_break_the_json_dump(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The audit's reproduction, through the CLI: an error envelope, not a traceback."""
    from cli_support import error_of

    path = tmp_path / "damaged.agir"
    path.write_bytes(codec.encode(_fact_value(_decoded("review-desk"), b"\x00bytes")))
    error = error_of(["ir", "dump", str(path), "--root", str(EXAMPLES / "review-desk")], capsys)
    assert error["code"] == "ir-corrupt"


def test_a_lone_surrogate_cannot_reach_a_json_value() -> None:
    """msgpack strings are UTF-8, which cannot encode a lone surrogate: the unpacker
    refuses one (CESU-8 ``\\xed\\xa0\\x80``) before any field is read."""
    marker = "\x00surrogate\x00"  # 11 bytes, as many as the replacement
    data = codec.encode(_host_value(_decoded("context-views"), [marker]))
    strings, tree = unpack(data)
    body = msgpack.packb([strings, tree], use_bin_type=True)
    body = body.replace(marker.encode(), b"\xed\xa0\x80" + b"x" * 8, 1)
    error = _load_corrupt("context-views", pack_body_bytes(body))
    assert "not msgpack" in error.message


def test_non_finite_numbers_of_a_valid_provider_still_load(tmp_path: Path) -> None:
    """YAML ``.nan``/``.inf`` are numbers to the graph and input schemas, so a valid
    Provider compiles them into the IR (the VM compares NaN with ``Object.is``): the
    decoder must keep accepting them, like -0.0 and the ends of the JSON number range."""
    root = tmp_path / "context-views"
    shutil.copytree(EXAMPLES / "context-views", root)
    graph = root / "graphs" / "status.yaml"
    graph.write_text(graph.read_text().replace("equals: true", "equals: .nan"))
    schema_path = root / "schemas" / "team-digest-request.schema.json"
    schema = json.loads(schema_path.read_text())
    schema["properties"]["team"] = {}
    schema_path.write_text(json.dumps(schema))
    resource = root / "resources" / "team-digest.yaml"
    text = "team: [.inf, -.inf, -0.0, 9007199254740992, -9007199254740992]"
    resource.write_text(resource.read_text().replace("team: __runtime__", text))
    data = agent_graph.compile_provider(root / "provider.yaml").to_bytes()
    program = load_program(data, root)
    values = [check.value for n in program.ir.graphs[0].nodes for check in n.satisfied_by or ()]
    assert any(isinstance(v, float) and v != v for v in values)
    evaluation = program.evaluate("status", "default", {})
    assert evaluation.primary is not None
    program.route("status", "default", evaluation.primary.route_id, {}).to_dict()
    assert "Infinity" in dump(program.ir)


# -- every record the VM would trust, refused when it breaks what the VM relies on --------


_CV, _RT, _RD = "context-views", "release-train", "review-desk"
_GRAPH_ACTION, _HOST_RES = "acme.workspace-status", "acme.team-digest"
_FILE_RES, _TRIAGE = "schema.status.note", "procedure.train.triage"


def _swap_materializer(p: r.ProviderIR, rid: str, aid: str) -> r.ProviderIR:
    index = next(i for i, a in enumerate(p.actions) if a.id == aid)
    return _resource(p, rid, materializer=index)


def _file_ref(p: r.ProviderIR, aid: str, field: str, **changes: Any) -> r.ProviderIR:
    """The ``field`` file reference (skill, input_schema …) of Action ``aid``, changed."""
    ref = getattr(next(a for a in p.actions if a.id == aid), field)
    assert isinstance(ref, r.FileRef)
    return _action(p, aid, **{field: dataclasses.replace(ref, **changes)})


def _catalog(p: r.ProviderIR, **changes: Any) -> r.ProviderIR:
    assert p.catalog is not None
    return dataclasses.replace(p, catalog=_replace_in(p.catalog, lambda e: True, **changes))


_INVARIANTS: list[tuple[str, str, Callable[[r.ProviderIR], r.ProviderIR]]] = [
    # resources, per protocol
    ("markdown-without-digest", _RT, lambda p: _resource(p, _TRIAGE, digest=None)),
    ("markdown-without-content", _RT, lambda p: _resource(p, _TRIAGE, content=None)),
    ("markdown-content-elsewhere", _RT,
     lambda p: _resource(p, _TRIAGE, content="resources/rollback.md")),
    ("static-digest-not-a-digest", _RT,
     lambda p: _resource(p, _TRIAGE, digest="md5:abc")),
    ("file-without-digest", _CV, lambda p: _resource(p, _FILE_RES, digest=None)),
    ("static-with-materializer", _CV, lambda p: _resource(p, _FILE_RES, materializer=2)),
    ("static-with-host-input", _CV,
     lambda p: _resource(p, _FILE_RES, host=p.resources[1].host)),
    ("legacy-file-of-a-view-kind", _CV,
     lambda p: _resource(p, _FILE_RES, protocol=r.LEGACY_FILE, kind="context-view")),
    ("legacy-view-of-a-file-kind", _CV,
     lambda p: _resource(p, _GRAPH_ACTION, protocol=r.LEGACY_VIEW, kind="procedure")),
    ("view-with-content", _CV, lambda p: _resource(p, _GRAPH_ACTION, content="x.md")),
    ("view-with-digest", _CV, lambda p: _resource(p, _GRAPH_ACTION, digest="sha256:" + "0" * 64)),
    ("view-without-materializer", _CV, lambda p: _resource(p, _GRAPH_ACTION, materializer=r.NONE)),
    ("view-materializer-writes", _CV,
     lambda p: _swap_materializer(p, _GRAPH_ACTION, "status.summarize")),
    ("view-materializer-is-host", _CV,
     lambda p: _swap_materializer(p, _GRAPH_ACTION, "status.build-team-digest")),
    ("view-with-host-input", _CV,
     lambda p: _resource(p, _GRAPH_ACTION, host=p.resources[1].host)),
    ("host-action-without-host", _CV, lambda p: _resource(p, _HOST_RES, host=None)),
    ("host-action-materializer-is-command", _CV,
     lambda p: _swap_materializer(p, _HOST_RES, "status.read-workspace-status")),
    ("host-action-handler-mismatch", _CV,
     lambda p: _action(p, "status.build-team-digest", handler="acme.other/v1")),
    ("host-action-materializer-without-schemas", _CV,
     lambda p: _action(p, "status.build-team-digest", output_schema=None)),
    ("host-action-with-content", _CV, lambda p: _resource(p, _HOST_RES, content="x.md")),
    # actions: each runner has what it runs with and nothing of another runner's
    ("command-runner-with-runtime", _RT, lambda p: _action(p, "train.docs", runtime="python")),
    ("command-runner-with-args", _RT, lambda p: _action(p, "train.docs", args=("x",))),
    ("command-runner-with-handler", _RT, lambda p: _action(p, "train.docs", handler="x")),
    ("command-runner-with-entry", _RT, lambda p: _action(p, "train.docs", entry="x.sh")),
    ("command-runner-empty-command", _RT, lambda p: _action(p, "train.docs", command="")),
    ("host-runner-with-command", _RT, lambda p: _action(p, "train.plan", command="make x")),
    ("host-runner-with-skill", _RT,
     lambda p: _action(p, "train.plan", skill=p.actions[1].skill)),
    ("agent-runner-with-args", _RT, lambda p: _action(p, "train.changelog", args=("x",))),
    ("schema-file-with-an-error", _RD, lambda p: _file_ref(
        p, "desk.record-verdict", "input_schema", error=("frontmatter-missing", "no"))),
    ("skill-error-code-not-a-code", _RT, lambda p: _file_ref(
        p, "train.changelog", "skill", error=("Not A Code!", "no"))),
    ("file-digest-not-a-digest", _RT, lambda p: _file_ref(
        p, "train.changelog", "skill", digest="sha256:short")),
    # nodes: each kind carries its own data and no other kind's
    ("non-terminal-with-outcome", _RT,
     lambda p: _node(p, "train", "plan", terminal_outcome="nonsense")),
    ("non-subgraph-with-entry", _RT, lambda p: _node(p, "train", "plan", entry="default")),
    ("subgraph-calls-a-missing-entry", _RT,
     lambda p: _node(p, "train", "verify-live", subgraph=2)),
    ("action-without-reason-code", _RT, lambda p: _node(p, "train", "plan", reason_code=None)),
    ("subgraph-with-reason-code", _RT,
     lambda p: _node(p, "train", "ship", reason_code="route.train.ship")),
    ("action-without-resource-lists", _RT, lambda p: _node(p, "train", "plan", resources=None)),
    ("subgraph-with-resource-lists", _RT,
     lambda p: _node(p, "train", "ship", resources=r.ResourceLists((), ()))),
    ("subgraph-with-satisfied-by", _RT,
     lambda p: _node(p, "train", "ship", satisfied_by=p.graphs[0].nodes[1].requires or ())),
    ("exists-check-with-a-value", _RD, lambda p: _node(p, "desk", "collect", satisfied_by=(
        r.FactCheck(("a",), r.EXISTS, "x"),))),
    ("equals-check-with-a-list", _RD, lambda p: _fact_value(p, [1])),
    ("equals-check-with-an-object", _RD, lambda p: _fact_value(p, {"a": 1})),
    ("fact-check-without-a-path", _RD, lambda p: _node(p, "desk", "collect", satisfied_by=(
        r.FactCheck((), r.EXISTS, None),))),
    # identities the VM looks things up by
    ("duplicate-node-id", _RT, lambda p: _node(p, "train", "plan", id="changelog")),
    ("duplicate-graph-id", _RT, lambda p: dataclasses.replace(p, graphs=_replace_in(
        p.graphs, lambda g: g.id == "ship", id="verify"))),
    ("duplicate-entry-name", _RT, lambda p: dataclasses.replace(p, graphs=_replace_in(
        p.graphs, lambda g: g.id == "verify", entrypoints=(("default", 0), ("default", 1))))),
    ("duplicate-action-id", _RT, lambda p: _action(p, "train.docs", id="train.lint")),
    ("duplicate-resource-id", _RT,
     lambda p: _resource(p, _TRIAGE, id="procedure.train.rollback")),
    ("graph-digest-not-a-digest", _RT, lambda p: dataclasses.replace(p, graphs=_replace_in(
        p.graphs, lambda g: g.id == "ship", digest="sha256:"))),
    ("provider-digest-not-a-digest", _RT,
     lambda p: dataclasses.replace(p, provider_digest="deadbeef")),
    # the code catalog
    ("catalog-unknown-kind", _RD, lambda p: _catalog(p, kind="reason")),
    ("catalog-route-reason-with-severity", _RD, lambda p: _catalog(p, severity="error")),
    ("catalog-document-is-dynamic", _CV, lambda p: dataclasses.replace(p, catalog=(
        r.CatalogEntry("route.x", "route-reason", "X", None, 0, {
            "code": "route.x", "kind": "route-reason", "summary": "X"}),))),
    ("catalog-raw-disagrees", _RD, lambda p: _catalog(p, summary="Something else")),
    ("catalog-raw-not-an-object", _RD, lambda p: _catalog_raw(p, ["route.x"])),
    ("duplicate-catalog-code", _RD, lambda p: dataclasses.replace(
        p, catalog=(*(p.catalog or ()), (p.catalog or ())[0]))),
]  # fmt: skip


@pytest.mark.parametrize(("name", "edit"), [(n, e) for _, n, e in _INVARIANTS],
                         ids=[i for i, _, _ in _INVARIANTS])  # fmt: skip
def test_records_breaking_an_invariant_the_vm_relies_on_are_corrupt(
    name: str, edit: Callable[[r.ProviderIR], r.ProviderIR]
) -> None:
    """Finding 8: a Markdown resource without a digest and a host-action resource without
    host data decoded, and ``route`` then failed an ``assert`` (or, under ``python -O``,
    returned a location with a null digest). Every such record is now refused on load."""
    program = edit(_decoded(name))
    assert program != _decoded(name)
    _load_corrupt(name, program)


def test_every_invariant_case_decodes_without_its_edit() -> None:
    for name in {n for _, n, _ in _INVARIANTS}:
        load_program(compiled(name), EXAMPLES / name)


_UNCHECKED_ROUTE = """
import dataclasses, sys
import agent_graph
from agent_graph.errors import AgentGraphError
from agent_graph.vm import Program

compiled = agent_graph.compile_provider(sys.argv[1] + "/provider.yaml")
ir = compiled.ir
broken = tuple(
    dataclasses.replace(x, digest=None) if x.id == "procedure.train.triage" else x
    for x in ir.resources
)
# a Program built from records, not bytes, gets the decoder's checks
try:
    Program(dataclasses.replace(ir, resources=broken), sys.argv[1])
except AgentGraphError as exc:
    print(exc.code)
# and the VM's own helpers still refuse an unchecked record
triage = next(x for x in broken if x.id == "procedure.train.triage")
try:
    from agent_graph.vm.locations import locate_resource
    print(locate_resource(compiled.root, triage, None))
except AgentGraphError as exc:
    print(exc.code)
"""


@pytest.mark.parametrize("optimize", [[], ["-O"]], ids=["asserts", "python-O"])
def test_a_location_never_trusts_an_unchecked_resource(optimize: list[str]) -> None:
    """locate_resource refused a static resource without a digest with ``assert``: an
    AssertionError, or under ``python -O`` a location whose digest is null."""
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, *optimize, "-c", _UNCHECKED_ROUTE, str(EXAMPLES / "release-train")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.stdout.split() == ["ir-corrupt", "ir-corrupt"], done.stderr
