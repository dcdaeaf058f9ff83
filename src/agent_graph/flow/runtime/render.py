"""Rendering actions for one visit: Agent prompts (§3.2, C.13, C.19) and JSON templates
(commands, 执行Flow tasks: C.2), from the compiled pieces and slots — never from Markdown.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final

from ...ir import flow_records as r

#: Part 3 of every prompt (§3.2): how to answer. The adapters turn it into their own
#: submission mechanism (a tool, structured output, a JSON line).
SUBMIT: Final = (
    "Submit exactly one result by calling the result submission tool: `result` is one of "
    "the result names above, `content` is the result content (any JSON value; usually text)."
)


def outcome_text(value: Any) -> str:
    """C.2: the text that replaces ``{outcome}`` in a JSON template's string."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def prompt_outcome(value: Any) -> str:
    """C.13: ``{outcome}`` in an Agent prompt."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def resource_target(root: Path, path: str, fragment: str) -> str:
    """C.19: the package file's real path (plus ``#fragment``), in ``<…>`` when needed."""
    target = os.path.realpath(root.joinpath(*path.split("/"))) + fragment
    if any(c in target for c in " ()"):
        return f"<{target}>"
    return target


def prompt(node: r.Node, root: Path, value: Any) -> str:
    """The three parts of §3.2 / B.9: the rendered block, the results, the instruction."""
    block: list[str] = []
    for piece in node.prompt:
        if piece.kind == r.OUTCOME_PIECE:
            block.append(prompt_outcome(value))
        elif piece.kind == r.RESOURCE_PIECE:
            block.append(resource_target(root, piece.text, piece.fragment))
        else:
            block.append(piece.text)
    results = "\n".join(f"- {res.name}: {res.description}" for res in node.results)
    return f"{''.join(block)}\n\nResults:\n{results}\n\n{SUBMIT}"


def thaw(value: Any) -> Any:
    """A plain, mutable copy of a (frozen) JSON template."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def fill(template: Any, slots: tuple[r.Slot, ...], value: Any, branches: dict[int, Any]) -> Any:
    """``template`` with every slot filled: ``{outcome}`` strings joined around the input's
    text (one pass: text inside the input is never expanded again), branch slots replaced
    by that branch's full result (``branches``: node index -> ``{"result","content"}``)."""
    out = thaw(template)
    text = outcome_text(value)
    for slot in slots:
        replacement = branches[slot.branch] if slot.branch != -1 else text.join(slot.parts)
        if not slot.path:
            out = replacement
            continue
        parent = out
        for step in slot.path[:-1]:
            parent = parent[int(step)] if isinstance(parent, list) else parent[step]
        last = slot.path[-1]
        if isinstance(parent, list):
            parent[int(last)] = replacement
        else:
            parent[last] = replacement
    return out


def argv(command: r.Command, root: Path, value: Any) -> list[str]:
    """``[command, *args]``: ``{outcome}`` substituted, standalone ``scripts/…`` mapped to
    the package file's real path (B.7)."""
    # the input's text only where a part has an {outcome} to fill (a command with none,
    # after a command's 4-member content: 2.5 -> 0.3 us)
    filled = len(command.command) > 1 or any(len(arg.parts) > 1 for arg in command.args)
    text = outcome_text(value) if filled else ""
    out = [text.join(command.command)]
    for arg in command.args:
        if arg.script is not None:
            out.append(os.path.realpath(root.joinpath(*arg.script.split("/"))))
        else:
            out.append(text.join(arg.parts))
    return out


def task(call: r.Call, value: Any) -> Any:
    """B.36/B.37: the child's task."""
    if not call.has_task:
        return value
    return fill(call.task, call.slots, value, {})
