"""MCP resources: the static files of served Providers, and the shipped schemas.

``agent-graph://providers/<provider>/resources/<id>`` is a route's static resource
(procedure, Skill, schema, diagnostic) by the id routes name, with its digest in
``_meta``; ``agent-graph://schemas/<name>`` is a shipped JSON Schema. Only files a
Provider's compiled IR lists are served, never a path a client names. Runs and context
views (materialized per revision) are :mod:`.run_resources`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, unquote

from .. import codes
from ..errors import AgentGraphError

if TYPE_CHECKING:
    from ..vm import Program
    from .providers import ProviderSet

SCHEME: Final = "agent-graph://"

Static = tuple[str, str, str, str | None]  # id, media type, path (root-relative), digest


def static_files(program: Program) -> list[Static]:
    """Every static file a route may name: Resources with content, Skills, schemas."""
    found: dict[str, Static] = {}
    for resource in program.ir.resources:
        if resource.content is not None:
            found.setdefault(
                resource.id, (resource.id, resource.media_type, resource.content, resource.digest)
            )
    for action in program.ir.actions:
        for ref in (action.skill, action.input_schema, action.output_schema):
            if ref is not None and ref.error is None:
                found.setdefault(ref.id, (ref.id, ref.media_type, ref.path, ref.digest))
    return list(found.values())


def uri_of(provider: str, rid: str) -> str:
    return f"{SCHEME}providers/{quote(provider, safe='')}/resources/{quote(rid, safe='')}"


def listing(providers: ProviderSet) -> list[dict[str, Any]]:
    from ..documents.schema import SCHEMA_NAMES

    out = []
    for served in providers.served:
        if served.program is None or served.id is None:
            continue
        for rid, media, _, digest in static_files(served.program):
            item: dict[str, Any] = {"uri": uri_of(served.id, rid), "name": rid, "mimeType": media}
            if digest:
                item["_meta"] = {"digest": digest}
            out.append(item)
    out.extend(
        {
            "uri": f"{SCHEME}schemas/{name}",
            "name": f"schema {name}",
            "mimeType": "application/schema+json",
        }
        for name in SCHEMA_NAMES
    )
    return out


def read(providers: ProviderSet, uri: str) -> tuple[str, str]:
    """``(text, media type)`` of a listed resource; ``resource-missing`` otherwise."""
    text, media, _ = read_with_origin(providers, uri)
    return text, media


def read_with_origin(
    providers: ProviderSet, uri: str
) -> tuple[str, str, tuple[str, str, str | None] | None]:
    """:func:`read`, and ``(provider, id, digest)`` when it is a Provider's file (what the
    read ledger records)."""
    from ..documents.files import read_bytes

    rest = uri.removeprefix(SCHEME) if uri.startswith(SCHEME) else None
    parts = [unquote(p) for p in rest.split("/")] if rest is not None else []
    if len(parts) == 2 and parts[0] == "schemas":
        from ..documents.schema import SCHEMA_NAMES, schema_path

        if parts[1] in SCHEMA_NAMES:
            path = schema_path(parts[1])
            return read_bytes(path, parts[1]).decode("utf-8"), "application/schema+json", None
    if len(parts) == 4 and parts[0] == "providers" and parts[2] == "resources":
        served = providers.get(parts[1])
        assert served.program is not None
        for rid, media, rel, digest in static_files(served.program):
            if rid == parts[3]:
                path = served.program.root / rel
                origin = (served.program.provider_id, rid, digest)
                return read_bytes(path, rel).decode("utf-8", "replace"), media, origin
    raise AgentGraphError(codes.RESOURCE_MISSING, f"This server has no resource {uri}")
