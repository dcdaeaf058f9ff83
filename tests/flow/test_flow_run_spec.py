"""The runtime statements B.1–B.58 (docs/flows.md, "Rule numbers"; described in
docs/flow-runs.md), one test per statement, through the Python API.

Tiny packages in temporary directories, commands as ``node -e``, a fake in-process Agent.
The resume statements (B.52–B.58) use a simulated crash (a commit that raises after it
is durable) or a clean stop; the real SIGKILL tests are in test_flow_run_kill.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_graph import flow
from agent_graph.errors import AgentGraphError
from agent_graph.flow import AgentAnswer, AgentRequest
from agent_graph.flow.runtime import Stop
from flow_run_support import (
    ECHO_STDIN,
    PRINT_CWD,
    Crash,
    FakeAgent,
    agent,
    assert_log_whole,
    call,
    command,
    crash_when,
    package,
    read,
    visited,
)

HOME = Path()


@pytest.fixture
def flows(tmp_path: Path) -> Path:
    global HOME
    HOME = tmp_path
    (tmp_path / "flows").mkdir()
    (tmp_path / "proj").mkdir()
    return tmp_path / "flows"


def go(
    entry: Path, task: Any = "the task", fake: Any = None, **options: Any
) -> tuple[flow.RunSummary, dict[str, Any]]:
    state = options.pop("state", HOME / "run.json")
    options.setdefault("cwd", HOME / "proj")
    summary = flow.run(entry, task, state=state, agent=fake, **options)
    document = read(Path(state))
    assert_log_whole(document)
    return summary, document


def echo_flow(flows: Path, flow_id: str = "echo", stdin: str = '{"t": "{outcome}"}') -> Path:
    return package(
        flows,
        flow_id,
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", ECHO_STDIN, stdin=stdin),
    )


def stdout_json(content: dict[str, Any]) -> Any:
    return json.loads(content["stdout"])


# -- Loading and resources: B.1–B.8 ------------------------------------------------------------


def test_b1_directory_and_flow_md_run_the_same_package_in_place(flows: Path) -> None:
    pkg = package(
        flows,
        "here",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command(
            "a",
            "process.stdout.write(process.argv[1])",
            args=[
                "-e",
                "process.stdout.write(require('path').dirname(process.argv[1]))",
                "scripts/x.mjs",
            ],
        ),
        files={"scripts/x.mjs": "// x\n"},
    )
    one, first = go(pkg, state=flows.parent / "one.json")
    two, second = go(pkg / "FLOW.md", state=flows.parent / "two.json")
    assert one.flow == two.flow == "here"
    assert first["packageRoot"] == second["packageRoot"] == str(pkg.resolve())
    assert first["entryPath"] == str((pkg / "FLOW.md").resolve())
    assert one.result["stdout"] == str((pkg / "scripts").resolve())  # the package itself
    assert sorted(p.name for p in pkg.iterdir()) == ["FLOW.md", "scripts"]  # no copy made


def test_b2_the_flow_id_is_the_real_directory_name(flows: Path) -> None:
    real = echo_flow(flows, "real-name")
    link = flows.parent / "alias"
    link.symlink_to(real, target_is_directory=True)
    summary, document = go(link, state=flows.parent / "r.json")
    assert summary.flow == document["flow"] == "real-name"


def test_b3_the_whole_closure_is_checked_before_any_node_runs(flows: Path) -> None:
    marker = flows.parent / "proj" / "ran"
    package(
        flows,
        "parent",
        "start((开始)) --> a[a]\na -->|已执行| c[c]\nc --> finish((结束))",
        command("a", f"require('fs').writeFileSync({json.dumps(str(marker))}, 'x')"),
        call("c", "child", plain=True),
    )
    package(
        flows, "child", "start((开始)) --> b[b]\nb -->|已执行| finish((结束))", "## b\n\nno block\n"
    )
    with pytest.raises(AgentGraphError) as caught:
        flow.run(flows / "parent", "t", state=flows.parent / "r.json", cwd=flows.parent / "proj")
    assert caught.value.code.startswith("flow-")
    assert not marker.exists()
    assert not (flows.parent / "r.json").exists()


def test_b4_cycles_fail_loading_and_diamonds_load_once(flows: Path) -> None:
    package(
        flows, "self", "start((开始)) --> c[c]\nc --> finish((结束))", call("c", "self", plain=True)
    )
    with pytest.raises(AgentGraphError) as caught:
        flow.run(flows / "self", "t", state=flows.parent / "r.json")
    assert caught.value.code == "flow-ref-cycle"
    package(
        flows,
        "a",
        "start((开始)) --> b[b]\nb --> c[c]\nc --> finish((结束))",
        call("b", "b", plain=True),
        call("c", "c", plain=True),
    )
    for mid in ("b", "c"):
        package(
            flows, mid, "start((开始)) --> d[d]\nd --> finish((结束))", call("d", "d", plain=True)
        )
    echo_flow(flows, "d")
    program = flow.compile(flows / "a")
    assert sorted(f.id for f in program.flows) == ["a", "b", "c", "d"]
    summary, document = go(flows / "a", state=flows.parent / "d.json")
    assert summary.state == "completed"
    assert [v["childFlow"] for v in document["visits"]] == ["b", "c"]


def test_b5_flow_directory_lists_packages_and_skips_resource_dirs(flows: Path) -> None:
    echo_flow(flows, "one")
    package(
        flows / "nested",
        "two",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a"),
        files={"scripts/FLOW.md": "not a package\n", "references/FLOW.md": "nor this\n"},
    )
    assert [f.id for f in flow.discover(flows)] == ["one", "two"]


def test_b6_reference_links_become_real_paths_others_stay(flows: Path) -> None:
    body = (
        "Read [the guide](references/guide.md#part) and [x][id].\n"
        "Also references/guide.md as text.\n\n[id]: references/guide.md"
    )
    package(
        flows,
        "links",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", body, {"ok": "Done."}),
        files={"references/guide.md": "# Guide\n"},
    )
    fake = FakeAgent(("ok", "x"))
    go(flows / "links", fake=fake)
    prompt = fake.requests[0].prompt
    real = str((flows / "links" / "references" / "guide.md").resolve())
    assert f"[the guide]({real}#part)" in prompt
    assert "[x][id]" in prompt
    assert "Also references/guide.md as text." in prompt
    assert "[id]: references/guide.md" in prompt


def test_b7_only_standalone_scripts_arguments_are_mapped(flows: Path) -> None:
    args = [
        "-e",
        "process.stdout.write(JSON.stringify(process.argv.slice(1)))",
        "scripts/a.mjs",
        "--x=scripts/a.mjs",
        "./scripts/a.mjs",
        "other/a.mjs",
    ]
    package(
        flows,
        "args",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", args=args),
        files={"scripts/a.mjs": "\n"},
    )
    summary, _ = go(flows / "args")
    real = str((flows / "args" / "scripts" / "a.mjs").resolve())
    assert stdout_json(summary.result) == [
        real,
        "--x=scripts/a.mjs",
        "./scripts/a.mjs",
        "other/a.mjs",
    ]


def test_b8_links_inside_the_substituted_input_are_not_rewritten(flows: Path) -> None:
    package(
        flows,
        "late",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", "Task: {outcome}", {"ok": "Done."}),
        files={"references/a.md": "a\n"},
    )
    fake = FakeAgent(("ok", "x"))
    go(flows / "late", "see [a](references/a.md)", fake=fake)
    assert "Task: see [a](references/a.md)" in fake.requests[0].prompt


# -- Prompts and input passing: B.9–B.17 -------------------------------------------------------


def test_b9_the_prompt_has_exactly_three_parts(flows: Path) -> None:
    section = (
        "## p\n\nProse in the action area stays out.\n\n```新建Agent\nDo {outcome} now.\n```\n\n"
        "### ok\n\nAll good.\n\n### no\n\nNot good.\n\n"
    )
    package(
        flows,
        "three",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))\np -->|no| finish",
        section,
    )
    fake = FakeAgent(("ok", "x"))
    go(flows / "three", "it", fake=fake)
    from agent_graph.flow.runtime.render import SUBMIT

    assert (
        fake.requests[0].prompt
        == f"Do it now.\n\nResults:\n- ok: All good.\n- no: Not good.\n\n{SUBMIT}"
    )
    text = fake.requests[0].prompt
    assert "Prose" not in text
    assert "flowchart" not in text
    assert "test Flow" not in text


def test_b10_b11_first_node_gets_the_task_then_the_previous_content(flows: Path) -> None:
    package(
        flows,
        "chain",
        "start((开始)) --> p[p]\np -->|ok| q[q]\nq -->|ok| finish((结束))",
        agent("p", "P: {outcome}", {"ok": "."}),
        agent("q", "Q: {outcome}", {"ok": "."}, reuse=True),
    )
    fake = FakeAgent(("ok", {"from": "p"}), ("ok", "end"))
    go(flows / "chain", "the task", fake=fake)
    assert fake.requests[0].prompt.startswith("P: the task\n")
    assert fake.requests[1].prompt.startswith('Q: {\n  "from": "p"\n}\n')  # C.13


FORK = """
start((开始)) --> p[p]
p -->|go| f{{并行}}
f --> x[x]
f --> y[y]
x -->|已执行| j[j]
y -->|已执行| j
j -->|已执行| g[g]
g -->|again| p
g -->|done| finish((结束))
"""


def fork_flow(
    flows: Path, x_js: str = ECHO_STDIN, y_js: str = ECHO_STDIN, flow_id: str = "fork"
) -> Path:
    return package(
        flows,
        flow_id,
        FORK,
        agent("p", "{outcome}", {"go": "."}),
        command("x", x_js, stdin='{"in": "{outcome}"}'),
        command("y", y_js, stdin='{"in": "{outcome}"}'),
        command("j", ECHO_STDIN, stdin='{"in": "{outcome}", "x": {x.outcome}, "y": {y.outcome}}'),
        agent("g", "{outcome}", {"again": ".", "done": "."}, reuse=True),
    )


def test_b12_b13_branches_and_join_get_the_fork_input(flows: Path) -> None:
    slow = "setTimeout(()=>{" + ECHO_STDIN + "},300)"
    fork_flow(flows, x_js=slow)
    fake = FakeAgent(("go", "round input"), ("done", "ok"))
    _, document = go(flows / "fork", fake=fake)
    results = {v["node"]: v["result"]["content"] for v in document["visits"]}
    assert stdout_json(results["x"]) == stdout_json(results["y"]) == {"in": "round input"}
    assert stdout_json(results["j"])["in"] == "round input"
    order = [n for n, _ in visited(document)]
    assert order.index("y") < order.index("x")  # y finished first; the join's input is the same


def test_b14_descriptions_are_never_substituted(flows: Path) -> None:
    package(
        flows,
        "desc",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", "{outcome}", {"ok": "Mention {outcome} literally."}),
    )
    fake = FakeAgent(("ok", "x"))
    go(flows / "desc", "TASK", fake=fake)
    assert "- ok: Mention {outcome} literally." in fake.requests[0].prompt
    assert fake.requests[0].results[0].description == "Mention {outcome} literally."


def test_b15_outcome_text_is_inserted_literally_into_json_strings(flows: Path) -> None:
    echo_flow(flows, stdin='{"t": "<{outcome}>", "n": ["{outcome}"]}')
    tricky = 'say "hi"\\ and\nnew {outcome} line'
    summary, _ = go(flows / "echo", tricky)
    assert stdout_json(summary.result) == {"t": f"<{tricky}>", "n": [tricky]}


def test_b16_b17_join_gets_full_results_of_the_current_round(flows: Path) -> None:
    counter = "process.stdout.write(String(Date.now()))"
    fork_flow(flows, x_js=counter, y_js="process.stderr.write('warn');process.exit(3)")
    fake = FakeAgent(("go", "one"), ("again", "two"), ("go", "two"), ("done", "ok"))
    _, document = go(flows / "fork", fake=fake)
    joins = [v for v in document["visits"] if v["node"] == "j"]
    xs = [v for v in document["visits"] if v["node"] == "x"]
    assert len(document["rounds"]) == 2
    assert len(joins) == 2
    for join, x in zip(joins, xs, strict=True):
        sent = stdout_json(join["result"]["content"])
        assert sent["x"] == x["result"]  # this round's x, not the first round's
        assert sent["y"] == {
            "result": "已执行",
            "content": {"status": "failure", "exitCode": 3, "stdout": "", "stderr": "warn"},
        }
    assert (
        stdout_json(joins[0]["result"]["content"])["x"]
        != stdout_json(joins[1]["result"]["content"])["x"]
    )


# -- Results and routing: B.18–B.26 ------------------------------------------------------------


def test_b18_each_visit_records_exactly_one_result(flows: Path) -> None:
    fork_flow(flows)
    _, document = go(flows / "fork", fake=FakeAgent(("go", "a"), ("done", "b")))
    assert all(v["status"] == "completed" for v in document["visits"])
    per_visit = [e["visit"] for e in document["events"] if e["type"] == "visited"]
    assert sorted(per_visit) == sorted(v["id"] for v in document["visits"])


def test_b19_routing_is_by_node_and_result(flows: Path) -> None:
    package(
        flows,
        "keys",
        "start((开始)) --> p[p]\np -->|same| q[q]\nq -->|same| finish((结束))\nq -->|other| p",
        agent("p", ".", {"same": "."}),
        agent("q", ".", {"same": ".", "other": "."}, reuse=True),
    )
    _, document = go(
        flows / "keys", fake=FakeAgent(("same", 1), ("other", 2), ("same", 3), ("same", 4))
    )
    assert visited(document) == [("p", "same"), ("q", "other"), ("p", "same"), ("q", "same")]
    assert [e["to"] for e in document["events"] if e["type"] == "routed"] == [
        "q",
        "p",
        "q",
        "finish",
    ]


def test_b20_an_undeclared_result_is_rejected_and_never_routed(flows: Path) -> None:
    package(
        flows,
        "gate",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    fake = FakeAgent(("nope", "x"), ("ok", "fine"))
    summary, document = go(flows / "gate", fake=fake)
    assert summary.state == "completed"
    assert visited(document) == [("p", "ok")]
    rejected = [e for e in document["events"] if e["type"] == "answer-rejected"]
    assert rejected[0]["rejected"] == "nope"
    assert "result" not in rejected[0]
    assert fake.requests[1].attempt == 2
    assert fake.requests[1].rejected == "nope"
    assert fake.requests[1].agent == "agent-1"  # the Agent that answered is asked again
    package(
        flows,
        "gate2",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    summary, document = go(
        flows / "gate2", fake=FakeAgent(("nope", 1), ("still", 2)), state=flows.parent / "2.json"
    )
    assert summary.state == "failed"
    assert summary.error is not None
    assert summary.error["category"] == "outcome_validation"
    assert visited(document) == []
    assert not [e for e in document["events"] if e["type"] == "routed"]


def test_b21_b22_command_content_and_non_zero_exit_still_routes(flows: Path) -> None:
    package(
        flows,
        "codes",
        "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|已执行| finish((结束))",
        command("a", "process.stdout.write('out');process.exit(2)"),
        command("b", "process.stdout.write('ok')"),
    )
    summary, document = go(flows / "codes")
    a, b = (v["result"] for v in document["visits"])
    assert a == {
        "result": "已执行",
        "content": {"status": "failure", "exitCode": 2, "stdout": "out", "stderr": ""},
    }
    assert b["content"]["status"] == "success"
    assert b["content"]["exitCode"] == 0
    assert summary.state == "completed"


def test_b23_stdin_is_compact_json_or_empty(flows: Path) -> None:
    raw = (
        "let d=[];process.stdin.on('data',c=>d.push(c))"
        ".on('end',()=>process.stdout.write(JSON.stringify(Buffer.concat(d).toString())))"
    )
    package(
        flows,
        "io",
        "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|已执行| finish((结束))",
        command("a", raw, stdin='{ "k" : [1, 2], "s": "é {outcome}" }'),
        command("b", raw),
    )
    _, document = go(flows / "io", "t")
    a, b = (v["result"]["content"] for v in document["visits"])
    assert json.loads(a["stdout"]) == '{"k":[1,2],"s":"é t"}'
    assert json.loads(b["stdout"]) == ""


def test_b24_commands_run_in_the_run_cwd_never_the_package(
    flows: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package(
        flows,
        "where",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", PRINT_CWD),
    )
    summary, _ = go(flows / "where")
    assert summary.result["stdout"] == str((flows.parent / "proj").resolve())
    monkeypatch.chdir(flows.parent)
    summary = flow.run(flows / "where", "t", state=flows.parent / "d.json")
    assert summary.result["stdout"] == str(flows.parent.resolve())
    assert read(flows.parent / "d.json")["cwd"] == str(flows.parent)


def test_b25_no_shell(flows: Path) -> None:
    args = ["-e", "process.stdout.write(process.argv[1])", "$(echo hi); `x` && *"]
    package(
        flows, "sh", "start((开始)) --> a[a]\na -->|已执行| finish((结束))", command("a", args=args)
    )
    summary, _ = go(flows / "sh")
    assert summary.result["stdout"] == "$(echo hi); `x` && *"


def test_b26_finish_completes_and_releases_the_binding(flows: Path) -> None:
    package(
        flows,
        "done",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    fake = FakeAgent(("ok", "x", "A"))
    summary, document = go(flows / "done", fake=fake)
    assert summary.state == document["status"] == "completed"
    assert fake.released == ["A"]
    assert document["agentBinding"] is None


# -- Agent binding: B.27–B.35 ------------------------------------------------------------------

REUSE = "start((开始)) --> q[q]\nq -->|ok| finish((结束))"


def test_b27_a_run_may_start_with_an_existing_agent(flows: Path) -> None:
    package(flows, "reuse", REUSE, agent("q", ".", {"ok": "."}, reuse=True))
    fake = FakeAgent(("ok", "x"))
    summary, document = go(flows / "reuse", fake=fake, agent_ref="host-agent")
    assert summary.state == "completed"
    assert fake.requests[0].agent == "host-agent"
    assert document["events"][0]["agent"] == "host-agent"


def test_b28_reuse_with_an_empty_binding_fails(flows: Path) -> None:
    package(flows, "reuse", REUSE, agent("q", ".", {"ok": "."}, reuse=True))
    fake = FakeAgent(("ok", "x"))
    summary, document = go(flows / "reuse", fake=fake)
    assert summary.error is not None
    assert summary.error["category"] == "agent_binding"
    assert fake.requests == []
    assert document["visits"][0]["status"] == "failed"


def test_b29_b30_new_binds_and_releases_the_previous_reuse_continues(flows: Path) -> None:
    package(
        flows,
        "two",
        "start((开始)) --> p[p]\np -->|ok| q[q]\nq -->|ok| r[r]\nr -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
        agent("q", ".", {"ok": "."}, reuse=True),
        agent("r", ".", {"ok": "."}),
    )
    fake = FakeAgent(("ok", 1, "A"), ("ok", 2), ("ok", 3, "B"))
    _, document = go(flows / "two", fake=fake)
    assert [(r.marker, r.agent) for r in fake.requests] == [
        ("new", None),
        ("reuse", "A"),
        ("new", None),
    ]
    assert fake.released == ["A", "B"]
    bound = [(e["agent"], e["previous"]) for e in document["events"] if e["type"] == "agent-bound"]
    assert bound == [("A", None), ("B", "A")]


def test_b31_an_agent_bound_to_an_active_run_cannot_start_another(flows: Path) -> None:
    package(
        flows,
        "busy",
        "start((开始)) --> p[p]\np -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
    )
    package(flows, "other", REUSE, agent("q", ".", {"ok": "."}, reuse=True))
    codes = []

    def nested(request: AgentRequest) -> AgentAnswer:
        try:
            flow.run(
                flows / "other",
                "t",
                state=flows.parent / "n.json",
                agent=FakeAgent(),
                agent_ref="A",
            )
        except AgentGraphError as error:
            codes.append(error.code)
        return AgentAnswer("ok", "x", "B")

    go(flows / "busy", fake=FakeAgent(nested), agent_ref="A")
    assert codes == ["agent-bound"]
    assert not (flows.parent / "n.json").exists()


def test_b32_failure_releases_the_binding(flows: Path) -> None:
    package(
        flows,
        "fail",
        "start((开始)) --> p[p]\np -->|ok| q[q]\nq -->|ok| finish((结束))",
        agent("p", ".", {"ok": "."}),
        agent("q", ".", {"ok": "."}, reuse=True),
    )
    fake = FakeAgent(("ok", 1, "A"), flow.AgentFailure("model down"))
    summary, document = go(flows / "fail", fake=fake)
    assert summary.error == {"category": "agent_execution", "summary": "q: model down"}
    assert fake.released == ["A"]
    assert document["agentBinding"] is None


PARENT = (
    "start((开始)) --> p[p]\np -->|ok| c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| finish"
)
CHILD_REUSE = "start((开始)) --> q[q]\nq -->|ok| finish((结束))"


def test_b33_a_child_starts_with_an_empty_binding(flows: Path) -> None:
    package(flows, "parent", PARENT, agent("p", ".", {"ok": "."}), call("c", "kid"))
    package(
        flows,
        "kid",
        "start((开始)) --> k[k]\nk -->|ok| finish((结束))",
        agent("k", ".", {"ok": "."}),
    )
    fake = FakeAgent(("ok", 1, "A"), ("ok", 2, "B"))
    _, document = go(flows / "parent", fake=fake)
    child = read(flows.parent / document["visits"][1]["childState"])
    assert child["events"][0]["type"] == "run-started"
    assert child["cursor"] is None
    assert (fake.requests[1].marker, fake.requests[1].agent) == ("new", None)
    assert [e["previous"] for e in child["events"] if e["type"] == "agent-bound"] == [None]
    # a child Flow whose first Agent step is 复用Agent would fail (agent_binding): refused
    # when loading already, so it never starts (flow-child-reuse-first, C.7)
    package(flows, "kid", CHILD_REUSE, agent("q", ".", {"ok": "."}, reuse=True))
    with pytest.raises(AgentGraphError) as caught:
        go(flows / "parent", fake=FakeAgent(), state=flows.parent / "2.json")
    assert caught.value.code == "flow-child-reuse-first"


def test_b34_b35_the_parent_binding_is_untouched_and_the_childs_released(flows: Path) -> None:
    package(
        flows,
        "parent",
        "start((开始)) --> p[p]\np -->|ok| c[c]\n"
        "c -->|已完成| q[q]\nc -->|已失败| finish((结束))\nq -->|ok| finish",
        agent("p", ".", {"ok": "."}),
        call("c", "kid"),
        agent("q", ".", {"ok": "."}, reuse=True),
    )
    package(
        flows,
        "kid",
        "start((开始)) --> k[k]\nk -->|ok| finish((结束))",
        agent("k", ".", {"ok": "."}),
    )
    seen: list[str | None] = []

    def in_child(request: AgentRequest) -> AgentAnswer:
        parent = read(flows.parent / "run.json")
        seen.append(parent["agentBinding"])
        return AgentAnswer("ok", "child done", "B")

    fake = FakeAgent(("ok", 1, "A"), in_child, ("ok", 3))
    _, document = go(flows / "parent", fake=fake)
    assert seen == ["A"]
    assert fake.requests[2].agent == "A"
    assert fake.released == ["B", "A"]  # the child's at its end, the parent's at its end
    child = read(flows.parent / document["visits"][1]["childState"])
    assert child["agentBinding"] is None
    assert child["status"] == "completed"


def test_b35_a_new_agent_in_a_child_that_is_the_parents_fails(flows: Path) -> None:
    package(
        flows,
        "parent",
        PARENT,
        agent("p", ".", {"ok": "."}),
        call("c", "kid"),
    )
    package(
        flows,
        "kid",
        "start((开始)) --> k[k]\nk -->|ok| finish((结束))",
        agent("k", ".", {"ok": "."}),
    )
    _, document = go(flows / "parent", fake=FakeAgent(("ok", 1, "A"), ("ok", 2, "A")))
    assert (
        document["visits"][1]["result"]["content"]["error"]["category"] == "agent_binding"
    )  # C.35


# -- Reference execution: B.36–B.46 ------------------------------------------------------------


def test_b36_b45_omitted_task_is_the_parent_input_unchanged(flows: Path) -> None:
    package(flows, "parent", PARENT, agent("p", ".", {"ok": "."}), call("c", "kid"))
    echo_flow(flows, "kid", stdin='{"t": "{outcome}"}')
    _, document = go(flows / "parent", fake=FakeAgent(("ok", {"n": [1, "two"]})))
    child = read(flows.parent / document["visits"][1]["childState"])
    assert child["task"] == {"n": [1, "two"]}
    assert child["visits"][0]["input"] == {"n": [1, "two"]}  # B.45: a fresh chain
    assert stdout_json(child["conclusion"]) == {"t": '{"n":[1,"two"]}'}


def test_b37_the_task_is_rendered_with_command_string_rules(flows: Path) -> None:
    package(
        flows,
        "parent",
        PARENT,
        agent("p", ".", {"ok": "."}),
        call("c", "kid", task='{"a": "x {outcome} y", "n": 5, "l": ["{outcome}"]}'),
    )
    echo_flow(flows, "kid")
    _, document = go(flows / "parent", fake=FakeAgent(("ok", "V")))
    child = read(flows.parent / document["visits"][1]["childState"])
    assert child["task"] == {"a": "x V y", "n": 5, "l": ["V"]}


def test_b38_b44_the_parent_waits_and_holds_only_links(flows: Path) -> None:
    package(flows, "parent", PARENT, agent("p", ".", {"ok": "."}), call("c", "kid"))
    package(
        flows,
        "kid",
        "start((开始)) --> a[a]\na -->|已执行| b[b]\nb -->|已执行| finish((结束))",
        command("a", "setTimeout(()=>{},200)"),
        command("b", "process.stdout.write('B')"),
    )
    _, document = go(flows / "parent", fake=FakeAgent(("ok", "go")))
    visit = document["visits"][1]
    child = read(flows.parent / visit["childState"])
    assert visit["startedAt"] <= child["startedAt"]
    assert child["completedAt"] <= visit["endedAt"]
    assert [v["node"] for v in document["visits"]] == ["p", "c"]  # no child node records
    assert child["parent"] == {
        "runId": document["runId"],
        "visit": visit["id"],
        "state": "run.json",
    }
    assert visit["childRunId"] == child["runId"]
    assert all(e["runId"] == document["runId"] for e in document["events"])


def test_b39_single_edge_completed_follows_with_the_conclusion(flows: Path) -> None:
    package(
        flows,
        "parent",
        "start((开始)) --> c[c]\nc --> p[p]\np -->|ok| finish((结束))",
        call("c", "kid", plain=True),
        agent("p", "Got: {outcome}", {"ok": "."}),
    )
    package(
        flows,
        "kid",
        "start((开始)) --> k[k]\nk -->|ok| finish((结束))",
        agent("k", ".", {"ok": "."}),
    )
    fake = FakeAgent(("ok", "child conclusion"), ("ok", "x"))
    _, document = go(flows / "parent", fake=fake)
    assert document["visits"][0]["result"] == {"result": "已完成", "content": "child conclusion"}
    assert fake.requests[1].prompt.startswith("Got: child conclusion\n")


def test_b40_single_edge_failed_fails_the_parent_naming_the_child(flows: Path) -> None:
    package(
        flows,
        "parent",
        "start((开始)) --> c[c]\nc --> finish((结束))",
        call("c", "kid", plain=True),
    )
    package(
        flows,
        "kid",
        "start((开始)) --> a[a]\na -->|已执行| finish((结束))",
        command("a", program="no-such-program-x"),
    )
    summary, document = go(flows / "parent")
    child_id = document["visits"][0]["childRunId"]
    assert summary.state == "failed"
    assert summary.error is not None
    assert summary.error["category"] == "flow_reference"
    assert summary.error["childRunId"] == child_id
    assert summary.error["summary"].startswith(f"child run {child_id} failed: ")


def test_b41_b42_two_edge_form(flows: Path) -> None:
    package(
        flows,
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| d[d]\nd -->|已执行| c",
        call("c", "kid"),
        command("d", "process.stdout.write('fixed')"),
    )
    flag = flows.parent / "proj" / "flag"
    js = (
        f"const f={json.dumps(str(flag))};const fs=require('fs');process.stdout.write('checked');"
        f"if(!fs.existsSync(f)){{fs.writeFileSync(f,'');}}"
    )
    package(
        flows,
        "kid",
        "start((开始)) --> a[a]\na -->|已执行| k[k]\nk -->|ok| finish((结束))",
        command("a", js),
        agent("k", ".", {"ok": "."}),
    )
    fake = FakeAgent(flow.AgentFailure("boom"), ("ok", "all good"))
    _, document = go(flows / "parent", fake=fake)
    first, _, second = document["visits"]
    failed = first["result"]
    assert failed["result"] == "已失败"
    assert failed["content"] == {
        "status": "failure",
        "runId": first["childRunId"],
        "flowId": "kid",
        "result": {"status": "success", "exitCode": 0, "stdout": "checked", "stderr": ""},
        "error": {"category": "agent_execution", "summary": "k: boom"},
    }
    assert second["result"] == {"result": "已完成", "content": "all good"}


def test_b43_the_conclusion_is_the_last_completed_visit(flows: Path) -> None:
    fork_flow(flows, flow_id="kid")
    package(
        flows,
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| finish",
        call("c", "kid"),
    )
    _, document = go(flows / "parent", fake=FakeAgent(("go", "r"), ("done", "the last")))
    assert document["visits"][0]["result"]["content"] == "the last"
    assert document["conclusion"] == "the last"


def test_b46_each_visit_starts_a_new_child_run(flows: Path) -> None:
    package(
        flows,
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| g[g]\n"
        "c -->|已失败| finish((结束))\ng -->|again| c\ng -->|stop| finish",
        call("c", "kid"),
        agent("g", ".", {"again": ".", "stop": "."}),
    )
    echo_flow(flows, "kid")
    _, document = go(flows / "parent", fake=FakeAgent(("again", 1), ("stop", 2)))
    ids = [v["childRunId"] for v in document["visits"] if v["node"] == "c"]
    assert len(ids) == len(set(ids)) == 2
    assert all((flows.parent / f"run.{i}.json").is_file() for i in ids)


# -- Parallel execution: B.47–B.51 -------------------------------------------------------------


def test_b47_entering_a_fork_starts_a_round_with_its_input(flows: Path) -> None:
    fork_flow(flows)
    _, document = go(flows / "fork", fake=FakeAgent(("go", {"saved": True}), ("done", 1)))
    (round_,) = document["rounds"]
    assert round_["fork"] == "f"
    assert round_["input"] == {"saved": True}
    assert round_["status"] == "joined"
    assert set(round_["branches"]) == {"x", "y"}


def test_b48_branches_start_without_waiting_for_each_other(flows: Path) -> None:
    stamp = (
        "const t0=Date.now();setTimeout(()=>process.stdout.write(JSON.stringify([t0,Date.now()"
        "])),400)"
    )
    fork_flow(flows, x_js=stamp, y_js=stamp)
    _, document = go(flows / "fork", fake=FakeAgent(("go", 1), ("done", 1)))
    spans = {
        v["node"]: stdout_json(v["result"]["content"])
        for v in document["visits"]
        if v["node"] in "xy"
    }
    assert spans["x"][0] < spans["y"][1]
    assert spans["y"][0] < spans["x"][1]


def test_b48_max_parallel_one_runs_them_in_turn(flows: Path) -> None:
    stamp = (
        "const t0=Date.now();setTimeout(()=>process.stdout.write(JSON.stringify([t0,Date.now()"
        "])),100)"
    )
    fork_flow(flows, x_js=stamp, y_js=stamp)
    _, document = go(flows / "fork", fake=FakeAgent(("go", 1), ("done", 1)), max_parallel=1)
    x, y = (stdout_json(v["result"]["content"]) for v in document["visits"] if v["node"] in "xy")
    assert x[1] <= y[0]


def test_b49_b51_the_join_waits_and_its_content_goes_on(flows: Path) -> None:
    fork_flow(flows, x_js="setTimeout(()=>process.stdout.write('late'),300)")
    fake = FakeAgent(("go", 1), ("done", 1))
    _, document = go(flows / "fork", fake=fake)
    ended = {v["node"]: v["endedAt"] for v in document["visits"]}
    started = {v["node"]: v["startedAt"] for v in document["visits"]}
    assert started["j"] >= max(ended["x"], ended["y"])
    join_content = next(v for v in document["visits"] if v["node"] == "j")["result"]["content"]
    assert fake.requests[1].prompt.startswith(
        json.dumps(join_content, ensure_ascii=False, indent=2)
    )


def test_b50_a_failing_branch_stops_nothing(flows: Path) -> None:
    fork_flow(flows, x_js="process.exit(1)", y_js="setTimeout(()=>process.stdout.write('y'),200)")
    summary, document = go(flows / "fork", fake=FakeAgent(("go", 1), ("done", 1)))
    results = {v["node"]: v["result"]["content"] for v in document["visits"]}
    assert results["x"]["status"] == "failure"
    assert results["y"]["stdout"] == "y"
    assert summary.state == "completed"


# -- Resume: B.52–B.58 -------------------------------------------------------------------------


def test_b52_completed_and_failed_runs_are_not_resumable(flows: Path) -> None:
    echo_flow(flows)
    go(flows / "echo")
    before = (flows.parent / "run.json").read_bytes()
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(flows.parent / "run.json")
    assert caught.value.code == "run-not-resumable"
    assert (flows.parent / "run.json").read_bytes() == before


def stopped_child(flows: Path) -> tuple[Path, Stop]:
    """A parent whose child Run is interrupted inside its Agent step (clean stop)."""
    package(
        flows,
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| finish",
        call("c", "kid"),
    )
    package(
        flows,
        "kid",
        "start((开始)) --> k[k]\nk -->|ok| finish((结束))",
        agent("k", ".", {"ok": "."}),
    )
    stop = Stop()

    def stopping(request: AgentRequest) -> AgentAnswer:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    summary, _ = go(flows / "parent", fake=FakeAgent(stopping), stop=stop)
    assert summary.state == "interrupted"
    return flows.parent / "run.json", stop


def test_b53_a_child_run_cannot_be_resumed_directly(flows: Path) -> None:
    state, _ = stopped_child(flows)
    document = read(state)
    child = flows.parent / document["visits"][0]["childState"]
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(child, agent=FakeAgent())
    assert caught.value.code == "run-child-direct-resume"
    assert document["runId"] in caught.value.message
    assert str(state) in caught.value.message


@pytest.mark.parametrize("where", ["parent", "kid"])
def test_b54_a_drifted_closure_is_refused(flows: Path, where: str) -> None:
    state, _ = stopped_child(flows)
    before = state.read_bytes()
    script = flows / where / "scripts" / "helper.mjs"
    script.parent.mkdir()
    script.write_text("// new\n", encoding="utf-8")
    with pytest.raises(AgentGraphError) as caught:
        flow.resume(state, agent=FakeAgent(("ok", 1)))
    assert caught.value.code == "run-fingerprint-mismatch"
    assert state.read_bytes() == before
    script.unlink()
    assert flow.resume(state, agent=FakeAgent(("ok", 1))).state == "completed"  # still resumable


def test_b55_a_completed_call_visit_is_not_run_again(
    flows: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package(
        flows,
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| p[p]\n"
        "c -->|已失败| finish((结束))\np -->|ok| finish",
        call("c", "kid"),
        agent("p", "{outcome}", {"ok": "."}),
    )
    echo_flow(flows, "kid")
    with (
        crash_when(
            monkeypatch,
            lambda d: (
                d["parent"] is None
                and len(d["visits"]) == 1
                and d["visits"][0]["status"] == "completed"
            ),
        ),
        pytest.raises(Crash),
    ):
        go(flows / "parent", fake=FakeAgent())
    document = read(flows.parent / "run.json")
    child_file = flows.parent / document["visits"][0]["childState"]
    child_before = child_file.read_bytes()
    fake = FakeAgent(("ok", "x"))
    summary = flow.resume(flows.parent / "run.json", agent=fake)
    assert summary.state == "completed"
    assert child_file.read_bytes() == child_before
    assert '"stdout"' in fake.requests[0].prompt


def test_b56_an_interrupted_call_visit_with_a_terminal_child_takes_its_result(
    flows: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package(
        flows,
        "parent",
        "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| finish",
        call("c", "kid"),
    )
    echo_flow(flows, "kid")
    with (
        crash_when(monkeypatch, lambda d: d["parent"] is not None and d["status"] == "completed"),
        pytest.raises(Crash),
    ):
        go(flows / "parent")
    document = read(flows.parent / "run.json")
    assert document["visits"][0]["status"] == "running"
    child_file = flows.parent / document["visits"][0]["childState"]
    child_before = child_file.read_bytes()
    summary = flow.resume(flows.parent / "run.json")
    assert summary.state == "completed"
    assert child_file.read_bytes() == child_before
    after = read(flows.parent / "run.json")
    assert after["visits"][0]["result"]["result"] == "已完成"
    assert [r["strategy"] for r in after["recoveries"]] == ["resume-child"]
    assert_log_whole(after)


def test_b57_a_running_child_is_resumed_first(flows: Path) -> None:
    state, _ = stopped_child(flows)
    document = read(state)
    child_file = flows.parent / document["visits"][0]["childState"]
    assert read(child_file)["status"] == "interrupted"
    assert document["status"] == "interrupted"
    fake = FakeAgent(("ok", "child answer"))
    summary = flow.resume(state, agent=fake)
    assert summary.state == "completed"
    assert summary.result == "child answer"
    child = read(child_file)
    assert child["status"] == "completed"
    assert [v["retryOf"] for v in child["visits"]] == [None, "v1"]  # the Agent visit was retried
    assert fake.requests[0].run_id == child["runId"]
    assert_log_whole(child)
    assert_log_whole(read(state))


def test_b58_resume_uses_the_recorded_cwd(flows: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package(
        flows,
        "cwd",
        "start((开始)) --> p[p]\np -->|ok| a[a]\na -->|已执行| finish((结束))",
        agent("p", ".", {"ok": "."}),
        command("a", PRINT_CWD),
    )
    stop = Stop()

    def stopping(request: AgentRequest) -> AgentAnswer:
        stop.request(kill_children=False)
        raise flow.AgentFailure("stopped")

    summary, _ = go(flows / "cwd", fake=FakeAgent(stopping), stop=stop)
    assert summary.state == "interrupted"
    elsewhere = flows.parent / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    fake = FakeAgent(("ok", "x"))
    summary = flow.resume(flows.parent / "run.json", agent=fake)
    assert summary.result["stdout"] == str((flows.parent / "proj").resolve())
    assert fake.requests[0].cwd == str(flows.parent / "proj")
