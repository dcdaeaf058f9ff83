"""The checked Provider model the compiler builds from source files.

Definitions stay the parsed JSON values (dicts) the schemas validated; the
records add resolved absolute paths and what the checks derived.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...documents.sourcemap import Document
from ...errors import Diagnostic

ResourceProtocol = Literal["markdown", "file", "graph-action", "host-action", "legacy"]


@dataclass(slots=True)
class LoadedDefinition:
    """A schema-checked definition file: its id, absolute and Provider-relative path, document."""

    id: str
    path: Path
    rel: str
    doc: Document

    @property
    def definition(self) -> dict[str, Any]:
        value: dict[str, Any] = self.doc.value
        return value


class LoadedGraph(LoadedDefinition):
    __slots__ = ()


class LoadedAction(LoadedDefinition):
    __slots__ = ()


@dataclass(slots=True)
class LoadedResource:
    """A resource: ``path`` is the descriptor (or Markdown) file, ``content_path`` the content."""

    id: str
    kind: str
    media_type: str
    protocol: ResourceProtocol
    path: Path
    rel: str
    content_path: Path
    doc: Document

    @property
    def dynamic(self) -> bool:
        return self.protocol in ("graph-action", "host-action") or (
            self.protocol == "legacy" and self.kind == "context-view"
        )

    @property
    def metadata(self) -> dict[str, Any]:
        value: dict[str, Any] = self.doc.value
        return value


@dataclass(slots=True)
class LoadedCatalog:
    path: Path
    rel: str
    doc: Document
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    documents: dict[str, LoadedResource] = field(default_factory=dict)


@dataclass(slots=True)
class LoadedProvider:
    """Everything a valid Provider is made of, in the reference's load order."""

    manifest_path: Path
    root: Path
    manifest_doc: Document
    graphs: dict[str, LoadedGraph]
    actions: dict[Path, LoadedAction]
    resources: dict[Path, LoadedResource]
    catalog: LoadedCatalog | None
    files: dict[Path, None]  # insertion-ordered set of every reachable file
    graph_files: dict[str, dict[Path, None]]
    graph_dependencies: dict[str, list[str]]
    graph_digests: dict[str, str]
    digest: str
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def manifest(self) -> dict[str, Any]:
        value: dict[str, Any] = self.manifest_doc.value
        return value

    @property
    def id(self) -> str:
        return str(self.manifest["id"])

    @property
    def version(self) -> str:
        return str(self.manifest["version"])
