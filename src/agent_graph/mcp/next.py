"""The ``next`` member every result leads with: one sentence and the exact next call.

Deterministic: the same evaluation and route always give the same words, so a host or a
test can rely on them. The sentence says who acts (``waitsFor``: the agent, the user,
the host's observers, or nobody) and never asks the agent to do what only the host or
the user may: observe a Fact, hold an authority, decide a Gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _call(say: str, waits: str, tool: str | None = None, **arguments: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"say": say, "waitsFor": waits}
    if tool is not None:
        out["tool"] = tool
        out["arguments"] = arguments
    return out


def unverified_words(unverified: Sequence[Mapping[str, Any]]) -> str:
    """``report/publish was recorded completed, but …`` for each unconfirmed step."""
    parts = []
    for item in unverified:
        missing = []
        for fact in item["missing"]:
            who = fact["observers"]
            by = (
                f"observer {', '.join(who)} has not seen it"
                if who
                else "no observer in the server's config writes it"
            )
            missing.append(f"Fact {fact['path']} ({fact['check']}) is not observed: {by}")
        parts.append(f"{item['stateKey']} was recorded completed, but " + "; ".join(missing))
    return "; ".join(parts)


def route_step(handle: str, sequence: int, route: Mapping[str, Any]) -> dict[str, Any]:
    """What to do with a resolved route: ask the user (a Gate) or act and report."""
    record = route["afterAction"].get("recordNode") or f"{route['graph']}/{route['node']}"
    node = route["node"]
    revision = route["revision"]
    gate = route.get("gate")
    if gate is not None and gate.get("resolution") != "session-authority":
        say = (
            f"Gate {gate['id']} waits for the user ({gate['prompt']}): call gate_resolve, "
            "which asks them; never decide it yourself."
        )
        return _call(
            say, "user", "gate_resolve", run=handle, routeId=route["routeId"], revision=revision
        )
    action = route.get("action") or {}
    required = [r["id"] for r in route["resources"]["required"]]
    reading = f" after reading {', '.join(required)} (resource_read)" if required else ""
    runner = action.get("runner")
    plan = route["commandPlan"][0] if route["commandPlan"] else {}
    if "command" in plan:
        say = (
            f"Step {node}: run {plan['command']} in {plan.get('workingDirectory')} with your "
            f"own shell tool{reading} (this server never runs it), then report the outcome "
            "with run_record."
        )
    elif runner == "agent":
        say = f"Step {node} is yours{reading}: do it, then report the outcome with run_record."
    elif runner == "host":
        say = (
            f"Step {node} is a host check ({plan.get('handler') or action.get('id')}){reading}: "
            "do what it describes or ask the user to, then report the outcome with run_record."
        )
    else:
        say = f"Step {node}{reading}: do it, then report the outcome with run_record."
    return _call(
        say,
        "agent",
        "run_record",
        run=handle,
        recordNode=record,
        outcome="completed",
        revision=revision,
        sequence=sequence,
    )


def step(
    handle: str,
    sequence: int,
    evaluation: Mapping[str, Any],
    route: Mapping[str, Any] | None,
    unverified: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """What to do after an evaluation of Run ``handle`` (with its primary route, if any)."""
    prefix = f"{unverified_words(unverified)}. " if unverified else ""
    status = evaluation["statusCode"]
    if status == "complete":
        say = f"Run {handle} is complete (outcome {evaluation.get('outcome')}); nothing is left."
        return _call(prefix + say, "nothing")
    if status == "error":
        found = evaluation["diagnostics"][:1]
        why = f": {found[0]['code']}: {found[0]['message']}" if found else ""
        return _call(f"{prefix}The evaluation is an error{why}; tell the user.", "user")
    primary = evaluation.get("primaryRoute")
    if primary is None:
        found = [d for d in evaluation["diagnostics"] if d["severity"] != "info"][:1]
        why = f" ({found[0]['message']})" if found else ""
        say = (
            f"{prefix}Nothing can run now{why}: Facts the host observes are missing; do not "
            "invent them, call run_status once the host or the user changed something."
        )
        return _call(say, "host", "run_status", run=handle)
    if route is None or route["routeId"] != primary["routeId"]:
        say = f"{prefix}Next step: {primary['node']} ({primary['reasonCode']}); resolve it."
        return _call(
            say,
            "agent",
            "graph_route",
            run=handle,
            routeId=primary["routeId"],
            revision=evaluation["revision"],
        )
    found = route_step(handle, sequence, route)
    found["say"] = prefix + found["say"]
    return found


def start() -> dict[str, Any]:
    return _call(
        "Start a Run of a Provider's Graph with run_start, choosing a new handle for it.",
        "agent",
        "run_start",
        run="<a new handle>",
    )
