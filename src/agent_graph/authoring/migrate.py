"""``agc migrate``: rewrite a Provider written for 0.2.x to the 0.3.1 protocol, in place.

What changes mechanically (docs/migrate.md, "What changes"), each a targeted edit that keeps
every other byte of the file:

* §11.1 — a descriptor ``schema: agent-graph.resource.v1`` becomes
  ``agent-graph.resource.file.v1`` (a static file: ``path``) or
  ``agent-graph.resource.graph-action.v1`` (a context view: ``materializer``). The 0.2
  descriptor shape is exactly one of the two, so nothing else in the file changes;
* §11.9 — a ``compatibility.agentGraph`` range of the 0.2 line (``^0.2.0``, ``~0.2``,
  ``0.2.x`` …) becomes ``^0.3.0``.

What needs a person is reported as a *finding* (code, file, line), never guessed:
a compatibility range that excludes 0.3 but is not a plain 0.2 range, and any
mention of the 0.2 location envelope ``agent-graph.resource-location.v1`` (§11.2: a
schema or a document describing route output that 0.3 split in three).

The plan is made from the checked Provider (the compiler's legacy warnings say where
each 0.2 construct is); the edited files are compiled as a scratch copy before
anything is written, and written all-or-nothing.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .. import codes
from ..compiler.provider.versions import range_admits
from ..documents.files import read_text
from ..documents.paths import portable
from ..documents.sources import read_structured
from ..errors import AgentGraphError, Diagnostic
from .commit_journal import recover
from .staging import Stage
from .verify import LEGACY_WARNINGS, compile_staged, load_checked
from .yaml_edits import YamlEditor

__all__ = ["Change", "MigrationPlan", "plan_migration"]

LEGACY_RESOURCE: Final = "agent-graph.resource.v1"
FILE_RESOURCE: Final = "agent-graph.resource.file.v1"
VIEW_RESOURCE: Final = "agent-graph.resource.graph-action.v1"
LEGACY_LOCATION: Final = "agent-graph.resource-location.v1"
RANGE_03: Final = "^0.3.0"

# A range of the 0.2 line only: ^0.2, ~0.2.1, 0.2.x, =0.2.3, >=0.2.0 <0.3.0, each
# alternative of an ``||`` list
_ZERO_TWO: Final = re.compile(
    r"\s*(?:(?:\^|~|=)?\s*v?0\.2(?:\.(?:\d+|[xX*]))?(?:-[0-9A-Za-z.-]+)?"
    r"|>=?\s*v?0\.2(?:\.\d+)?\s+<\s*v?0\.3(?:\.0)?)\s*"
)
_TEXT_SUFFIXES: Final = frozenset({".yaml", ".yml", ".json", ".md", ".markdown", ".txt"})


@dataclass(frozen=True, slots=True)
class Change:
    """One rewritten value: file, position, JSON pointer, old and new text."""

    code: str
    path: str
    line: int
    pointer: str
    before: str
    after: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "pointer": self.pointer,
            "from": self.before,
            "to": self.after,
        }


@dataclass(slots=True)
class MigrationPlan:
    """What ``migrate`` would change (``texts``: Provider-relative path -> (old, new))."""

    root: Path
    manifest_rel: str
    changes: list[Change] = field(default_factory=list)
    findings: list[Diagnostic] = field(default_factory=list)
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Each changed file's text as read (byte order mark kept): it must still be so at write.
    read: dict[str, str] = field(default_factory=dict)
    existing: list[Path] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return sorted(self.texts)

    def diff(self) -> str:
        """A unified diff, ``a/``/``b/`` paths relative to the Provider root."""
        out: list[str] = []
        for rel in self.files:
            before, after = self.texts[rel]
            out.extend(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    fromfile=f"a/{rel}",
                    tofile=f"b/{rel}",
                )
            )
        return "".join(line if line.endswith("\n") else line + "\n" for line in out)

    def stage(self) -> Stage:
        stage = Stage(self.root)
        for rel, (_, after) in self.texts.items():
            stage.text(rel, after, based_on=self.read[rel])
        return stage

    def write(self) -> list[str]:
        """Apply the plan: every file or none. Returns the paths written."""
        stage = self.stage()
        stage.preflight()
        return stage.commit()

    def to_dict(self) -> dict[str, Any]:
        return {
            "changes": [c.to_dict() for c in self.changes],
            "files": self.files,
            "findings": [f.to_dict() for f in self.findings],
        }


def _refuse_bundle(manifest: Path) -> None:
    """A built bundle is output: migrate its sources and build again."""
    candidates = [manifest] if manifest.name == "manifest.json" else []
    candidates.append(manifest.parent / "manifest.json")
    for candidate in candidates:
        if not candidate.is_file():
            continue
        try:
            value = read_structured(candidate, display=candidate.name).value
        except AgentGraphError:
            value = None
        if candidate == manifest or (
            isinstance(value, dict) and "bundle" in str(value.get("schema"))
        ):
            message = (
                f"{manifest.parent} is a built bundle ({candidate.name}); migrate the Provider's "
                "sources and build the bundle again"
            )
            raise AgentGraphError(
                codes.MIGRATE_BUNDLE_REFUSED,
                message,
                [Diagnostic(codes.MIGRATE_BUNDLE_REFUSED, message, path=candidate.name)],
            )


def plan_migration(manifest: str | os.PathLike[str]) -> MigrationPlan:
    """Work out every edit (and finding) for the Provider of ``manifest``; writes nothing."""
    manifest_path = Path(os.path.abspath(manifest))
    _refuse_bundle(manifest_path)
    recover(manifest_path.parent)  # a killed migrate or import: undone before anything is read
    provider = load_checked(manifest_path)
    root = provider.root
    plan = MigrationPlan(root, portable(root, manifest_path))
    plan.existing = [manifest_path, *provider.files]
    editors: dict[str, YamlEditor] = {}

    def editor(rel: str) -> YamlEditor:
        if rel not in editors:
            path = root / rel
            editors[rel] = YamlEditor(
                read_text(path, display=rel),
                display=rel,
                is_json=path.suffix.lower() == ".json",
            )
        return editors[rel]

    _plan_compatibility(plan, editor, provider.manifest)
    for resource in provider.resources.values():
        if resource.protocol != "legacy":
            continue
        target = VIEW_RESOURCE if resource.kind == "context-view" else FILE_RESOURCE
        _change(plan, editor(resource.rel), codes.MIGRATE_RESOURCE_IDENTITY, "/schema", target)
    _find_location_envelopes(plan, root, plan.existing)
    for rel, edits in editors.items():
        if edits.changed:
            plan.texts[rel] = (edits.text, edits.result())
            plan.read[rel] = edits.original
    if plan.texts:
        _verify(plan)
    return plan


def _change(plan: MigrationPlan, edits: YamlEditor, code: str, pointer: str, after: str) -> None:
    span = edits.span(pointer)
    before = edits.text[span.start : span.end]
    edits.replace_scalar(pointer, after)
    line = edits.line_of(pointer)
    plan.changes.append(Change(code, edits.display, line, pointer, before, after))


def _plan_compatibility(plan: MigrationPlan, editor: Any, manifest: dict[str, Any]) -> None:
    compatibility = manifest.get("compatibility")
    declared = compatibility.get("agentGraph") if isinstance(compatibility, dict) else None
    if not isinstance(declared, str) or range_admits(declared, "0.3.0") is not False:
        return
    pointer = "/compatibility/agentGraph"
    edits = editor(plan.manifest_rel)
    if all(_ZERO_TWO.fullmatch(part) for part in declared.split("||")):
        _change(plan, edits, codes.MIGRATE_COMPATIBILITY_RANGE, pointer, RANGE_03)
        return
    message = (
        f"compatibility.agentGraph {declared!r} excludes protocol 0.3 but is not a plain 0.2 "
        f"range; decide which versions the Provider supports (0.3.1 Providers declare {RANGE_03!r})"
    )
    line = edits.line_of(pointer)
    plan.findings.append(
        Diagnostic(
            codes.MIGRATE_RANGE_MANUAL, message, "warning", plan.manifest_rel, line, None, pointer
        )
    )


def _find_location_envelopes(plan: MigrationPlan, root: Path, files: list[Path]) -> None:
    seen: set[Path] = set()
    for path in files:
        if path in seen or path.suffix.lower() not in _TEXT_SUFFIXES:
            continue
        seen.add(path)
        rel = portable(root, path)
        try:
            text = read_text(path, display=rel)
        except AgentGraphError:
            continue
        for match in re.finditer(re.escape(LEGACY_LOCATION), text):
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - text.rfind("\n", 0, match.start())
            message = (
                f"{rel} names the 0.2 location envelope {LEGACY_LOCATION}; 0.3 routes return "
                "agent-graph.resource-location.file.v1, .graph-action.v1 or .host-action.v1 "
                "envelopes: update what this file expects by hand"
            )
            plan.findings.append(
                Diagnostic(
                    codes.MIGRATE_LOCATION_ENVELOPE_MANUAL, message, "warning", rel, line, column
                )
            )


def _verify(plan: MigrationPlan) -> None:
    """The migrated Provider must compile and carry no legacy warning (else it is a bug)."""
    migrated = compile_staged(plan.root, plan.manifest_rel, plan.existing, plan.stage())
    left = [w for w in migrated.warnings if w.code in LEGACY_WARNINGS]
    manual = {f.pointer for f in plan.findings if f.code == codes.MIGRATE_RANGE_MANUAL}
    left = [w for w in left if w.pointer not in manual]
    if left:
        message = f"after migration {left[0].path} still has {left[0].code}; nothing was written"
        raise AgentGraphError(codes.YAML_EDIT_FAILED, message, left)
