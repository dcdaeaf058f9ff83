"""``RoutingState``: what a host knows right now, checked and normalised for the VM.

Facts are JSON data observed by the host; outcomes are recorded by state key
(``graph/node``, or ``parent/sub>child/node`` inside subgraphs) as one of the eight
outcome strings or an outcome record ``{"outcome": …, "recordedAt": …}``;
authorities are session authority ids; receipts are an
``agent-graph.resource-read-receipts.v1`` set (routes only: they never affect
evaluation); ``workspace`` is the directory ``workspace`` Actions run in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..canonical import is_digest, is_identifier, js_sorted
from ..errors import AgentGraphError
from ..ir.records import OUTCOMES
from .kinds import Outcome, is_outcome

RECEIPTS_SCHEMA = "agent-graph.resource-read-receipts.v1"


@dataclass(frozen=True, slots=True)
class RoutingState:
    """The host's current state for one evaluation or route resolution."""

    facts: Mapping[str, Any] = field(default_factory=dict)
    outcomes: Mapping[str, Any] = field(default_factory=dict)
    authorities: Sequence[str] = ()
    receipts: Mapping[str, Any] | None = None
    workspace: str | None = None


@dataclass(frozen=True, slots=True)
class Receipt:
    id: str
    digest: str | None
    revision: str | None


@dataclass(frozen=True, slots=True)
class Normalized:
    """A checked state: ``outcomes`` reduced to strings, authorities de-duplicated and sorted."""

    facts: dict[str, Any]
    outcomes: dict[str, Outcome]
    authorities: tuple[str, ...]
    receipts_provider: str | None
    receipts: tuple[Receipt, ...]
    workspace: str | None


def check_json(value: Any, where: str, code: str = "facts-invalid") -> None:
    """``value`` must be plain JSON data: no NaN/Infinity, string keys only, no objects."""
    if type(value) is dict and not value:
        return
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise AgentGraphError(code, f"{at} is not a finite JSON number")
            continue
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
        raise AgentGraphError("outcome-invalid", f"Outcome record for {key} has no outcome member")
    if not is_outcome(outcome):
        raise AgentGraphError(
            "outcome-invalid",
            f"Outcome for {key} is invalid: {outcome!r} (expected one of {', '.join(OUTCOMES)})",
        )
    return outcome


def _receipts(value: Mapping[str, Any]) -> tuple[str, tuple[Receipt, ...]]:
    def bad(message: str) -> AgentGraphError:
        return AgentGraphError("resource-receipts-invalid", f"Resource receipts {message}")

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
                "state-invalid", f"Unknown routing state members: {', '.join(sorted(unknown))}"
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
        raise AgentGraphError("json-object-required", "facts must be a JSON object")
    check_json(facts, "facts")
    if outcomes is None:
        outcomes = {}
    elif type(outcomes) is not dict and not isinstance(outcomes, Mapping):
        raise AgentGraphError("json-object-required", "outcomes must be a JSON object")
    authorities = authorities or ()
    if isinstance(authorities, str) or not all(isinstance(a, str) for a in authorities):
        raise AgentGraphError("authority-invalid", "authorities must be a list of strings")
    provider, receipt_list = (None, ()) if receipts is None else _receipts(receipts)
    return Normalized(
        facts=dict(facts),
        outcomes={str(k): _outcome(str(k), v) for k, v in outcomes.items()} if outcomes else {},
        authorities=tuple(js_sorted(list(set(authorities)))) if authorities else (),
        receipts_provider=provider,
        receipts=receipt_list,
        workspace=workspace,
    )
