"""What ``agc explain --reach`` prints and writes: the answer as a document, as lines,
and as an ``agent-graph.test.v1`` case that :func:`~agent_graph.testing.check_case` passes.

A case file holds one case, so an existing FILE is never extended or replaced:
``reach-test-exists``, before anything is written. The case is checked (read back from
the text about to be written, then run) before the file is created.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .. import codes
from ..errors import AgentGraphError
from .discovery import TEST_SCHEMA

#: The ``--format json`` document's schema (``reach.schema.json``).
REACH_SCHEMA: Final = "agent-graph.reach.v1"

if TYPE_CHECKING:
    from ..vm import Program
    from .reach import ReachAnswer

_PLAIN_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


def reach_document(answer: ReachAnswer) -> dict[str, Any]:
    """The ``--format json`` document (``agent-graph.reach.v1``)."""
    target = answer.target
    out: dict[str, Any] = {
        "schema": REACH_SCHEMA,
        "graph": target.root,
        "entry": answer.entry,
        "node": target.key,
        "kind": target.kind,
        "status": answer.status,
        "explored": answer.explored,
        "limit": answer.limit,
    }
    if answer.state is not None:
        out["size"] = answer.size
        out["added"] = answer.size - answer.start_size
        out["state"] = answer.state.to_dict()
        out["path"] = [
            {**move.to_dict(), "outcome": answer.outcomes.get(move.key)} for move in answer.path
        ]
    if answer.evaluation is not None:
        evaluation = answer.evaluation.to_dict()
        out["evaluation"] = {
            key: evaluation[key]
            for key in ("statusCode", "outcome", "primaryRoute", "revision")
            if key in evaluation
        }
    if answer.reason is not None:
        out["reason"] = answer.reason
    return out


def reach_lines(doc: dict[str, Any]) -> list[str]:
    """The human answer: the state, the path of outcomes, the evaluation it gives."""
    key, entry = doc["node"], doc["entry"]
    goal = _goal_words(doc["kind"])
    if doc["status"] != "reached":
        count = "" if doc["status"] == "bound" else f" ({doc['explored']} states searched)"
        unwritten = ["No graph test written."] if "test" in doc else []
        return [f"{key} cannot be {goal}: {doc['reason']}{count}", *unwritten]
    given = doc["size"] - doc["added"]
    already = f" ({given} of them given)" if given else ""
    lines = [f"{key} is {goal} from entry {entry} with {doc['size']} thing(s) recorded{already}:"]
    state = doc["state"]
    lines += [
        f"  {member}: {json.dumps(state[member], ensure_ascii=False)}"
        for member in ("facts", "outcomes", "authorities")
        if state[member]
    ]
    if not any(state.values()):
        lines.append("  nothing: the start state already does it")
    if doc["path"]:
        lines.append("Path:")
    lines += [
        f"  {step['node']}: {_added(step)} -> {step['outcome'] or 'unreached'}"
        for step in doc["path"]
    ]
    evaluation = doc["evaluation"]
    primary = evaluation.get("primaryRoute")
    result = f"statusCode {evaluation['statusCode']}"
    if primary is not None:
        result += f", primary route {primary['node']} ({primary['availability']})"
    elif "outcome" in evaluation:
        result += f", outcome {evaluation['outcome']}"
    lines.append(f"Evaluated: {result} ({doc['explored']} states searched)")
    if doc.get("test") is not None:
        lines.append(f"Wrote graph test {doc['test']}")
    return lines


def _goal_words(kind: str) -> str:
    if kind == "terminal":
        return "reached (its frame completes with it)"
    if kind == "subgraph":
        return "entered (the primary route is in its frame)"
    return "the primary route"


def _added(step: dict[str, Any]) -> str:
    if step["adds"] == "facts":
        return "facts " + ", ".join(
            f"{path}={json.dumps(value)}" for path, value in step["facts"].items()
        )
    if step["adds"] == "authority":
        return f"authority {step['authority']}"
    return f"recorded {step['recorded']}"


def reach_case(answer: ReachAnswer) -> dict[str, Any]:
    """The answer as one ``agent-graph.test.v1`` case (only a reached answer has one)."""
    assert answer.state is not None
    assert answer.evaluation is not None
    target, evaluation = answer.target, answer.evaluation
    state = {k: v for k, v in answer.state.to_dict().items() if v}
    expect: dict[str, Any] = {"statusCode": evaluation.status_code}
    primary = evaluation.primary
    if primary is not None:
        expect["primaryNode"] = primary.node.id
        if primary.reason_code:
            expect["primaryReasonCode"] = primary.reason_code
        expect["availability"] = primary.availability
        if primary.gate_resolution is not None:
            expect["gateResolution"] = primary.gate_resolution
        expect["recordNode"] = primary.state_key
    elif evaluation.outcome is not None:
        expect["outcome"] = evaluation.outcome
    case: dict[str, Any] = {
        "schema": TEST_SCHEMA,
        "name": f"explain --reach {target.key} from entry {answer.entry}",
        "graph": target.root,
        "entry": answer.entry,
    }
    if state:
        case["state"] = state
    case["expect"] = expect
    return case


def case_text(case: dict[str, Any], path: Path) -> str:
    """JSON for a ``.json`` FILE, else YAML (block mappings, JSON scalars and lists)."""
    if path.suffix.lower() == ".json":
        return json.dumps(case, indent=2, ensure_ascii=False) + "\n"
    lines: list[str] = []
    _yaml(case, 0, lines)
    return "\n".join(lines) + "\n"


def _yaml(value: dict[str, Any], depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    for key, item in value.items():
        name = key if _PLAIN_KEY.match(key) else json.dumps(key, ensure_ascii=False)
        if isinstance(item, dict) and item:
            lines.append(f"{pad}{name}:")
            _yaml(item, depth + 1, lines)
        else:
            lines.append(f"{pad}{name}: {json.dumps(item, ensure_ascii=False)}")


def write_reach_case(program: Program, answer: ReachAnswer, file: str | os.PathLike[str]) -> Path:
    """Write the answer's case to a new ``file``; it is read back and run first, so what
    is written passes ``agc test``. ``reach-test-exists`` when ``file`` exists."""
    from ..documents.durable import write_durably
    from ..documents.schema import validate
    from ..documents.yaml12 import parse_yaml
    from .assertions import check_case
    from .discovery import GraphTestCase

    target = Path(os.path.abspath(os.fspath(file)))
    if os.path.lexists(target):
        raise _exists(target)
    text = case_text(reach_case(answer), target)
    value = json.loads(text) if target.suffix.lower() == ".json" else parse_yaml(text)[0]
    problem = validate("test-case", value, path=str(target))
    if problem is not None:  # pragma: no cover - the case is built to the schema
        raise AssertionError(f"the written case is not {TEST_SCHEMA}: {problem.message}")
    case = GraphTestCase(
        target, value["name"], value["graph"], value["entry"], value.get("state", {}),
        value["expect"],
    )  # fmt: skip
    failures = check_case(program, case)
    if failures:  # pragma: no cover - the expectations are read off this very evaluation
        raise AssertionError(f"the written case would fail: {failures[0].message}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file where a folder should be, no permission …
        raise _unwritable(target, error) from None
    try:
        write_durably(target, text.encode("utf-8"), new=True)
    except FileExistsError:  # it appeared meanwhile: still never replaced
        raise _exists(target) from None
    except OSError as error:
        raise _unwritable(target, error) from None
    return target


def _unwritable(target: Path, error: OSError) -> AgentGraphError:
    return AgentGraphError(
        codes.FILE_WRITE_FAILED, f"Cannot write {target}: {error.strerror or error}"
    )


def _exists(target: Path) -> AgentGraphError:
    return AgentGraphError(
        codes.REACH_TEST_EXISTS,
        f"Not writing {target}: it exists, and a graph test file holds one case "
        "(choose a new file name; nothing was written)",
    )
