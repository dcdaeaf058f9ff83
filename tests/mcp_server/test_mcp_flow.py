"""``agc mcp serve --flows``: Flow Runs driven by the server, Agent steps answered by the
caller, commands run only after the user consented to the Flow's fingerprint.

In process, both eras (``legacy``: consent asked inside the call; ``auto``: an
``InputRequiredResult`` the client answers and retries). The Flow's command is a Python
one-liner that leaves a mark file, so every test can tell whether it ran.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from agent_graph import flow as flows
from agent_graph.mcp.host import Host, ServeOptions
from agent_graph.mcp.sdk_adapter import build_server
from cli_support import ok_json
from flow_run_support import Crash, agent, command, crash_when, package
from mcp_support import Answers, with_client

ERAS = pytest.mark.parametrize("mode", ["legacy", "auto"])

MEASURE = (
    "import json; open('MARK', 'a').write('ran\\n'); "
    "print(json.dumps({'words': len(open('DRAFT.md').read().split())}))"
)


def write_flow(root: Path, extra: str = "") -> Path:
    return package(
        root,
        "write-measure",
        """
        start((开始)) --> draft[draft]
        draft -->|drafted| measure[measure]
        measure -->|已执行| review[review]
        review -->|accept| finish((结束))
        review -->|redo| draft
        """,
        agent("draft", "Write DRAFT.md for: {outcome}" + extra, {"drafted": "DRAFT.md written"}),
        command("measure", args=["-c", MEASURE], program=sys.executable),
        agent(
            "review",
            "Review DRAFT.md given {outcome}",
            {"accept": "good", "redo": "write it again"},
            reuse=True,
        ),
    )


class Setup:
    def __init__(self, tmp_path: Path, trusted: tuple[str, ...] = ()) -> None:
        self.flows = tmp_path / "flows"
        self.work = tmp_path / "ws"
        self.work.mkdir()
        self.runs = tmp_path / "runs"
        self.package = write_flow(self.flows)
        self.config: Path | None = None
        if trusted:
            self.config = tmp_path / "mcp.yaml"
            lines = ["schema: agent-graph.mcp-config.v1", "trustedFlows:"]
            lines += [f"  - {{fingerprint: '{f}', flow: write-measure}}" for f in trusted]
            self.config.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def host(self, *, config: bool = True) -> Host:
        return Host(
            ServeOptions(
                flows=(str(self.flows),),
                runs=str(self.runs),
                workspaces=(str(self.work),),
                config=str(self.config) if self.config and config else None,
                tools="flows",
            )
        )

    def record(self, handle: str) -> Path:
        return self.runs / "flow" / f"{handle}.json"

    def ran(self) -> bool:
        return (self.work / "MARK").exists()


async def call(client: Any, name: str, arguments: dict[str, Any], **more: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments, **more)
    assert not result.is_error, result.content[0].text
    structured: dict[str, Any] = result.structured_content
    assert next(iter(structured)) == "next"
    return structured


async def error_code(client: Any, name: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error
    head = result.content[0].text.partition("\n")[0]
    return str(head.split()[1].rstrip(":"))


def accept(answers: Answers, choice: str = "run-once") -> None:
    answers.add("accept", {"decision": choice})


async def answer_loop(setup: Setup, client: Any, first: dict[str, Any]) -> dict[str, Any]:
    """Do the Flow's Agent steps as a calling agent would, until the Run ends."""
    view = first
    while view["state"] == "awaiting-agent":
        step = view["step"]
        assert view["next"]["tool"] == "flow_answer"
        if step["node"] == "draft":
            (setup.work / "DRAFT.md").write_text("one two three\n", encoding="utf-8")
            result, content = "drafted", "three words"
        else:
            assert '\\"words\\": 3' in step["prompt"]  # the command's output reached the step
            result, content = "accept", "fine"
        arguments = {**view["next"]["arguments"], "result": result, "content": content}
        view = await call(client, "flow_answer", arguments)
    return view


@ERAS
def test_flow_loop_with_consent_and_progress(
    tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = Setup(tmp_path)
    answers = Answers()
    accept(answers)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def body(client: Any) -> None:
        listed = await call(client, "flow_list", {})
        (item,) = listed["flows"]
        assert item["consent"] == "required"
        assert item["commands"] == [shlex.join([sys.executable, "-c", MEASURE])]
        started = await call(
            client, "flow_start", {"flow": "write-measure", "task": "a haiku", "run": "h1"}
        )
        assert started["state"] == "awaiting-agent"
        assert started["step"]["node"] == "draft"
        assert "a haiku" in started["step"]["prompt"]
        assert not setup.ran()
        (setup.work / "DRAFT.md").write_text("one two three\n", encoding="utf-8")
        arguments = {**started["next"]["arguments"], "result": "drafted", "content": "3"}
        review = await call(client, "flow_answer", arguments, progress_callback=progress)
        assert review["state"] == "awaiting-agent"
        assert review["step"]["node"] == "review"
        assert setup.ran()
        done = await answer_loop(setup, client, review)
        assert done["state"] == "completed"
        assert done["next"]["waitsFor"] == "nothing"

    with_client(build_server(setup.host()), mode, body, answers)
    (asked,) = answers.asked
    assert sys.executable in asked.message
    assert "write-measure" in asked.message
    messages = [m for _, _, m in seen]
    assert messages[:2] == ["write-measure: draft → drafted", "write-measure: measure → 已执行"]
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)
    # the record is the CLI's own: agc flow status reads the same Run
    assert flows.status(setup.record("h1"))["state"] == "completed"
    report = ok_json(
        ["flow", "status", "--state", str(setup.record("h1")), "--format", "json"], capsys
    )
    assert report["state"] == "completed"
    types = [e["type"] for e in flows.events(setup.record("h1"))]
    assert "agent-bound" in types
    assert "run-completed" in types


@ERAS
@pytest.mark.parametrize("action", ["decline", "cancel", "refuse", "empty"])
def test_refused_consent_runs_nothing(tmp_path: Path, mode: str, action: str) -> None:
    setup = Setup(tmp_path)
    answers = Answers()
    if action == "refuse":
        accept(answers, "refuse")
    elif action == "empty":
        answers.add("accept", {})
    else:
        answers.add(action)

    async def body(client: Any) -> None:
        view = await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})
        assert view["state"] == "awaiting-consent"
        assert view["consent"] == {"decline": "declined", "cancel": "cancelled",
                                   "refuse": "declined", "empty": "invalid"}[action]  # fmt: skip
        assert view["fallback"].startswith("agc flow run ")
        assert "--state" in view["fallback"]
        assert view["next"]["waitsFor"] == "user"

    with_client(build_server(setup.host()), mode, body, answers)
    assert not setup.record("h").exists()
    assert not setup.ran()


@ERAS
def test_no_elicitation_means_no_run_and_a_runnable_command(tmp_path: Path, mode: str) -> None:
    setup = Setup(tmp_path)

    async def body(client: Any) -> None:
        view = await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})
        assert view["state"] == "awaiting-consent"
        assert view["consent"] == "unavailable"
        words = shlex.split(view["fallback"])
        assert words[:3] == ["agc", "flow", "run"]
        assert Path(words[3]) == setup.package / "FLOW.md"
        assert words[words.index("--state") + 1] == str(setup.record("h"))

    with_client(build_server(setup.host()), mode, body)
    assert not setup.record("h").exists()
    assert not setup.ran()


@ERAS
def test_trusted_flows_in_the_config_need_no_question(tmp_path: Path, mode: str) -> None:
    fingerprint = flows.compile(write_flow(tmp_path / "probe")).fingerprint
    setup = Setup(tmp_path, trusted=(fingerprint,))
    answers = Answers()  # any question would fail: the queue is empty

    async def body(client: Any) -> None:
        (item,) = (await call(client, "flow_list", {}))["flows"]
        assert item["consent"] == "granted"
        view = await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})
        done = await answer_loop(setup, client, view)
        assert done["state"] == "completed"

    with_client(build_server(setup.host()), mode, body, answers)
    assert answers.asked == []
    assert setup.ran()


@ERAS
def test_a_changed_flow_asks_again(tmp_path: Path, mode: str) -> None:
    setup = Setup(tmp_path)
    answers = Answers()
    accept(answers, "trust")
    answers.add("decline")

    async def body(client: Any) -> None:
        first = await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "a"})
        assert first["state"] == "awaiting-agent"
        await call(client, "flow_control", {"run": "a", "action": "stop"})
        # trusted for this process: the same bytes are not asked about again
        same = await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "b"})
        assert same["state"] == "awaiting-agent"
        await call(client, "flow_control", {"run": "b", "action": "stop"})
        write_flow(setup.flows, extra=" (changed)")
        changed = await call(
            client, "flow_start", {"flow": "write-measure", "task": "t", "run": "c"}
        )
        assert changed["state"] == "awaiting-consent"
        assert changed["consent"] == "declined"

    with_client(build_server(setup.host()), mode, body, answers)
    assert len(answers.asked) == 2
    assert not setup.record("c").exists()
    assert not setup.ran()


@ERAS
def test_the_server_restarted_mid_run_resumes_it(
    tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = Setup(tmp_path)
    answers = Answers()
    accept(answers)  # before the first start
    accept(answers)  # the restarted server knows no consent: it asks again
    first_host = setup.host()
    visits: list[str] = []

    async def before(client: Any) -> None:
        view = await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})
        assert view["state"] == "awaiting-agent"
        visits.append(view["step"]["visit"])

    with_client(build_server(first_host), mode, before, answers)
    first_host.shutdown()  # what stdin EOF / SIGTERM does
    report = ok_json(
        ["flow", "status", "--state", str(setup.record("h")), "--format", "json"], capsys
    )
    assert report["state"] == "interrupted"

    async def after(client: Any) -> None:
        view = await call(client, "flow_status", {"run": "h"})
        assert view["state"] == "interrupted"
        assert view["next"]["tool"] == "flow_control"
        code = await error_code(
            client, "flow_answer", {"run": "h", "visit": visits[0], "result": "drafted"}
        )
        assert code == "flow-answer-stale"
        resumed = await call(client, "flow_control", view["next"]["arguments"])
        assert resumed["state"] == "awaiting-agent"
        assert resumed["step"]["node"] == "draft"
        assert resumed["step"]["visit"] != visits[0]
        assert any(e["type"] == "recovery" and e.get("strategy") == "retry-agent"
                   for e in resumed["events"])  # fmt: skip
        done = await answer_loop(setup, client, resumed)
        assert done["state"] == "completed"

    with_client(build_server(setup.host()), mode, after, answers)
    assert flows.status(setup.record("h"))["state"] == "completed"
    assert len(answers.asked) == 2


@ERAS
def test_stop_and_answers_that_do_not_fit(tmp_path: Path, mode: str) -> None:
    setup = Setup(tmp_path)
    answers = Answers()
    accept(answers)

    async def body(client: Any) -> None:
        view = await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})
        visit = view["step"]["visit"]
        code = await error_code(client, "flow_answer", {"run": "h", "visit": "v999", "result": "x"})
        assert code == "flow-answer-stale"
        # an undeclared result is re-asked once by the runtime
        again = await call(client, "flow_answer", {"run": "h", "visit": visit, "result": "nope"})
        assert again["state"] == "awaiting-agent"
        assert again["step"]["rejected"] == "nope"
        stopped = await call(client, "flow_control", {"run": "h", "action": "stop"})
        assert stopped["state"] == "interrupted"
        assert await error_code(client, "flow_start", {"flow": "nope", "task": 1, "run": "z"}) == (
            "flow-unknown"
        )
        assert await error_code(client, "flow_status", {"run": "missing"}) == "run-missing"

    with_client(build_server(setup.host()), mode, body, answers)
    assert not setup.ran()


def test_flow_tools_need_runs_and_flows(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    names = [t.name for t in setup.host().tools]
    assert names[-5:] == ["flow_list", "flow_start", "flow_status", "flow_answer", "flow_control"]
    no_runs = Host(ServeOptions(flows=(str(setup.flows),), tools="all"))
    assert not any(t.name.startswith("flow_") for t in no_runs.tools)


def test_run_flow_prompt(tmp_path: Path) -> None:
    setup = Setup(tmp_path)

    async def body(client: Any) -> None:
        listed = await client.list_prompts()
        assert "run-flow" in [p.name for p in listed.prompts]
        got = await client.get_prompt("run-flow", {"flow": "write-measure", "task": "a haiku"})
        text = got.messages[0].content.text
        assert "flow_start" in text
        assert "flow_answer" in text
        assert "a haiku" in text

    with_client(build_server(setup.host()), "legacy", body)


@ERAS
def test_resume_runs_nothing_without_consent(tmp_path: Path, mode: str) -> None:
    fingerprint = flows.compile(write_flow(tmp_path / "probe")).fingerprint
    setup = Setup(tmp_path, trusted=(fingerprint,))
    first_host = setup.host()

    async def before(client: Any) -> None:
        view = await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})
        assert view["state"] == "awaiting-agent"
        (setup.work / "DRAFT.md").write_text("one two\n", encoding="utf-8")

    with_client(build_server(first_host), mode, before)
    first_host.shutdown()
    events = len(flows.events(setup.record("h")))

    async def after(client: Any) -> None:
        view = await call(client, "flow_control", {"run": "h", "action": "resume"})
        assert view["state"] == "awaiting-consent"
        assert view["consent"] == "unavailable"
        assert view["fallback"].startswith("agc flow resume --state ")

    with_client(build_server(setup.host(config=False)), mode, after)  # no trust, no form
    assert len(flows.events(setup.record("h"))) == events  # nothing was written
    assert not setup.ran()

    async def rerun(client: Any) -> None:
        view = await call(
            client, "flow_control", {"run": "h", "action": "resume", "rerunInterrupted": True}
        )
        assert view["state"] == "awaiting-consent"
        assert "--rerun-interrupted" in view["fallback"]

    with_client(build_server(setup.host()), mode, rerun)  # trusted, but a rerun always asks
    assert len(flows.events(setup.record("h"))) == events


def test_flow_and_run_resources(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    answers = Answers()
    accept(answers)

    async def body(client: Any) -> None:
        await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert "agent-graph://flows/write-measure" in uris
        assert "agent-graph://flow-runs/h/events" in uris
        package_text = (await client.read_resource("agent-graph://flows/write-measure")).contents
        assert "新建Agent" in package_text[0].text
        events = (await client.read_resource("agent-graph://flow-runs/h/events")).contents
        assert json.loads(events[0].text)[0]["type"] == "run-started"
        state = (await client.read_resource("agent-graph://flow-runs/h")).contents
        assert json.loads(state[0].text)["state"] == "running"  # parked on the Agent step

    with_client(build_server(setup.host()), "legacy", body, answers)


def test_resume_while_a_terminal_holds_the_run_is_refused(tmp_path: Path) -> None:
    from agent_graph.flow.runtime.store import RunFile

    fingerprint = flows.compile(write_flow(tmp_path / "probe")).fingerprint
    setup = Setup(tmp_path, trusted=(fingerprint,))
    first_host = setup.host()

    async def before(client: Any) -> None:
        await call(client, "flow_start", {"flow": "write-measure", "task": "t", "run": "h"})

    with_client(build_server(first_host), "legacy", before)
    first_host.shutdown()

    async def after(client: Any) -> None:
        with RunFile(setup.record("h")).lock():  # agc flow resume in a terminal
            code = await error_code(client, "flow_control", {"run": "h", "action": "resume"})
        assert code == "run-busy"

    with_client(build_server(setup.host()), "legacy", after)


@ERAS
def test_a_plain_resume_of_an_interrupted_command_is_refused_and_changes_nothing(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As ``agc flow resume`` does: only the user knows whether running a command that was
    cut short again is safe, so resuming without ``rerunInterrupted`` starts no driver."""
    setup = Setup(tmp_path)
    package(
        setup.flows,
        "cut",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", args=["-c", "open('MARK', 'w').close()"], program=sys.executable),
    )
    record = setup.record("h")
    record.parent.mkdir(parents=True)
    with crash_when(monkeypatch, lambda d: bool(d["visits"])), pytest.raises(Crash):
        flows.run(setup.flows / "cut", "t", state=record, cwd=setup.work)
    before = record.read_bytes()
    answers = Answers()
    accept(answers)  # the consent asked for the rerun

    async def body(client: Any) -> None:
        code = await error_code(client, "flow_control", {"run": "h", "action": "resume"})
        assert code == "command-interrupted"
        assert record.read_bytes() == before
        assert not setup.ran()
        again = {"run": "h", "action": "resume", "rerunInterrupted": True}
        resumed = await call(client, "flow_control", again)
        assert resumed["state"] == "completed"

    with_client(build_server(setup.host()), mode, body, answers)
    assert setup.ran()
    assert flows.status(record)["state"] == "completed"


SLEEPER = "import os, time; open('pid', 'w').write(str(os.getpid())); time.sleep(60); print('{}')"


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _pid_of(directory: Path) -> int:
    import time

    deadline = time.monotonic() + 20
    while not (directory / "pid").exists() or not (directory / "pid").read_text():
        assert time.monotonic() < deadline, "the command did not start"
        time.sleep(0.05)
    return int((directory / "pid").read_text())


def test_stop_kills_only_the_stopped_runs_command(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    package(
        setup.flows,
        "sleeper",
        "start((开始)) --> nap[nap]\nnap -->|已执行| finish((结束))",
        command("nap", args=["-c", SLEEPER], program=sys.executable),
    )
    for name in ("a", "b"):
        (setup.work / name).mkdir()
    answers = Answers()
    accept(answers, "trust")
    pids: dict[str, int] = {}

    async def body(client: Any) -> None:
        for name in ("a", "b"):
            args = {"flow": "sleeper", "task": "t", "run": name, "cwd": name, "waitSeconds": 0}
            assert (await call(client, "flow_start", args))["state"] == "running"
            pids[name] = _pid_of(setup.work / name)
        stopped = await call(client, "flow_control", {"run": "a", "action": "stop"})
        assert stopped["state"] == "interrupted"
        assert stopped["next"]["tool"] == "flow_control"
        assert not _alive(pids["a"])
        other = await call(client, "flow_status", {"run": "b"})
        assert other["state"] == "running"
        assert _alive(pids["b"])
        # resumable: a plain resume is refused until the user chooses to rerun the command
        assert await error_code(client, "flow_control", {"run": "a", "action": "resume"}) == (
            "command-interrupted"
        )
        assert (await call(client, "flow_control", {"run": "b", "action": "stop"}))[
            "state"
        ] == "interrupted"
        assert not _alive(pids["b"])

    with_client(build_server(setup.host()), "legacy", body, answers)
    for name in ("a", "b"):
        assert flows.status(setup.record(name))["state"] == "interrupted"


SCRIPTED_AGENT = """\
import json, sys
request = json.load(sys.stdin)
if request["node"] == "draft":
    open("DRAFT.md", "w").write("one two three\\n")
    answer = {"result": "drafted", "content": "three words", "agent": "scripted-1"}
else:
    answer = {"result": "accept", "content": "fine", "agent": request["agent"]}
print(json.dumps(answer))
"""


@ERAS
def test_a_named_agent_adapter_from_the_config_runs_the_agent_steps(
    tmp_path: Path, mode: str
) -> None:
    fingerprint = flows.compile(write_flow(tmp_path / "probe")).fingerprint
    setup = Setup(tmp_path, trusted=(fingerprint,))
    assert setup.config is not None
    script = tmp_path / "agent.py"
    script.write_text(SCRIPTED_AGENT, encoding="utf-8")
    spec = "command:" + json.dumps([sys.executable, str(script)])
    with setup.config.open("a", encoding="utf-8") as config:
        config.write(f"agents:\n  scripted: {json.dumps(spec)}\n")

    async def body(client: Any) -> None:
        start = {"flow": "write-measure", "task": "t", "run": "h", "agent": "scripted"}
        view = await call(client, "flow_start", {**start, "waitSeconds": 30})
        while view["state"] == "running":
            view = await call(client, "flow_status", {"run": "h", "waitSeconds": 30})
        assert view["state"] == "completed"  # no flow_answer: the adapter answered
        unknown = {**start, "run": "h2", "agent": "nobody"}
        assert await error_code(client, "flow_start", unknown) == "arguments-invalid"

    with_client(build_server(setup.host()), mode, body, Answers())
    assert setup.ran()
    from agent_graph.flow.runtime.api import events

    bound = [e.get("agent") for e in events(setup.record("h")) if e["type"] == "agent-bound"]
    assert bound == ["scripted-1"]
    assert not setup.record("h2").exists()


def test_a_named_agent_with_a_bad_spec_stops_the_config(tmp_path: Path) -> None:
    from agent_graph.errors import AgentGraphError
    from agent_graph.mcp.config import load_config

    config = tmp_path / "mcp.yaml"
    config.write_text(
        "schema: agent-graph.mcp-config.v1\nagents:\n  bad: 'claude:not-json'\n", encoding="utf-8"
    )
    with pytest.raises(AgentGraphError) as caught:
        load_config(config)
    assert caught.value.code == "mcp-config-invalid"
    assert caught.value.diagnostics[0].pointer == "/agents/bad"
