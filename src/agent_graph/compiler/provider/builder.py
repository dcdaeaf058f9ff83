"""``agc build``: a Provider as the reference's bundle layout, plus its compiled IR.

Layout (reference §6.2): every reachable file at its relative path, ``provider.yaml``
(the parsed manifest written back as YAML), ``manifest.json`` (``agent-graph.bundle.v1``)
and, ignored by the Node toolchain because they are not listed, ``ir/<hex>.agir`` and
``ir/binding.json`` (see :mod:`agent_graph.bundles.manifest`).

The IR is compiled from the bundle the build has just written, through the same
verifying loader every user of the bundle goes through (parts A and B of §6.4), so
the binding is only ever written for a bundle that loads, and for exactly the bytes
it contains.

Differences from the reference, each on the side of not losing anything:

* the destination is replaced only if it is absent, empty or a previous bundle that
  verifies and holds nothing else (the reference deletes whatever is there); anything
  else is ``build-output-exists``, naming the first foreign entry;
* the build happens in ``<dest>.tmp-<pid>-<ms>`` and is swapped in with two renames,
  so a failed build leaves the previous output as it was; what a killed build left is
  swept by the next one only when it is certainly ours (see "the output directory");
* the manifest text is checked for the source root too, and a reachable file that
  the bundle's own files would overwrite (``manifest.json``, ``provider.yaml``,
  ``ir/``, the build journal) is refused instead of silently replaced;
* action schema references are recorded by their normalised path (§6.2 defect).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import codes
from ...bundles import (
    BINDING_PATH,
    BUNDLE_SCHEMA,
    CATALOGS,
    IR_DIRECTORY,
    MANIFEST_NAME,
    PROVIDER_MANIFEST,
    binding_document,
    ir_path,
)
from ...bundles.trust import TrustStore
from ...canonical import (
    digest_value,
    js_sorted,
    locale_sorted,
)
from ...documents import schema
from ...documents.files import digest_file
from ...errors import AgentGraphError
from .build_output import JOURNAL, Journal, abandon, recover, replaceable, swap
from .bundle_check import catalog_entries, dependency_index, reachable_paths, skill_directories
from .model import LoadedProvider
from .yaml_writer import provider_yaml

__all__ = ["BuildResult", "build_bundle", "provider_yaml"]


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What a build wrote: ``manifest`` is the ``agent-graph.bundle.v1`` document."""

    destination: Path
    manifest: dict[str, Any]
    ir_path: str
    ir_digest: str

    @property
    def digest(self) -> str:
        return str(self.manifest["digest"])


def _within(parent: str, child: str) -> bool:
    rel = os.path.relpath(child, parent)
    return rel == "." or not (rel == ".." or rel.startswith(("../", "..\\")) or os.path.isabs(rel))


def _check_destination(provider: LoadedProvider, destination: Path) -> None:
    """§6.1: never the Provider root, never over a reachable source file (symlinks too)."""
    root = str(provider.root)
    sources = [str(path) for path in provider.files]
    targets = {str(destination), os.path.realpath(destination)}
    real_sources = [os.path.realpath(path) for path in sources]
    for target in targets:
        if target in (root, os.path.realpath(root)) or any(
            _within(target, path) for path in (*sources, *real_sources)
        ):
            raise AgentGraphError(
                codes.BUILD_OUTPUT_OVERLAPS_SOURCE,
                "Build output must not replace the provider root or any referenced source file",
            )


def _check_layout(sources: list[str]) -> None:
    """A reachable file must not sit where the bundle's own files go."""
    for rel in sources:
        own = (MANIFEST_NAME, PROVIDER_MANIFEST, JOURNAL)
        if rel in own or rel.startswith(IR_DIRECTORY + "/"):
            raise AgentGraphError(
                codes.BUILD_PATH_CONFLICT,
                f"Referenced file {rel} would be overwritten by the bundle's own "
                f"{rel.split('/')[0]}; rename it",
            )


def _check_leaks(provider: LoadedProvider, sources: list[str], manifest_text: str) -> None:
    """§6.1: no reachable file may carry the source root (it would not exist elsewhere)."""
    needle = os.fsencode(str(provider.root))
    for rel in locale_sorted(sources):
        if needle in (provider.root / rel).read_bytes():
            raise AgentGraphError(
                codes.BUILD_ABSOLUTE_PATH_LEAK,
                f"Referenced file contains the source Provider absolute path: {rel}",
            )
    if needle in manifest_text.encode("utf-8", "surrogatepass"):
        raise AgentGraphError(
            codes.BUILD_ABSOLUTE_PATH_LEAK,
            f"Referenced file contains the source Provider absolute path: "
            f"{os.path.basename(provider.manifest_path)}",
        )


def _write_json(path: Path, value: Any) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))


def _manifest(provider: LoadedProvider, working: Path, sources: list[str]) -> dict[str, Any]:
    """``agent-graph.bundle.v1`` over the files now in ``working`` (key order of §6.2)."""
    digests: dict[str, str] = {}

    def digest(rel: str) -> str:
        found = digests.get(rel)
        if found is None:
            found = digests[rel] = digest_file(working / rel)
        return found

    catalogs = catalog_entries(provider)
    unsigned: dict[str, Any] = {
        "schema": BUNDLE_SCHEMA,
        "provider": {"id": provider.id, "version": provider.version},
        "providerManifest": PROVIDER_MANIFEST,
    }
    for name in CATALOGS:
        unsigned[name] = [
            {"id": ident, "path": path, "digest": digest(path)} for ident, path in catalogs[name]
        ]
    unsigned["files"] = [
        {"path": path, "digest": digest(path)} for path in js_sorted([PROVIDER_MANIFEST, *sources])
    ]
    unsigned["graphDependencies"] = dependency_index(provider)
    return {**unsigned, "digest": digest_value(unsigned)}


def _compile_bundle(working: Path, manifest: dict[str, Any]) -> tuple[bytes, str, list[str]]:
    """Load the written bundle the way its users will and lower it: (IR, digest, dirs)."""
    from ...ir import codec
    from ..passes import run
    from .passes import new_state
    from .pipeline import PROVIDER_PASSES

    state = run(PROVIDER_PASSES, new_state(working / MANIFEST_NAME))
    assert state.provider is not None
    assert state.data is not None
    loaded, data = state.provider, state.data
    return data, codec.digest_of(data), skill_directories(loaded)


def build_bundle(
    provider: LoadedProvider, output: str | os.PathLike[str], *, trust: TrustStore | None = None
) -> BuildResult:
    """Write ``provider`` as a bundle at ``output`` (relative to the process directory).

    The IR is compiled from the bundle's own sources as written, so it is what they
    compile to by construction: ``trust`` (a host's store, docs/trust.md) records that,
    and the bundle's first load needs no second compile.
    """
    destination = Path(os.path.abspath(output))
    _check_destination(provider, destination)
    sources = reachable_paths(provider)
    _check_layout(sources)
    text = provider_yaml(provider.manifest)
    _check_leaks(provider, sources, text)
    recover(destination)
    previous = replaceable(destination)
    stamp = f"{os.getpid()}-{int(time.time() * 1000)}"
    working = destination.with_name(f"{destination.name}.tmp-{stamp}")
    journal: Journal | None = None
    created = False  # only a directory this build made is ever cleaned up
    try:
        working.parent.mkdir(parents=True, exist_ok=True)
        working.mkdir()
        created = True
        journal = Journal(working)
        for rel in sources:
            journal.add(rel)
            target = working / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(provider.root / rel, target)
            shutil.copymode(provider.root / rel, target)
        journal.add(PROVIDER_MANIFEST)
        (working / PROVIDER_MANIFEST).write_bytes(text.encode("utf-8", "surrogatepass"))
        manifest = _manifest(provider, working, sources)
        problem = schema.validate("bundle", manifest, path=MANIFEST_NAME)
        if problem is not None:  # pragma: no cover - the builder writes what the schema allows
            raise AgentGraphError(problem.code, problem.message, problem.diagnostics)
        if str(provider.root) in json.dumps(manifest, ensure_ascii=False):
            raise AgentGraphError(
                codes.BUILD_ABSOLUTE_PATH_LEAK,
                "Generated bundle contains the source provider absolute path",
            )
        journal.add(MANIFEST_NAME)
        _write_json(working / MANIFEST_NAME, manifest)
        data, ir_digest, directories = _compile_bundle(working, manifest)
        if os.fsencode(str(provider.root)) in data:  # pragma: no cover - lowering keeps it out
            raise AgentGraphError(
                codes.BUILD_ABSOLUTE_PATH_LEAK,
                "Compiled IR contains the source provider absolute path",
            )
        journal.add(ir_path(ir_digest))
        journal.add(BINDING_PATH)
        (working / IR_DIRECTORY).mkdir(exist_ok=True)
        (working / ir_path(ir_digest)).write_bytes(data)
        _write_json(
            working / BINDING_PATH, binding_document(manifest["digest"], ir_digest, directories)
        )
        journal.finish()  # from here the working directory is exactly the bundle
        swap(working, destination, previous)
        if trust is not None:
            trust.remember(manifest["digest"], ir_digest, directories)
    except OSError as exc:
        abandon(working, journal, created)
        raise AgentGraphError(
            codes.BUILD_WRITE_FAILED, f"Cannot write the bundle at {destination}: {exc}"
        ) from None
    except BaseException:
        abandon(working, journal, created)
        raise
    return BuildResult(destination, manifest, ir_path(ir_digest), ir_digest)
