"""The IR: a closed set of immutable records, the contract between compiler and VM.

Everything ``evaluate`` and ``route`` need is here, precomputed, so the VM never
touches YAML or source files. Cross references are indexes into the Program's
tables (nodes and edges of the same graph; graphs, actions and resources of the
Program); the codec checks every index on decode.

This module is the one description of the IR. Each field's ``Annotated`` marker (see
:mod:`.schema`) says how the field travels and what its integers point at; the codec
layout, the generated decoders, the per-field bounds checks and the dump are derived
from those markers, so adding a field is a declaration here plus the lowering that
fills it (and a FORMAT_VERSION bump: IR bytes written before no longer fit). Field
order is wire order, so reordering fields changes the bytes.

Paths are Provider-relative POSIX paths; the VM joins them onto the installed root.
"""

# No ``from __future__ import annotations`` here: the wire markers are read at run time
# (schema.describe), and annotations evaluated as the classes are created come from
# this module's bytecode, where strings would be compiled afresh by every process.

from collections.abc import Sequence
from typing import Annotated, Any

from ..frozen import record
from .frozen_json import FrozenDict as FrozenDict
from .frozen_json import FrozenList as FrozenList
from .frozen_json import freeze_json as freeze_json
from .schema import (
    FLAG,
    INTEGER,
    JSON,
    RECORD,
    RECORDS,
    TEXT,
    TEXT_PAIR,
    TEXTS,
    Table,
    bits,
    code,
    index,
    indexes,
    named_indexes,
)
from .schema import NONE as NONE  # "no index" in optional index fields (-1)

#: The eight outcomes, in bit order for :attr:`Edge.mask`.
OUTCOMES: tuple[str, ...] = (
    "completed",
    "partial",
    "failed",
    "unverified",
    "skipped",
    "pending",
    "blocked",
    "waiting-user",
)
OUTCOME_BIT: dict[str, int] = {name: 1 << i for i, name in enumerate(OUTCOMES)}

#: Stored error messages (a resource's invalid host input) carry this token where the
#: installed absolute path belongs, so the IR never holds a machine path of the sources.
FILE_TOKEN = "{file}"

# Node kinds.
ACTION, GATE, SUBGRAPH, TERMINAL = 0, 1, 2, 3
NODE_KINDS: tuple[str, ...] = ("action", "gate", "subgraph", "terminal")

# Edge kinds (only REPEAT changes semantics; the others record intent).
EDGE_KINDS: tuple[str, ...] = ("flow", "consumes", "requires", "gatedBy", "repeat")
REPEAT = 4

# Fact check kinds.
EXISTS, ABSENT, EQUALS = 0, 1, 2
FACT_KINDS: tuple[str, ...] = ("exists", "absent", "equals")

# Resource protocols.
FILE, MARKDOWN, GRAPH_ACTION, HOST_ACTION, LEGACY_FILE, LEGACY_VIEW = 0, 1, 2, 3, 4, 5
PROTOCOLS: tuple[str, ...] = (
    "file",
    "markdown",
    "graph-action",
    "host-action",
    "legacy-file",
    "legacy-view",
)

# The tables index fields point into; each resolves in the nearest enclosing record.
GRAPHS = Table("ProviderIR", "graphs")
ACTIONS = Table("ProviderIR", "actions")
RESOURCES = Table("ProviderIR", "resources")
NODES = Table("Graph", "nodes")  # this graph's nodes
EDGES = Table("Graph", "edges")  # this graph's edges


#: How deeply arrays and objects may nest in a JSON value of the IR (a scalar is 0
#: deep, ``[[]]`` 2). Every compiled value is part of a source document, and the source
#: readers refuse documents nested deeper than 200 (``documents.sourcemap.MAX_DEPTH``,
#: which ir may not import; ``tests/ir/test_ir_codec.py`` keeps the two equal): a
#: host-action input, a member of its descriptor, is at most 199 deep, a catalog entry 1
#: and a fact check's value 0. The decoder refuses anything deeper as damage.
MAX_JSON_DEPTH = 200

#: The largest magnitude of an integer in a compiled JSON value: the source readers
#: follow the JavaScript number model and turn integers past 2**53 into floats
#: (``canonical.to_js_number``), so a larger integer never comes out of the compiler.
MAX_JSON_INT = 2**53


@record
class FactCheck:
    """One ``requiresFacts``/``satisfiedBy`` check.

    ``path``: the dotted fact path, pre-split into segments.
    ``kind``: EXISTS (``exists: true``), ABSENT (``exists: false``) or EQUALS.
    ``value``: the scalar compared with ``Object.is`` semantics (EQUALS only, else None).
    """

    path: Annotated[tuple[str, ...], TEXTS]
    kind: Annotated[int, code(FACT_KINDS)]
    value: Annotated[Any, JSON]


@record
class ResourceLists:
    """``resources`` of a node (or a gate's delegated replacement).

    ``required``/``recommended``: indexes into :attr:`ProviderIR.resources`, in authored order.
    """

    required: Annotated[tuple[int, ...], indexes(RESOURCES)]
    recommended: Annotated[tuple[int, ...], indexes(RESOURCES)]


@record
class Delegated:
    """A gate's ``delegated`` policy, applied only on session-authority routes.

    ``skip_inspection``: ``inspection: skip``.
    ``resolution``: replacement resolution Action index, or NONE.
    ``resources``: replacement resource lists (wholesale), or None when not authored.
    """

    skip_inspection: Annotated[bool, FLAG]
    resolution: Annotated[int, index(ACTIONS, optional=True)]
    resources: Annotated[ResourceLists | None, RECORD]


@record
class Gate:
    """The ``gate`` object of a gate node plus its Action contracts.

    ``id``/``prompt``: authored identity and question.
    ``authority``: the authority that may resolve it, or None.
    ``delegatable``: as authored (None when absent; routes echo authored fields only).
    ``inspection``/``resolution``: Action indexes, or NONE.
    ``delegated``: the delegated policy, or None.
    ``fields``: the authored gate members in authored order (routes echo them that way).
    """

    id: Annotated[str, TEXT]
    prompt: Annotated[str, TEXT]
    authority: Annotated[str | None, TEXT]
    delegatable: Annotated[bool | None, FLAG]
    inspection: Annotated[int, index(ACTIONS, optional=True)]
    resolution: Annotated[int, index(ACTIONS, optional=True)]
    delegated: Annotated[Delegated | None, RECORD]
    fields: Annotated[tuple[str, ...], TEXTS]


@record
class Node:
    """One graph node, with its adjacency precomputed.

    ``id``/``kind``/``description``/``reason_code``/``priority``: as authored (priority
    defaults to 0, reason code None on subgraphs and terminals).
    ``join_any``: ``join: any`` (default all).
    ``requires``/``satisfied_by``: fact check programs, None when not authored.
    ``terminal_outcome``: the terminal's outcome (terminals only).
    ``action``: Action index (action nodes), else NONE.
    ``gate``: gate data (gate nodes), else None.
    ``subgraph``/``entry``: called graph index and entry name (subgraph nodes), else NONE/None.
    ``resources``: the node's resource lists (actions and gates), else None.
    ``incoming``: indexes of incoming non-repeat edges, in declaration order.
    ``outgoing``: indexes of outgoing non-repeat edges, in declaration order.
    ``repeats``: indexes of outgoing repeat edges, in declaration order.
    """

    id: Annotated[str, TEXT]
    kind: Annotated[int, code(NODE_KINDS)]
    description: Annotated[str | None, TEXT]
    reason_code: Annotated[str | None, TEXT]
    priority: Annotated[int, INTEGER]
    join_any: Annotated[bool, FLAG]
    requires: Annotated[tuple[FactCheck, ...] | None, RECORDS]
    satisfied_by: Annotated[tuple[FactCheck, ...] | None, RECORDS]
    terminal_outcome: Annotated[str | None, TEXT]
    action: Annotated[int, index(ACTIONS, optional=True)]
    gate: Annotated[Gate | None, RECORD]
    subgraph: Annotated[int, index(GRAPHS, optional=True)]
    entry: Annotated[str | None, TEXT]
    resources: Annotated[ResourceLists | None, RECORD]
    incoming: Annotated[tuple[int, ...], indexes(EDGES)]
    outgoing: Annotated[tuple[int, ...], indexes(EDGES)]
    repeats: Annotated[tuple[int, ...], indexes(EDGES)]


@record
class Edge:
    """One edge: ``source``/``target`` node indexes, ``kind`` (EDGE_KINDS index) and
    ``mask``, the OR of :data:`OUTCOME_BIT` over its outcomes (default ``[completed]``)."""

    source: Annotated[int, index(NODES)]
    target: Annotated[int, index(NODES)]
    kind: Annotated[int, code(EDGE_KINDS)]
    mask: Annotated[int, bits(OUTCOMES)]


@record
class Graph:
    """One graph: ``id``; ``path`` of its file; ``digest``, its closure digest (reference
    §1.7, the revision's ``provider`` member); ``entrypoints`` as (name, node index) pairs in
    authored order; ``nodes`` and ``edges`` in declaration order; ``repeat_edges``, indexes of
    all repeat edges in declaration order; ``dependencies``, called graph ids (sorted)."""

    id: Annotated[str, TEXT]
    path: Annotated[str, TEXT]
    digest: Annotated[str, TEXT]
    entrypoints: Annotated[tuple[tuple[str, int], ...], named_indexes(NODES)]
    nodes: Annotated[tuple[Node, ...], RECORDS]
    edges: Annotated[tuple[Edge, ...], RECORDS]
    repeat_edges: Annotated[tuple[int, ...], indexes(EDGES)]
    dependencies: Annotated[tuple[str, ...], TEXTS]


@record
class FileRef:
    """A file an Action exposes on Routes as a file location (Skill, input/output schema).

    ``id``: location id (``skill.<name>``, ``schema.<action>.input|output``); ``kind`` and
    ``media_type`` of the location; ``path`` of the content; ``digest`` of its bytes.
    ``error``: (code, message) when the file cannot be exposed (a Skill without
    frontmatter fails at route time, as in the reference), else None.
    """

    id: Annotated[str, TEXT]
    kind: Annotated[str, TEXT]
    media_type: Annotated[str, TEXT]
    path: Annotated[str, TEXT]
    digest: Annotated[str, TEXT]
    error: Annotated[tuple[str, str] | None, TEXT_PAIR]


@record
class Action:
    """One Action contract.

    ``id``/``runner``/``effect``: as authored. ``cwd``: ``workspace`` (default) or
    ``provider``. ``command`` (command runner); ``entry``/``runtime``/``args`` (script
    runner; entry is a path); ``handler`` (host runner); ``skill`` (agent runner) and
    ``input_schema``/``output_schema`` as file references.
    """

    id: Annotated[str, TEXT]
    runner: Annotated[str, TEXT]
    effect: Annotated[str, TEXT]
    cwd: Annotated[str, TEXT]
    command: Annotated[str | None, TEXT]
    entry: Annotated[str | None, TEXT]
    runtime: Annotated[str | None, TEXT]
    args: Annotated[tuple[str, ...], TEXTS]
    handler: Annotated[str | None, TEXT]
    skill: Annotated[FileRef | None, RECORD]
    input_schema: Annotated[FileRef | None, RECORD]
    output_schema: Annotated[FileRef | None, RECORD]


@record
class HostInput:
    """What a host-action location exposes: the materializer's ``handler``, the versioned
    identities of its input and output schemas, and the descriptor's ``input`` value."""

    handler: Annotated[str, TEXT]
    input_schema: Annotated[str, TEXT]
    output_schema: Annotated[str, TEXT]
    value: Annotated[Any, JSON]


@record
class Resource:
    """One loaded resource.

    ``id``/``kind``/``media_type``: location identity. ``protocol``: PROTOCOLS index.
    ``path``: the descriptor (or Markdown) file. ``content``: the content file (static
    protocols) and ``digest`` of its bytes; dynamic protocols have neither (None).
    ``materializer``: Action index of a view's materializer, else NONE.
    ``host``: host-action data, else None.
    """

    id: Annotated[str, TEXT]
    kind: Annotated[str, TEXT]
    media_type: Annotated[str, TEXT]
    protocol: Annotated[int, code(PROTOCOLS)]
    path: Annotated[str, TEXT]
    content: Annotated[str | None, TEXT]
    digest: Annotated[str | None, TEXT]
    materializer: Annotated[int, index(ACTIONS, optional=True)]
    host: Annotated[HostInput | None, RECORD]


@record
class CatalogEntry:
    """A Code Catalog entry: ``code``, ``kind`` (route-reason/diagnostic), ``summary`` (the
    route hint), optional ``severity`` and ``document`` (a static resource index or NONE),
    and ``raw``, the authored entry as JSON (for ``code list``)."""

    code: Annotated[str, TEXT]
    kind: Annotated[str, TEXT]
    summary: Annotated[str, TEXT]
    severity: Annotated[str | None, TEXT]
    document: Annotated[int, index(RESOURCES, optional=True)]
    raw: Annotated[Any, JSON]


@record
class ProviderIR:
    """A compiled Provider: the root record of the Provider IR (the VM's
    :class:`~agent_graph.vm.Program` wraps one).

    ``provider_id``/``provider_version``: identity. ``provider_digest``: the reference's
    provider digest (revision fallback). ``graphs``, ``actions``, ``resources``: tables
    in load order. ``catalog``: entries in file order, or None without a catalog.
    ``graphs`` is a tuple, or, from a lazy decode, a sequence that decodes and verifies
    each graph on first use (:class:`~agent_graph.ir.codec.LazyGraphs`).
    """

    provider_id: Annotated[str, TEXT]
    provider_version: Annotated[str, TEXT]
    provider_digest: Annotated[str, TEXT]
    graphs: Annotated[Sequence[Graph], RECORDS]  # a tuple, or codec.LazyGraphs
    actions: Annotated[tuple[Action, ...], RECORDS]
    resources: Annotated[tuple[Resource, ...], RECORDS]
    catalog: Annotated[tuple[CatalogEntry, ...] | None, RECORDS]


#: Every record of a Program, innermost first.
PROGRAM_RECORDS: tuple[type, ...] = (
    FactCheck,
    ResourceLists,
    Delegated,
    Gate,
    Node,
    Edge,
    Graph,
    FileRef,
    Action,
    HostInput,
    Resource,
    CatalogEntry,
    ProviderIR,
)
