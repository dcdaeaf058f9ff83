"""Issue 26 item 16: the two lints of the Flow checker.

``flow-child-reuse-first`` (C.7) is on by default and lifted by ``--lenient``; a child
Flow run that way fails at its first 复用Agent with ``agent_binding``.
``resource-path-not-mapped`` warns about every path under ``scripts/`` that a command
names without it being mapped (any suffix, not only ``.mjs``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_graph import codes, flow
from agent_graph.errors import Diagnostic
from cli_support import error_of, ok_json
from flow_run_support import FakeAgent, agent, call, command, package, read

GRAPH = "start((开始)) --> a[a]\na -->|已执行| finish((结束))"


def _reuse_first_pair(root: Path) -> Path:
    package(root, "helper", "start((开始)) --> w[w]\nw -->|done| finish((结束))",
            agent("w", "Do it.", {"done": "Done."}, reuse=True))  # fmt: skip
    return package(root, "main", "start((开始)) --> c[c]\nc --> finish((结束))",
                   call("c", "helper", plain=True))  # fmt: skip


def _codes(diagnostics: list[Diagnostic]) -> list[tuple[str, str]]:
    return [(d.code, d.severity) for d in diagnostics]


def test_child_reuse_first_is_an_error_unless_lenient(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = _reuse_first_pair(tmp_path)
    assert _codes(flow.check(main)) == [(codes.FLOW_CHILD_REUSE_FIRST, "error")]
    assert _codes(flow.check(main, lenient=True)) == []
    error = error_of(["flow", "check", str(main)], capsys)
    assert error["code"] == codes.FLOW_CHILD_REUSE_FIRST
    valid = ok_json(["flow", "check", str(main), "--lenient"], capsys)
    assert (valid["state"], valid["diagnostics"]) == ("valid", [])


def test_a_lenient_run_fails_at_the_childs_reuse_with_agent_binding(tmp_path: Path) -> None:
    main = _reuse_first_pair(tmp_path / "flows")
    fake = FakeAgent(("done", "never asked"))
    (tmp_path / "proj").mkdir()
    summary = flow.run(main, "t", state=tmp_path / "run.json", agent=fake,
                       cwd=tmp_path / "proj", lenient=True)  # fmt: skip
    assert summary.state == "failed"
    assert fake.requests == []  # the adapter was never asked to continue a missing Agent
    (child,) = [v for v in read(tmp_path / "run.json")["visits"] if "childState" in v]
    child_doc = read(tmp_path / child["childState"])
    assert child_doc["status"] == "failed"
    assert child_doc["error"]["category"] == "agent_binding"


def test_strict_running_refuses_the_pair_before_anything_runs(tmp_path: Path) -> None:
    from agent_graph.errors import AgentGraphError

    main = _reuse_first_pair(tmp_path)
    with pytest.raises(AgentGraphError) as caught:
        flow.run(main, "t", state=tmp_path / "run.json", agent=FakeAgent(), cwd=tmp_path)
    assert caught.value.code == codes.FLOW_CHILD_REUSE_FIRST
    assert not (tmp_path / "run.json").exists()


@pytest.mark.parametrize(
    "arg",
    [
        "--config=scripts/settings.json",
        "./scripts/run.sh",
        "--data=scripts/input.csv",
        "in:scripts/x.py",
        "./scripts/check.mjs",
    ],
)
def test_every_unmapped_path_under_scripts_is_warned(tmp_path: Path, arg: str) -> None:
    pkg = package(tmp_path, "p", GRAPH, command("a", args=["-e", "1", arg]))
    found = flow.check(pkg)
    assert _codes(found) == [(codes.RESOURCE_PATH_NOT_MAPPED, "warning")]
    (warning,) = found
    assert arg in warning.message
    text = (pkg / "FLOW.md").read_text(encoding="utf-8").splitlines()
    assert warning.line is not None
    assert warning.column is not None
    assert text[warning.line - 1][warning.column - 1 :].startswith(json.dumps(arg))


@pytest.mark.parametrize("arg", ["scripts", "node_modules/x/scripts/y.sh", "myscripts/a.sh", "-e"])
def test_what_is_not_a_package_script_path_is_not_warned(tmp_path: Path, arg: str) -> None:
    pkg = package(tmp_path, "p", GRAPH, command("a", args=["-e", "1", arg]))
    assert flow.check(pkg) == []


def test_a_mapped_script_argument_is_not_warned(tmp_path: Path) -> None:
    pkg = package(tmp_path, "p", GRAPH, command("a", args=["scripts/x.mjs"]),
                  files={"scripts/x.mjs": "// x\n"})  # fmt: skip
    assert flow.check(pkg) == []


def test_a_command_or_stdin_naming_any_script_is_warned(tmp_path: Path) -> None:
    by_command = package(tmp_path, "c", GRAPH, command("a", args=[], program="./scripts/run.sh"))
    assert _codes(flow.check(by_command)) == [(codes.RESOURCE_PATH_NOT_MAPPED, "warning")]
    by_stdin = package(tmp_path, "s", GRAPH,
                       command("a", "1", stdin='{"file": "scripts/table.json"}'))  # fmt: skip
    assert _codes(flow.check(by_stdin)) == [(codes.RESOURCE_PATH_NOT_MAPPED, "warning")]
