"""Shared by the picture and explanation tests: every shipped example's graph-test states."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

import agent_graph
from agent_graph.vm import Program

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@dataclass(frozen=True)
class ExampleState:
    example: str  # directory name under examples/
    case: str  # the graph test's file name
    graph: str
    entry: str
    state: dict[str, Any]

    @property
    def manifest(self) -> Path:
        return EXAMPLES / self.example / "provider.yaml"

    @property
    def id(self) -> str:
        return f"{self.example}/{self.case}"


def example_providers() -> list[str]:
    return sorted(p.parent.name for p in EXAMPLES.glob("*/provider.yaml"))


def example_states() -> list[ExampleState]:
    found = []
    for example in example_providers():
        for path in sorted((EXAMPLES / example / "tests").glob("*.yaml")):
            case = yaml.safe_load(path.read_text(encoding="utf-8"))
            state = case.get("state") or {}
            found.append(
                ExampleState(
                    example,
                    path.name,
                    case["graph"],
                    case.get("entry", "default"),
                    {
                        "facts": state.get("facts") or {},
                        "outcomes": state.get("outcomes") or {},
                        "authorities": state.get("authorities") or [],
                    },
                )
            )
    return found


@cache
def program(example: str) -> Program:
    return agent_graph.compile_provider(EXAMPLES / example / "provider.yaml")


def state_options(state: dict[str, Any]) -> list[str]:
    """The state as ``agc evaluate`` options (inline JSON)."""
    import json

    words = [
        "--facts",
        json.dumps(state["facts"]),
        "--outcomes",
        json.dumps(
            {k: v if isinstance(v, str) else v["outcome"] for k, v in state["outcomes"].items()}
        ),
    ]
    for authority in state["authorities"]:
        words += ["--authority", authority]
    return words
