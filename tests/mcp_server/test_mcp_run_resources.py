"""MCP resources of Graph Runs: events, explain, picture, context views by revision, and
read receipts for what this server served and the agent says it still holds.

In process through the SDK's in-memory client, both eras, on the context-views example
(a static schema file and a context view whose materializer prints the workspace status).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from agent_graph.mcp.host import Host, ServeOptions
from agent_graph.mcp.sdk_adapter import build_server
from mcp_support import ROOT, with_client

ERAS = pytest.mark.parametrize("mode", ["legacy", "auto"])
VIEWS = ROOT / "examples" / "context-views"
VIEW, STATIC = "acme.workspace-status", "schema.status.note"


def host(tmp_path: Path, *, runs: bool = True) -> Host:
    work = tmp_path / "ws"
    work.mkdir(exist_ok=True)
    return Host(
        ServeOptions(
            manifests=(str(VIEWS),),
            runs=str(tmp_path / "runs") if runs else None,
            workspaces=(str(work),),
            tools="all",
        )
    )


async def call(client: Any, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content, result


async def text_of(client: Any, uri: str) -> str:
    found = await client.read_resource(uri)
    (content,) = found.contents
    return str(content.text)


def read_states(route: dict[str, Any]) -> dict[str, str]:
    kinds = route["resources"]["required"] + route["resources"]["recommended"]
    return {location["id"]: location["readState"] for location in kinds}


@ERAS
@pytest.mark.parametrize("runs", [True, False])
def test_run_events_explain_and_picture(tmp_path: Path, mode: str, runs: bool) -> None:
    async def body(client: Any) -> None:
        started, _ = await call(client, "run_start", {"run": "s1"})
        listed = {r.uri for r in (await client.list_resources()).resources}
        base = "agent-graph://runs/s1/"
        assert {base + "events", base + "explain", base + "picture"} <= listed
        events = json.loads(await text_of(client, base + "events"))
        assert events["run"] == started["run"]["id"]
        assert [e["type"] for e in events["events"]][:1] == ["run.started"]
        explained = json.loads(await text_of(client, base + "explain"))
        assert {n["node"] for n in explained["nodes"]} >= {"summarize", "check-note"}
        picture = await text_of(client, base + "picture")
        assert picture.startswith("flowchart TD\n")
        assert started["evaluation"]["revision"] in picture  # drawn with the Run's evaluation
        assert "summarize<br/>pending<br/>▶ next" in picture
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError, match="no Run nope"):
            await client.read_resource("agent-graph://runs/nope/events")
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource("agent-graph://runs/s1/secrets")

    with_client(build_server(host(tmp_path, runs=runs)), mode, body)


@ERAS
def test_views_by_revision_and_read_receipts(tmp_path: Path, mode: str) -> None:
    from mcp.shared.exceptions import MCPError

    async def body(client: Any) -> None:
        started, raw = await call(client, "run_start", {"run": "s1"})
        route = started["route"]
        assert route["node"] == "summarize"
        revision = route["revision"]
        links = {c.name: str(c.uri) for c in raw.content if c.type == "resource_link"}
        view_uri = links[VIEW]
        assert view_uri.startswith("agent-graph://runs/s1/views/")
        # nothing read yet: claiming to hold both marks neither current
        held = {"run": "s1", "inContext": [VIEW, STATIC]}
        routed, _ = await call(client, "graph_route", held)
        assert read_states(routed["route"])[VIEW] == "read-required"
        assert read_states(routed["route"])[STATIC] == "read-required"
        assert "# Workspace status" in await text_of(client, view_uri)
        static = f"agent-graph://providers/example.context-views/resources/{STATIC}"
        assert '"$schema"' in await text_of(client, static)
        routed, _ = await call(client, "graph_route", held)
        assert read_states(routed["route"])[VIEW] == "current"
        assert read_states(routed["route"])[STATIC] == "current"
        # served but no longer held: not current
        routed, _ = await call(client, "graph_route", {"run": "s1", "inContext": [STATIC]})
        assert read_states(routed["route"])[VIEW] == "read-required"
        # the Run moves on: the view of the old revision is not served
        record = {
            "run": "s1",
            "recordNode": "status/summarize",
            "outcome": "blocked",
            "revision": revision,
            "sequence": started["run"]["sequence"],
        }
        moved, _ = await call(client, "run_record", record)
        assert moved["evaluation"]["revision"] != revision
        with pytest.raises(MCPError, match="moved on"):
            await client.read_resource(view_uri)

    with_client(build_server(host(tmp_path)), mode, body)


@ERAS
def test_resource_read_counts_as_served(tmp_path: Path, mode: str) -> None:
    async def body(client: Any) -> None:
        started, _ = await call(client, "run_start", {"run": "s1"})
        read, _ = await call(client, "resource_read", {"run": "s1", "id": VIEW})
        assert read["resource"]["revision"] == started["evaluation"]["revision"]
        assert "# Workspace status" in read["text"]
        routed, _ = await call(client, "graph_route", {"run": "s1", "inContext": [VIEW]})
        assert read_states(routed["route"])[VIEW] == "current"

    with_client(build_server(host(tmp_path)), mode, body)


@pytest.mark.parametrize("how", ["view", "resource_read"])
def test_a_view_edited_in_the_cache_is_not_served_nor_marked_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Issue 27: the cached output is checked against its receipt when it is read back;
    here it is edited between the materialization and the read."""
    from mcp.shared.exceptions import MCPError

    import agent_graph.materialize as materialize_module

    real = materialize_module.materialize

    def then_edited(*args: Any, **kwargs: Any) -> Any:
        done = real(*args, **kwargs)
        Path(done.file_path).write_text("# Workspace status\nforged\n", encoding="utf-8")
        return done

    monkeypatch.setattr(materialize_module, "materialize", then_edited)

    async def body(client: Any) -> None:
        _, raw = await call(client, "run_start", {"run": "s1"})
        if how == "view":
            links = {c.name: str(c.uri) for c in raw.content if c.type == "resource_link"}
            with pytest.raises(MCPError, match="changed after it was written"):
                await client.read_resource(links[VIEW])
        else:
            result = await client.call_tool("resource_read", {"run": "s1", "id": VIEW})
            assert result.is_error
            assert "materialization-changed" in result.content[0].text
        routed, _ = await call(client, "graph_route", {"run": "s1", "inContext": [VIEW]})
        assert read_states(routed["route"])[VIEW] == "read-required"

    with_client(build_server(host(tmp_path)), "auto", body)
