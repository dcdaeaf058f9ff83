"""The evaluation input of a Run (the reference's ``runEvaluationInput``; docs/runs.md).

Run Facts are shallow-merged with Facts the host passes directly (direct members
win), recorded outcomes are overlaid with direct ones, authorities are united
(de-duplicated and sorted), and the Run's workspace is where routed Actions run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import codes
from ..canonical import js_sorted
from ..errors import AgentGraphError
from .document import Run, check_authorities

if TYPE_CHECKING:
    from ..vm.state import RoutingState


def ensure_provider(run: Run, provider: str) -> None:
    """A Run's state keys mean nothing to another Provider: refuse to mix them."""
    if run.provider != provider:
        raise AgentGraphError(
            codes.RUN_PROVIDER_MISMATCH, f"Run {run.id} targets {run.provider}, not {provider}"
        )


def evaluation_input(
    run: Run,
    *,
    facts: Mapping[str, Any] | None = None,
    outcomes: Mapping[str, Any] | None = None,
    authorities: Iterable[str] = (),
    receipts: Mapping[str, Any] | None = None,
    provider: str | None = None,
) -> RoutingState:
    """The :class:`~agent_graph.vm.RoutingState` to evaluate or route a Run with.

    ``outcomes`` may hold outcome strings or records; the VM checks them. With
    ``provider``, a Run of another Provider is refused (``run-provider-mismatch``).
    """
    from ..vm.state import RoutingState

    if provider is not None:
        ensure_provider(run, provider)
    for name, value in (("facts", facts), ("outcomes", outcomes)):
        if value is not None and not isinstance(value, Mapping):
            raise AgentGraphError(codes.JSON_OBJECT_REQUIRED, f"{name} must be a JSON object")
    merged_outcomes: dict[str, Any] = dict(run.outcomes)
    merged_outcomes.update(outcomes or {})
    return RoutingState(
        facts={**run.facts, **(facts or {})},
        outcomes=merged_outcomes,
        authorities=tuple(js_sorted(set(run.authorities) | set(check_authorities(authorities)))),
        receipts=receipts,
        workspace=run.workspace,
    )
