"""Checking one case's expectations against an evaluation and its primary Route.

Keys are checked in the reference's order and every failure of a case is kept. Each
:class:`Failure` carries the reference's text (``message``) and, for people and CI
reports, the expected and received values and where the expectation is written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import codes
from ..canonical import stable_stringify
from ..errors import AgentGraphError
from .discovery import GraphTestCase

if TYPE_CHECKING:
    from ..vm import Evaluation, Program
    from ..vm.route import GateAction, Route

#: Expectations answered by the evaluation, in checking order (diagnosticsInclude last).
EVALUATION_KEYS = (
    "statusCode",
    "primaryNode",
    "primaryReasonCode",
    "alternativeNodes",
    "availability",
    "outcome",
)
#: Expectations answered by the primary Route, in checking order.
ROUTE_KEYS = (
    "command",
    "handler",
    "requiredResources",
    "recommendedResources",
    "gateResolution",
    "inspectionCommand",
    "inspectionHandler",
    "inspectionSkill",
    "inspectionInputSchema",
    "resolutionCommand",
    "resolutionHandler",
    "resolutionSkill",
    "resolutionInputSchema",
    "recordNode",
)
#: Keys whose values are lists, compared and printed as JSON.
LIST_KEYS = frozenset({"alternativeNodes", "requiredResources", "recommendedResources"})
NO_PRIMARY_ROUTE = "route assertions require a primary route"


@dataclass(frozen=True, slots=True)
class Failure:
    """One unmet expectation.

    ``message`` is the reference's text; ``received`` is ``None`` when there was
    nothing to compare (no primary route, no gate, no command step).
    """

    key: str
    message: str
    expected: Any
    received: Any
    pointer: str
    line: int
    column: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "message": self.message,
            "expected": self.expected,
            "received": self.received,
            "line": self.line,
            "column": self.column,
        }


def show(value: Any) -> str:
    """A value as the reference prints it: lists as JSON, strings bare, missing as <none>."""
    if value is None:
        return "<none>"
    if isinstance(value, (list, tuple)):
        return stable_stringify(list(value))
    return str(value)


def _failure(case: GraphTestCase, key: str, expected: Any, received: Any) -> Failure:
    pointer = f"/expect/{key}"
    line, column = case.position(pointer)
    message = f"{key}: expected {show(expected)}, received {show(received)}"
    return Failure(key, message, expected, received, pointer, line, column)


def _evaluation_values(evaluation: Evaluation) -> dict[str, Any]:
    document = evaluation.to_dict()
    primary: Mapping[str, Any] = document.get("primaryRoute") or {}
    return {
        "statusCode": document["statusCode"],
        "primaryNode": primary.get("node"),
        "primaryReasonCode": primary.get("reasonCode"),
        "alternativeNodes": [route["node"] for route in document["alternativeRoutes"]],
        "availability": primary.get("availability"),
        "outcome": document.get("outcome"),
    }


def _gate_values(prefix: str, step: GateAction | None) -> dict[str, Any]:
    first = step.command_plan[0] if step is not None and step.command_plan else None
    action = step.action if step is not None else None
    return {
        f"{prefix}Command": first.command if first is not None else None,
        f"{prefix}Handler": first.handler if first is not None else None,
        f"{prefix}Skill": action.skill.id if action is not None and action.skill else None,
        f"{prefix}InputSchema": (
            action.input_schema.id if action is not None and action.input_schema else None
        ),
    }


def route_values(route: Route) -> dict[str, Any]:
    """What each route expectation is compared with, by key."""
    first = route.command_plan[0] if route.command_plan else None
    gate = route.gate
    return {
        "command": first.command if first is not None else None,
        "handler": first.handler if first is not None else None,
        "requiredResources": [location.id for location in route.resources.required],
        "recommendedResources": [location.id for location in route.resources.recommended],
        "gateResolution": gate.resolution if gate is not None else None,
        **_gate_values("inspection", gate.inspection_action if gate is not None else None),
        **_gate_values("resolution", gate.resolution_action if gate is not None else None),
        "recordNode": route.record_node,
    }


def _compare(
    case: GraphTestCase, keys: tuple[str, ...], values: Mapping[str, Any], out: list[Failure]
) -> None:
    for key in keys:
        if key not in case.expect:
            continue
        expected = case.expect[key]
        received = values[key]
        same = (
            list(expected) == list(received)
            if key in LIST_KEYS
            else received is not None and expected == received
        )
        if not same:
            out.append(_failure(case, key, expected, received))


def _located(case: GraphTestCase, error: AgentGraphError, pointer: str) -> AgentGraphError:
    """The same error, with a diagnostic pointing at the case that caused it."""
    if error.code == codes.GRAPH_MISSING:
        pointer = "/graph"
    hint = f"; {error.hint}" if error.hint else ""
    note = case.diagnostic(error.code, f"{error.message} (graph test {case.name!r}){hint}", pointer)
    return AgentGraphError(error.code, error.message, [*error.diagnostics, note])


def _guarded(case: GraphTestCase, pointer: str, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except AgentGraphError as error:
        raise _located(case, error, pointer) from None


def check_case(program: Program, case: GraphTestCase) -> tuple[Failure, ...]:
    """Evaluate ``case`` (never running anything) and list its unmet expectations.

    Errors the reference would abort the run with (an unknown graph, an unusable state)
    raise :class:`AgentGraphError`, with a diagnostic at the case's line.
    """
    state = dict(case.state)
    evaluation: Evaluation = _guarded(
        case, "/state", lambda: program.evaluate(case.graph, case.entry, state)
    )
    failures: list[Failure] = []
    _compare(case, EVALUATION_KEYS, _evaluation_values(evaluation), failures)
    reported = {diagnostic.code for diagnostic in evaluation.diagnostics}
    for index, code in enumerate(case.expect.get("diagnosticsInclude", ())):
        if code not in reported:
            pointer = f"/expect/diagnosticsInclude/{index}"
            line, column = case.position(pointer)
            received = [diagnostic.code for diagnostic in evaluation.diagnostics]
            failures.append(
                Failure(
                    "diagnosticsInclude",
                    f"diagnostic missing: {code}",
                    code,
                    received,
                    pointer,
                    line,
                    column,
                )
            )
    present = [key for key in ROUTE_KEYS if key in case.expect]
    if not present:
        return tuple(failures)
    primary = evaluation.primary
    if primary is None:
        pointer = f"/expect/{present[0]}"
        line, column = case.position(pointer)
        expected = {key: case.expect[key] for key in present}
        failures.append(Failure("route", NO_PRIMARY_ROUTE, expected, None, pointer, line, column))
        return tuple(failures)
    route: Route = _guarded(
        case,
        f"/expect/{present[0]}",
        lambda: program.route(case.graph, case.entry, primary.route_id, state, evaluation.revision),
    )
    _compare(case, ROUTE_KEYS, route_values(route), failures)
    return tuple(failures)
