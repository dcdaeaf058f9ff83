"""Built bundles: verifying ``manifest.json`` (reference §6.4) and the IR bound to it.

A bundle is ``manifest.json`` (``agent-graph.bundle.v1``, exactly the reference's
shape), ``provider.yaml``, the Provider's reachable files, and, when ``agc`` built
it, two more files the reference ignores because they are not listed:

* ``ir/<hex>.agir`` — the compiled IR (its SHA-256 is ``<hex>``);
* ``ir/binding.json`` — ``agc.bundle-ir.v1``: the manifest digest the IR was compiled
  from, the IR's path and digest, the Skill directories whose listing is part of the
  reachable file set, and a digest over all of that.

Part A (:func:`verify_manifest`) checks the manifest before the Provider is read:
schema, manifest digest, every listed file (containment, symlinks, digest), catalog
entries against the file list, the Provider manifest listed. Part B
(``compiler.provider.bundle_check``) compares catalogs, the file set and the dependency
index with a loaded Provider. :func:`verify_ir` checks the binding and the IR.

Why the IR is not trusted on the manifest's word: the manifest digest pins every
source file, but the IR and its binding are not listed, and the binding's digest is
unkeyed, so anyone who can replace the IR can rebind it. An IR is used only when
compiling the sources yields exactly its bytes, a verdict a host may keep in a
:class:`~agent_graph.bundles.trust.TrustStore` (``docs/trust.md``). The one input that
is not file bytes is the listing of Skill directories (a Skill in its own directory
brings every file in it); the binding names those directories and the fast path
lists them again.

This package is on the cold path of ``agent_graph.compile_provider``: it imports
neither yaml nor jsonschema unless a check fails and a positioned error is needed,
and it never imports the compiler or the VM. Part B needs a loaded Provider and
lives with the compiler (``compiler.provider.bundle_check``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import codes
from ..canonical import digest_value, is_digest
from ..documents.files import digest_file
from ..documents.paths import Origin, ensure_file, is_absolute_reference, resolve_contained
from ..documents.sourcemap import SourceMap
from ..errors import AgentGraphError

if TYPE_CHECKING:
    pass

BUNDLE_SCHEMA = "agent-graph.bundle.v1"
BINDING_SCHEMA = "agc.bundle-ir.v1"
IR_DIRECTORY = "ir"
BINDING_PATH = "ir/binding.json"
MANIFEST_NAME = "manifest.json"
PROVIDER_MANIFEST = "provider.yaml"
CATALOGS = ("graphs", "actions", "resources", "schemas")

_KEYS = frozenset(
    ("schema", "provider", "providerManifest", *CATALOGS, "files", "graphDependencies", "digest")
)
# The schemas' ECMAScript "not a relative path" pattern; ``^``/``\Z`` are whole-input anchors.
_NOT_RELATIVE = re.compile(r"(?:/|[A-Za-z]:|[^\n\r\u2028\u2029]*(?:^|/)\.\.(?:/|\Z))")


def is_bundle(value: Any) -> bool:
    return isinstance(value, dict) and value.get("schema") == BUNDLE_SCHEMA


# -- the manifest's shape (bundle.schema.json, as code) --------------------------------------


def _text(value: Any) -> bool:
    return isinstance(value, str) and len(value) >= 1


def _relative(value: Any) -> bool:
    return _text(value) and _NOT_RELATIVE.match(value) is None


def _digest(value: Any) -> bool:
    return is_digest(value)


def _entries(value: Any, keys: tuple[str, ...]) -> bool:
    if not isinstance(value, list):
        return False
    for item in value:
        if not isinstance(item, dict) or item.keys() != set(keys):
            return False
        if "id" in keys and not _text(item["id"]):
            return False
        if not _relative(item["path"]) or not _digest(item["digest"]):
            return False
    return True


def conforms(value: Any) -> bool:
    """True exactly when ``value`` satisfies ``bundle.schema.json`` (tested against it).

    The full validator costs a jsonschema import; it runs only to explain a failure.
    """
    if not isinstance(value, dict) or value.keys() != _KEYS:
        return False
    provider = value["provider"]
    if not (
        value["schema"] == BUNDLE_SCHEMA
        and isinstance(provider, dict)
        and provider.keys() == {"id", "version"}
        and _text(provider["id"])
        and _text(provider["version"])
        and _relative(value["providerManifest"])
        and _digest(value["digest"])
        and _entries(value["files"], ("path", "digest"))
        and all(_entries(value[name], ("id", "path", "digest")) for name in CATALOGS)
    ):
        return False
    dependencies = value["graphDependencies"]
    if not isinstance(dependencies, dict):
        return False
    for children in dependencies.values():
        if not isinstance(children, list) or not all(isinstance(c, str) for c in children):
            return False
        if len(set(children)) != len(children):
            return False
    return True


# -- Part A ------------------------------------------------------------------------------------


class Bundle:
    """A manifest that passed Part A. ``files`` maps each listed path to its digest.

    (Plain classes here, not dataclasses: this module is on the cold path and each
    dataclass costs its creation at import.)
    """

    __slots__ = (
        "display",
        "files",
        "manifest_path",
        "provider_manifest",
        "root",
        "source",
        "value",
    )

    def __init__(
        self,
        manifest_path: Path,
        value: dict[str, Any],
        files: dict[str, str],
        provider_manifest: Path,
        display: str = MANIFEST_NAME,
        source: SourceMap | None = None,
    ) -> None:
        self.manifest_path = manifest_path
        self.root = manifest_path.parent
        self.value = value
        self.files = files
        self.provider_manifest = provider_manifest
        self.display = display
        self.source = source

    @property
    def digest(self) -> str:
        return str(self.value["digest"])

    @property
    def provider(self) -> tuple[str, str]:
        identity = self.value["provider"]
        return identity["id"], identity["version"]

    def at(self, pointer: str) -> Origin:
        return Origin(self.display, self.source, pointer)


class _Checker:
    """Containment checks relative to one bundle root (its real path computed once)."""

    def __init__(self, root: Path, display: str, source: SourceMap | None) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.display = display
        self.source = source
        self.root_text = os.path.abspath(root)
        self.plain_directories: dict[str, bool] = {self.root_text: True}

    def at(self, pointer: str) -> Origin:
        return Origin(self.display, self.source, pointer)

    def contained_file(self, reference: str, label: str, pointer: str) -> str:
        """``resolveContainedPath`` + ``ensureContainedFile`` of the reference (§0.5): the
        file's path."""
        plain = self._plain_file(reference)
        if plain is not None:
            return plain
        origin = self.at(pointer)
        path = resolve_contained(self.root, reference, label, origin)
        ensure_file(path, label, origin)
        if os.path.islink(path) or _has_link(self.root, path):
            real = os.path.realpath(path)
            rel = os.path.relpath(real, self.real_root)
            if rel == ".." or rel.startswith(("../", "..\\")) or os.path.isabs(rel):
                raise origin.fail(
                    codes.PATH_SYMLINK_OUTSIDE_PROVIDER,
                    f"{label} resolves outside the provider root: {path}",
                )
        return str(path)

    def _plain_file(self, reference: str) -> str | None:
        """The absolute path of a listed file when it is plainly fine: relative, inside
        the root, a regular file with no symlink on the way; by string operations, one
        ``lstat`` a file and one a directory (a bundle lists every file, and the
        Path-based checks were most of a large bundle's cold start). ``None`` for anything
        else, which :meth:`contained_file` then checks (and reports) in full."""
        if not reference or is_absolute_reference(reference):
            return None
        root = self.root_text
        path = os.path.normpath(os.path.join(root, reference))
        if not path.startswith(root) or path[len(root) : len(root) + 1] != os.sep:
            return None
        try:
            info = os.lstat(path)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(info.st_mode):  # a link, a directory, a device: the full check
            return None
        return path if self._plain_directory(os.path.dirname(path)) else None

    def _plain_directory(self, directory: str) -> bool:
        """Whether ``directory`` (under the root) and every one above it up to the root
        is a directory and no symlink; each directory looked at once per bundle."""
        known = self.plain_directories
        below: list[str] = []
        while directory not in known:
            parent = os.path.dirname(directory)
            if parent == directory:  # the file system's root: never under the bundle's
                known[directory] = False
                break
            below.append(directory)
            directory = parent
        verdict = known[directory]
        for name in reversed(below):  # from the top down
            if verdict:
                try:
                    verdict = stat.S_ISDIR(os.lstat(name).st_mode)
                except (OSError, ValueError):
                    verdict = False
            known[name] = verdict
        return verdict


def _has_link(root: Path, path: Path) -> bool:
    """Whether a directory between ``root`` and ``path`` is a symlink (cheaper than realpath)."""
    parent = path.parent
    while parent != root and len(parent.parts) > len(root.parts):
        if os.path.islink(parent):
            return True
        parent = parent.parent
    return False


def verify_manifest(manifest_path: Path, value: Any, *, source: SourceMap | None = None) -> Bundle:
    """Part A, steps 1–5 of reference §6.4; raises the reference's codes in its order."""
    display = MANIFEST_NAME if manifest_path.name == MANIFEST_NAME else manifest_path.name
    checker = _Checker(manifest_path.parent, display, source)
    if not conforms(value):
        from ..documents import schema

        problem = schema.validate("bundle", value, path=display, source=source)
        if problem is None:  # pragma: no cover - `conforms` mirrors the schema (tested)
            raise checker.at("").fail(
                codes.SCHEMA_INVALID, f"{display} does not match the bundle schema"
            )
        raise AgentGraphError(problem.code, problem.message, problem.diagnostics)
    unsigned = {key: item for key, item in value.items() if key != "digest"}
    if digest_value(unsigned) != value["digest"]:
        raise checker.at("/digest").fail(
            codes.BUNDLE_DIGEST_MISMATCH,
            f"Bundle manifest digest does not match its content: {manifest_path}",
        )
    files: dict[str, str] = {}
    for index, entry in enumerate(value["files"]):
        path = entry["path"]
        if path in files:
            raise checker.at(f"/files/{index}/path").fail(
                codes.BUNDLE_FILE_DUPLICATE, f"Bundle lists file more than once: {path}"
            )
        absolute = checker.contained_file(path, "bundle file", f"/files/{index}/path")
        if digest_file(absolute) != entry["digest"]:
            raise checker.at(f"/files/{index}/digest").fail(
                codes.BUNDLE_FILE_DIGEST_MISMATCH, f"Bundle file digest mismatch: {path}"
            )
        files[path] = entry["digest"]
    for name in CATALOGS:
        for index, item in enumerate(value[name]):
            if files.get(item["path"]) != item["digest"]:
                raise checker.at(f"/{name}/{index}").fail(
                    codes.BUNDLE_CATALOG_MISMATCH,
                    f"Bundle catalog entry does not match files: {item['path']}",
                )
    listed = value["providerManifest"]
    if listed not in files:
        raise checker.at("/providerManifest").fail(
            codes.BUNDLE_PROVIDER_UNLISTED,
            f"Bundle provider manifest is not listed in files: {listed}",
        )
    provider_manifest = resolve_contained(
        checker.root, listed, "bundle provider manifest", checker.at("/providerManifest")
    )
    return Bundle(manifest_path, value, files, provider_manifest, display, source)


def check_identity(bundle: Bundle, manifest: Mapping[str, Any]) -> None:
    """Step 6: the bundle and its Provider manifest name the same Provider."""
    bid, bversion = bundle.provider
    if (bid, bversion) != (manifest.get("id"), manifest.get("version")):
        raise bundle.at("/provider").fail(
            codes.BUNDLE_PROVIDER_MISMATCH,
            f"Bundle identifies {bid}@{bversion}, but its Provider manifest identifies "
            f"{manifest.get('id')}@{manifest.get('version')}",
        )
