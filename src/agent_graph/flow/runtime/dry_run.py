"""``agc flow run --dry-run``: what a Run would send and run, rendered, with nothing run.

Every step of the Flow, and of each child Flow where its ``执行Flow`` step is, in graph
order (breadth first from the start node, a fork's branches before its join): an Agent
step's prompt, a command's argv and stdin, a child Run's task, each rendered by the
runtime's own functions (:mod:`.render`), so the text is what a Run would produce. What
is known before the Run is filled in: the task (for the start node, and a child's task
built from it), constants, the package files' real paths. What only the Run will know,
the content a step receives from the step before, is the placeholder
``<content of REF>`` (``<content of A or B>`` when several steps lead there); a join's
branch results are ``{"result": "已执行", "content": "<content of REF>"}``. Nothing is
executed and nothing is written: no record, no kept program, no lock.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any, Final

from ...ir import flow_records as r
from ...ir.flow_program import FlowProgram
from . import render
from .runner import COMMAND_RESULT

FINISH: Final = "结束"  # the finish node's text (the front end's FINISH_TEXT)
#: The step kinds as the plan names them.
KINDS: Final = {r.AGENT_NEW: "agent", r.AGENT_REUSE: "agent", r.COMMAND: "command", r.CALL: "flow"}
MARKERS: Final = {r.AGENT_NEW: "新建Agent", r.AGENT_REUSE: "复用Agent"}


def placeholder(refs: list[str]) -> str:
    return f"<content of {' or '.join(refs)}>"


def graph_order(flow: r.Flow) -> list[int]:
    """Node indexes breadth first from the start; a fork's branches, then its join."""
    seen: dict[int, None] = {}  # ordered, with O(1) membership: a wide Flow stays linear
    queue = deque([flow.start])
    while queue:
        index = queue.popleft()
        if index in seen:
            continue
        seen[index] = None
        for route in flow.nodes[index].routes:
            if route.node != -1:
                queue.append(route.node)
            elif route.fork != -1:
                fork = flow.forks[route.fork]
                queue.extend([*fork.branches, fork.join])
    # the checker allows no unreachable node; should one get in, it is still shown
    return [*seen, *(i for i in range(len(flow.nodes)) if i not in seen)]


def sources(flow: r.Flow) -> dict[int, list[tuple[str, str]]]:
    """Node index -> the ``(node ref, result)`` pairs whose content it receives: a fork's
    branches and its join receive what entered the fork (the round's input)."""
    into: dict[int, dict[tuple[str, str], None]] = {i: {} for i in range(len(flow.nodes))}
    for node in flow.nodes:
        if node.branch_of != -1:
            continue  # a branch's content reaches its join as a branch slot, not as input
        for route in node.routes:
            targets: list[int] = []
            if route.node != -1:
                targets = [route.node]
            elif route.fork != -1:
                fork = flow.forks[route.fork]
                targets = [*fork.branches, fork.join]
            for target in targets:
                into[target][(node.ref, route.result)] = None  # first arrival keeps its place
    return {target: list(pairs) for target, pairs in into.items()}


def _next(flow: r.Flow, node: r.Node) -> list[dict[str, str]]:
    out = []
    for route in node.routes:
        if route.node != -1:
            to = flow.nodes[route.node].ref
        elif route.fork != -1:
            to = flow.forks[route.fork].ref
        else:
            to = FINISH
        out.append({"result": route.result, "to": to})
    return out


class _Planner:
    def __init__(self, program: FlowProgram) -> None:
        self.program = program

    def flow(self, index: int, task: Any, stack: tuple[int, ...]) -> list[dict[str, Any]]:
        flow = self.program.flows[index]
        root = self.program.package_root(flow)
        assert root is not None, "a dry run needs a program compiled from sources"
        into = sources(flow)
        refs = {i: node.ref for i, node in enumerate(flow.nodes)}
        steps = []
        for i in graph_order(flow):
            node = flow.nodes[i]
            came = into[i]
            names = list(dict.fromkeys(ref for ref, _ in came))
            value = task if i == flow.start else placeholder(names or ["the previous step"])
            step: dict[str, Any] = {
                "flow": flow.id,
                "node": node.ref,
                "kind": KINDS[node.kind],
                "input": {
                    "task": i == flow.start,
                    "from": [{"node": ref, "result": res} for ref, res in came],
                },
            }
            if node.kind in MARKERS:
                step["marker"] = MARKERS[node.kind]
                step["prompt"] = render.prompt(node, root, value)
            elif node.command is not None:
                step.update(self._command(node.command, root, value, node, flow, refs))
            elif node.call is not None:
                step.update(self._call(node.call, value, (*stack, index)))
            step["results"] = [{"name": x.name, "description": x.description} for x in node.results]
            step["next"] = _next(flow, node)
            steps.append(step)
        return steps

    @staticmethod
    def _command(
        command: r.Command, root: Path, value: Any, node: r.Node, flow: r.Flow, refs: dict[int, str]
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"argv": render.argv(command, root, value)}
        if command.has_stdin:
            branches = {}
            if node.join_of != -1:
                branches = {
                    b: {"result": COMMAND_RESULT, "content": placeholder([refs[b]])}
                    for b in flow.forks[node.join_of].branches
                }
            out["stdin"] = render.fill(command.stdin, command.slots, value, branches)
        return out

    def _call(self, call: r.Call, value: Any, stack: tuple[int, ...]) -> dict[str, Any]:
        child = self.program.flows[call.flow]
        task = render.task(call, value)
        # the checker refuses cycles; should one get in, the plan still ends
        steps = [] if call.flow in stack else self.flow(call.flow, task, stack)
        return {"call": {"flow": child.id, "task": task, "steps": steps}}


def plan(program: FlowProgram, task: Any) -> dict[str, Any]:
    """The dry run's document: ``{"dryRun": true, "flow", "task", "steps": [...]}``; a
    ``flow`` step's ``call`` holds the child Flow's id, task and ``steps``."""
    steps = _Planner(program).flow(program.record.root, task, ())
    return {"dryRun": True, "flow": program.root.id, "task": task, "steps": steps}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _input(step: dict[str, Any]) -> str:
    came = [f"{x['node']} ({x['result']})" for x in step["input"]["from"]]
    if not step["input"]["task"]:
        return "content of " + " or ".join(came)
    return "the task" + (f"; on later visits content of {' or '.join(came)}" if came else "")


def _step_lines(step: dict[str, Any], pad: str) -> list[str]:
    kind = step["kind"]
    if kind == "agent":
        head = f"Agent step ({step['marker']})"
    elif kind == "command":
        head = "command"
    else:
        head = f"runs Flow {step['call']['flow']} as a child Run"
    out = [f"{pad}{step['node']}: {head}", f"{pad}  input: {_input(step)}"]
    if kind == "agent":
        out.append(f"{pad}  prompt:")
        out += [f"{pad}  │ {line}" for line in step["prompt"].split("\n")]
    elif kind == "command":
        out.append(f"{pad}  argv: {_json(step['argv'])}")
        if "stdin" in step:
            out.append(f"{pad}  stdin: {_json(step['stdin'])}")
    else:
        out.append(f"{pad}  child task: {_json(step['call']['task'])}")
        for child in step["call"]["steps"]:
            out += _step_lines(child, pad + "    ")
    routes = "; ".join(f"{x['result']} → {x['to']}" for x in step["next"])
    out.append(f"{pad}  then: {routes}")
    return out


def lines(document: dict[str, Any]) -> list[str]:
    """The human form of :func:`plan`'s document."""
    out = [
        f"Dry run of Flow {document['flow']}: nothing is run, nothing is written.",
        f"Task: {_json(document['task'])}",
        "Placeholders <content of …> stand for what those steps will answer or print.",
    ]
    for step in document["steps"]:
        out += ["", *_step_lines(step, "")]
    return out
