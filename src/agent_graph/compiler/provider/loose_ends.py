"""Warnings for what loads but fails later: beyond the reference, which passes both.

* A Skill inside the Provider whose binding selects this Provider but a Graph or Entry
  it lacks validates, then ``inspect skill`` / ``evaluate --skill`` fail with
  ``skill-graph-missing`` / ``skill-entry-missing``. Here the same codes are warnings
  at ``validate``, placed at the binding's key in the SKILL.md.
* A ``runner: command`` Action whose command names a file inside the Provider that its
  ``files:`` does not list builds a bundle without that file, so the command fails
  wherever the bundle is installed (``action-file-unlisted``).

Warnings only, so every verdict stays the reference's.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

from ... import codes
from ...documents.files import read_text
from ...documents.paths import Origin, portable
from ...errors import AgentGraphError, Diagnostic
from .model import LoadedAction, LoadedGraph
from .skill_binding import read_skill_binding

#: Directories a Provider keeps no Skills in (tools' caches and vendored trees).
_SKIPPED_DIRECTORIES = frozenset({"node_modules", "__pycache__"})
#: A walk of a Provider larger than this many directories stops (an unrelated tree).
_DIRECTORY_LIMIT = 2000
_ROOT_VARIABLES = ("$AGENT_GRAPH_PROVIDER_ROOT/", "${AGENT_GRAPH_PROVIDER_ROOT}/")


def _skill_files(root: Path) -> Iterator[Path]:
    for seen, (directory, subdirectories, files) in enumerate(os.walk(root)):
        if seen >= _DIRECTORY_LIMIT:
            return
        subdirectories[:] = sorted(
            d for d in subdirectories if not d.startswith(".") and d not in _SKIPPED_DIRECTORIES
        )
        if "SKILL.md" in files:
            yield Path(directory, "SKILL.md")


def _selects_this_provider(locator: str, skill: Path, manifest: Path, provider_id: str) -> bool:
    if locator.startswith("provider:"):
        return locator[len("provider:") :] == provider_id
    if locator.startswith("path:"):
        target = os.path.normpath(skill.parent / locator[len("path:") :])
        return target == os.path.normpath(manifest)
    return False


def bound_skill_warnings(
    root: Path, manifest: Path, provider_id: str, graphs: Mapping[str, LoadedGraph]
) -> list[Diagnostic]:
    """A warning per Skill under ``root`` bound to this Provider's missing Graph or Entry."""
    out: list[Diagnostic] = []
    for skill in _skill_files(root):
        try:
            text = read_text(skill, display=str(skill))  # capped, as every source read
            if "agent-graph" not in text:
                continue  # no binding: spare the YAML parse
            binding = read_skill_binding(skill, text)
        except AgentGraphError:
            continue  # not a binding; what is wrong with it is not this check's to say
        if not _selects_this_provider(binding.locator, skill, manifest, provider_id):
            continue
        here = Origin(portable(root, skill), binding.origin.source)
        rel = here.path
        graph = graphs.get(binding.graph)
        if graph is None:
            known = ", ".join(sorted(graphs)) or "none"
            message = (
                f"Skill {rel} selects Graph {binding.graph}, which Provider {provider_id} "
                f"lacks (its Graphs: {known}); inspect skill and evaluate --skill will fail"
            )
            out.append(
                here.at("/metadata/agent-graph.graph").diagnostic(
                    codes.SKILL_GRAPH_MISSING, message, "warning"
                )
            )
        elif binding.entry not in graph.definition["entrypoints"]:
            known = ", ".join(sorted(graph.definition["entrypoints"]))
            message = (
                f"Skill {rel} selects Entry {binding.graph}#{binding.entry}, which Graph "
                f"{binding.graph} lacks (its entries: {known}); inspect skill and "
                "evaluate --skill will fail"
            )
            out.append(
                here.at("/metadata/agent-graph.entry").diagnostic(
                    codes.SKILL_ENTRY_MISSING, message, "warning"
                )
            )
    return out


def _named_files(command: str, cwd_is_root: bool) -> Iterator[str]:
    """The words of ``command`` that read as Provider-relative file paths."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return  # a command sh would refuse too; nothing to say about its files
    for word in words:
        for variable in _ROOT_VARIABLES:
            if word.startswith(variable):
                yield word[len(variable) :]
                break
        else:
            if cwd_is_root and "/" in word and not word.startswith(("-", "/", "~")):
                yield word.split("=", 1)[-1] if word.startswith("--") else word


def unlisted_file_warnings(
    root: Path, actions: Mapping[Path, LoadedAction], files_of: Mapping[Path, list[Path]]
) -> list[Diagnostic]:
    """A warning per file a command Action runs from the Provider but does not list."""
    out: list[Diagnostic] = []
    for action in actions.values():
        definition = action.definition
        command = definition.get("command")
        if definition.get("runner") != "command" or not isinstance(command, str):
            continue
        listed = {os.path.normpath(p) for p in files_of.get(action.path, ())}
        for name in _named_files(command, definition.get("cwd") == "provider"):
            target = os.path.normpath(root / name)
            inside = not os.path.relpath(target, root).startswith("..")
            if not inside or target in listed or not os.path.isfile(target):
                continue
            rel = portable(root, Path(target))
            message = (
                f"Action {action.id} runs {rel}, which its files: does not list; a bundle "
                f"leaves it out and the command fails where the bundle is installed "
                f"(add `- {rel}` under files:)"
            )
            here = Origin(action.rel, action.doc.source, "/command")
            out.append(here.diagnostic(codes.ACTION_FILE_UNLISTED, message, "warning"))
    return out
