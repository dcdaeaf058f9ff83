"""Assembling a routing state from ``evaluate``/``route`` options (reference §8.2).

JSON-valued options take inline JSON or ``@<path>``; a file is read with the
structured reader (JSON for ``.json``, YAML 1.2 otherwise). Either way text that is
not Unicode (an unpaired surrogate such as ``"\\ud800"``, or an argument byte that
was not UTF-8) is refused with its line and column, as any other syntax error
(``json-invalid`` inline, ``parse-failed`` in a file). ``--state`` names an
``agent-graph.run.v1`` file whose facts, outcomes, authorities and workspace are
the base that the inline options overlay.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import codes
from ..errors import AgentGraphError, Diagnostic
from ..frozen import record
from ..ir.records import OUTCOMES

if TYPE_CHECKING:
    from ..runs import Run

RECEIPTS_LABEL = "resourceReceipts"


def _js_json(value: Any) -> str:
    """``JSON.stringify`` of a parsed JSON value (compact, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_argument(text: str) -> Any:
    """Inline JSON, or the structured file named by ``@<path>`` (relative to the process).

    ``json-invalid`` (with the line and column in a diagnostic) when the text is not
    JSON, or not Unicode text; a file's errors are the structured reader's.
    """
    from ..documents.sources import JsonError, parse_json, read_structured

    if text.startswith("@"):
        name = text[1:]
        return read_structured(Path(os.path.abspath(name)), display=name).value
    try:
        value, _ = parse_json(text)
    except JsonError as error:
        found = Diagnostic(codes.JSON_INVALID, error.message, line=error.line, column=error.column)
        raise AgentGraphError(codes.JSON_INVALID, f"Invalid JSON: {error}", [found]) from None
    return value


def object_value(value: Any, label: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AgentGraphError(codes.JSON_OBJECT_REQUIRED, f"{label} must be a JSON object")
    return value


def outcome_values(value: Any) -> dict[str, str]:
    """``--outcomes``: an object of outcome strings only (records are for Run files)."""
    outcomes = object_value(value, "outcomes")
    for node, outcome in outcomes.items():
        if not isinstance(outcome, str) or outcome not in OUTCOMES:
            from ..runs.document import nearest_outcome  # a failure's path only

            raise AgentGraphError(
                codes.OUTCOME_INVALID,
                f"Outcome for {node} is invalid: {_js_json(outcome)}" + nearest_outcome(outcome),
            )
    return outcomes


def receipts_value(text: str) -> dict[str, Any]:
    """``--resource-receipts``, checked against the receipts schema when parsed."""
    from ..documents.schema import validate

    value = json_argument(text)
    problem = validate("resource-read-receipts", value, path=RECEIPTS_LABEL)
    if problem is not None:
        raise AgentGraphError(problem.code, problem.message, problem.diagnostics)
    result: dict[str, Any] = value
    return result


@record  # a frozen dataclass, cheaper to create: cold start
class RunArgument:
    """A Run read from a file, and where it was read from (absolute)."""

    path: Path
    run: Run

    @property
    def id(self) -> str:
        return self.run.id

    @property
    def provider(self) -> str:
        return self.run.provider


def load_run(path: str, provider_id: str | None = None) -> RunArgument:
    """Read and check a Run file (errors name its absolute path; see ``agent_graph.runs``)."""
    from ..runs import read_run

    run = read_run(path, provider_id)
    return RunArgument(Path(os.path.abspath(path)), run)


@record  # a frozen dataclass, cheaper to create: cold start
class EvaluationInput:
    """What ``evaluate``/``route`` pass to the VM, plus the Run it came from (if any)."""

    facts: dict[str, Any]
    outcomes: dict[str, Any]
    authorities: list[str]
    receipts: dict[str, Any] | None
    workspace: str | None
    run: RunArgument | None

    def routing_state(self) -> dict[str, Any]:
        """The mapping accepted by ``Program.evaluate``/``Program.route``."""
        state: dict[str, Any] = {
            "facts": self.facts,
            "outcomes": self.outcomes,
            "authorities": self.authorities,
        }
        if self.receipts is not None:
            state["receipts"] = self.receipts
        if self.workspace is not None:
            state["workspace"] = self.workspace
        return state


def evaluation_input(
    *,
    state: str | None,
    facts: str | None,
    outcomes: str | None,
    authorities: Sequence[str],
    receipts: str | None = None,
    provider_id: str | None = None,
) -> EvaluationInput:
    """Parse the options in the reference's order: facts, outcomes, receipts, then the Run.

    With a Run, facts are shallow-merged (inline members win), outcomes overlaid,
    authorities united (de-duplicated, sorted) and the Run's workspace used. When
    ``provider_id`` is given, a Run written for another Provider is refused
    (``run-provider-mismatch``): its state keys would silently mean nothing here.
    """
    direct_facts = object_value(json_argument(facts), "facts") if facts is not None else {}
    direct_outcomes = outcome_values(json_argument(outcomes)) if outcomes is not None else {}
    receipt_set = receipts_value(receipts) if receipts is not None else None
    if state is None:
        return EvaluationInput(
            direct_facts, dict(direct_outcomes), list(authorities), receipt_set, None, None
        )
    from ..runs import evaluation_input as run_evaluation_input  # only with a Run: start-up

    loaded = load_run(state, provider_id)  # refuses another Provider's Run, before its log
    routing = run_evaluation_input(
        loaded.run, facts=direct_facts, outcomes=direct_outcomes, authorities=authorities
    )
    return EvaluationInput(
        facts=dict(routing.facts),
        outcomes=dict(routing.outcomes),
        authorities=list(routing.authorities),
        receipts=receipt_set,
        workspace=routing.workspace,
        run=loaded,
    )
