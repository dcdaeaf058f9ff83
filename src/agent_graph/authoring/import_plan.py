"""What every importer shares (docs/import.md): the target Provider, refusals,
catalog and manifest updates, ``IMPORT_REPORT.md``, and the all-or-nothing commit.

The reference rewrites ``provider.yaml`` and the catalog by re-dumping them (and
re-sorting the catalog). Here both are edited in place (:mod:`.yaml_edits`): a new
graph path and new route reasons are inserted where the sorted order puts them, and
nothing else of the author's text changes. The result is compiled as a scratch copy
(:mod:`.verify`) before any file is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import codes
from ..canonical import locale_sort_key
from ..compiler import LoadedProvider
from ..compiler.provider.yaml_writer import provider_yaml
from ..documents.files import read_text
from ..documents.paths import Origin
from ..errors import AgentGraphError, Diagnostic
from .commit_journal import recover
from .staging import Stage
from .verify import compile_staged, load_checked
from .yaml_edits import YamlEditor

__all__ = ["ImportPlan", "ImportResult", "open_provider"]

MANIFEST = "provider.yaml"
REPORT = "IMPORT_REPORT.md"
REVIEW = "Review IMPORT_REPORT.md before relying on generated semantics."


@dataclass(frozen=True, slots=True)
class ImportResult:
    kind: str
    graph: Path  # the generated graph file (absolute)
    written: list[str]  # Provider-relative paths, sorted

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": "imported",
            "kind": self.kind,
            "graph": os.fspath(self.graph),
            "files": self.written,
        }


def open_provider(into: str | os.PathLike[str]) -> tuple[Path, LoadedProvider]:
    """The Provider to import into; it must exist and validate (so the result can be proved)."""
    root = Path(os.path.abspath(into))
    manifest = root / MANIFEST
    if not manifest.is_file():
        message = (
            f"Cannot read {manifest}: the import target has no {MANIFEST} "
            "(create a Provider there first with agc init)"
        )
        raise AgentGraphError(
            codes.FILE_READ_FAILED,
            message,
            [Diagnostic(codes.FILE_READ_FAILED, message, path=MANIFEST)],
        )
    recover(root)  # a killed import or migrate: undone before anything is read
    return root, load_checked(manifest)


def yaml_bytes(value: dict[str, Any]) -> bytes:
    return provider_yaml(value).encode("utf-8")


@dataclass(slots=True)
class ImportPlan:
    """The files one import adds and changes, staged in memory until :meth:`commit`."""

    kind: str
    root: Path
    provider: LoadedProvider
    graph_rel: str
    stage: Stage = field(init=False)
    reasons: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stage = Stage(self.root)

    def refuse_existing(self, rels: list[str]) -> None:
        for rel in rels:
            path = self.root / rel
            if os.path.lexists(path):
                message = f"Import refuses to replace existing content: {path}"
                raise AgentGraphError(
                    codes.IMPORT_TARGET_EXISTS,
                    message,
                    [Diagnostic(codes.IMPORT_TARGET_EXISTS, message, path=rel)],
                )

    def add_yaml(self, rel: str, value: dict[str, Any]) -> None:
        self.stage.put(rel, yaml_bytes(value))

    def add_reason(self, reason: str, summary: str) -> None:
        self.reasons.append((reason, summary))

    # -- updates of the author's files --------------------------------------------------

    def _update_catalog(self) -> None:
        catalog = self.provider.catalog
        if catalog is None or not self.reasons:
            return
        edits = YamlEditor(
            read_text(catalog.path, display=catalog.rel),
            display=catalog.rel,
            is_json=catalog.path.suffix.lower() == ".json",
        )
        entries: list[dict[str, Any]] = _loaded_member(edits, "codes")
        origin = Origin(catalog.rel, catalog.doc.source)
        for reason, summary in self.reasons:
            found = next((i for i, e in enumerate(entries) if e.get("code") == reason), None)
            if found is not None:
                if entries[found].get("kind") != "route-reason":
                    raise origin.at(f"/codes/{found}/kind").fail(
                        codes.ROUTE_REASON_CODE_KIND_INVALID, f"Code {reason} is not a route-reason"
                    )
                continue
            key = locale_sort_key(reason)
            index = next(
                (i for i, e in enumerate(entries) if locale_sort_key(str(e.get("code"))) > key),
                len(entries),
            )
            edits.insert_item(
                "/codes", index, {"code": reason, "kind": "route-reason", "summary": summary}
            )
        if edits.changed:
            self.stage.text(catalog.rel, edits.result(), based_on=edits.original)

    def _update_manifest(self) -> None:
        edits = YamlEditor(read_text(self.root / MANIFEST, display=MANIFEST), display=MANIFEST)
        graphs: list[str] = _loaded_member(edits, "graphs")
        if self.graph_rel in graphs:
            return
        index = next((i for i, g in enumerate(graphs) if _js_less(self.graph_rel, g)), len(graphs))
        edits.insert_item("/graphs", index, self.graph_rel)
        self.stage.text(MANIFEST, edits.result(), based_on=edits.original)

    def _append_report(self, heading: str, body: str) -> None:
        path = self.root / REPORT
        read = read_text(path, display=REPORT) if os.path.lexists(path) else None
        previous = "# Import report\n" if read is None else read
        text = f"{previous.rstrip()}\n\n## {heading}\n\n{body.strip()}\n"
        self.stage.text(REPORT, text, based_on=read)

    def commit(self, heading: str, body: str) -> ImportResult:
        """Update catalog, manifest and report, prove the result valid, write it all."""
        self._update_catalog()
        self._update_manifest()
        self._append_report(heading, body)
        existing = [self.provider.manifest_path, *self.provider.files]
        try:
            checked = compile_staged(self.root, MANIFEST, existing, self.stage)
        except AgentGraphError as error:
            message = f"The Provider would not validate after this import: {error.message}"
            raise AgentGraphError(codes.IMPORT_RESULT_INVALID, message, error.diagnostics) from None
        before = {(w.code, w.path, w.pointer) for w in self.provider.warnings}
        new = [w for w in checked.warnings if (w.code, w.path, w.pointer) not in before]
        if new:
            message = f"The imported files would load with a warning: {new[0].message}"
            raise AgentGraphError(codes.IMPORT_RESULT_INVALID, message, new)
        self.stage.preflight()
        written = self.stage.commit()
        return ImportResult(self.kind, self.root / self.graph_rel, sorted(written))


def _loaded_member(edits: YamlEditor, key: str) -> Any:
    """``key`` of a file read again to be edited; the Provider was loaded from it a moment
    ago, so a file without it now was saved meanwhile (an editor truncates first)."""
    value = edits.expected
    if not isinstance(value, dict) or not isinstance(value.get(key), list):
        from .commit_journal import conflict

        raise conflict(edits.display)
    return value[key]


def _js_less(left: str, right: str) -> bool:
    """``Array.prototype.sort``'s default order: UTF-16 code units."""
    return left.encode("utf-16-be") < right.encode("utf-16-be")
