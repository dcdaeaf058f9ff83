"""``agc init``: a starter Provider for protocol 0.3.1 that validates and passes its test.

The layout and refusals are the reference ``init``'s (docs/providers.md, "Start a
Provider"): one Graph ``main`` whose action node ``work`` delegates to an Agent Skill, a
procedure the route requires, a Code Catalog with the node's reason code and a graph
test. What 0.3.1 changed is written the 0.3.1 way: the compatibility range is ``^0.3.0``
(no Node.js range: this toolchain is not Node) and the procedure is an
``agent-graph.resource.file.v1`` descriptor beside its Markdown text, so ``agc
validate`` prints no warning and ``agc test`` passes straight away.

Nothing is replaced and nothing is left half-written (:mod:`.writes`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .. import codes
from ..errors import AgentGraphError
from . import editor
from .slug import slug
from .writes import check_targets, create_files

MANIFEST: Final = "provider.yaml"
TESTS: Final = "tests"
EDITORS: Final = ("vscode",)
#: The schema's limits: a longer id or name would make a Provider that does not validate.
ID_MAX: Final = 160
NAME_MAX: Final = 120
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")

_SKILL: Final = """\
---
name: getting-started
description: Do the current step of the main graph with what Agent Graph's route supplies.
metadata:
  agent-graph: path:../../provider.yaml
  agent-graph.graph: main
  agent-graph.entry: default
---

# Getting started

Evaluate the bound graph and resolve its primary route. Read every resource the route
marks `read-required` before you act, do exactly the step it names, then record an
explicit outcome for its `recordNode` and evaluate again.
"""

_PROCEDURE: Final = """\
# Procedure

Replace this text with what an Agent needs to know to do the work, and only then: a
route hands it over when it selects the step that requires it.
"""


def _documents(provider_id: str, name: str) -> dict[str, dict[str, Any]]:
    return {
        MANIFEST: {
            "schema": "agent-graph.provider.v1",
            "id": provider_id,
            "version": "0.1.0",
            "name": name,
            "graphs": ["graphs/main.yaml"],
            "catalogs": {"codes": "codes.yaml"},
            "compatibility": {"agentGraph": "^0.3.0"},
        },
        "graphs/main.yaml": {
            "schema": "agent-graph.graph.v1",
            "id": "main",
            "description": "Starter graph that delegates one action to an Agent Skill.",
            "entrypoints": {"default": "work"},
            "nodes": [
                {
                    "id": "work",
                    "kind": "action",
                    "action": "actions/work.yaml",
                    "description": "Perform the work",
                    "reasonCode": "route.main.work",
                    "resources": {"required": ["resources/procedure.yaml"]},
                },
                {"id": "done", "kind": "terminal", "terminalOutcome": "completed"},
            ],
            "edges": [{"from": "work", "to": "done", "outcomes": ["completed"]}],
        },
        "actions/work.yaml": {
            "schema": "agent-graph.action.v1",
            "id": "work",
            "runner": "agent",
            "effect": "write",
            "skill": "skills/getting-started/SKILL.md",
        },
        "resources/procedure.yaml": {
            "schema": "agent-graph.resource.file.v1",
            "id": "procedure.start",
            "kind": "procedure",
            "mediaType": "text/markdown",
            "path": "resources/procedure.md",
            "description": "How to do the work of the starter graph.",
        },
        f"{TESTS}/main.yaml": {
            "schema": "agent-graph.test.v1",
            "name": "starter route is actionable",
            "graph": "main",
            "entry": "default",
            "expect": {
                "statusCode": "actionable",
                "primaryNode": "work",
                "primaryReasonCode": "route.main.work",
                "requiredResources": ["skill.getting-started", "procedure.start"],
                "recordNode": "main/work",
            },
        },
        "codes.yaml": {
            "schema": "agent-graph.code-catalog.v1",
            "codes": [
                {
                    "code": "route.main.work",
                    "kind": "route-reason",
                    "summary": "The requested work is ready to perform.",
                    "document": "resources/procedure.yaml",
                }
            ],
        },
    }


_TEXTS: Final = {"skills/getting-started/SKILL.md": _SKILL, "resources/procedure.md": _PROCEDURE}


def starter_names() -> list[str]:
    """The files ``agc init`` writes (without ``--editor``), relative to the Provider root."""
    return [*_documents("x", "x"), *_TEXTS]


def starter_files(provider_id: str, name: str) -> dict[str, bytes]:
    """Every file of the starter Provider, relative to its root, in writing order."""
    from ..compiler.provider.yaml_writer import provider_yaml

    files = {
        rel: provider_yaml(doc).encode("utf-8")
        for rel, doc in _documents(provider_id, name).items()
    }
    files.update((rel, text.encode("utf-8")) for rel, text in _TEXTS.items())
    return files


def provider_id_of(raw: str) -> str:
    """The Provider id ``--id`` gives (the slug rule), refusing what would not validate."""
    if _LONE_SURROGATE.search(raw):
        raise AgentGraphError(codes.ID_INVALID, f"Cannot derive an id from {raw!r}: not UTF-8 text")
    provider_id = slug(raw)
    if len(provider_id) > ID_MAX:
        raise AgentGraphError(
            codes.ID_INVALID,
            f"The id {provider_id!r} is {len(provider_id)} characters; at most {ID_MAX}",
        )
    if len(raw) > NAME_MAX:
        raise AgentGraphError(
            codes.ID_INVALID,
            f"--id is {len(raw)} characters; the Provider's name (the id as given) holds at "
            f"most {NAME_MAX}",
        )
    return provider_id


@dataclass(frozen=True, slots=True)
class InitResult:
    root: Path
    manifest: Path
    provider_id: str
    files: tuple[str, ...]  # Provider-relative, as written
    editor: str | None


def _refuse_editor_aware(path: Path, why: str) -> AgentGraphError:
    message = f"Provider initialization refuses to replace existing content: {path}{why}"
    if path.name == "settings.json" and path.parent.name == ".vscode":
        message += "; add the yaml.schemas mapping of docs/editors.md to it yourself"
    return AgentGraphError(codes.PROVIDER_TARGET_EXISTS, message)


def init_provider(
    directory: str | os.PathLike[str], raw_id: str, *, editor_name: str | None = None
) -> InitResult:
    """Write the starter Provider into ``directory`` (created when missing).

    ``id-invalid`` when ``raw_id`` gives no usable id; ``provider-target-exists`` when any
    file it would write exists (nothing is written then); ``file-write-failed`` when the
    file system refuses (nothing is left behind).
    """
    provider_id = provider_id_of(raw_id)
    if editor_name is not None and editor_name not in EDITORS:
        raise AgentGraphError(
            codes.USAGE_INVALID, f"Unknown editor {editor_name!r}: {', '.join(EDITORS)}"
        )
    files = starter_files(provider_id, raw_id)
    if editor_name == "vscode":
        files.update(editor.vscode_files())
    root = Path(os.path.abspath(directory))
    try:
        create_files(root, files, _refuse_editor_aware)
    except OSError as error:
        raise AgentGraphError(
            codes.FILE_WRITE_FAILED,
            f"Cannot create the Provider in {root}: {error.strerror or error}",
        ) from None
    return InitResult(root, root / MANIFEST, provider_id, tuple(files), editor_name)


def would_init(directory: str | os.PathLike[str]) -> str | None:
    """The id ``agc init`` would be given for ``directory`` in a hint, or None when it would
    refuse there (a file it writes exists, or the directory is not one)."""
    root = Path(os.path.abspath(directory))
    try:
        provider_id = provider_id_of(root.name)
    except AgentGraphError:
        provider_id = "my-provider"
    try:
        check_targets(root, starter_names(), _refuse_editor_aware)
    except AgentGraphError:
        return None
    return provider_id
