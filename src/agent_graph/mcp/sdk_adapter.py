"""The one module that imports the ``mcp`` SDK (the ``agent-graph[mcp]`` extra).

It maps the low-level ``Server``'s requests onto :class:`~.host.Host` and nothing more:
``tools/list`` is the tool table, ``tools/call`` runs the host method on a worker thread
and wraps the result (:mod:`.results`). Keeping every SDK call here means a new SDK
major changes one file.

Both protocol eras are served by one stdio process, as the SDK dispatches them: a
handshake client (``initialize``, 2025-11-25) is asked about a Gate inside the call
(``elicitation/create``); a 2026-07-28 client gets an ``InputRequiredResult`` and retries
the call with the answer, the question bound in a ``requestState`` the SDK seals (AEAD,
ten minutes, bound to the tool and its arguments), so a forged or replayed state is
refused before the host sees it.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..errors import AgentGraphError
from ..protocol import __version__
from . import SERVER_NAME
from .flows import Consent, check_consent
from .gates import Ask
from .host import Client, Host
from .prompts import listing as prompt_listing
from .prompts import text as prompt_text
from .resources import listing as resource_listing
from .resources import uri_of
from .results import result_text, tool_error
from .run_resources import run_listing, view_uri

INSTRUCTIONS: Final = (
    "Agent Graph host. The loop: providers_list, run_start, then repeat run_status -> "
    "read the resources the route requires -> do the step -> run_record, and call "
    "gate_resolve whenever next.waitsFor is user. Flow Runs (flow_start) stop at Agent "
    "steps you do and answer with flow_answer. Every result starts with next: follow "
    "next.say and make the call in next.tool with next.arguments. You cannot set Facts "
    "(the host's observers do), hold authorities, or decide Gates (only the user does, "
    "through the form gate_resolve shows them); never run agc commands that would. The "
    "server never runs a route's command plan: run it with your own shell tool."
)
_CONNECTION_KEY: Final = "agent-graph.connection"


def _client(ctx: ServerRequestContext[Any, Any], host: Host) -> Client:
    """The caller, and a progress sink the host may call from its worker thread."""
    name = version = None
    # a 2026-07-28 request's clientInfo is made into client_params by the SDK too
    params = ctx.session.client_params
    if params is not None and params.client_info is not None:
        name, version = params.client_info.name, params.client_info.version
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    # an empty elicitation capability means form mode (the 2025-06-18 wording)
    form = elicitation is not None and (elicitation.form is not None or elicitation.url is None)

    def progress(done: float, total: float | None, message: str) -> None:
        # the host runs on a worker thread; the session lives on the event loop
        anyio.from_thread.run(ctx.session.report_progress, done, total, message)

    return Client(name, version, ctx.protocol_version, form, _connection(ctx, host), progress)


def _connection(ctx: ServerRequestContext[Any, Any], host: Host) -> str | None:
    """A token for the handshake connection this call came on (its delegations end with
    it); None for a 2026-07-28 call, whose connection is the one exchange."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    # the request context does not expose the connection; its session keeps it
    connection = getattr(ctx.session, "_connection", None)
    state = getattr(connection, "state", None)
    if not isinstance(state, dict):
        return None
    token = state.get(_CONNECTION_KEY)
    if token is None:
        token = state[_CONNECTION_KEY] = uuid.uuid4().hex
        assert connection is not None
        connection.exit_stack.callback(host.delegations.forget, token)
    return str(token)


def _links(result: Mapping[str, Any]) -> list[types.ContentBlock]:
    """``resource_link`` items for the static resources a route requires, so clients
    whose agents read MCP resources can fetch them (bodies are never inlined)."""
    route, run = result.get("route"), result.get("run")
    if not isinstance(route, Mapping) or not isinstance(run, Mapping):
        return []
    links: list[types.ContentBlock] = []
    for location in route["resources"]["required"]:
        if "filePath" in location:
            uri = uri_of(run["provider"], location["id"])
        elif "resourceId" in location.get("materialize", {}) and "revision" in location:
            uri = view_uri(run["run"], location["revision"], location["id"])  # a context view
        else:
            continue  # a host handler's resource: this server does not produce it
        links.append(
            types.ResourceLink(
                type="resource_link",
                uri=uri,
                name=location["id"],
                mime_type=location.get("mediaType"),
            )
        )
    return links


def _ok(result: Mapping[str, Any]) -> types.CallToolResult:
    try:
        text = result_text(result)
    except AgentGraphError as error:
        return _failed(error)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text), *_links(result)]
    return types.CallToolResult(content=content, structured_content=dict(result))


def _failed(error: AgentGraphError) -> types.CallToolResult:
    found = tool_error(error)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=found.text)], is_error=True
    )


def build_server(host: Host) -> Server[Any]:
    tools = [types.Tool.model_validate(tool.listing()) for tool in host.tools]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if host.tool(params.name) is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        client = _client(ctx, host)
        try:
            if params.name == "gate_resolve":
                return await _gate(ctx, params, client)
            if params.name in ("flow_start", "flow_control"):
                return await _consented(ctx, params, client)
            result = await anyio.to_thread.run_sync(
                host.call, params.name, params.arguments, client
            )
        except AgentGraphError as error:
            return _failed(error)
        return _ok(result)

    async def _gate(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams, client: Client
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and params.request_state is not None:
            answer = (params.input_responses or {}).get("gate")
            action, content = (
                (answer.action, answer.content)
                if isinstance(answer, types.ElicitResult)
                else ("unavailable", None)
            )
            resumed = await anyio.to_thread.run_sync(
                host.gate_resume, arguments, params.request_state, action, content, client
            )
            return _ok(resumed)
        found = await anyio.to_thread.run_sync(host.gate_begin, arguments, client)
        if not isinstance(found, Ask):
            return _ok(found)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(
                    message=found.message, requested_schema=dict(found.schema)
                )
            )
            return types.InputRequiredResult(
                input_requests={"gate": request}, request_state=found.state()
            )
        try:
            reply = await ctx.session.elicit_form(
                found.message, dict(found.schema), related_request_id=ctx.request_id
            )
            action, content = reply.action, reply.content
        except MCPError as error:
            print(f"agc mcp serve: elicitation failed: {error}", file=sys.stderr)
            action, content = "unavailable", None
        finished = await anyio.to_thread.run_sync(
            host.gate_finish, arguments, found, action, content, client
        )
        return _ok(finished)

    async def _consented(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams, client: Client
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A Flow tool that may run commands: ask the user first when the host says so."""
        arguments = params.arguments
        ask = await anyio.to_thread.run_sync(host.consent_begin, params.name, arguments)
        consent: Consent | None = None
        if ask is not None and client.elicitation:
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(
                    message=ask.message, requested_schema=ask.schema
                )
            )
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                answer = (params.input_responses or {}).get("consent")
                # a state sealed for another fingerprint (the Flow changed): ask again
                if params.request_state != ask.state() or not isinstance(
                    answer, types.ElicitResult
                ):
                    return types.InputRequiredResult(
                        input_requests={"consent": request}, request_state=ask.state()
                    )
                consent = check_consent(ask, answer.action, answer.content)
            else:
                try:
                    reply = await ctx.session.elicit_form(
                        ask.message, ask.schema, related_request_id=ctx.request_id
                    )
                    consent = check_consent(ask, reply.action, reply.content)
                except MCPError as error:
                    print(f"agc mcp serve: elicitation failed: {error}", file=sys.stderr)
        result = await anyio.to_thread.run_sync(host.call, params.name, arguments, client, consent)
        return _ok(result)

    prompts = [
        types.Prompt.model_validate(p)
        for p in prompt_listing(host.providers, flows=host.flows is not None)
    ]

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            body = prompt_text(
                host.providers, params.name, params.arguments or {}, flows=host.flows is not None
            )
        except AgentGraphError as error:
            raise MCPError(code=types.INVALID_PARAMS, message=error.message) from None
        message = types.PromptMessage(
            role="user", content=types.TextContent(type="text", text=body)
        )
        return types.GetPromptResult(messages=[message])

    resources = [types.Resource.model_validate(r) for r in resource_listing(host.providers)]

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # Runs come and go: listed as they are now
        found = run_listing(await anyio.to_thread.run_sync(host.run_handles))
        if host.flows is not None:
            found += await anyio.to_thread.run_sync(host.flows.resources)
        more = [types.Resource.model_validate(r) for r in found]
        return types.ListResourcesResult(resources=[*resources, *more])

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            text, media = await anyio.to_thread.run_sync(
                host.read_resource, params.uri, _client(ctx, host)
            )
        except AgentGraphError as error:
            raise MCPError(code=types.INVALID_PARAMS, message=error.message) from None
        contents = types.TextResourceContents(uri=params.uri, mime_type=media, text=text)
        return types.ReadResourceResult(contents=[contents])

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    # seals the Gate question of a 2026-07-28 call; the key lives in this process only,
    # so a question asked before a restart is asked again
    security = RequestStateSecurity.ephemeral()
    server.middleware.append(RequestStateBoundary(security, default_audience=SERVER_NAME))
    return server


def serve_stdio(host: Host) -> None:
    """Serve one client over stdin/stdout until stdin closes."""
    server = build_server(host)

    async def main() -> None:
        # stdio_server points fd 1 at stderr while serving: a stray print (ours or an
        # observer's) cannot corrupt the protocol stream
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    import signal

    def terminated(signum: int, frame: Any) -> None:
        raise SystemExit(0)  # through the finally below, like stdin closing

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        anyio.run(main)
    finally:
        # Flow Runs are recorded interrupted, to resume after a restart
        host.shutdown(kill=True)
        signal.signal(signal.SIGTERM, previous)


def round_trip(host: Host) -> dict[str, list[str]]:
    """``tools/list`` through the SDK's in-memory client in both eras: era -> names."""
    from mcp import Client

    server = build_server(host)
    found: dict[str, list[str]] = {}

    async def main() -> None:
        for mode in ("legacy", "auto"):
            async with Client(server, mode=mode) as client:
                listed = await client.list_tools()
                found[client.protocol_version] = [tool.name for tool in listed.tools]

    anyio.run(main)
    return found


def _bearer(app: Any, token: str) -> Any:
    """The app behind a bearer token: any local process can reach a loopback port, so a
    request must show the token the server wrote to its token file (401 otherwise)."""
    import hmac

    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": b'{"error":"unauthorized"}'})
                return
        await app(scope, receive, send)

    return guarded


def serve_http(host: Host, address: str, port: int, token: str) -> None:
    """Serve Streamable HTTP on a loopback ``address`` until interrupted.

    The bound address is printed on stderr (``--http 127.0.0.1:0`` picks a free port).
    Host and Origin headers must name a loopback address (the SDK's DNS-rebinding check;
    403 otherwise) and every request must carry the bearer token.
    """
    import socket

    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(host)
    loopback = ["127.0.0.1", "localhost", "[::1]"]
    shown = f"[{address}]" if ":" in address else address
    if shown not in loopback:
        loopback.append(shown)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in loopback],
        allowed_origins=[f"http://{name}:*" for name in loopback],
    )
    app = server.streamable_http_app(host=address, transport_security=security)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(128)  # before the address is printed: a client may connect at once
    bound = listener.getsockname()[1]
    config = uvicorn.Config(_bearer(app, token), log_level="warning", lifespan="on")
    print(f"agc mcp serve: listening on http://{shown}:{bound}/mcp", file=sys.stderr, flush=True)
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        host.shutdown(kill=True)
