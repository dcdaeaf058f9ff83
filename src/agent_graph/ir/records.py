"""The IR: a closed set of immutable records, the contract between compiler and VM.

Everything ``evaluate`` and ``route`` need is here, precomputed, so the VM never
touches YAML or source files. Cross references are indexes into the Program's
tables (nodes and edges of the same graph; graphs, actions and resources of the
Program); the codec checks every index on decode.

Paths are Provider-relative POSIX paths; the VM joins them onto the installed root.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

# Node kinds.
ACTION, GATE, SUBGRAPH, TERMINAL = 0, 1, 2, 3
NODE_KINDS: tuple[str, ...] = ("action", "gate", "subgraph", "terminal")

# Edge kinds (only REPEAT changes semantics; the others record intent).
EDGE_KINDS: tuple[str, ...] = ("flow", "consumes", "requires", "gatedBy", "repeat")
REPEAT = 4

# Fact check kinds.
EXISTS, ABSENT, EQUALS = 0, 1, 2

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

NONE = -1  # "no index" in optional index fields


def _read_only(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError("JSON values inside a compiled Program are read-only")


class FrozenDict(dict):  # type: ignore[type-arg]
    """A JSON object inside the IR: a dict that refuses changes (copies are plain dicts)."""

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        from copy import deepcopy

        return {key: deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A JSON array inside the IR: a list that refuses changes (copies are plain lists)."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _read_only
    clear = reverse = sort = __iadd__ = __imul__ = _read_only

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        from copy import deepcopy

        return [deepcopy(value, memo) for value in self]

    def __reduce__(self) -> Any:
        return (list, (list(self),))


def freeze_json(value: Any) -> Any:
    """``value`` with every object and array made read-only, so a shared Program stays intact."""
    if not isinstance(value, (dict, list)):
        return value
    if isinstance(value, dict):
        return FrozenDict((key, freeze_json(child)) for key, child in value.items())
    return FrozenList(freeze_json(child) for child in value)


@dataclass(frozen=True, slots=True)
class FactCheck:
    """One ``requiresFacts``/``satisfiedBy`` check.

    ``path``: the dotted fact path, pre-split into segments.
    ``kind``: EXISTS (``exists: true``), ABSENT (``exists: false``) or EQUALS.
    ``value``: the scalar compared with ``Object.is`` semantics (EQUALS only, else None).
    """

    path: tuple[str, ...]
    kind: int
    value: Any


@dataclass(frozen=True, slots=True)
class ResourceLists:
    """``resources`` of a node (or a gate's delegated replacement).

    ``required``/``recommended``: indexes into :attr:`Program.resources`, in authored order.
    """

    required: tuple[int, ...]
    recommended: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Delegated:
    """A gate's ``delegated`` policy, applied only on session-authority routes.

    ``skip_inspection``: ``inspection: skip``.
    ``resolution``: replacement resolution Action index, or NONE.
    ``resources``: replacement resource lists (wholesale), or None when not authored.
    """

    skip_inspection: bool
    resolution: int
    resources: ResourceLists | None


@dataclass(frozen=True, slots=True)
class Gate:
    """The ``gate`` object of a gate node plus its Action contracts.

    ``id``/``prompt``: authored identity and question.
    ``authority``: the authority that may resolve it, or None.
    ``delegatable``: as authored (None when absent; routes echo authored fields only).
    ``inspection``/``resolution``: Action indexes, or NONE.
    ``delegated``: the delegated policy, or None.
    ``fields``: the authored gate members in authored order (routes echo them that way).
    """

    id: str
    prompt: str
    authority: str | None
    delegatable: bool | None
    inspection: int
    resolution: int
    delegated: Delegated | None
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
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

    id: str
    kind: int
    description: str | None
    reason_code: str | None
    priority: int
    join_any: bool
    requires: tuple[FactCheck, ...] | None
    satisfied_by: tuple[FactCheck, ...] | None
    terminal_outcome: str | None
    action: int
    gate: Gate | None
    subgraph: int
    entry: str | None
    resources: ResourceLists | None
    incoming: tuple[int, ...]
    outgoing: tuple[int, ...]
    repeats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Edge:
    """One edge: ``source``/``target`` node indexes, ``kind`` (EDGE_KINDS index) and
    ``mask``, the OR of :data:`OUTCOME_BIT` over its outcomes (default ``[completed]``)."""

    source: int
    target: int
    kind: int
    mask: int


@dataclass(frozen=True, slots=True)
class Graph:
    """One graph: ``id``; ``path`` of its file; ``digest``, its closure digest (reference
    §1.7, the revision's ``provider`` member); ``entrypoints`` as (name, node index) pairs in
    authored order; ``nodes`` and ``edges`` in declaration order; ``repeat_edges``, indexes of
    all repeat edges in declaration order; ``dependencies``, called graph ids (sorted)."""

    id: str
    path: str
    digest: str
    entrypoints: tuple[tuple[str, int], ...]
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    repeat_edges: tuple[int, ...]
    dependencies: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileRef:
    """A file an Action exposes on Routes as a file location (Skill, input/output schema).

    ``id``: location id (``skill.<name>``, ``schema.<action>.input|output``); ``kind`` and
    ``media_type`` of the location; ``path`` of the content; ``digest`` of its bytes.
    ``error``: (code, message) when the file cannot be exposed (a Skill without
    frontmatter fails at route time, as in the reference), else None.
    """

    id: str
    kind: str
    media_type: str
    path: str
    digest: str
    error: tuple[str, str] | None


@dataclass(frozen=True, slots=True)
class Action:
    """One Action contract.

    ``id``/``runner``/``effect``: as authored. ``cwd``: ``workspace`` (default) or
    ``provider``. ``command`` (command runner); ``entry``/``runtime``/``args`` (script
    runner; entry is a path); ``handler`` (host runner); ``skill`` (agent runner) and
    ``input_schema``/``output_schema`` as file references.
    """

    id: str
    runner: str
    effect: str
    cwd: str
    command: str | None
    entry: str | None
    runtime: str | None
    args: tuple[str, ...]
    handler: str | None
    skill: FileRef | None
    input_schema: FileRef | None
    output_schema: FileRef | None


@dataclass(frozen=True, slots=True)
class HostInput:
    """What a host-action location exposes: the materializer's ``handler``, the versioned
    identities of its input and output schemas, and the descriptor's ``input`` value."""

    handler: str
    input_schema: str
    output_schema: str
    value: Any


@dataclass(frozen=True, slots=True)
class Resource:
    """One loaded resource.

    ``id``/``kind``/``media_type``: location identity. ``protocol``: PROTOCOLS index.
    ``path``: the descriptor (or Markdown) file. ``content``: the content file (static
    protocols) and ``digest`` of its bytes; dynamic protocols have neither (None).
    ``materializer``: Action index of a view's materializer, else NONE.
    ``host``: host-action data, else None.
    """

    id: str
    kind: str
    media_type: str
    protocol: int
    path: str
    content: str | None
    digest: str | None
    materializer: int
    host: HostInput | None


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """A Code Catalog entry: ``code``, ``kind`` (route-reason/diagnostic), ``summary`` (the
    route hint), optional ``severity`` and ``document`` (a static resource index or NONE),
    and ``raw``, the authored entry as JSON (for ``code list``)."""

    code: str
    kind: str
    summary: str
    severity: str | None
    document: int
    raw: Any


@dataclass(frozen=True, slots=True)
class Program:
    """A compiled Provider.

    ``provider_id``/``provider_version``: identity. ``provider_digest``: the reference's
    provider digest (revision fallback). ``graphs``, ``actions``, ``resources``: tables
    in load order. ``catalog``: entries in file order, or None without a catalog.
    """

    provider_id: str
    provider_version: str
    provider_digest: str
    graphs: tuple[Graph, ...]
    actions: tuple[Action, ...]
    resources: tuple[Resource, ...]
    catalog: tuple[CatalogEntry, ...] | None
