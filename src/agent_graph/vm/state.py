"""``RoutingState``: what a host knows right now, checked and normalised for the VM.

Facts are JSON data observed by the host; outcomes are recorded by state key
(``graph/node``, or ``parent/sub>child/node`` inside subgraphs) as one of the eight
outcome strings or an outcome record ``{"outcome": …, "recordedAt": …}``;
authorities are session authority ids; receipts are an
``agent-graph.resource-read-receipts.v1`` set (routes only: they never affect
evaluation); ``workspace`` is the directory ``workspace`` Actions run in.
"""

from __future__ import annotations

import contextlib
import marshal
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .. import codes
from ..canonical import (
    NotPlainJson,
    canonical_text,
    is_digest,
    is_identifier,
    js_sorted,
    plain_json_text,
)
from ..errors import AgentGraphError
from ..frozen import field, record
from ..ir.records import OUTCOMES
from .kinds import Outcome, is_outcome

RECEIPTS_SCHEMA = "agent-graph.resource-read-receipts.v1"


@record
class RoutingState:
    """The host's current state for one evaluation or route resolution."""

    facts: Mapping[str, Any] = field(default_factory=dict)
    outcomes: Mapping[str, Any] = field(default_factory=dict)
    authorities: Sequence[str] = ()
    receipts: Mapping[str, Any] | None = None
    workspace: str | None = None


@record
class Receipt:
    id: str
    digest: str | None
    revision: str | None


@record  # made once per evaluation: a frozen dataclass costs more to create
class Normalized:
    """A checked state: ``outcomes`` reduced to strings, authorities de-duplicated and sorted."""

    facts: dict[str, Any]
    #: ``canonical_text(facts)``, written while the facts were checked (the revision's)
    facts_text: str
    outcomes: dict[str, Outcome]
    authorities: tuple[str, ...]
    receipts_provider: str | None
    receipts: tuple[Receipt, ...]
    workspace: str | None


def check_json(value: Any, where: str, code: str = codes.FACTS_INVALID) -> None:
    """``value`` must be plain JSON data: no NaN/Infinity, string keys only, no objects,
    and no container inside itself (shared, non-circular parts are fine)."""
    if type(value) is dict and not value:
        return
    # depth first; a container's id is "open" until an exit marker (None, id) pops it
    stack: list[tuple[Any, str | None]] = [(value, where)]
    open_ids: set[int] = set()
    while stack:
        item, at = stack.pop()
        if at is None:
            open_ids.discard(item)
            continue
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise AgentGraphError(code, f"{at} is not a finite JSON number")
            continue
        if isinstance(item, (Mapping, list, tuple)):
            if id(item) in open_ids:
                raise AgentGraphError(code, f"{at} contains itself, which JSON data cannot")
            open_ids.add(id(item))
            stack.append((id(item), None))
        if isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise AgentGraphError(code, f"{at} has a non-string key {key!r}")
                stack.append((child, f"{at}.{key}"))
            continue
        if isinstance(item, (list, tuple)):
            stack.extend((child, f"{at}[{i}]") for i, child in enumerate(item))
            continue
        raise AgentGraphError(code, f"{at} is a {type(item).__name__}, which is not JSON data")


_OUTCOME_SET = frozenset(OUTCOMES)


def _outcome(key: str, value: Any) -> Outcome:
    if type(value) is str and value in _OUTCOME_SET:
        return value  # type: ignore[return-value]  # the common case, checked
    outcome = value.get("outcome") if isinstance(value, Mapping) else value
    if isinstance(value, Mapping) and "outcome" not in value:
        raise AgentGraphError(
            codes.OUTCOME_INVALID, f"Outcome record for {key} has no outcome member"
        )
    if not is_outcome(outcome):
        raise AgentGraphError(
            codes.OUTCOME_INVALID,
            f"Outcome for {key} is invalid: {outcome!r} (expected one of {', '.join(OUTCOMES)})",
        )
    return outcome


def _outcomes(outcomes: Mapping[Any, Any]) -> dict[str, Outcome]:
    """The outcomes reduced to their strings, keyed by plain strings.

    Plain string keys and outcome strings are checked in C: 99 outcomes normalise in
    0.008 ms instead of 0.023 ms, the call-path keys of 100 nested subgraph calls (and
    this check, the values' types as a set, in 0.0049 ms instead of 0.0057 ms with a
    generator over them; least of 40 x 50 in process, interleaved).
    """
    try:
        # the common case checked in C: plain string keys, each value an outcome string
        values = outcomes.values()
        if (
            {*map(type, outcomes)} == {str}
            and _OUTCOME_SET.issuperset(values)
            and {*map(type, values)} == {str}
        ):
            return dict(outcomes)
    except TypeError:  # an unhashable value: an outcome record
        pass
    return {str(k): _outcome(str(k), v) for k, v in outcomes.items()}


def _receipts(value: Mapping[str, Any]) -> tuple[str, tuple[Receipt, ...]]:
    def bad(message: str) -> AgentGraphError:
        return AgentGraphError(codes.RESOURCE_RECEIPTS_INVALID, f"Resource receipts {message}")

    if not isinstance(value, Mapping):
        raise bad("must be an object")
    extra = set(value) - {"schema", "provider", "receipts"}
    if extra:
        raise bad(f"have unknown members: {', '.join(sorted(extra))}")
    if value.get("schema") != RECEIPTS_SCHEMA:
        raise bad(f"must declare schema {RECEIPTS_SCHEMA}")
    provider = value.get("provider")
    if not is_identifier(provider) or len(provider) > 160:
        raise bad("must name the provider by id")
    items = value.get("receipts")
    if not isinstance(items, list):
        raise bad("must list receipts")
    out = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping) or set(item) - {"id", "digest", "revision"}:
            raise bad(f"item {index} must be an object with id, digest and optional revision")
        rid, digest, revision = item.get("id"), item.get("digest"), item.get("revision")
        if not is_identifier(rid):
            raise bad(f"item {index} has an invalid id")
        for name, text in (("digest", digest), ("revision", revision)):
            if text is not None and not is_digest(text):
                raise bad(f"item {index} has an invalid {name}")
        if digest is None:
            raise bad(f"item {index} has no digest")
        out.append(Receipt(rid, digest, revision))
    return provider, tuple(out)


#: Canonical texts of recent facts, by their marshal bytes (see _facts_text).
_FACTS_TEXT: dict[bytes, str] = {}
_FACTS_TEXT_ENTRIES: Final = 128
_FACTS_TEXT_BYTES: Final = 32 * 1024  # larger facts are written afresh each time


def _facts_text(facts: dict[str, Any]) -> str:
    """The facts checked as JSON data and written as canonical text (for the revision).

    Writing them is most of an evaluation of a small graph with rich facts, and a host
    evaluates the same facts more than once (``evaluate``, then ``route`` at that
    revision, ``explain``…). So recent texts are kept by the facts' ``marshal`` bytes:
    format 2 has no back-references, and it keeps every type apart (``True`` from
    ``1``, ``1`` from ``1.0``), so equal bytes mean equal plain data with equal types,
    hence the same text. Only facts that passed the check are kept; anything marshal
    cannot write (subclasses, objects) is checked and written every time.
    """
    if not facts:
        return "{}"
    key: bytes | None
    try:
        key = marshal.dumps(facts, 2)
    except ValueError:
        key = None
    found = _FACTS_TEXT.get(key) if key is not None else None
    if found is not None:
        return found
    try:  # plain JSON data is checked and written in one pass
        text = plain_json_text(facts)
    except NotPlainJson:
        check_json(facts, "facts")
        return canonical_text(facts)
    if key is not None and len(key) <= _FACTS_TEXT_BYTES:
        if len(_FACTS_TEXT) >= _FACTS_TEXT_ENTRIES:
            with contextlib.suppress(StopIteration, KeyError, RuntimeError):  # other threads
                del _FACTS_TEXT[next(iter(_FACTS_TEXT))]  # the oldest
        _FACTS_TEXT[key] = text
    return text


def forget_facts() -> None:
    """Drop the kept facts texts (benchmarks measure evaluations that write them)."""
    _FACTS_TEXT.clear()


_MEMBERS = frozenset({"facts", "outcomes", "authorities", "receipts", "workspace"})


def normalize(state: RoutingState | Mapping[str, Any] | None) -> Normalized:
    """Check a state (or a plain mapping with the same members) and normalise it."""
    facts: Any
    outcomes: Any
    authorities: Any
    receipts: Any
    workspace: str | None
    if state is None:
        facts, outcomes, authorities, receipts, workspace = None, None, (), None, None
    elif type(state) is dict or isinstance(state, Mapping):
        if not _MEMBERS.issuperset(state):
            unknown = set(state) - _MEMBERS
            raise AgentGraphError(
                codes.STATE_INVALID, f"Unknown routing state members: {', '.join(sorted(unknown))}"
            )
        # read as RoutingState(**state) would hold them, without building one per call
        get = state.get
        facts, outcomes, authorities = get("facts"), get("outcomes"), get("authorities", ())
        receipts, workspace = get("receipts"), get("workspace")
    else:
        facts, outcomes, authorities = state.facts, state.outcomes, state.authorities
        receipts, workspace = state.receipts, state.workspace
    if facts is None:
        facts = {}
    elif type(facts) is not dict and not isinstance(facts, Mapping):
        raise AgentGraphError(codes.JSON_OBJECT_REQUIRED, "facts must be a JSON object")
    facts = dict(facts)
    facts_text = _facts_text(facts)
    if outcomes is None:
        outcomes = {}
    elif type(outcomes) is not dict and not isinstance(outcomes, Mapping):
        raise AgentGraphError(codes.JSON_OBJECT_REQUIRED, "outcomes must be a JSON object")
    if authorities:
        if isinstance(authorities, str) or not all(isinstance(a, str) for a in authorities):
            raise AgentGraphError(codes.AUTHORITY_INVALID, "authorities must be a list of strings")
        authorities = tuple(js_sorted(list(set(authorities))))
    else:
        authorities = ()
    provider, receipt_list = (None, ()) if receipts is None else _receipts(receipts)
    return Normalized(
        facts,
        facts_text,
        _outcomes(outcomes) if outcomes else {},
        authorities,
        provider,
        receipt_list,
        workspace,
    )
