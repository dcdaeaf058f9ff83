"""Resource loading: Markdown frontmatter files and the three 0.3.1 descriptor protocols.

A ``.yaml``/``.yml``/``.json`` file whose ``schema`` names a descriptor identity is a
descriptor; anything else is read as Markdown with frontmatter (so a YAML file
without a descriptor identity fails with ``frontmatter-missing``, as in the
reference). The 0.2 identity ``agent-graph.resource.v1`` still loads, with a
warning, so Providers written for 0.2.x keep working until migrated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...documents import schema
from ...documents.paths import Origin, contained_file, portable
from ...documents.sources import read_markdown, read_structured
from ...errors import AgentGraphError, Diagnostic
from .model import LoadedResource, ResourceProtocol

STATIC_KINDS = ("procedure", "diagnostic", "template", "schema", "skill")

LEGACY_RESOURCE = "agent-graph.resource.v1"
DESCRIPTORS: dict[str, tuple[str, ResourceProtocol]] = {
    "agent-graph.resource.file.v1": ("resource.file", "file"),
    "agent-graph.resource.graph-action.v1": ("resource.graph-action", "graph-action"),
    "agent-graph.resource.host-action.v1": ("resource.host-action", "host-action"),
    LEGACY_RESOURCE: ("resource", "legacy"),
}


def check_schema(name: str, value: Any, rel: str, doc_source: Any) -> None:
    """Raise the schema problem of ``value`` (all findings at once) if there is one."""
    problem = schema.validate(name, value, path=rel, source=doc_source)
    if problem is not None:
        raise AgentGraphError(problem.code, problem.message, problem.diagnostics)


def load_resource(
    root: Path, reference: str, origin: Origin, warnings: list[Diagnostic]
) -> LoadedResource:
    path = contained_file(root, reference, ("resource reference", "resource"), origin)
    rel = portable(root, path)
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        doc = read_structured(path, display=rel)
        value = doc.value
        identity = value.get("schema") if isinstance(value, dict) else None
        if isinstance(identity, str) and identity in DESCRIPTORS:
            schema_name, protocol = DESCRIPTORS[identity]
            check_schema(schema_name, value, rel, doc.source)
            if protocol == "legacy":
                warnings.append(
                    Origin(rel, doc.source, "/schema").diagnostic(
                        "resource-protocol-legacy",
                        f"Resource {value['id']} uses the 0.2 descriptor identity "
                        f"{LEGACY_RESOURCE}; 0.3 splits it into agent-graph.resource.file.v1 "
                        "and agent-graph.resource.graph-action.v1",
                        "warning",
                    )
                )
            is_view = protocol in ("graph-action", "host-action") or value["kind"] == "context-view"
            content = path
            if not is_view:
                content = contained_file(
                    root,
                    value["path"],
                    ("static resource content", "static resource content"),
                    Origin(rel, doc.source, "/path"),
                )
            return LoadedResource(
                value["id"], value["kind"], value["mediaType"], protocol, path, rel, content, doc
            )
    doc = read_markdown(path, display=rel)
    meta = doc.value
    rid, kind = meta.get("id"), meta.get("kind")
    media = meta.get("media-type", meta.get("mediaType", "text/markdown"))
    here = Origin(rel, doc.source, "")
    if not (isinstance(rid, str) and isinstance(kind, str) and isinstance(media, str)):
        bad = next(
            (p for p, v in (("/id", rid), ("/kind", kind)) if not isinstance(v, str)), "/media-type"
        )
        raise here.at(bad).fail(
            "resource-metadata-invalid",
            f"Resource {path} must declare string id, kind, and media-type",
        )
    if kind not in STATIC_KINDS:
        raise here.at("/kind").fail(
            "resource-kind-invalid", f"Static resource {path} has unsupported kind: {kind}"
        )
    return LoadedResource(rid, kind, media, "markdown", path, rel, path, doc)
