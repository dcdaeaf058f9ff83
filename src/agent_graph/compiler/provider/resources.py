"""Resource loading: Markdown frontmatter files and the three 0.3.1 descriptor protocols.

A ``.yaml``/``.yml``/``.json`` file whose ``schema`` names a descriptor identity is a
descriptor; anything else is read as Markdown with frontmatter (so a YAML file
without a descriptor identity fails with ``frontmatter-missing``, as in the
reference). The 0.2 identity ``agent-graph.resource.v1`` still loads, with a
warning, so Providers written for 0.2.x keep working until migrated.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from pathlib import Path
from typing import Any

from ... import codes
from ...documents import schema
from ...documents.paths import Origin, contained_file, portable
from ...documents.sources import read_markdown, read_structured
from ...errors import AgentGraphError, Diagnostic
from ...spelling import did_you_mean
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
    path = locate(root, reference, ("resource reference", "resource"), origin)
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
                        codes.RESOURCE_PROTOCOL_LEGACY,
                        f"Resource {value['id']} uses the 0.2 descriptor identity "
                        f"{LEGACY_RESOURCE}; 0.3 splits it into agent-graph.resource.file.v1 "
                        "and agent-graph.resource.graph-action.v1",
                        "warning",
                    )
                )
            is_view = protocol in ("graph-action", "host-action") or value["kind"] == "context-view"
            content = path
            if not is_view:
                content = locate(
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
        key = bad[1:]
        found = meta.get(key)
        said = f"{key} is missing" if found is None else f"{key} is {type_word(found)}"
        raise here.at(bad).fail(
            codes.RESOURCE_METADATA_INVALID,
            f"Resource {path} must declare string id, kind, and media-type; {said}",
        )
    if kind not in STATIC_KINDS:
        raise here.at("/kind").fail(
            codes.RESOURCE_KIND_INVALID,
            f"Static resource {path} has unsupported kind: {kind}"
            + did_you_mean(kind, STATIC_KINDS),
        )
    return LoadedResource(rid, kind, media, "markdown", path, rel, path, doc)


def type_word(value: object) -> str:
    """What a YAML value is, in words (``a number``, ``a list`` …)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return (
        "a list"
        if isinstance(value, list)
        else "a mapping"
        if isinstance(value, dict)
        else "not a string"
    )


# -- "did you mean" ------------------------------------------------------------------------


def locate(root: Path, reference: str, labels: tuple[str, str], origin: Origin) -> Path:
    """``contained_file``; a missing file whose name is close to an existing one says so.

    The code stays ``file-missing``; the message ends with "; did you mean <path>?" and
    the diagnostic's detail carries ``hint`` (that sentence) and ``suggestion`` (the path).
    """
    try:
        return contained_file(root, reference, labels, origin)
    except AgentGraphError as error:
        if error.code != codes.FILE_MISSING:
            raise
        suggestion = near_file(root, reference)
        if suggestion is None:
            raise
        raise hinted(error, suggestion) from None


def near_file(root: Path, reference: str) -> str | None:
    """An existing file under ``root`` spelled like ``reference``, as a reference, or None.

    Each segment that does not exist is replaced by the closest sibling name
    (``difflib.get_close_matches``: folders for folder segments, regular files for
    the last), so ``actions/publsh.yaml`` finds ``actions/publish.yaml`` and
    ``action/publish.yaml`` finds it too.
    """
    parts = [part for part in reference.replace("\\", "/").split("/") if part not in ("", ".")]
    current, out, changed = root, [], False
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == ".." or not os.path.isdir(current):
            return None
        here = current / part
        if not (here.is_file() if last else here.is_dir()) or os.path.islink(here):
            try:
                with os.scandir(current) as listing:
                    names = [
                        entry.name
                        for entry in listing
                        if (
                            entry.is_file(follow_symlinks=False)
                            if last
                            else entry.is_dir(follow_symlinks=False)
                        )
                    ]
            except OSError:
                return None
            found = _closest(part, names, last)
            if found is None:
                return None
            part, changed = found, True
        out.append(part)
        current = current / part
    return "/".join(out) if changed and out else None


def _closest(name: str, names: list[str], file: bool) -> str | None:
    """The sibling most like ``name``. Files compare by stem, so a shared extension
    does not make ``missing.yaml`` look like ``main.yaml``; a same-stem file with the
    same extension is preferred, then any extension (``publish.yml`` -> ``.yaml``)."""
    if not file:
        found = difflib.get_close_matches(name, names, n=1)
        return found[0] if found else None
    by_stem: dict[str, list[str]] = {}
    for candidate in sorted(names):
        by_stem.setdefault(Path(candidate).stem, []).append(candidate)
    stems = difflib.get_close_matches(Path(name).stem, list(by_stem), n=1)
    if not stems:
        return None
    suffix = Path(name).suffix
    same = [candidate for candidate in by_stem[stems[0]] if Path(candidate).suffix == suffix]
    return (same or by_stem[stems[0]])[0]


def hinted(error: AgentGraphError, suggestion: str) -> AgentGraphError:
    """``error`` with "; did you mean <suggestion>?" after its message and its diagnostics'
    (whose detail gains ``hint`` and ``suggestion``); the code is unchanged."""
    hint = f"did you mean {suggestion}?"
    diagnostics = [
        dataclasses.replace(
            d,
            message=f"{d.message}; {hint}",
            detail={**d.detail, "hint": hint, "suggestion": suggestion},
        )
        if d.code == error.code
        else d
        for d in error.diagnostics
    ]
    return AgentGraphError(error.code, f"{error.message}; {hint}", diagnostics)
