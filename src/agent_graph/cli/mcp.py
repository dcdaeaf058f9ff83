"""``agc mcp serve|config|check``: the MCP server, its client snippets and a self-test.

Only ``serve`` (and ``check``'s round trip, when the extra is there) imports the ``mcp``
SDK, through :mod:`agent_graph.mcp.sdk_adapter`; without the ``agent-graph[mcp]`` extra
``serve`` fails with ``mcp-sdk-missing`` and the install command. Everything the server
does is in docs/mcp.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

import click

from .. import codes
from ..errors import AgentGraphError
from .options import format_option

F = TypeVar("F", bound=Callable[..., Any])


def serve_options(func: F) -> F:
    """The options ``serve``, ``config`` and ``check`` share."""
    options = [
        click.option(
            "-m",
            "--manifest",
            "manifests",
            multiple=True,
            metavar="MANIFEST",
            help="A Provider to serve (repeatable).",
        ),
        click.option(
            "--skill", "skills", multiple=True, metavar="SKILL.md", help="A Skill binding to serve."
        ),
        click.option(
            "--registry", default=None, metavar="FILE", help="Host registry of Providers."
        ),
        click.option(
            "--flows",
            "flows",
            multiple=True,
            metavar="DIR",
            help="Serve the Flow packages under DIR (repeatable; the Flow tools need --runs).",
        ),
        click.option(
            "--runs",
            default=None,
            metavar="DIR",
            help="Keep Runs as files in DIR/graph/ and DIR/flow/ (shared with agc run and "
            "agc flow); default: Graph Runs in memory, no Flow tools.",
        ),
        click.option(
            "--workspace",
            "workspaces",
            multiple=True,
            metavar="DIR",
            help="Directories Runs work in (default: the working directory).",
        ),
        click.option(
            "--config",
            default=None,
            metavar="FILE",
            help="agent-graph.mcp-config.v1: observers and Gate policy.",
        ),
        click.option(
            "--tools",
            default=None,
            metavar="core|flows|all|LIST",
            help="Which tools to offer (a comma-separated list names them); default: flows "
            "with --flows, else core.",
        ),
        click.option(
            "--read-only", is_flag=True, default=False, help="Offer only read-only tools."
        ),
        format_option,  # shapes errors and check's report; the server itself speaks MCP
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _globals(local: dict[str, Any]) -> dict[str, Any]:
    """``local`` with the global options given before ``mcp`` (``agc -m X mcp serve``):
    a Provider named there is served as if named after ``serve``, first; ``--registry``
    and ``--format`` after ``serve`` win, as for every other command."""
    root: dict[str, Any] = click.get_current_context().find_root().obj or {}
    merged = dict(local)
    if root.get("manifest"):
        merged["manifests"] = (root["manifest"], *local["manifests"])
    if root.get("skill"):
        merged["skills"] = (root["skill"], *local["skills"])
    if local.get("registry") is None:
        merged["registry"] = root.get("registry")
    if "fmt" in local and local["fmt"] is None:
        merged["fmt"] = root.get("fmt")
    return merged


def _options(local: dict[str, Any]) -> Any:
    from ..mcp.host import ServeOptions

    local = _globals(local)
    return ServeOptions(
        manifests=tuple(local["manifests"]),
        skills=tuple(local["skills"]),
        registry=local["registry"],
        runs=local["runs"],
        workspaces=tuple(local["workspaces"]),
        config=local["config"],
        tools=local["tools"] or ("flows" if local["flows"] else "core"),
        read_only=local["read_only"],
        flows=tuple(local["flows"]),
    )


def sdk_adapter() -> ModuleType:
    """The adapter module, or ``mcp-sdk-missing`` when the SDK is not installed."""
    from ..mcp import INSTALL_HINT

    try:
        from ..mcp import sdk_adapter as adapter
    except ImportError as error:
        missing = error.name or ""
        if missing.split(".")[0] in ("mcp", "mcp_types", "anyio", "pydantic"):
            raise AgentGraphError(
                codes.MCP_SDK_MISSING,
                f"agc mcp needs the MCP SDK, which is not installed ({missing}): {INSTALL_HINT}",
            ) from None
        raise
    return adapter


@click.group("mcp")
def mcp_group() -> None:
    """Serve Providers to MCP clients (Claude Code, Codex, VS Code, Cursor)."""


def _http(address: str | None, token_file: str | None) -> tuple[str, int] | None:
    """``--http HOST:PORT`` on a loopback address, with ``--token-file``; None for stdio."""
    import ipaddress

    if address is None:
        if token_file is not None:
            raise AgentGraphError(codes.MCP_HTTP_INVALID, "--token-file goes with --http")
        return None
    name, _, port = address.rpartition(":")
    name = name.strip("[]")
    try:
        loopback = name == "localhost" or ipaddress.ip_address(name).is_loopback
        number = int(port)
    except ValueError:
        loopback, number = False, -1
    if not loopback or not 0 <= number <= 65535:
        raise AgentGraphError(
            codes.MCP_HTTP_INVALID,
            f"--http takes a loopback HOST:PORT (127.0.0.1:8765, [::1]:0), not {address}: "
            "this server is for the user's own clients",
        )
    if token_file is None:
        raise AgentGraphError(
            codes.MCP_HTTP_INVALID, "--http needs --token-file FILE, where the bearer token goes"
        )
    return name, number


def _write_token(path: str) -> str:
    """A fresh bearer token in ``path``, readable by its owner only."""
    import os
    import secrets

    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode otherwise
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    return token


@mcp_group.command("serve")
@serve_options
@click.option(
    "--http",
    "http_address",
    default=None,
    metavar="HOST:PORT",
    help="Serve Streamable HTTP on a loopback address instead of stdio (port 0: any free).",
)
@click.option(
    "--token-file",
    default=None,
    metavar="FILE",
    help="With --http: where to write the bearer token clients must send (mode 0600).",
)
def mcp_serve_command(http_address: str | None, token_file: str | None, **local: Any) -> None:
    """Serve over stdio (stdout carries only MCP messages, logs go to stderr), or --http."""
    from ..mcp.host import Host

    http = _http(http_address, token_file)
    adapter = sdk_adapter()
    host = Host(_options(local))
    if local["flows"] and host.flows is None:
        click.echo("agc mcp serve: --flows needs --runs DIR; no Flow tools are offered", err=True)
    for served in host.providers.served:
        if served.error is not None:
            click.echo(
                f"agc mcp serve: {served.option} {served.label} did not load "
                f"({served.error.code}: {served.error.message})",
                err=True,
            )
    if http is None:
        adapter.serve_stdio(host)
        return
    assert token_file is not None
    adapter.serve_http(host, http[0], http[1], _write_token(token_file))


@mcp_group.command("config")
@click.argument("client", type=click.Choice(["claude", "codex", "vscode", "cursor", "desktop"]))
@serve_options
@click.option(
    "--http",
    "http_address",
    default=None,
    metavar="HOST:PORT",
    help="For a server the user starts with --http (a fixed port) instead of stdio.",
)
@click.option("--token-file", default=None, metavar="FILE", help="With --http: its token file.")
def mcp_config_command(
    client: str, http_address: str | None, token_file: str | None, **local: Any
) -> None:
    """Print the snippet that adds this server to CLIENT's configuration."""
    from ..mcp.client_config import http_snippet, snippet

    options = _options(local)
    if options.tools not in ("core", "flows"):
        from ..mcp.tools import select_tools

        select_tools(options.tools, read_only=options.read_only)
    http = _http(http_address, token_file)
    if http is None:
        click.echo(snippet(client, options.words()), nl=False)
        return
    assert http_address is not None
    assert token_file is not None
    if http[1] == 0:
        raise AgentGraphError(
            codes.MCP_HTTP_INVALID, "agc mcp config --http needs a fixed port, not 0"
        )
    shown = f"[{http[0]}]" if ":" in http[0] else http[0]
    words = [*options.words(), "--http", http_address, "--token-file", token_file]
    url = f"http://{shown}:{http[1]}/mcp"
    click.echo(http_snippet(client, words, url, token_file), nl=False)


@mcp_group.command("check")
@serve_options
def mcp_check_command(fmt: str | None, **local: Any) -> None:
    """List the tools and check every schema in process (and through the SDK if installed)."""
    from ..mcp.check import check

    fmt = _globals({**local, "fmt": fmt})["fmt"]
    report = check(_options(local), sdk=_optional_adapter())
    if fmt == "json":
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        for tool in report["tools"]:
            hints = "read-only" if tool["readOnly"] else "writes"
            click.echo(f"{tool['name']:<16} {hints:<9} {tool['bytes']:>5} B  {tool['title']}")
        click.echo(f"Tool list: {report['listBytes']} bytes (budget {report['listBudget']})")
        for line in [*report["providers"], *report["flows"]]:
            click.echo(line)
        click.echo(f"SDK round trip: {report['sdk']}")
        for problem in report["problems"]:
            click.echo(f"ERROR {problem}", err=True)
    if report["problems"]:
        click.get_current_context().exit(1)  # main() turns it into the exit code


def _optional_adapter() -> ModuleType | None:
    try:
        return sdk_adapter()
    except AgentGraphError:
        return None
