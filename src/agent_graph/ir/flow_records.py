"""The compiled Flow program: a second record set in the shared IR container.

Everything the runtime needs is here, resolved, so it never parses Markdown or JSON
templates again: each node's action (an Agent prompt cut into text, ``{outcome}`` and
resource pieces; a command with its ``{outcome}`` slots and branch slots located; a
``执行Flow`` call with its child's index), the routing table ``(node, result) ->
destination``, forks with their branches and join, the closure of child Flows, and the
C.4 fingerprint of every package. Paths are package-relative; the IR holds no machine
path. Encoded and verified by :mod:`agent_graph.ir.wire`, like a Provider's Program.
"""

from __future__ import annotations

from typing import Annotated, Any

from ..frozen import record
from .flow_kinds import ACTION_KINDS as ACTION_KINDS
from .flow_kinds import AGENT_NEW as AGENT_NEW
from .flow_kinds import AGENT_REUSE as AGENT_REUSE
from .flow_kinds import CALL as CALL
from .flow_kinds import COMMAND as COMMAND
from .flow_kinds import OUTCOME_PIECE as OUTCOME_PIECE
from .flow_kinds import PIECE_KINDS as PIECE_KINDS
from .flow_kinds import RESOURCE_PIECE as RESOURCE_PIECE
from .flow_kinds import TEXT_PIECE as TEXT_PIECE
from .schema import (
    FLAG,
    INTEGER,
    JSON,
    RECORD,
    RECORDS,
    TEXT,
    TEXTS,
    Table,
    code,
    index,
    indexes,
)

FLOWS = Table("FlowIR", "flows")
NODES = Table("Flow", "nodes")
FORKS = Table("Flow", "forks")


@record
class Piece:
    """Part of an Agent prompt: literal ``text``, the ``{outcome}`` slot, or a mapped link
    target (``text`` the package-relative ``references/…`` path, ``fragment`` with ``#``)."""

    kind: Annotated[int, code(PIECE_KINDS)]
    text: Annotated[str, TEXT]
    fragment: Annotated[str, TEXT]


@record
class Slot:
    """A place in a JSON template: ``path`` (member names, array indexes as text) from the
    template's root. ``branch``: that branch node's full result goes there; else the
    string there is ``parts`` joined by the input's text."""

    path: Annotated[tuple[str, ...], TEXTS]
    branch: Annotated[int, index(NODES, optional=True)]
    parts: Annotated[tuple[str, ...], TEXTS]


@record
class Arg:
    """A command argument: ``parts`` around each ``{outcome}``; ``script``: the
    package-relative ``scripts/….mjs`` it maps to, or None."""

    parts: Annotated[tuple[str, ...], TEXTS]
    script: Annotated[str | None, TEXT]


@record
class Command:
    """``执行自定义命令``: ``command`` parts, ``args``, and ``stdin`` when ``has_stdin``
    (branch slots hold null until filled)."""

    command: Annotated[tuple[str, ...], TEXTS]
    args: Annotated[tuple[Arg, ...], RECORDS]
    has_stdin: Annotated[bool, FLAG]
    stdin: Annotated[Any, JSON]
    slots: Annotated[tuple[Slot, ...], RECORDS]


@record
class Call:
    """``执行Flow``: the child ``flow`` (index into the program's flows); ``plain``: the
    single-edge form (a failed child fails this node); ``task`` when ``has_task``."""

    flow: Annotated[int, index(FLOWS)]
    plain: Annotated[bool, FLAG]
    has_task: Annotated[bool, FLAG]
    task: Annotated[Any, JSON]
    slots: Annotated[tuple[Slot, ...], RECORDS]


@record
class Result:
    """A declared result: its ``name`` and the description under its ``###`` heading."""

    name: Annotated[str, TEXT]
    description: Annotated[str, TEXT]


@record
class Route:
    """``result`` leads to ``node`` or ``fork`` (both NONE: to finish). The single-edge
    执行Flow form routes its child's completion as 已完成 (docs/flow-runs.md §Execution, C.25)."""

    result: Annotated[str, TEXT]
    node: Annotated[int, index(NODES, optional=True)]
    fork: Annotated[int, index(FORKS, optional=True)]


@record
class Node:
    """A work node: ``ref``, ``name``, action ``kind`` and the action's data, its
    ``results`` in heading order (what an Agent is offered), its ``routes``, and the
    fork it is a branch of / the join of (NONE otherwise). ``line``: of its action block."""

    ref: Annotated[str, TEXT]
    name: Annotated[str, TEXT]
    kind: Annotated[int, code(ACTION_KINDS)]
    line: Annotated[int, INTEGER]
    prompt: Annotated[tuple[Piece, ...], RECORDS]
    command: Annotated[Command | None, RECORD]
    call: Annotated[Call | None, RECORD]
    results: Annotated[tuple[Result, ...], RECORDS]
    routes: Annotated[tuple[Route, ...], RECORDS]
    branch_of: Annotated[int, index(FORKS, optional=True)]
    join_of: Annotated[int, index(FORKS, optional=True)]


@record
class Fork:
    """A ``{{并行}}`` fork: ``branches`` in declaration order and their ``join``."""

    ref: Annotated[str, TEXT]
    branches: Annotated[tuple[int, ...], indexes(NODES)]
    join: Annotated[int, index(NODES)]


@record
class FileDigest:
    """One fingerprinted package file: POSIX path from the package root, sha256 hex."""

    path: Annotated[str, TEXT]
    sha256: Annotated[str, TEXT]


@record
class Flow:
    """One package of the closure. ``path``: its FLOW.md relative to the directory that
    holds the root package; ``fingerprint``: C.4, children included; ``children``: the
    distinct 执行Flow targets (indexes, sorted by id); ``start``: the first work node."""

    id: Annotated[str, TEXT]
    name: Annotated[str, TEXT]
    description: Annotated[str, TEXT]
    path: Annotated[str, TEXT]
    fingerprint: Annotated[str, TEXT]
    files: Annotated[tuple[FileDigest, ...], RECORDS]
    children: Annotated[tuple[int, ...], indexes(FLOWS)]
    start: Annotated[int, index(NODES)]
    nodes: Annotated[tuple[Node, ...], RECORDS]
    forks: Annotated[tuple[Fork, ...], RECORDS]


@record
class FlowIR:
    """A compiled Flow and its closure: ``flows[root]`` is the entry; ``fingerprint`` the
    entry's combined fingerprint, computed with algorithm ``fingerprint_version``."""

    root: Annotated[int, index(FLOWS)]
    fingerprint: Annotated[str, TEXT]
    fingerprint_version: Annotated[int, INTEGER]
    flows: Annotated[tuple[Flow, ...], RECORDS]


FLOW_RECORDS: tuple[type, ...] = (
    Piece,
    Slot,
    Arg,
    Command,
    Call,
    Result,
    Route,
    Node,
    Fork,
    FileDigest,
    Flow,
    FlowIR,
)
