"""Fuzzing ``load_program``: whatever the bytes, only an ``AgentGraphError`` comes out.

Each case takes the valid IR of one base Provider (every example, a Provider with every
runner, resource protocol and gate policy, two Providers from the differential
generator and two benchmark shapes), decodes its body to the msgpack structure,
applies one to three random mutations, re-encodes it and recomputes the body digest
and the header, so the mutation reaches the decoder's type, bounds and semantic
checks instead of stopping at the digest. Mutations know the record layout: a text
field is pointed at another string of the table (``host`` becomes ``command``), an
index at another row of its table or past it, a code at another name; lists of
records and indexes are dropped from, duplicated, reordered and cleared; JSON values
get bytes, extension types, NaN, huge integers, non-string keys and deep nesting;
strings of the table are replaced; and some mutations ignore the layout entirely.

A mutated IR that loads is then used the way a host uses it: evaluated on a few states
(nothing, progress, facts and authorities and receipts), every candidate routed, each
result serialized as the CLI does, host-action input digests computed, and the IR
dumped as text and as JSON. The test fails on any exception that is not an
``AgentGraphError``, naming the case so it replays:

    AGC_IR_FUZZ_SEED=<seed> AGC_IR_FUZZ_ONLY=<case> pytest tests/ir/test_ir_fuzz.py

``AGC_IR_FUZZ_CASES`` sets the number of cases (default 3000, a few seconds).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest

import agent_graph
from agent_graph.errors import AgentGraphError
from agent_graph.ir import codec
from agent_graph.ir import records as r
from agent_graph.ir.dump import dump, to_json
from agent_graph.ir.schema import NONE, Field, describe
from agent_graph.vm import Program, load_program
from agent_graph.vm.locations import HostActionLocation
from provider_gen import generate_case
from tree_support import write_tree

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import shapes

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = int(os.environ.get("AGC_IR_FUZZ_CASES", "3000"))
SEED = int(os.environ.get("AGC_IR_FUZZ_SEED", "9"))
ONLY = os.environ.get("AGC_IR_FUZZ_ONLY")
RECEIPTS = "agent-graph.resource-read-receipts.v1"

# -- the base Providers ---------------------------------------------------------------------

_ACTION = "schema: agent-graph.action.v1\n"
_KITCHEN_SINK = {
    "provider.yaml": """\
schema: agent-graph.provider.v1
id: fuzz.kitchen-sink
version: 0.1.0
graphs: [graphs/main.yaml, graphs/child.yaml]
catalogs: {codes: codes.yaml}
""",
    "codes.yaml": """\
schema: agent-graph.code-catalog.v1
codes:
  - {code: route.main.script, kind: route-reason, summary: Run it, document: resources/procedure.md}
  - {code: route.main.agent, kind: route-reason, summary: Ask the agent}
  - {code: route.main.approve, kind: route-reason, summary: Approve it}
  - {code: route.child.work, kind: route-reason, summary: Child work}
  - {code: fuzz.note, kind: diagnostic, summary: A note, severity: warning}
""",
    "graphs/main.yaml": """\
schema: agent-graph.graph.v1
id: main
entrypoints: {default: start, review: approve}
nodes:
  - id: start
    kind: action
    reasonCode: route.main.script
    action: actions/script.yaml
    resources:
      required: [resources/procedure.md, resources/view.yaml]
      recommended: [resources/template.yaml, resources/digest.yaml, resources/status.yaml,
                    resources/schema.yaml]
  - id: agent
    kind: action
    reasonCode: route.main.agent
    action: actions/agent.yaml
    priority: -3
    description: Ask the agent
    satisfiedBy: [{path: done.agent, equals: .nan}, {path: done.list.0, exists: true}]
  - id: approve
    kind: gate
    reasonCode: route.main.approve
    gate: {id: approve, prompt: Approve it?, authority: main.approve, delegatable: true}
    inspectionAction: actions/node.yaml
    resolutionAction: actions/host.yaml
    resources: {required: [resources/procedure.md]}
    delegated:
      inspection: skip
      resolutionAction: actions/shell.yaml
      resources: {required: [resources/view.yaml]}
  - id: call
    kind: subgraph
    graph: child
    entry: default
    join: any
    requiresFacts: [{path: ready, equals: true}, {path: mode, exists: false}]
  - {id: done, kind: terminal, terminalOutcome: completed}
edges:
  - {from: start, to: agent}
  - {from: start, to: approve, outcomes: [completed, partial]}
  - {from: start, to: call, kind: consumes}
  - {from: agent, to: call}
  - {from: approve, to: call, kind: gatedBy}
  - {from: call, to: done}
  - {from: agent, to: start, kind: repeat, outcomes: [failed]}
""",
    "graphs/child.yaml": """\
schema: agent-graph.graph.v1
id: child
entrypoints: {default: work}
nodes:
  - {id: work, kind: action, reasonCode: route.child.work, action: actions/bun.yaml, priority: 5}
  - {id: end, kind: terminal, terminalOutcome: completed}
edges:
  - {from: work, to: end}
""",
    "actions/script.yaml": _ACTION + "id: script\nrunner: script\neffect: write\nruntime: python\n"
    'entry: scripts/run.py\nargs: ["--x", "a b", ""]\ncwd: provider\n'
    "inputSchema: schemas/in.schema.json\n",
    "actions/node.yaml": _ACTION + "id: node\nrunner: script\neffect: read\nruntime: node\n"
    "entry: scripts/tool.mjs\n",
    "actions/bun.yaml": _ACTION + "id: bun\nrunner: script\neffect: external\nruntime: bun\n"
    "entry: scripts/tool.mjs\nargs: [plain]\n",
    "actions/shell.yaml": _ACTION + "id: shell\nrunner: script\neffect: write\nruntime: shell\n"
    "entry: scripts/tool.sh\n",
    "actions/agent.yaml": _ACTION + "id: agent\nrunner: agent\neffect: read\n"
    "skill: skills/writer/SKILL.md\ninputSchema: schemas/in.schema.json\n"
    "outputSchema: schemas/out.schema.json\n",
    "actions/host.yaml": _ACTION + "id: host\nrunner: host\neffect: external\n"
    "handler: fuzz.host/v1\ncwd: provider\n",
    "actions/materialize.yaml": _ACTION + "id: materialize\nrunner: command\neffect: read\n"
    "command: cat status.json\n",
    "actions/digest.yaml": _ACTION + "id: digest\nrunner: host\neffect: read\n"
    "handler: fuzz.digest/v1\ninputSchema: schemas/digest-request.schema.json\n"
    "outputSchema: schemas/digest.schema.json\n",
    "resources/procedure.md": "---\nid: fuzz.procedure\nkind: procedure\n"
    "media-type: text/markdown\n---\n# Procedure\n",
    "resources/view.yaml": "schema: agent-graph.resource.v1\nid: fuzz.view\nkind: context-view\n"
    "mediaType: application/json\nmaterializer: actions/materialize.yaml\n",
    "resources/template.yaml": "schema: agent-graph.resource.v1\nid: fuzz.template\n"
    "kind: template\nmediaType: text/plain\npath: resources/template.txt\n",
    "resources/template.txt": "Hello {name}\n",
    "resources/status.yaml": "schema: agent-graph.resource.graph-action.v1\nid: fuzz.status\n"
    "kind: context-view\nmediaType: text/markdown\nmaterializer: actions/materialize.yaml\n",
    "resources/schema.yaml": "schema: agent-graph.resource.file.v1\nid: fuzz.schema\nkind: schema\n"
    "mediaType: application/schema+json\npath: schemas/out.schema.json\n",
    "resources/digest.yaml": """\
schema: agent-graph.resource.host-action.v1
id: fuzz.digest
kind: procedure
mediaType: application/json
materializer: actions/digest.yaml
input:
  protocol: fuzz.digest-request/v1
  items: [[1, [2, [3, {deep: [true, null, 1.5, "é"]}]]], {a: null}]
  big: 9007199254740992
  zero: -0.0
  ratio: .inf
""",
    "schemas/digest-request.schema.json": '{"$id": "fuzz.digest-request/v1", "type": "object", '
    '"properties": {"protocol": {"const": "fuzz.digest-request/v1"}}}\n',
    "schemas/digest.schema.json": '{"$id": "fuzz.digest/v1", "type": "object"}\n',
    "schemas/in.schema.json": '{"type": "object"}\n',
    "schemas/out.schema.json": '{"type": "string"}\n',
    "scripts/run.py": "print('hi')\n",
    "scripts/tool.mjs": "console.log('hi')\n",
    "scripts/tool.sh": "echo hi\n",
    "skills/writer/SKILL.md": "---\nname: writer\ndescription: Writes things.\n---\n# Writer\n",
}


# -- the layout, read from the records ------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One field of one record in the body: its path from the body root, the field's
    marker and the sizes of the tables its indexes may point into."""

    path: tuple[int, ...]
    field: Field
    sizes: dict[str, int]


def slots(
    cls: type, value: list[Any], path: tuple[int, ...], sizes: dict[str, int]
) -> Iterator[Slot]:
    fields = describe(cls)
    sizes = sizes | {
        f"{cls.__name__}.{f.name}": len(item or [])
        for f, item in zip(fields, value, strict=True)
        if f.wire.kind == "records"
    }
    for i, (f, item) in enumerate(zip(fields, value, strict=True)):
        here = (*path, i)
        yield Slot(here, f, sizes)
        if f.record is None or item is None:
            continue
        if f.wire.kind == "records":
            for j, element in enumerate(item):
                yield from slots(f.record, element, (*here, j), sizes)
        else:
            yield from slots(f.record, item, here, sizes)


def records_by_class(cls: type, value: list[Any], out: dict[type, list[Any]]) -> None:
    out.setdefault(cls, []).append(value)
    for f, item in zip(describe(cls), value, strict=True):
        if f.record is None or item is None:
            continue
        for element in item if f.wire.kind == "records" else [item]:
            records_by_class(f.record, element, out)


@dataclass(frozen=True)
class Base:
    """A valid IR to mutate: its ``name``, the Provider ``root``, the body (the msgpack of
    ``[strings, tree]``) and the fields of its records (:func:`slots`)."""

    name: str
    root: Path
    body: bytes
    slots: tuple[Slot, ...]


def _base(name: str, manifest: Path) -> Base:
    data = agent_graph.compile_provider(manifest).to_bytes()
    body = msgpack.unpackb(data, raw=False)[3]
    tree = msgpack.unpackb(body, raw=False)[1]
    return Base(name, manifest.parent, body, tuple(slots(r.ProviderIR, tree, (1,), {})))


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> list[Base]:
    out = [_base(m.parent.name, m) for m in sorted(EXAMPLES.glob("*/provider.yaml"))]
    root = tmp_path_factory.mktemp("ir-fuzz")
    out.append(_base("kitchen-sink", write_tree(root / "sink", _KITCHEN_SINK) / "provider.yaml"))
    for seed in (3, 11):
        case = generate_case(random.Random(seed), root / f"generated-{seed}")
        out.append(_base(f"generated-{seed}", case.manifest))
    out.append(_base("nested", shapes.nested(root / "nested", 40).manifest))
    out.append(_base("repeat", shapes.repeat(root / "repeat", 8).manifest))
    return out


# -- mutations ------------------------------------------------------------------------------

STRINGS = [
    "", ".", "..", "../escape", "a/../../b", "/etc/passwd", "C:\\x", "\\\\server\\x", "a\x00b",
    "x" * 5000, "é", "\u2028", "a b", "command", "script", "agent", "host", "cobol", "node",
    "bun", "python", "shell", "read", "write", "external", "workspace", "provider",
    "context-view", "completed", "failed", "waiting-user", "pending", "sha256:" + "0" * 64,
    "sha256:xyz", "route.main.x", "default", "id", "prompt", "authority", "delegatable",
    "{file}", "frontmatter-missing", "ir-corrupt", "Not An Id", "main", "child", "0", "-1",
]  # fmt: skip
DEEP = (150, 199, 200, 201, 450, 511, 600, 5000)
SPLICE = "\x00fuzz-splice\x00"  # replaced by raw msgpack bytes after packing


def breaking(rng: random.Random) -> Any:
    """A value of some other type, or an integer no table has."""
    return rng.choice(
        [
            None, -1, -2, 0, 1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1, "x", "",
            b"", b"\x00bytes", 1.5, math.nan, math.inf, -0.0, True, False, [], {}, [None],
            [0, 0], {"k": 1}, {b"k": 1}, msgpack.ExtType(5, b"x"), msgpack.Timestamp(1, 0),
        ]
    )  # fmt: skip


def json_value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON-ish value: mostly JSON data, sometimes what msgpack carries but JSON does not."""
    roll = rng.random()
    if roll < 0.15 and depth < 4:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if roll < 0.3 and depth < 4:
        keys = [rng.choice(["a", "b", "", "é", "0"]) for _ in range(rng.randint(0, 3))]
        return {k: json_value(rng, depth + 1) for k in keys}
    if roll < 0.4:
        return breaking(rng)
    return rng.choice(
        [None, True, False, 0, -1, 2**53, -(2**53), 1.5, -0.0, math.nan, -math.inf, "s", "é", ""]
    )


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


class Mutator:
    """The mutations of one case, applied to a fresh copy of a base body."""

    def __init__(self, rng: random.Random, base: Base) -> None:
        self.rng = rng
        self.strings: list[Any]
        self.strings, self.tree = msgpack.unpackb(base.body, raw=False)
        self.body: list[Any] = [self.strings, self.tree]
        self.slots = base.slots
        self.records: dict[type, list[Any]] = {}
        records_by_class(r.ProviderIR, self.tree, self.records)
        self.splice: bytes | None = None
        self.done: list[str] = []

    # where things are

    def get(self, path: tuple[int, ...]) -> Any:
        value: Any = self.body
        for step in path:
            value = value[step]
        return value

    def set(self, path: tuple[int, ...], value: Any) -> None:
        self.get(path[:-1])[path[-1]] = value

    # the mutations

    def mutate(self) -> None:
        """One mutation; skipped when an earlier one removed or retyped what it edits."""
        rng = self.rng
        roll = rng.random()
        try:
            if roll < 0.5:
                self.field(rng.choice(self.slots))
            elif roll < 0.6:
                self.string_table()
            elif roll < 0.7:
                self.anywhere()
            elif roll < 0.8:
                self.rewire()
            elif roll < 0.92:
                self.retype()
            else:
                json_slots = [s for s in self.slots if s.field.wire.kind == "json"]
                self.deep(rng.choice(json_slots or self.slots).path)
        except (IndexError, KeyError, TypeError, AttributeError, ValueError):
            self.done.append("skipped")

    def field(self, slot: Slot) -> None:
        rng, f = self.rng, slot.field
        kind, value = f.wire.kind, self.get(slot.path)
        new: Any
        if rng.random() < 0.12:
            new = breaking(rng)
        elif kind == "text":
            new = self.text() if rng.random() < 0.9 else None
        elif kind in ("index", "code", "bits", "integer"):
            new = self.integer(slot)
        elif kind == "flag":
            new = rng.choice([not value, None, 0, 1])
        elif kind == "json":
            new = self.json(value)
        elif kind == "pair":
            new = [self.text(), self.text()] if rng.random() < 0.8 else None
        elif kind == "record":
            assert f.record is not None
            new = self.record(f.record, value)
        else:  # texts, indexes, named_indexes, records
            new = self.listed(slot, value)
        self.set(slot.path, new)
        self.done.append(f"{slot.path} {f.name}: {_short(value)} -> {_short(new)}")

    def text(self) -> int:
        """A string index: mostly another string of the table, sometimes a new one."""
        if self.rng.random() < 0.8:
            return self.rng.randrange(len(self.strings))
        self.strings.append(self.rng.choice(STRINGS))
        return len(self.strings) - 1

    def integer(self, slot: Slot) -> Any:
        rng, wire = self.rng, slot.field.wire
        if wire.table is not None:
            size = slot.sizes.get(str(wire.table), 0)
        elif wire.kind == "bits":
            size = 1 << len(wire.names or ())
        else:
            size = len(wire.names or ()) or 1001
        roll = rng.random()
        if roll < 0.65 and size:
            return rng.randrange(size)
        if roll < 0.8:
            return rng.choice([NONE, size, size + 1, -2])
        return rng.choice([2**53, 2**63 - 1, -(2**63), 2**64 - 1, -1000, 1000, 1001])

    def json(self, value: Any) -> Any:
        rng = self.rng
        if isinstance(value, (dict, list)) and value and rng.random() < 0.5:
            # change something inside the value
            parent, key = value, None
            while True:
                key = rng.choice(list(parent)) if isinstance(parent, dict) else None
                if key is None:
                    key = rng.randrange(len(parent))
                child = parent[key]
                if isinstance(child, (dict, list)) and child and rng.random() < 0.6:
                    parent = child
                    continue
                break
            if isinstance(parent, dict) and rng.random() < 0.3:
                parent[rng.choice([b"bytes-key", "new"])] = json_value(rng)
            else:
                parent[key] = json_value(rng)
            return value
        return json_value(rng)

    def record(self, cls: type, value: Any) -> Any:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6:
            return list(rng.choice(self.records[cls]))  # another record of the same type
        if roll < 0.7 or not isinstance(value, list):
            return None
        return value[:-1] if roll < 0.85 else [*value, None]

    def listed(self, slot: Slot, value: Any) -> Any:
        rng, f = self.rng, slot.field
        if not isinstance(value, list):
            return [] if rng.random() < 0.5 else None
        items = list(value)
        op = rng.choice(["drop", "dup", "swap", "reverse", "shuffle", "add", "clear", "none"])
        if op == "drop" and items:
            del items[rng.randrange(len(items))]
        elif op == "dup" and items:
            items.insert(rng.randrange(len(items) + 1), rng.choice(items))
        elif op == "swap" and len(items) > 1:
            i, j = rng.sample(range(len(items)), 2)
            items[i], items[j] = items[j], items[i]
        elif op == "reverse":
            items.reverse()
        elif op == "shuffle":
            rng.shuffle(items)
        elif op == "add":
            items.insert(rng.randrange(len(items) + 1), self.element(slot))
        elif op == "clear":
            items = []
        elif op == "none":
            return None
        if f.wire.kind == "records" and items and rng.random() < 0.3:
            items[rng.randrange(len(items))] = self.element(slot)
        return items

    def element(self, slot: Slot) -> Any:
        kind, f = slot.field.wire.kind, slot.field
        if kind == "texts":
            return self.text()
        if kind == "indexes":
            return self.integer(slot)
        if kind == "named_indexes":
            return [self.text(), self.integer(slot)]
        assert f.record is not None
        return list(self.rng.choice(self.records[f.record]))

    def string(self, text: str) -> int:
        """The index of ``text`` in the string table (appended when missing)."""
        if text not in self.strings:
            self.strings.append(text)
        return self.strings.index(text)

    def rewire(self) -> None:
        """Edges moved, retargeted, retyped, added or dropped, with the adjacency lists
        recomputed, so the graph is consistent and reaches the evaluator: cycles, self
        loops, edges out of terminals, repeat edges onto anything."""
        rng = self.rng
        graph = rng.choice(self.tree[_at(r.ProviderIR, "graphs")])
        nodes, edges = graph[_at(r.Graph, "nodes")], graph[_at(r.Graph, "edges")]
        source, target = _at(r.Edge, "source"), _at(r.Edge, "target")
        op = rng.choice(["shuffle", "retarget", "kind", "mask", "dup", "drop", "add"])
        if op == "shuffle":
            rng.shuffle(edges)
        elif op in ("retarget", "kind", "mask") and edges:
            edge = rng.choice(edges)
            if op == "retarget":
                edge[rng.choice([source, target])] = rng.randrange(len(nodes))
            elif op == "kind":
                edge[_at(r.Edge, "kind")] = rng.randrange(len(r.EDGE_KINDS))
            else:
                edge[_at(r.Edge, "mask")] = rng.randrange(1, 1 << len(r.OUTCOMES))
        elif op == "dup" and edges:
            edges.insert(rng.randrange(len(edges) + 1), list(rng.choice(edges)))
        elif op == "drop" and edges:
            del edges[rng.randrange(len(edges))]
        else:
            kind = rng.randrange(len(r.EDGE_KINDS))
            edges.append([rng.randrange(len(nodes)), rng.randrange(len(nodes)), kind, 1])
        adjacency = [_at(r.Node, name) for name in ("incoming", "outgoing", "repeats")]
        for node in nodes:
            for position in adjacency:
                node[position] = []
        repeat_edges = []
        for index, edge in enumerate(edges):
            if edge[_at(r.Edge, "kind")] == r.REPEAT:
                nodes[edge[source]][adjacency[2]].append(index)
                repeat_edges.append(index)
            else:
                nodes[edge[source]][adjacency[1]].append(index)
                nodes[edge[target]][adjacency[0]].append(index)
        graph[_at(r.Graph, "repeat_edges")] = repeat_edges
        self.done.append(f"rewired a graph: {op}")

    def retype(self) -> None:
        """A node turned into another kind with that kind's data, consistently: an action
        of any Action, a gate copied from another, a call of any graph's entry (itself and
        its callers included), a terminal of any outcome."""
        rng = self.rng
        graphs = self.tree[_at(r.ProviderIR, "graphs")]
        node = rng.choice(rng.choice(graphs)[_at(r.Graph, "nodes")])
        kind = rng.randrange(len(r.NODE_KINDS))
        routed = kind in (r.ACTION, r.GATE)
        changes: dict[str, Any] = {
            "kind": kind,
            "action": NONE,
            "gate": None,
            "subgraph": NONE,
            "entry": None,
            "terminal_outcome": None,
            "reason_code": self.string("route.fuzz.retyped") if routed else None,
            "resources": [[], []] if routed else None,
        }
        if not routed:
            changes["satisfied_by"] = None
        if kind == r.ACTION:
            changes["action"] = rng.randrange(len(self.tree[_at(r.ProviderIR, "actions")]))
        elif kind == r.GATE:
            changes["gate"] = list(rng.choice(self.records[r.Gate]))
        elif kind == r.SUBGRAPH:
            called = rng.randrange(len(graphs))
            entry = rng.choice(graphs[called][_at(r.Graph, "entrypoints")])
            changes |= {"subgraph": called, "entry": entry[0]}
        else:
            changes["terminal_outcome"] = self.string(rng.choice(r.OUTCOMES))
        for name, value in changes.items():
            node[_at(r.Node, name)] = value
        self.done.append(f"retyped a node: {r.NODE_KINDS[kind]}")

    def string_table(self) -> None:
        rng = self.rng
        i = rng.randrange(len(self.strings))
        old = self.strings[i]
        roll = rng.random()
        if roll < 0.5:
            self.strings[i] = rng.choice(STRINGS)
        elif roll < 0.8:
            self.strings[i] = rng.choice(self.strings)
        elif roll < 0.9:
            self.strings.pop()
            self.done.append("string table: dropped the last string")
            return
        else:
            self.strings[i] = breaking(rng)
        self.done.append(f"string {i}: {_short(old)} -> {_short(self.strings[i])}")

    def anywhere(self) -> None:
        """Anything anywhere: a random position of the body gets a value of another type."""
        path: tuple[int, ...] = ()
        value: Any = self.body
        while isinstance(value, (list, dict)) and value and self.rng.random() < 0.85:
            key = self.rng.choice(list(value)) if isinstance(value, dict) else None
            step = key if key is not None else self.rng.randrange(len(value))
            path, value = (*path, step), value[step]
        if not path:
            path = (1,)
        new = breaking(self.rng)
        self.set(path, new)
        self.done.append(f"{path}: {_short(value)} -> {_short(new)}")

    def deep(self, path: tuple[int, ...]) -> None:
        depth = self.rng.choice(DEEP)
        if depth < 400:
            self.set(path, nested(depth))
        else:  # deeper than msgpack packs: spliced in as raw bytes
            self.set(path, SPLICE)
            self.splice = b"\x91" * depth + b"\x01"
        self.done.append(f"{path}: nested {depth} deep")

    # the bytes

    def encode(self) -> bytes:
        body = msgpack.packb(self.body, use_bin_type=True)
        if self.splice is not None:
            marker = msgpack.packb(SPLICE, use_bin_type=True)
            body = body.replace(marker, self.splice, 1)
        roll = self.rng.random()
        if roll < 0.03:  # a damaged body under a correct digest
            damaged = bytearray(body)
            damaged[self.rng.randrange(len(damaged))] ^= self.rng.choice([0x01, 0x80, 0xFF])
            body = bytes(damaged)
            self.done.append("body byte flipped")
        header: list[Any] = [codec.MAGIC, codec.FORMAT_VERSION, hashlib.sha256(body).digest(), body]
        if roll > 0.98:
            position = self.rng.randrange(3)
            header[position] = breaking(self.rng)
            self.done.append(f"header {position} replaced")
        return bytes(msgpack.packb(header, use_bin_type=True))


def _at(cls: type, name: str) -> int:
    """The position of field ``name`` in an encoded ``cls`` record."""
    return [f.name for f in describe(cls)].index(name)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- using a Program the way a host does ----------------------------------------------------


def _facts(ir: r.ProviderIR) -> dict[str, Any]:
    """Facts that satisfy as many fact checks as can hold at once."""
    facts: dict[str, Any] = {}
    for graph in ir.graphs:
        for node in graph.nodes:
            for check in (*(node.requires or ()), *(node.satisfied_by or ())):
                value = check.value if check.kind == r.EQUALS else True
                if check.kind == r.ABSENT or (
                    isinstance(value, float) and not math.isfinite(value)
                ):
                    continue
                target = facts
                for segment in check.path[:-1]:
                    child = target.setdefault(segment, {})
                    if not isinstance(child, dict):
                        break
                    target = child
                else:
                    if check.path:
                        target.setdefault(check.path[-1], value)
    return facts


def states(ir: r.ProviderIR, graph: r.Graph) -> list[dict[str, Any]]:
    half = graph.nodes[: len(graph.nodes) // 2 + 1]
    authorities = sorted({n.gate.authority for n in graph.nodes if n.gate and n.gate.authority})
    receipts = [
        {"id": res.id, "digest": res.digest}
        for res in ir.resources
        if res.digest is not None and res.id
    ]
    return [
        {},
        {
            "outcomes": {f"{graph.id}/{n.id}": "completed" for n in half},
            "authorities": authorities,
        },
        {
            "facts": _facts(ir),
            "outcomes": {f"{graph.id}/{graph.nodes[0].id}": "failed"} if graph.nodes else {},
            "authorities": authorities,
            "receipts": {"schema": RECEIPTS, "provider": ir.provider_id, "receipts": receipts},
        },
    ]


def exercise(program: Program) -> tuple[int, int]:
    """Dump, evaluate and route ``program``; (evaluations, routes) that succeeded."""
    ir = program.ir
    dump(ir)
    json.dumps({"digest": program.digest, **to_json(ir)}, ensure_ascii=False)
    evaluations = routes = 0
    for graph in ir.graphs[:3]:
        for entry, _ in graph.entrypoints[:2]:
            for state in states(ir, graph):
                try:
                    evaluation = program.evaluate(graph.id, entry, state)
                except AgentGraphError:
                    continue
                evaluations += 1
                json.dumps(evaluation.to_dict(), ensure_ascii=False)
                for candidate in evaluation.candidates[:4]:
                    try:
                        route = program.route(
                            graph.id, entry, candidate.route_id, state, evaluation.revision
                        )
                    except AgentGraphError:
                        continue
                    routes += 1
                    json.dumps(route.to_dict(), ensure_ascii=False)
                    for location in route.locations():
                        if isinstance(location, HostActionLocation):
                            assert location.input_digest.startswith("sha256:")
    return evaluations, routes


# -- the test -------------------------------------------------------------------------------


def run_case(case: int, bases: list[Base], stats: dict[str, int]) -> str | None:
    """Run one case; what went wrong (with how to replay it), or None."""
    rng = random.Random(f"{SEED}:{case}")
    base = rng.choice(bases)
    mutator = Mutator(rng, base)
    try:
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            mutator.mutate()
        try:
            data = mutator.encode()
        except (ValueError, OverflowError, TypeError):
            stats["unpackable"] += 1
            return None
        try:
            program = load_program(data, base.root)
        except AgentGraphError:
            stats["refused"] += 1
            return None
        stats["loaded"] += 1
        evaluations, routes = exercise(program)
        stats["evaluations"] += evaluations
        stats["routes"] += routes
    except AgentGraphError:
        stats["failed-later"] += 1
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return (
            f"AGC_IR_FUZZ_SEED={SEED} AGC_IR_FUZZ_ONLY={case} (base {base.name}): "
            f"{type(exc).__name__}: {_short(str(exc))} at {where.filename}:{where.lineno}; "
            f"mutations: {'; '.join(mutator.done)}"
        )
    return None


@pytest.mark.slow
def test_mutated_ir_raises_only_agent_graph_errors(bases: list[Base]) -> None:
    stats = dict.fromkeys(
        ("refused", "loaded", "failed-later", "unpackable", "evaluations", "routes"), 0
    )
    cases = [int(ONLY)] if ONLY is not None else range(CASES)
    failures = [found for case in cases if (found := run_case(case, bases, stats)) is not None]
    assert not failures, f"{len(failures)} of {len(cases)} cases raised:\n" + "\n".join(
        failures[:20]
    )
    if ONLY is None and CASES >= 1000:
        # the fuzzer must get past the decoder often enough to mean something
        assert stats["loaded"] >= CASES // 50, stats
        assert stats["routes"] >= CASES // 20, stats
        assert stats["unpackable"] <= CASES // 50, stats


def test_every_base_loads_and_routes(bases: list[Base]) -> None:
    """The unmutated bases are valid IR: each loads and routes (else the fuzzer tests nothing)."""
    for base in bases:
        evaluations, routes = exercise(load_program(_wrap(base.body), base.root))
        assert evaluations, base.name
        assert routes, base.name


def _wrap(body: bytes) -> bytes:
    header = [codec.MAGIC, codec.FORMAT_VERSION, hashlib.sha256(body).digest(), body]
    return bytes(msgpack.packb(header, use_bin_type=True))
