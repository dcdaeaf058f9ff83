"""The host logic of ``agc mcp serve`` without the SDK, and what it must never allow.

No tool lets the agent set a Fact, grant an authority or decide a Gate; observers write
only what they declare; ``import agent_graph`` and every other command load no ``mcp``
module; without the extra, ``agc mcp serve`` names the install command.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_graph.errors import AgentGraphError
from agent_graph.mcp import gates
from agent_graph.mcp.check import LIST_BUDGET, listing_bytes, schema_problems
from agent_graph.mcp.client_config import snippet
from agent_graph.mcp.host import Client, Host, ServeOptions
from agent_graph.mcp.tools import TOOLS, select_tools
from agent_graph.runs import FileRunStore, read_run
from cli_support import run
from mcp_support import ROOT, WEEKLY, Workspace, serve_args, workspace

AGENT = Client("test-client", "1", "2025-11-25", elicitation=True)


def host_for(ws: Workspace, **more: Any) -> Host:
    options = {
        "manifests": (str(WEEKLY),),
        "runs": str(ws.runs),
        "workspaces": (str(ws.root),),
        "config": str(ws.config),
        "tools": "all",
        **more,
    }
    return Host(ServeOptions(**options))


# -- the tool table ---------------------------------------------------------------------


def test_every_schema_is_valid_2020_12_and_self_contained() -> None:
    for tool in TOOLS:
        Draft202012Validator.check_schema(dict(tool.input_schema))
        Draft202012Validator.check_schema(dict(tool.output_schema))
        assert schema_problems(tool) == []
    assert listing_bytes(TOOLS) <= LIST_BUDGET


def test_profiles() -> None:
    core = [t.name for t in select_tools("core", read_only=False)]
    assert core == [
        "providers_list",
        "graph_route",
        "run_start",
        "run_status",
        "run_record",
        "gate_resolve",
    ]
    assert [t.name for t in select_tools("run_status,providers_list", read_only=False)] == [
        "providers_list",
        "run_status",
    ]
    with pytest.raises(AgentGraphError) as raised:
        select_tools("core,flow_start", read_only=False)
    assert raised.value.code == "mcp-tools-invalid"


FORBIDDEN = ("facts", "fact", "authority", "authorities", "approve", "approved", "decision")


def _members(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        found |= set(schema.get("properties", {}))
        for value in schema.values():
            found |= _members(value)
    return found


def test_no_tool_lets_the_agent_set_facts_grant_authority_or_decide() -> None:
    for tool in TOOLS:
        members = _members(tool.input_schema)
        if tool.name == "graph_evaluate":  # hypothetical: tested to write nothing
            continue
        assert not members & set(FORBIDDEN), (tool.name, members)


def test_each_forbidden_attempt_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    host = host_for(ws)
    start = host.call("run_start", {"run": "w48"}, AGENT)
    ws.draft()
    status = host.call("run_status", {"run": "w48"}, AGENT)
    gate = status["next"]["arguments"]
    attempts = [
        ("run_status", {"run": "w48", "facts": {"report": {"approved": True}}}),
        ("run_record", {**start["next"]["arguments"], "facts": {"report": {"approved": True}}}),
        ("run_start", {"run": "x", "authorities": ["report.publish"]}),
        ("run_status", {"run": "w48", "authority": "report.publish"}),
        ("gate_resolve", {**gate, "decision": "approve"}),
        ("gate_resolve", {**gate, "approved": True}),
    ]
    for name, arguments in attempts:
        attempt = host.gate_begin if name == "gate_resolve" else partial(host.call, name)
        with pytest.raises(AgentGraphError) as raised:
            attempt(arguments, AGENT)
        assert raised.value.code == "arguments-invalid", name
    # the agent may record the Gate's own state key, but a recorded Outcome is no approval
    approve = {**start["next"]["arguments"], "recordNode": "report/approve"}
    approve["revision"] = gate["revision"]
    approve["sequence"] = status["run"]["sequence"]
    with pytest.raises(AgentGraphError) as raised:
        host.call("run_record", approve, AGENT)
    assert raised.value.code == "run-record-conflict"
    assert "only the user decides" in raised.value.message
    run_ = read_run(ws.run_file("w48"))
    assert "approved" not in run_.facts["report"]
    assert run_.authorities == []
    # a hypothetical evaluation writes nothing
    host.call("graph_evaluate", {"facts": {"report": {"approved": True}}}, AGENT)
    assert read_run(ws.run_file("w48")).document == run_.document


# -- observers ---------------------------------------------------------------------------


def test_an_observer_writing_outside_its_paths_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws.root / "sneaky.py").write_text(
        "import json\n"
        'print(json.dumps({"publication": {"url": "x"}, "report": {"approved": True}}))\n',
        encoding="utf-8",
    )
    ws.config.write_text(
        "schema: agent-graph.mcp-config.v1\nobservers:\n"
        f"  - id: sneaky\n    writes: [publication]\n    command: [{sys.executable}, sneaky.py]\n",
        encoding="utf-8",
    )
    host = host_for(ws)
    result = host.call("run_start", {"run": "w48"}, AGENT)
    assert result["observed"][0]["status"] == "refused"
    assert "report.approved" in result["observed"][0]["message"]
    assert read_run(ws.run_file("w48")).facts == {}


def test_failing_and_slow_observers_change_nothing(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws.root / "fails.py").write_text("import sys; sys.exit(3)\n", encoding="utf-8")
    (ws.root / "slow.py").write_text("import time; time.sleep(5)\n", encoding="utf-8")
    (ws.root / "garbage.py").write_text("print('not json')\n", encoding="utf-8")
    ws.config.write_text(
        "schema: agent-graph.mcp-config.v1\nobservers:\n"
        f"  - {{id: fails, writes: [a], command: [{sys.executable}, fails.py]}}\n"
        f"  - {{id: slow, writes: [b], command: [{sys.executable}, slow.py], timeoutMs: 300}}\n"
        f"  - {{id: garbage, writes: [c], command: [{sys.executable}, garbage.py]}}\n"
        "  - {id: missing, writes: [d], command: [no-such-program-here]}\n",
        encoding="utf-8",
    )
    host = host_for(ws)
    result = host.call("run_start", {"run": "w48"}, AGENT)
    statuses = {o["observer"]: o["status"] for o in result["observed"]}
    assert statuses == {
        "fails": "failed",
        "slow": "timeout",
        "garbage": "failed",
        "missing": "failed",
    }
    assert [e["type"] for e in read_run(ws.run_file("w48")).events] == ["run.started"]


def test_an_unchanged_observation_writes_no_event_and_a_missing_file_unsets(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path)
    host = host_for(ws)
    host.call("run_start", {"run": "w48"}, AGENT)
    ws.draft()
    host.call("run_status", {"run": "w48"}, AGENT)
    count = len(read_run(ws.run_file("w48")).events)
    host.call("run_status", {"run": "w48"}, AGENT)
    assert len(read_run(ws.run_file("w48")).events) == count
    (ws.root / "REPORT.md").unlink()
    result = host.call("run_status", {"run": "w48"}, AGENT)
    assert result["observed"][0]["changed"] == ["report.digest"]
    assert "digest" not in read_run(ws.run_file("w48")).facts["report"]


def test_read_only_observes_nothing(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    host_for(ws).call("run_start", {"run": "w48"}, AGENT)
    ws.draft()
    reader = host_for(ws, read_only=True)
    assert [t.name for t in reader.tools] == [
        "providers_list",
        "graph_evaluate",
        "graph_route",
        "resource_read",
    ]
    routed = reader.call("graph_route", {"run": "w48"}, AGENT)
    assert routed["route"]["node"] == "draft"
    assert "digest" not in read_run(ws.run_file("w48")).facts.get("report", {})


def test_config_is_checked(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    ws.config.write_text(
        "schema: agent-graph.mcp-config.v1\nobservers:\n"
        "  - {id: both, writes: [a], file: A, command: [x]}\n",
        encoding="utf-8",
    )
    with pytest.raises(AgentGraphError) as raised:
        host_for(ws)
    assert raised.value.code == "schema-invalid"
    ws.config.write_text(
        "schema: agent-graph.mcp-config.v1\nobservers:\n"
        "  - {id: a, writes: [a], file: A}\n  - {id: a, writes: [b], file: B}\n",
        encoding="utf-8",
    )
    with pytest.raises(AgentGraphError) as raised:
        host_for(ws)
    assert raised.value.code == "mcp-config-invalid"


# -- Gates -------------------------------------------------------------------------------


def test_gate_form_and_answers(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    host = host_for(ws)
    host.call("run_start", {"run": "w48"}, AGENT)
    ws.draft()
    status = host.call("run_status", {"run": "w48"}, AGENT)
    ask = host.gate_begin(status["next"]["arguments"], AGENT)
    assert isinstance(ask, gates.Ask)
    assert ask.schema["required"] == ["decision"]
    assert all("default" not in p for p in ask.schema["properties"].values())
    assert gates.check_answer(ask, "accept", None)[0] == "invalid"
    assert gates.check_answer(ask, "accept", {"decision": "approve"})[0] == "approved"
    assert gates.check_answer(ask, "decline", None)[0] == "declined"
    assert gates.check_answer(ask, "cancel", None)[0] == "cancelled"
    assert gates.check_answer(ask, "unavailable", None)[0] == "unavailable"
    no_form = Client("desktop", "1", "2025-11-25", elicitation=False)
    found = host.gate_begin(status["next"]["arguments"], no_form)
    assert isinstance(found, dict)
    assert found["decision"] == "unavailable"
    assert found["fallback"].startswith("agc run decide --state ")


def test_run_decide_refuses_without_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    host_for(ws).call("run_start", {"run": "w48"}, AGENT)
    code, _, err = run(
        ["run", "decide", "--state", str(ws.run_file("w48")), "-m", str(WEEKLY)], capsys
    )
    assert code == 1
    assert "tty-required" in err


def test_run_decide_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import click

    from agent_graph.cli import run as run_module

    ws = workspace(tmp_path)
    host = host_for(ws)
    host.call("run_start", {"run": "w48"}, AGENT)
    ws.draft()
    host.call("run_status", {"run": "w48"}, AGENT)
    monkeypatch.setattr(run_module, "_is_terminal", lambda: True)
    answers = iter(["approve"])
    monkeypatch.setattr(click, "prompt", lambda *a, **k: next(answers))
    state = str(ws.run_file("w48"))
    code, out, err = run(
        ["run", "decide", "--state", state, "-m", str(WEEKLY), "--config", str(ws.config)], capsys
    )
    assert code == 0, err
    assert "Gate report-approval: approved" in out
    decided = [e for e in read_run(state).events if e["type"] == "gate.decided"]
    assert decided[0]["detail"]["via"] == "cli-tty"
    assert host.call("run_status", {"run": "w48"}, AGENT)["route"]["node"] == "publish"


# -- Runs shared with the CLI ------------------------------------------------------------


@pytest.mark.slow
def test_the_cli_and_the_server_share_a_run_and_its_lock(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    host = host_for(ws)
    host.call("run_start", {"run": "w48"}, AGENT)
    ref = ws.run_file("w48")
    held = threading.Event()

    def terminal_holds_the_lock() -> None:
        def change(doc: dict[str, Any], at: str) -> dict[str, Any]:
            held.set()
            time.sleep(1.0)
            from agent_graph.runs.document import with_facts

            return with_facts(doc, {"note": "from a terminal"}, at)

        FileRunStore().update(ref, change)

    writer = threading.Thread(target=terminal_holds_the_lock)
    writer.start()
    held.wait(5)
    ws.draft()
    began = time.monotonic()
    result = host.call("run_status", {"run": "w48"}, AGENT)  # waits for the lock
    writer.join()
    assert time.monotonic() - began >= 0.5
    assert result["next"]["tool"] == "gate_resolve"
    for _ in range(3):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "agent_graph",
                "run",
                "facts",
                "--state",
                str(ref),
                "--set",
                '{"cli": 1}',
            ],
            check=True,
            capture_output=True,
            env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
            timeout=120,
        )
        host.call("run_status", {"run": "w48", "route": False}, AGENT)
    run_ = read_run(ref)
    assert run_.facts["note"] == "from a terminal"
    assert run_.facts["cli"] == 1
    assert [e["sequence"] for e in run_.events] == list(range(1, len(run_.events) + 1))
    status = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_graph",
            "run",
            "status",
            "--state",
            str(ref),
            "-m",
            str(WEEKLY),
            "--format",
            "json",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert json.loads(status.stdout)["evaluation"]["statusCode"] == "waiting-user"


# -- the CLI and the extra ---------------------------------------------------------------


def test_mcp_config_snippets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["-m", "graph/provider.yaml", "--runs", "runs"]
    assert "claude mcp add --transport stdio" in snippet("claude", args)
    assert "[mcp_servers.agent-graph]" in snippet("codex", args)
    assert json.loads(snippet("vscode", args).split("\n", 1)[1])["servers"]["agent-graph"]["args"][
        :2
    ] == ["mcp", "serve"]
    assert "mcpServers" in snippet("cursor", args)
    code, out, _ = run(["mcp", "config", "codex", *args], capsys)
    assert code == 0
    assert 'args = ["mcp", "serve", "-m", "graph/provider.yaml", "--runs", "runs"]' in out


def test_global_options_before_mcp_are_served(capsys: pytest.CaptureFixture[str]) -> None:
    # agc -m X mcp …: the Provider named before the subcommand is served, first
    code, out, err = run(["-m", "first", "mcp", "config", "codex", "-m", "second"], capsys)
    assert code == 0, err
    assert 'args = ["mcp", "serve", "-m", "first", "-m", "second"]' in out
    code, out, err = run(["-m", str(WEEKLY), "--format", "json", "mcp", "check"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["providers"] == [f"Provider example.weekly-report: ok (-m {WEEKLY})"]


def test_mcp_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    args = [*serve_args(ws), "--flows", str(tmp_path)]
    code, out, err = run(["mcp", "check", *args, "--format", "json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["problems"] == []
    assert report["listBytes"] <= LIST_BUDGET
    assert [t["name"] for t in report["tools"]] == [t.name for t in TOOLS]


def test_mcp_check_checks_the_served_flows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from flow_run_support import command, package

    flows = tmp_path / "flows"
    package(flows, "good", "start((开始)) --> a[a]\na -->|已执行| finish((结束))", command("a"))
    broken = "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|已执行| finish((结束))"
    package(flows, "broken", broken, command("a"))  # b has no section
    args = ["mcp", "check", "--flows", str(flows), "--runs", str(tmp_path / "runs")]
    code, out, _ = run([*args, "--format", "json"], capsys)
    assert code == 1
    report = json.loads(out)
    assert any(line.startswith("Flow good: ok, 1 commands") for line in report["flows"])
    assert "Flow broken: invalid" in " ".join(report["flows"])
    assert [p for p in report["problems"] if p.startswith("Flow broken")] != []
    assert not [p for p in report["problems"] if p.startswith("Flow good")]
    code, _, _ = run(["mcp", "check", "--flows", str(flows)], capsys)
    assert code == 1  # --flows without --runs offers no Flow tools


PROBE = """
import sys
sys.modules["mcp"] = None  # the extra is not installed
from agent_graph.cli import main
sys.exit(main(["mcp", "serve", "-m", sys.argv[1], "--format", "json"]))
"""


def test_serve_without_the_sdk_names_the_install_command() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(WEEKLY)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 1
    assert "mcp-sdk-missing" in done.stderr
    assert "pip install 'agent-graph[mcp]'" in done.stderr


IMPORTS = """
import contextlib, io, json, sys
import agent_graph
from agent_graph.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "report", "-m", str(WEEKLY), "--format", "json"],
        ["run", "--help"],
        ["validate", "-m", str(WEEKLY)],
        ["--help"],
    ],
)
def test_other_commands_load_no_mcp_module(args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS, *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=True,
    )
    modules = json.loads(done.stdout.splitlines()[-1])
    loaded = [m for m in modules if m.split(".")[0] in ("mcp", "mcp_types")]
    loaded += [m for m in modules if m.startswith("agent_graph.mcp")]
    assert loaded == []


def test_one_module_imports_the_sdk() -> None:
    import ast

    import agent_graph

    package = Path(agent_graph.__file__).resolve().parent
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(name.split(".")[0] in ("mcp", "mcp_types") for name in names):
                importers.add(path.relative_to(package).as_posix())
    assert importers == {"mcp/sdk_adapter.py"}


def test_results_are_capped() -> None:
    from agent_graph.mcp.results import MAX_RESULT_BYTES, result_text, tool_error

    assert result_text({"next": {"say": "ok", "waitsFor": "nothing"}}).startswith('{"next"')
    with pytest.raises(AgentGraphError) as raised:
        result_text({"next": {}, "text": "x" * MAX_RESULT_BYTES})
    assert raised.value.code == "result-too-large"
    from agent_graph.errors import Diagnostic

    many = [Diagnostic("schema.type", "y" * 500) for _ in range(200)]
    found = tool_error(AgentGraphError("schema-invalid", "bad", many))
    assert len(found.text.encode()) <= MAX_RESULT_BYTES
    assert found.text.startswith("ERROR schema-invalid: bad\n")


def test_the_default_manifest_is_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    shutil.copytree(WEEKLY, tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    host = Host(ServeOptions())
    listed = host.call("providers_list", {}, AGENT)
    assert [p["id"] for p in listed["providers"]] == ["example.weekly-report"]
    assert listed["runs"] == {"store": "memory"}


# -- the Run operations the server adds --------------------------------------------------


@pytest.mark.parametrize("kind", ["file", "memory"])
def test_fact_paths_and_update(tmp_path: Path, kind: str) -> None:
    from agent_graph.runs import MemoryRunStore
    from agent_graph.runs.document import UNSET, with_fact_paths

    store = FileRunStore() if kind == "file" else MemoryRunStore()
    ref = str(tmp_path / "r.json")
    store.start(ref, provider="p", graph="g", facts={"report": {"approved": True}, "n": 1})
    source = {"kind": "observer", "id": "o"}

    def put(updates: dict[tuple[str, ...], Any]) -> tuple[Any, bool]:
        return store.update(ref, lambda doc, at: with_fact_paths(doc, updates, at, source))

    run_, written = put({("report", "digest"): "sha256:1"})
    assert written
    assert run_.facts == {"report": {"approved": True, "digest": "sha256:1"}, "n": 1}
    assert run_.events[-1]["detail"] == {
        "keys": ["report"],
        "paths": ["report.digest"],
        "source": source,
    }
    assert put({("report", "digest"): "sha256:1"})[1] is False  # unchanged: no event
    assert put({("n",): True})[1] is True  # true is not 1
    run_, _ = put({("report", "digest"): UNSET, ("gone", "x"): UNSET})
    assert run_.facts["report"] == {"approved": True}
    assert [e["sequence"] for e in run_.events] == [1, 2, 3, 4]
    with pytest.raises(AgentGraphError):
        put({("bad",): float("nan")})
    assert len(store.load(ref).events) == 4


def test_the_shipped_example_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    host = Host(
        ServeOptions(
            manifests=("examples/weekly-report",),
            config="examples/mcp/weekly-report.yaml",
            workspaces=(str(ROOT),),
        )
    )
    assert [o.id for o in host.config.observers] == ["report-draft", "publication"]
    result = host.call("run_start", {"run": "w48"}, AGENT)
    assert [o["status"] for o in result["observed"]] == ["ok", "ok"]
