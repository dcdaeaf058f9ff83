"""One table of Flow node kinds per part, and no silent fallback for a kind none knows.

The IR names the kinds (``ACTION_KINDS``); the front end reads each action block marker
through one table (``actions.READERS``, which ``MARKERS`` and lowering follow); the runtime
performs each kind through one table (``runner.PERFORMERS``). These tests hold the tables
to each other, and prove an unknown kind fails loudly at decode and at run time.
"""

from __future__ import annotations

import json
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import pytest

from agent_graph import flow
from agent_graph.compiler.flow import actions, lower
from agent_graph.errors import AgentGraphError
from agent_graph.flow.runtime import start
from agent_graph.flow.runtime.runner import PERFORMERS
from agent_graph.ir import flow_records as r
from agent_graph.ir import wire
from agent_graph.ir.flow_program import FLOW_PROGRAM, FlowProgram
from agent_graph.pictures.flow import KIND_LABELS
from flow_run_support import FakeAgent, agent, package


def test_every_kind_has_one_row_in_each_table() -> None:
    kinds = set(range(len(r.ACTION_KINDS)))
    assert set(PERFORMERS) == kinds
    assert set(lower.KIND_OF_MARKER.values()) == kinds
    assert set(lower.KIND_OF_MARKER) == set(actions.READERS) == set(actions.MARKERS)
    assert set(KIND_LABELS) == kinds


def test_the_run_record_schema_names_every_kind_and_no_other() -> None:
    """A visit records its node's kind by name: a kind the schema lacks would make the
    runtime write records its own reader refuses (the schema is a third table to keep)."""
    schema = json.loads(files("agent_graph.schemas").joinpath("flow-run.schema.json").read_text())
    assert schema["$defs"]["visit"]["properties"]["kind"]["enum"] == list(r.ACTION_KINDS)


def test_the_front_end_refuses_a_marker_it_has_no_reader_for(tmp_path: Path) -> None:
    pkg = package(tmp_path, "one", "start((开始)) --> p[p]\np -->|ok| finish((结束))",
                  "## p\n\n```新建机器人\nhello\n```\n\n### ok\n\n.\n")  # fmt: skip
    codes = [d.code for d in flow.check(pkg) if d.severity == "error"]
    assert codes, "an unknown marker is an error, not read as some other kind"
    with pytest.raises(AgentGraphError):
        flow.compile(pkg)


def _with_kind(program: FlowProgram, kind: int) -> r.FlowIR:
    root = program.root
    nodes = tuple(replace(node, kind=kind) for node in root.nodes)
    flows = list(program.flows)
    flows[program.record.root] = replace(root, nodes=nodes)
    return replace(program.record, flows=tuple(flows))


def test_an_unknown_kind_fails_at_decode_and_at_run_time(tmp_path: Path) -> None:
    pkg = package(tmp_path, "one", "start((开始)) --> p[p]\np -->|ok| finish((结束))",
                  agent("p", ".", {"ok": "."}))  # fmt: skip
    program = flow.compile(pkg)
    unknown = len(r.ACTION_KINDS)
    record = _with_kind(program, unknown)
    with pytest.raises(AgentGraphError) as caught:
        FlowProgram.from_bytes(wire.encode(FLOW_PROGRAM, record))
    assert caught.value.code == "ir-corrupt"
    # a program built by hand (never decoded) is refused before any record is written
    made = FlowProgram(record, program.base)
    with pytest.raises(AgentGraphError) as caught:
        start(made, "t", state=tmp_path / "r.json", agent=FakeAgent(("ok", "x")))
    assert caught.value.code == "ir-corrupt"
    assert f"kind {unknown} has no handler" in caught.value.message
    assert not (tmp_path / "r.json").exists()
