"""The Flow half on the compiler's spine: a pass table, and a runtime that runs IR bytes.

* ``compile_flow`` runs ``FLOW_PASSES`` through the same machinery as the Provider table:
  ``stop_after`` any pass, carry on from a stopped state, same bytes as ``flow.compile``.
* ``flow.run`` compiles once and keeps the program's bytes beside the Run, by digest;
  ``resume`` runs those bytes again, checked against the files by their fingerprint
  recomputed from disk, so the runtime needs no front end (a subprocess proves it with
  the compiler made unimportable). A Run that kept no program is compiled as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_graph import flow
from agent_graph.compiler import compile_flow
from agent_graph.compiler.flow.pipeline import FLOW_CHECKED, FLOW_PASSES
from agent_graph.compiler.passes import pass_names
from agent_graph.errors import AgentGraphError
from agent_graph.flow.runtime import resume as runtime_resume
from agent_graph.flow.runtime import start
from agent_graph.flow.runtime.program_files import fingerprint_on_disk
from agent_graph.flow.runtime.store import PROGRAMS, checksum
from agent_graph.ir.flow_program import FlowProgram
from flow_run_support import FakeAgent, agent, call, package, read

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "flows").iterdir())


def interrupted(tmp_path: Path, *, with_child: bool = False) -> tuple[Path, Path]:
    """A Run of Flow ``one`` stopped in its first Agent step: (package, record)."""
    if with_child:
        package(tmp_path, "kid", "start((开始)) --> k[k]\nk -->|ok| finish((结束))",
                agent("k", ".", {"ok": "."}))  # fmt: skip
        graph = "start((开始)) --> p[p]\np -->|ok| c[c]\nc -->|已完成| finish((结束))\n"
        graph += "c -->|已失败| finish"
        pkg = package(tmp_path, "one", graph, agent("p", ".", {"ok": "."}), call("c", "kid"))
    else:
        pkg = package(tmp_path, "one", "start((开始)) --> p[p]\np -->|ok| finish((结束))",
                      agent("p", ".", {"ok": "."}))  # fmt: skip
    stop = flow.Stop()

    def stopping(request: Any) -> Any:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    state = tmp_path / "r.json"
    summary = flow.run(pkg, "t", state=state, agent=FakeAgent(stopping), stop=stop)
    assert summary.state == "interrupted"
    return pkg, state


def answering(*answers: tuple[str, str]) -> FakeAgent:
    return FakeAgent(*answers)


# -- the pass table ----------------------------------------------------------------------------


def test_the_flow_pass_table() -> None:
    assert pass_names(FLOW_PASSES) == [
        "find-entry",
        "read-entry",
        "check-entry",
        "load-closure",
        "raise-collected",
        "lower",
        "encode",
    ]
    assert all(step.needs for step in FLOW_PASSES)
    assert FLOW_CHECKED in pass_names(FLOW_PASSES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_stopping_and_carrying_on_gives_the_same_bytes(example: Path) -> None:
    state = compile_flow(example, stop_after="check-entry")
    assert state.done == pass_names(FLOW_PASSES)[:3]
    assert state.record is None
    assert state.data is None
    compile_flow(state)
    assert state.done == pass_names(FLOW_PASSES)
    assert state.data == flow.compile(example).to_bytes()


def test_check_stops_before_raising(tmp_path: Path) -> None:
    pkg = package(tmp_path, "bad", "start((开始)) --> p[p]\np -->|ok| nowhere[nowhere]",
                  agent("p", ".", {"ok": "."}))  # fmt: skip
    state = compile_flow(pkg, stop_after=FLOW_CHECKED)
    errors = [d for d in state.diagnostics() if d.severity == "error"]
    assert errors
    assert [d.code for d in flow.check(pkg)] == [d.code for d in state.diagnostics()]
    with pytest.raises(AgentGraphError) as caught:
        compile_flow(state)
    assert caught.value.code == errors[0].code
    assert state.done[-1] == "load-closure"  # raise-collected stopped the run


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_fingerprint_from_disk_is_the_compiled_one(example: Path) -> None:
    program = flow.compile(example)
    decoded = FlowProgram.from_bytes(program.to_bytes(), base=program.base)
    assert fingerprint_on_disk(decoded) == (program.fingerprint, None)


# -- the runtime runs the kept bytes -----------------------------------------------------------


def test_run_keeps_the_program_beside_the_run(tmp_path: Path) -> None:
    pkg, state = interrupted(tmp_path)
    document = read(state)
    program = flow.compile(pkg)
    assert document["program"] == program.digest
    kept = tmp_path / PROGRAMS / f"{program.digest.removeprefix('sha256:')}.agfir"
    assert kept.read_bytes() == program.to_bytes()


def test_resume_runs_the_kept_program_without_compiling(tmp_path: Path) -> None:
    _, state = interrupted(tmp_path)

    def no_compiling(entry: Path) -> FlowProgram:
        raise AssertionError(f"compiled {entry}")

    summary = runtime_resume(state, agent=answering(("ok", "done")), compile=no_compiling)
    assert (summary.state, summary.result) == ("completed", "done")


_NO_FRONT_END = """
import sys
sys.modules["agent_graph.compiler"] = None  # any front-end import now fails loudly
sys.modules["lark"] = None
from agent_graph.flow.runtime import resume
from agent_graph.flow.agents.spec import adapter_from_spec
summary = resume(sys.argv[1], agent=adapter_from_spec("script:" + sys.argv[2]))
print(summary.state, summary.result)
print(sorted(m for m in sys.modules if m.startswith("agent_graph.compiler") and sys.modules[m]))
"""


def test_the_runtime_resumes_with_the_front_end_unimportable(tmp_path: Path) -> None:
    _, state = interrupted(tmp_path)
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"result": "ok", "content": "fine"}) + "\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_NO_FRONT_END), str(state), str(answers)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["completed fine", "[]"]


def test_a_changed_file_refuses_the_resume(tmp_path: Path) -> None:
    pkg, state = interrupted(tmp_path)
    before = state.read_bytes()
    flow_md = pkg / "FLOW.md"
    flow_md.write_text(flow_md.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(state, agent=answering(("ok", "x")))
    assert caught.value.code == "run-fingerprint-mismatch"
    assert "changed since Run" in caught.value.message
    assert state.read_bytes() == before  # refused: the Run stays as resumable as it was


def test_a_child_package_gone_refuses_the_resume(tmp_path: Path) -> None:
    _, state = interrupted(tmp_path, with_child=True)
    (tmp_path / "kid" / "FLOW.md").unlink()
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(state, agent=answering(("ok", "x")))
    assert caught.value.code == "run-fingerprint-mismatch"
    assert f"{tmp_path / 'kid'} has no FLOW.md" in caught.value.message


def test_a_run_that_kept_no_program_is_compiled_from_its_files(tmp_path: Path) -> None:
    _, state = interrupted(tmp_path)
    document = read(state)
    del document["program"]  # as a Run started before programs were kept
    document["checksum"] = checksum(document)
    state.write_text(json.dumps(document, ensure_ascii=False), "utf-8")
    with pytest.raises(AgentGraphError) as caught:
        runtime_resume(state, agent=answering(("ok", "x")))
    assert caught.value.code == "flow-program-missing"
    summary = flow.resume(state, agent=answering(("ok", "again")))
    assert (summary.state, summary.result) == ("completed", "again")


def test_a_damaged_kept_program_falls_back_to_the_files(tmp_path: Path) -> None:
    _, state = interrupted(tmp_path)
    [kept] = (tmp_path / PROGRAMS).iterdir()
    kept.write_bytes(kept.read_bytes()[:-3])
    summary = flow.resume(state, agent=answering(("ok", "fine")))
    assert summary.state == "completed"


def test_start_refuses_a_program_that_does_not_say_where_it_is(tmp_path: Path) -> None:
    pkg = package(tmp_path, "one", "start((开始)) --> p[p]\np -->|ok| finish((结束))",
                  agent("p", ".", {"ok": "."}))  # fmt: skip
    bare = FlowProgram.from_bytes(flow.compile(pkg).to_bytes())
    with pytest.raises(AgentGraphError) as caught:
        start(bare, "t", state=tmp_path / "r.json", agent=answering(("ok", "x")))
    assert caught.value.code == "flow-program-unplaced"
    assert not (tmp_path / "r.json").exists()
    placed = FlowProgram.from_bytes(flow.compile(pkg).to_bytes(), base=tmp_path)
    summary = start(placed, "t", state=tmp_path / "r.json", agent=answering(("ok", "y")))
    assert (summary.state, summary.result) == ("completed", "y")
