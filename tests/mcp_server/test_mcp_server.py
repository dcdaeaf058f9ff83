"""``agc mcp serve`` in process, through the SDK's in-memory client, in both protocol eras.

The handshake era (``mode="legacy"``, 2025-11-25) asks Gate questions inside the call;
the stateless era (``mode="auto"``, 2026-07-28) answers with an ``InputRequiredResult``
the client retries with the answer. Every test runs in both.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from agent_graph.mcp.host import Host, ServeOptions
from agent_graph.mcp.sdk_adapter import build_server
from agent_graph.mcp.tools import TOOLS
from agent_graph.runs import FileRunStore, read_run
from mcp_support import WEEKLY, Answers, Workspace, with_client, workspace

ERAS = pytest.mark.parametrize("mode", ["legacy", "auto"])


def host_for(ws: Workspace, *, tools: str = "all", manifest: Path = WEEKLY, **more: Any) -> Host:
    return Host(
        ServeOptions(
            manifests=(str(manifest),),
            runs=str(ws.runs),
            workspaces=(str(ws.root),),
            config=str(ws.config),
            tools=tools,
            **more,
        )
    )


async def call(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    structured: dict[str, Any] = result.structured_content
    assert json.loads(result.content[0].text) == structured
    assert next(iter(structured)) == "next"  # every result leads with next
    return structured


async def error(client: Any, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool(name, arguments)
    assert result.is_error
    assert result.structured_content is None
    text = result.content[0].text
    head, _, rest = text.partition("\n")
    body = json.loads(rest.partition("\n")[2])
    assert body["error"]["schema"] == "agent-graph.error.v1"
    assert head.startswith(f"ERROR {body['error']['error']['code']}: ")
    return body["error"]["error"]["code"], body


@ERAS
def test_tool_list(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)

    async def body(client: Any) -> None:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == [t.name for t in TOOLS]
        by_name = {t.name: t for t in listed}
        assert by_name["providers_list"].annotations.read_only_hint is True
        assert by_name["run_record"].annotations.read_only_hint is False
        assert by_name["run_record"].annotations.destructive_hint is False
        for tool in listed:
            assert tool.input_schema["additionalProperties"] is False
            assert tool.output_schema is not None
        wire = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed]
        assert len(json.dumps({"tools": wire}, separators=(",", ":"))) <= 16 * 1024

    # with Flows served (and --runs), every tool is listed
    with_client(build_server(host_for(ws, flows=(str(tmp_path),))), mode, body)


@ERAS
def test_core_and_read_only_profiles(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)

    async def body(client: Any) -> None:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["providers_list", "graph_route"]

    with_client(build_server(host_for(ws, tools="core", read_only=True)), mode, body)


@ERAS
def test_weekly_report_end_to_end(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    answers = Answers()

    async def body(client: Any) -> None:
        listed = await call(client, "providers_list", {})
        assert listed["providers"][0]["id"] == "example.weekly-report"
        start = await call(client, "run_start", {"run": "w48"})
        assert start["route"]["node"] == "draft"
        assert start["next"]["tool"] == "run_record"
        # the agent claims the draft before writing it: the observer sees no report
        early = await call(client, "run_record", start["next"]["arguments"])
        assert early["evaluation"]["statusCode"] == "blocked"
        assert early["next"]["waitsFor"] == "host"
        assert early["unverified"] == [
            {
                "stateKey": "report/draft",
                "missing": [
                    {"path": "report.digest", "check": "exists", "observers": ["report-draft"]}
                ],
            }
        ]
        assert "report.digest" in early["next"]["say"]
        assert "report-draft" in early["next"]["say"]
        ws.draft()
        drafted = await call(client, "run_status", {"run": "w48"})
        seen = {o["observer"]: o for o in drafted["observed"]}
        assert seen["report-draft"]["changed"] == ["report.digest"]
        assert drafted["next"]["tool"] == "gate_resolve"
        assert drafted["next"]["waitsFor"] == "user"
        answers.add("accept", {"decision": "approve"})
        approved = await call(client, "gate_resolve", drafted["next"]["arguments"])
        assert approved["decision"] == "approved"
        assert approved["recorded"]["facts"] == ["report.approved"]
        assert "never runs it" in approved["next"]["say"]
        assert approved["route"]["node"] == "publish"
        # publishing reported done before the publication exists: unverified
        published = await call(client, "run_record", approved["next"]["arguments"])
        assert published["evaluation"]["primaryRoute"]["node"] == "check-publication"
        assert published["unverified"][0]["missing"][0]["observers"] == ["publication"]
        ws.publish()
        done = await call(client, "run_status", {"run": "w48"})
        assert done["evaluation"]["statusCode"] == "complete"
        assert done["next"]["waitsFor"] == "nothing"

    with_client(build_server(host_for(ws)), mode, body, answers)
    assert len(answers.asked) == 1
    form = answers.asked[0]
    assert "Publish this week's report?" in form.message
    assert form.requested_schema["required"] == ["decision"]
    assert "default" not in form.requested_schema["properties"]["decision"]
    run = read_run(ws.run_file("w48"))
    events = run.events
    decided = [e for e in events if e["type"] == "gate.decided"]
    assert decided[0]["detail"]["via"] == "elicitation-form"
    assert decided[0]["detail"]["protocol"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    sources = [e["detail"]["source"]["kind"] for e in events if e["type"] == "facts.updated"]
    assert sources == ["observer", "user", "observer"]
    assert run.authorities == []  # nothing delegated, nothing granted


def _to_gate(ws: Workspace) -> Any:
    async def reach(client: Any) -> dict[str, Any]:
        await call(client, "run_start", {"run": "w48"})
        ws.draft()
        status = await call(client, "run_status", {"run": "w48"})
        assert status["next"]["tool"] == "gate_resolve"
        return status

    return reach


@ERAS
@pytest.mark.parametrize(
    ("action", "content", "decision"),
    [
        ("decline", None, "declined"),
        ("cancel", None, "cancelled"),
        ("accept", {}, "invalid"),  # an empty accept decides nothing
        ("accept", {"decision": "yes"}, "invalid"),
    ],
)
def test_gate_answers_that_change_nothing(
    tmp_path: Path, mode: str, action: str, content: dict[str, Any] | None, decision: str
) -> None:
    ws = workspace(tmp_path)
    answers = Answers()

    async def body(client: Any) -> None:
        status = await _to_gate(ws)(client)
        before = read_run(ws.run_file("w48")).events
        answers.add(action, content)
        result = await call(client, "gate_resolve", status["next"]["arguments"])
        assert result["decision"] == decision
        assert "agc run decide --state" in result["fallback"]
        assert result["next"]["waitsFor"] == "user"
        assert read_run(ws.run_file("w48")).events == before

    with_client(build_server(host_for(ws)), mode, body, answers)


@ERAS
def test_gate_reject_records_failed(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    answers = Answers()

    async def body(client: Any) -> None:
        status = await _to_gate(ws)(client)
        answers.add("accept", {"decision": "reject"})
        result = await call(client, "gate_resolve", status["next"]["arguments"])
        assert result["decision"] == "rejected"
        assert result["recorded"]["outcome"] == "failed"

    with_client(build_server(host_for(ws)), mode, body, answers)
    run = read_run(ws.run_file("w48"))
    assert run.outcome("report/approve") == "failed"
    assert "approved" not in run.facts["report"]


@ERAS
def test_gate_refuses_a_stale_revision(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    answers = Answers()

    def someone_else_changes_the_run() -> None:
        FileRunStore().set_facts(ws.run_file("w48"), {"note": "changed in a terminal"})

    async def body(client: Any) -> None:
        status = await _to_gate(ws)(client)
        answers.during = someone_else_changes_the_run
        answers.add("accept", {"decision": "approve"})
        code, found = await error(client, "gate_resolve", status["next"]["arguments"])
        assert code == "route-revision-stale"
        assert found["retryable"] is True

    with_client(build_server(host_for(ws)), mode, body, answers)
    run = read_run(ws.run_file("w48"))
    assert "approved" not in run.facts["report"]
    assert not [e for e in run.events if e["type"] == "gate.decided"]


@ERAS
def test_gate_without_elicitation_is_unavailable(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)

    async def body(client: Any) -> None:
        status = await _to_gate(ws)(client)
        before = read_run(ws.run_file("w48")).events
        result = await call(client, "gate_resolve", status["next"]["arguments"])
        assert result["decision"] == "unavailable"
        assert result["fallback"].startswith("agc run decide --state ")
        assert read_run(ws.run_file("w48")).events == before

    with_client(build_server(host_for(ws)), mode, body)  # no elicitation callback


@ERAS
def test_gate_policy_cli_only(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path, "gates:", "  report-approval: {via: cli}")
    answers = Answers()

    async def body(client: Any) -> None:
        status = await _to_gate(ws)(client)
        result = await call(client, "gate_resolve", status["next"]["arguments"])
        assert result["decision"] == "unavailable"

    with_client(build_server(host_for(ws)), mode, body, answers)
    assert answers.asked == []


def _non_delegatable(tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "provider"
    shutil.copytree(WEEKLY, target)
    graph = target / "graphs" / "report.yaml"
    text = graph.read_text(encoding="utf-8")
    graph.write_text(text.replace("delegatable: true", "delegatable: false"), encoding="utf-8")
    return target


@ERAS
def test_non_delegatable_gate_needs_the_typed_confirmation(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    answers = Answers()

    async def body(client: Any) -> None:
        status = await _to_gate(ws)(client)
        answers.add("accept", {"decision": "approve", "confirm": "yes"})
        wrong = await call(client, "gate_resolve", status["next"]["arguments"])
        assert wrong["decision"] == "invalid"
        answers.add("accept", {"decision": "approve", "confirm": "report-approval"})
        right = await call(client, "gate_resolve", status["next"]["arguments"])
        assert right["decision"] == "approved"

    with_client(
        build_server(host_for(ws, manifest=_non_delegatable(tmp_path))), mode, body, answers
    )
    schema = answers.asked[0].requested_schema
    assert schema["required"] == ["decision", "confirm"]


def test_tampered_request_state_is_refused(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    ws = workspace(tmp_path)

    async def body(client: Any) -> None:
        import mcp_types as types

        status = await _to_gate(ws)(client)
        first = await client.session.call_tool(
            "gate_resolve", status["next"]["arguments"], allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        assert first.request_state is not None
        answer = {"gate": types.ElicitResult(action="accept", content={"decision": "approve"})}
        with pytest.raises(MCPError) as raised:
            await client.session.call_tool(
                "gate_resolve",
                status["next"]["arguments"],
                input_responses=answer,
                request_state=first.request_state[:-4] + "AAAA",
                allow_input_required=True,
            )
        assert raised.value.error.code == types.INVALID_PARAMS

    with_client(build_server(host_for(ws)), "auto", body, Answers())
    assert "approved" not in read_run(ws.run_file("w48")).facts["report"]


@ERAS
def test_error_classes(tmp_path: Path, mode: str) -> None:
    from mcp.shared.exceptions import MCPError

    ws = workspace(tmp_path)

    async def body(client: Any) -> None:
        code, found = await error(client, "run_status", {"run": "nope"})
        assert code == "run-missing"
        code, found = await error(client, "run_status", {"run": "../etc"})
        assert code == "arguments-invalid"
        assert found["error"]["error"]["diagnostics"][0]["detail"]["pointer"] == "/run"
        code, found = await error(client, "run_status", {"run": "w48", "facts": {}})
        assert code == "arguments-invalid"
        start = await call(client, "run_start", {"run": "w48"})
        code, _ = await error(client, "run_start", {"run": "w48"})
        assert code == "run-target-exists"
        code, _ = await error(client, "run_start", {"run": "x", "graph": "nope"})
        assert code == "graph-missing"
        code, _ = await error(client, "run_start", {"run": "x", "provider": "nope"})
        assert code == "provider-unresolved"
        code, _ = await error(client, "run_start", {"run": "x", "workspace": "../.."})
        assert code == "path-outside-roots"
        args = start["next"]["arguments"]
        code, _ = await error(client, "run_record", {**args, "recordNode": "report/nope"})
        assert code == "state-key-invalid"
        code, _ = await error(client, "run_record", {**args, "recordNode": "report/publish"})
        assert code == "run-record-conflict"  # no route offered publish at that revision
        code, _ = await error(client, "run_record", {**args, "outcome": "pending"})
        assert code == "arguments-invalid"
        await call(client, "run_record", {**args, "outcome": "partial"})
        code, found = await error(client, "run_record", args)  # the same call replayed
        assert code == "run-record-conflict"
        assert found["retryable"] is True
        code, _ = await error(client, "graph_route", {"run": "w48", "routeId": "route:0000"})
        assert code == "route-stale"
        code, _ = await error(
            client,
            "gate_resolve",
            {"run": "w48", "routeId": args["recordNode"], "revision": args["revision"]},
        )
        assert code in ("route-stale", "route-revision-stale")
        with pytest.raises(MCPError):
            await client.call_tool("no_such_tool", {})

    with_client(build_server(host_for(ws)), mode, body)


@ERAS
def test_an_invalid_provider_is_listed_not_fatal(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "provider.yaml").write_text(
        "schema: agent-graph.provider.v1\nid: [\n", encoding="utf-8"
    )
    host = Host(
        ServeOptions(
            manifests=(str(WEEKLY), str(broken)),
            runs=str(ws.runs),
            workspaces=(str(ws.root),),
            tools="all",
        )
    )

    async def body(client: Any) -> None:
        listed = await call(client, "providers_list", {})
        statuses = [p["status"] for p in listed["providers"]]
        assert statuses == ["ok", "invalid"]
        assert listed["providers"][1]["error"]["code"] == "parse-failed"
        code, _ = await error(client, "run_start", {"run": "x", "provider": str(broken)})
        assert code == "provider-invalid"
        code, _ = await error(client, "run_start", {"run": "x"})  # two served: name one
        assert code == "provider-unresolved"
        await call(client, "run_start", {"run": "x", "provider": "example.weekly-report"})

    with_client(build_server(host), mode, body)


@ERAS
def test_graph_evaluate_writes_nothing(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)

    async def body(client: Any) -> None:
        await call(client, "run_start", {"run": "w48"})
        before = read_run(ws.run_file("w48")).document
        found = await call(
            client,
            "graph_evaluate",
            {
                "facts": {"report": {"digest": "sha256:1f", "approved": True}},
                "authorities": ["report.publish"],
            },
        )
        assert found["hypothetical"] is True
        assert found["evaluation"]["primaryRoute"]["node"] == "publish"
        assert read_run(ws.run_file("w48")).document == before
        assert sorted(p.name for p in (ws.runs / "graph").glob("*.json")) == ["w48.json"]

    with_client(build_server(host_for(ws)), mode, body)


@ERAS
def test_resource_read_and_route_resources(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)

    async def body(client: Any) -> None:
        await call(client, "run_start", {"run": "w48"})
        routed = await call(client, "graph_route", {"run": "w48"})
        ids = [r["id"] for r in routed["resources"] if r["required"]]
        assert "procedure.report.draft" in ids
        read = await call(client, "resource_read", {"run": "w48", "id": "procedure.report.draft"})
        assert read["resource"]["digest"].startswith("sha256:")
        assert "report" in read["text"].lower()
        code, _ = await error(client, "resource_read", {"run": "w48", "id": "nope"})
        assert code == "resource-missing"

    with_client(build_server(host_for(ws)), mode, body)


@ERAS
def test_observers_report_progress(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def body(client: Any) -> None:
        await call(client, "run_start", {"run": "w48"})
        result = await client.call_tool("run_status", {"run": "w48"}, progress_callback=progress)
        assert not result.is_error

    with_client(build_server(host_for(ws)), mode, body)
    assert seen == [
        (1, 2, "observer report-draft: ok"),
        (2, 2, "observer publication: ok"),
    ]


REVIEW_DESK = WEEKLY.parent / "review-desk"
VERDICT = (
    "import json, os; print(json.dumps({'review': {'verdict': open('VERDICT').read().strip()}}"
    " if os.path.exists('VERDICT') else {}))"
)
DESK_CONFIG = f"""\
schema: agent-graph.mcp-config.v1
observers:
  - {{id: submission, writes: [submission.digest], file: SUBMISSION.md}}
  - {{id: verdict, writes: [review.verdict], command: [{sys.executable}, -c, "{VERDICT}"]}}
gates:
  legal-signoff: {{onApprove: {{facts: {{legal.signedOff: true}}}}}}
"""


@ERAS
def test_gates_with_resolution_actions(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    ws.config.write_text(DESK_CONFIG, encoding="utf-8")
    (ws.root / "SUBMISSION.md").write_text("a patch\n", encoding="utf-8")
    answers = Answers()

    async def body(client: Any) -> None:
        review = await call(client, "run_start", {"run": "pr7"})
        assert review["route"]["node"] == "editorial-review"
        early = {
            "run": "pr7",
            "recordNode": "desk/editorial-review",
            "outcome": "completed",
            "revision": review["evaluation"]["revision"],
            "sequence": review["run"]["sequence"],
        }
        code, _ = await error(client, "run_record", early)  # not before the user approved
        assert code == "run-record-conflict"
        answers.add("accept", {"decision": "approve"})
        approved = await call(client, "gate_resolve", review["next"]["arguments"])
        assert approved["decision"] == "approved"
        assert "facts" not in approved["recorded"] or approved["recorded"]["facts"] == []
        assert "desk.record-verdict" in approved["next"]["say"]
        (ws.root / "VERDICT").write_text("accepted\n", encoding="utf-8")  # the handler ran
        legal = await call(client, "run_record", approved["next"]["arguments"])
        assert legal["route"]["node"] == "legal-signoff"
        answers.add("accept", {"decision": "approve"})  # no typed confirmation
        refused = await call(client, "gate_resolve", legal["next"]["arguments"])
        assert refused["decision"] == "invalid"
        answers.add("accept", {"decision": "approve", "confirm": "legal-signoff"})
        signed = await call(client, "gate_resolve", legal["next"]["arguments"])
        assert signed["recorded"]["facts"] == ["legal.signedOff"]
        assert signed["route"]["node"] == "merge"

    with_client(build_server(host_for(ws, manifest=REVIEW_DESK)), mode, body, answers)
    assert answers.asked[1].requested_schema["required"] == ["decision", "confirm"]


@ERAS
def test_a_rejected_review_goes_back_to_the_author(tmp_path: Path, mode: str) -> None:
    ws = workspace(tmp_path)
    ws.config.write_text(DESK_CONFIG, encoding="utf-8")
    (ws.root / "SUBMISSION.md").write_text("a patch\n", encoding="utf-8")
    answers = Answers()

    async def body(client: Any) -> None:
        review = await call(client, "run_start", {"run": "pr7"})
        answers.add("accept", {"decision": "reject"})
        rejected = await call(client, "gate_resolve", review["next"]["arguments"])
        assert rejected["decision"] == "rejected"
        assert rejected["route"]["node"] == "return-to-author"

    with_client(build_server(host_for(ws, manifest=REVIEW_DESK)), mode, body, answers)


@ERAS
def test_prompts(tmp_path: Path, mode: str) -> None:
    from mcp.shared.exceptions import MCPError

    ws = workspace(tmp_path)
    skill = WEEKLY / "skills" / "weekly-report" / "SKILL.md"
    host = Host(
        ServeOptions(
            manifests=(str(WEEKLY),),
            skills=(str(skill),),
            workspaces=(str(ws.root),),
        )
    )

    async def body(client: Any) -> None:
        names = [p.name for p in (await client.list_prompts()).prompts]
        assert names == ["follow-graph", "skill-weekly-report"]
        got = await client.get_prompt("skill-weekly-report", {"task": "week 48"})
        text = got.messages[0].content.text
        assert 'run_start with {"skill": "weekly-report"}' in text
        assert "week 48" in text
        assert "only the user decides a Gate" in text
        with pytest.raises(MCPError):
            await client.get_prompt("nope", {})
        started = await call(client, "run_start", {"run": "w48", "skill": "weekly-report"})
        assert started["run"]["graph"] == "report"

    with_client(build_server(host), mode, body)


@ERAS
def test_resources(tmp_path: Path, mode: str) -> None:
    from mcp.shared.exceptions import MCPError

    ws = workspace(tmp_path)

    async def body(client: Any) -> None:
        listed = (await client.list_resources()).resources
        uris = [str(r.uri) for r in listed]
        procedure = "agent-graph://providers/example.weekly-report/resources/procedure.report.draft"
        assert procedure in uris
        assert "agent-graph://schemas/route" in uris
        started = await client.call_tool("run_start", {"run": "w48"})
        links = [c for c in started.content if c.type == "resource_link"]
        assert procedure in [str(link.uri) for link in links]
        read = await client.read_resource(procedure)
        assert read.contents[0].text.startswith("---")
        schema = await client.read_resource("agent-graph://schemas/route")
        assert json.loads(schema.contents[0].text)["title"].startswith("Agent Graph Route")
        with pytest.raises(MCPError):
            await client.read_resource(
                "agent-graph://providers/example.weekly-report/resources/..%2Fprovider.yaml"
            )

    with_client(build_server(host_for(ws)), mode, body)


def test_a_delegation_is_held_for_its_connection_only(tmp_path: Path) -> None:
    from mcp import Client

    ws = workspace(tmp_path)
    ws.config.write_text(DESK_CONFIG, encoding="utf-8")
    (ws.root / "SUBMISSION.md").write_text("a patch\n", encoding="utf-8")
    answers = Answers()
    served = host_for(ws, manifest=REVIEW_DESK)
    server = build_server(served)
    gate_key = "desk/editorial-review"

    async def body(client: Any) -> None:
        review = await call(client, "run_start", {"run": "pr7"})
        answers.add("accept", {"decision": "delegate"})
        delegated = await call(client, "gate_resolve", review["next"]["arguments"])
        assert delegated["decision"] == "delegated"
        assert delegated["delegated"]["authority"] == "desk.editor"
        assert len(served.delegations) == 1
        route = delegated["route"]
        assert (route["node"], route["statusCode"]) == ("editorial-review", "actionable")
        assert route["gate"]["resolution"] == "session-authority"
        assert route["afterAction"]["recordNode"] == gate_key
        # another connection to the same server holds nothing: the Gate waits for the user
        async with Client(server, mode="legacy") as other:
            seen = await call(other, "run_status", {"run": "pr7"})
            assert seen["route"]["statusCode"] == "waiting-user"
            assert seen["next"]["tool"] == "gate_resolve"
            claim = {
                "run": "pr7",
                "recordNode": gate_key,
                "outcome": "completed",
                "revision": seen["evaluation"]["revision"],
                "sequence": seen["run"]["sequence"],
            }
            code, _ = await error(other, "run_record", claim)
            assert code == "run-record-conflict"
        # the delegating connection follows the delegated route and reports the Gate
        (ws.root / "VERDICT").write_text("accepted\n", encoding="utf-8")
        arguments = {
            "run": "pr7",
            "recordNode": gate_key,
            "outcome": "completed",
            "revision": route["revision"],
            "sequence": delegated["run"]["sequence"],
        }
        legal = await call(client, "run_record", arguments)
        assert legal["route"]["node"] == "legal-signoff"

    with_client(server, "legacy", body, answers)
    assert len(served.delegations) == 0  # the connection closed: its delegation ended
    assert answers.asked[0].requested_schema["properties"]["decision"]["enum"] == [
        "approve",
        "reject",
        "delegate",
    ]
    # the Run file has no trace of the delegation: no authority, no decision event
    assert "desk.editor" not in ws.run_file("pr7").read_text(encoding="utf-8")
    run = read_run(ws.run_file("pr7"))
    assert list(run.authorities) == []
    assert [e["type"] for e in run.events if "delegat" in json.dumps(e)] == []
    assert not [e for e in run.events if e["type"] == "gate.decided"]


def test_a_stateless_call_is_not_offered_delegation(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    ws.draft()
    answers = Answers()

    async def body(client: Any) -> None:
        gate = await call(client, "run_start", {"run": "w48"})
        assert gate["next"]["tool"] == "gate_resolve"
        answers.add("accept", {"decision": "delegate"})
        refused = await call(client, "gate_resolve", gate["next"]["arguments"])
        assert refused["decision"] == "invalid"

    with_client(build_server(host_for(ws)), "auto", body, answers)
    assert answers.asked[0].requested_schema["properties"]["decision"]["enum"] == [
        "approve",
        "reject",
    ]
    assert list(read_run(ws.run_file("w48")).authorities) == []


RECORD_VERDICT = (
    "import json, sys; request = json.load(sys.stdin); "
    "open('VERDICT', 'w').write('accepted' if request['decision'] == 'approved' else 'no')"
)


@ERAS
@pytest.mark.parametrize("works", [True, False])
def test_a_configured_handler_applies_an_approved_gate(
    tmp_path: Path, mode: str, works: bool
) -> None:
    ws = workspace(tmp_path)
    code = RECORD_VERDICT if works else "import sys; sys.exit(3)"
    handlers = f'handlers:\n  desk.record-verdict: {{command: [{sys.executable}, -c, "{code}"]}}\n'
    ws.config.write_text(DESK_CONFIG + handlers, encoding="utf-8")
    (ws.root / "SUBMISSION.md").write_text("a patch\n", encoding="utf-8")
    answers = Answers()

    async def body(client: Any) -> None:
        review = await call(client, "run_start", {"run": "pr7"})
        assert review["route"]["node"] == "editorial-review"
        answers.add("accept", {"decision": "approve"})
        approved = await call(client, "gate_resolve", review["next"]["arguments"])
        assert approved["decision"] == "approved"
        handled = approved["handled"]
        assert handled["handler"] == "desk.record-verdict"
        if works:
            assert handled["status"] == "ok"
            assert handled["recorded"] == {
                "stateKey": "desk/editorial-review",
                "outcome": "completed",
            }
            # the handler wrote VERDICT, the verdict observer saw it: on to the next Gate
            assert approved["route"]["node"] == "legal-signoff"
        else:
            assert handled["status"] == "failed"
            assert "exited with 3" in handled["message"]
            assert approved["next"]["waitsFor"] == "user"
            assert "desk.record-verdict" in approved["next"]["say"]

    with_client(build_server(host_for(ws, manifest=REVIEW_DESK)), mode, body, answers)
    run = read_run(ws.run_file("pr7"))
    by_host = [
        e
        for e in run.events
        if e["type"] == "node.outcome-recorded" and e.get("node") == "desk/editorial-review"
    ]
    if works:
        assert [e["detail"]["reportedBy"] for e in by_host] == ["host"]
        assert by_host[0]["detail"]["handler"] == "desk.record-verdict"
        assert run.facts["review"]["verdict"] == "accepted"
    else:
        assert by_host == []
        assert not (ws.root / "VERDICT").exists()
