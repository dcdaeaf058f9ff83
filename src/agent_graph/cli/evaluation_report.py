"""What ``agc evaluate`` prints, and the state options it repeats in printed commands.

Without click, so that the command's fast path (:mod:`.fast`) and its click command
(:mod:`.evaluate`) run exactly this code; ``agc route`` shares the record hint and the
diagnostic lines.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import codes
from .context import Options, select
from .render import refuse_missing_entry, report_safely
from .words import provider_words, shell_command

if TYPE_CHECKING:
    from ..compiler.provider.skills import ResolvedBinding
    from ..vm import Program
    from .state_input import EvaluationInput


def state_words(local: dict[str, Any]) -> list[str]:
    """The state options as given (``--entry``, ``--state``, ``--facts``, ``--outcomes``,
    ``--authority``), to repeat literally in a printed command: relative paths and
    ``@file`` values mean the same from the same working directory."""
    words: list[str] = []
    for name, option in (
        ("entry", "--entry"),
        ("state_path", "--state"),
        ("facts", "--facts"),
        ("outcomes", "--outcomes"),
    ):
        if local.get(name) is not None:
            words += [option, local[name]]
    for authority in local.get("authorities") or ():
        words += ["--authority", authority]  # repeated: never swallows a following word
    return words


def provider_words_of(opts: Options) -> list[str]:
    return provider_words(opts.manifest, opts.skill, opts.registry)


def input_of(
    program: Program, local: dict[str, Any], receipts: str | None = None
) -> EvaluationInput:
    from .state_input import evaluation_input

    return evaluation_input(
        state=local.pop("state_path"),
        facts=local.pop("facts"),
        outcomes=local.pop("outcomes"),
        authorities=local.pop("authorities") or (),
        receipts=receipts,
        provider_id=program.provider_id,
    )


def diagnostic_lines(diagnostics: Sequence[dict[str, Any]]) -> list[str]:
    return [f"{d['severity'].upper()} {d['code']}: {d['message']}" for d in diagnostics]


def record_hint(key: str, record: Sequence[str] | None = None) -> list[str]:
    """How to record the outcome: the ``agc run record`` command with a Run, else the
    ``--outcomes`` member to add on the next ``evaluate``/``route``."""
    if record is not None:
        return [
            f"Record it: {shell_command(record)}",
            "  (or partial, failed, unverified, skipped … instead of completed)",
        ]
    example = json.dumps({key: "completed"}, ensure_ascii=False, separators=(",", ":"))
    return [
        f"  (e.g. --outcomes {shell_command([example])}, or partial, failed, unverified, skipped …)"
    ]


def evaluation_lines(
    doc: dict[str, Any],
    resolve: Sequence[str] | None = None,
    explain: Sequence[str] | None = None,
) -> list[str]:
    """Human lines for an ``agent-graph.evaluation.v1`` document.

    The reference's lines (State, Next, Reason, Route, diagnostics) keep their order;
    the others are interleaved where a reader needs them. ``resolve`` is the complete
    ``agc route`` command for the primary route, printed as ``Resolve it:``; ``explain``
    the ``agc explain`` command that says why nothing can run, printed when nothing can.
    """
    lines = [f"State: {doc['statusCode']}"]
    if doc.get("outcome"):
        lines.append(f"Outcome: {doc['outcome']}")
    primary = doc.get("primaryRoute")
    if primary is not None:
        lines.append(f"Next: {primary['node']} ({primary['availability']})")
        where = f" (in graph {primary['graph']})" if primary["graph"] != doc["graph"] else ""
        if primary["label"] != primary["node"] or where:
            lines.append(f"Step: {primary['label']}{where}")
        lines.append(f"Reason: {primary['reasonCode']}")
        if primary.get("hint"):
            lines.append(f"Hint: {primary['hint']}")
        lines.append(f"Route: {primary['routeId']}")
    lines.append(f"Revision: {doc['revision']} ({doc['graph']}#{doc['entry']})")
    if primary is not None:
        if primary["availability"] == "requires-user":
            lines.append("This step waits for a user's decision: ask them before going on.")
        lines += [
            f"Also possible: {alt['node']} ({alt['availability']}) {alt['routeId']}"
            for alt in doc["alternativeRoutes"]
        ]
        if resolve is not None:
            lines.append(f"Resolve it: {shell_command(resolve)}")
    elif doc["statusCode"] == "blocked":
        if explain is None:
            lines.append("Nothing can run now: supply the missing facts or record outcomes.")
        else:
            lines.append(
                "Nothing can run now: supply the missing facts or record outcomes; "
                "to see why, node by node:"
            )
            lines.append(f"Next: {shell_command(explain)}")
    return lines + diagnostic_lines(doc["diagnostics"])


def warn_unknown_outcomes(fmt: str, program: Program, graph: str, data: EvaluationInput) -> None:
    """An outcome under a key that is no state key, or a Fact under a dotted key, counts
    for nothing: say so (human output only, on stderr; the JSON documents stay the
    reference's)."""
    from ..ir import codec
    from ..vm.evaluate import outcome_key_warnings

    if fmt != "human":
        return
    for warning in dotted_fact_warnings(data.facts):
        sys.stderr.write(f"WARNING {codes.FACT_KEY_DOTTED}: {warning}\n")
    if graph in codec.graph_ids(program.ir.graphs):
        for found in outcome_key_warnings(program.ir, graph, data.outcomes):
            sys.stderr.write(f"WARNING {found.code}: {found.message}\n")
    sys.stderr.flush()


def dotted_fact_warnings(facts: dict[str, Any], limit: int = 20) -> list[str]:
    """A Fact path is nested members, never a dotted key: ``{"report.digest": …}`` is one
    member named ``report.digest``, which no condition (``path: report.digest``) reads.
    At most ``limit``, in document order (iterative: Facts may nest as deep as JSON can)."""
    out: list[str] = []
    stack: list[tuple[list[str], Any]] = [([], facts)]
    while stack and len(out) < limit:
        path, value = stack.pop()
        if not isinstance(value, dict):
            continue
        for key in value:
            if "." in key and len(out) < limit:
                parts = [*path, *key.split(".")]
                opened = "".join(f"{{{json.dumps(part, ensure_ascii=False)}: " for part in parts)
                out.append(
                    f"Fact key {key!r} is one key with dots in it, not a path, and no "
                    f'condition reads it; write the nested form: {opened}"…"{"}" * len(parts)}'
                )
        stack.extend(([*path, key], value[key]) for key in reversed(list(value)))
    return out


def report_evaluation(
    opts: Options,
    binding: ResolvedBinding | None,
    program: Program,
    graph: str | None,
    local: dict[str, Any],
) -> None:
    """Evaluate the state the options give and print the Evaluation (``local`` holds the
    state options: entry, state_path, facts, outcomes, authorities)."""
    words = state_words(local)
    selected, entry = select(
        binding, graph, local.pop("entry"), program.graph_ids, human=opts.fmt == "human"
    )
    data = input_of(program, local)
    warn_unknown_outcomes(opts.fmt, program, selected, data)
    evaluation = program.evaluate(selected, entry, data.routing_state())
    doc = evaluation.to_dict()
    if opts.fmt == "human":  # --format json keeps the reference's Evaluation (exit 0)
        refuse_missing_entry(doc, [name for name, _ in program.graph(selected).entrypoints])
    resolve = None
    primary = doc.get("primaryRoute")
    if primary is not None:  # with a binding, route takes the route id alone
        target = [primary["routeId"]] if binding is not None else [selected, primary["routeId"]]
        resolve = [
            "agc",
            "route",
            *target,
            "--revision",
            doc["revision"],
            *words,
            *provider_words_of(opts),
        ]
    explain = [
        "agc",
        "explain",
        *([] if binding is not None else [selected]),
        *(["--entry", entry] if binding is None and entry != "default" else []),
        *words,
        *provider_words_of(opts),
    ]
    report_safely(opts.fmt, doc, evaluation_lines(doc, resolve, explain))
