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
(:func:`verify_against_provider`) compares catalogs, the file set and the dependency
index with a loaded Provider. :func:`verify_ir` checks the binding and the IR.

Why evaluating from the IR without re-reading the YAML is sound: every file the
compiler reads is listed in ``files`` (Part B, checked by the builder on the bundle
it just wrote, before it writes the binding), each listed file's bytes are pinned
by its digest and all those digests by the manifest digest (Part A, checked on
every load), and compiling is a pure function of those bytes. So the IR recorded
against this manifest digest is what compiling the bundle again would produce. The
one input that is not file bytes is the listing of Skill directories (a Skill in
its own directory brings every file in it); the binding names those directories
and the fast path lists them again. Digests detect damage and mismatched parts,
not forgery: whoever can rewrite a file can rewrite its digests too, in the
reference as here.

This module is on the cold path of ``agent_graph.compile_provider``: it imports
neither yaml nor jsonschema unless a check fails and a positioned error is needed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..canonical import digest_bytes, digest_file, digest_value, js_sorted, locale_sorted
from ..documents.paths import Origin, ensure_file, list_files_recursive, portable, resolve_contained
from ..documents.sourcemap import SourceMap
from ..errors import AgentGraphError, Diagnostic

if TYPE_CHECKING:
    from ..compiler.provider.model import LoadedProvider
    from ..ir import records as r
    from ..vm import Program

BUNDLE_SCHEMA = "agent-graph.bundle.v1"
BINDING_SCHEMA = "agc.bundle-ir.v1"
IR_DIRECTORY = "ir"
BINDING_PATH = "ir/binding.json"
MANIFEST_NAME = "manifest.json"
PROVIDER_MANIFEST = "provider.yaml"
CATALOGS = ("graphs", "actions", "resources", "schemas")
#: Same cap as ``sources.MAX_FILE_BYTES`` (not imported: that module loads yaml).
MAX_JSON_BYTES = 32 * 1024 * 1024

_KEYS = frozenset(
    ("schema", "provider", "providerManifest", *CATALOGS, "files", "graphDependencies", "digest")
)
_BINDING_KEYS = frozenset(("schema", "bundle", "ir", "irDigest", "directories", "digest"))
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")
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
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


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

    def at(self, pointer: str) -> Origin:
        return Origin(self.display, self.source, pointer)

    def contained_file(self, reference: str, label: str, pointer: str) -> Path:
        """``resolveContainedPath`` + ``ensureContainedFile`` of the reference (§0.5)."""
        origin = self.at(pointer)
        path = resolve_contained(self.root, reference, label, origin)
        ensure_file(path, label, origin)
        if os.path.islink(path) or _has_link(self.root, path):
            real = os.path.realpath(path)
            rel = os.path.relpath(real, self.real_root)
            if rel == ".." or rel.startswith(("../", "..\\")) or os.path.isabs(rel):
                raise origin.fail(
                    "path-symlink-outside-provider",
                    f"{label} resolves outside the provider root: {path}",
                )
        return path


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
                "schema-invalid", f"{display} does not match the bundle schema"
            )
        raise AgentGraphError(problem.code, problem.message, problem.diagnostics)
    unsigned = {key: item for key, item in value.items() if key != "digest"}
    if digest_value(unsigned) != value["digest"]:
        raise checker.at("/digest").fail(
            "bundle-digest-mismatch",
            f"Bundle manifest digest does not match its content: {manifest_path}",
        )
    files: dict[str, str] = {}
    for index, entry in enumerate(value["files"]):
        path = entry["path"]
        if path in files:
            raise checker.at(f"/files/{index}/path").fail(
                "bundle-file-duplicate", f"Bundle lists file more than once: {path}"
            )
        absolute = checker.contained_file(path, "bundle file", f"/files/{index}/path")
        if digest_file(absolute) != entry["digest"]:
            raise checker.at(f"/files/{index}/digest").fail(
                "bundle-file-digest-mismatch", f"Bundle file digest mismatch: {path}"
            )
        files[path] = entry["digest"]
    for name in CATALOGS:
        for index, item in enumerate(value[name]):
            if files.get(item["path"]) != item["digest"]:
                raise checker.at(f"/{name}/{index}").fail(
                    "bundle-catalog-mismatch",
                    f"Bundle catalog entry does not match files: {item['path']}",
                )
    listed = value["providerManifest"]
    if listed not in files:
        raise checker.at("/providerManifest").fail(
            "bundle-provider-unlisted",
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
            "bundle-provider-mismatch",
            f"Bundle identifies {bid}@{bversion}, but its Provider manifest identifies "
            f"{manifest.get('id')}@{manifest.get('version')}",
        )


# -- catalogs as the builder writes them and Part B recomputes them ---------------------------


def catalog_entries(provider: LoadedProvider) -> dict[str, list[tuple[str, str]]]:
    """``(id, path)`` of every graph, action, resource and schema, in the manifest's order.

    Action schema references are normalised to their Provider-relative path (the
    reference records them as written, so ``./schemas/x.json`` produced a bundle
    that failed to load: §6.2).
    """
    root = provider.root

    def by_id(items: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        order = {key: i for i, key in enumerate(locale_sorted([i for i, _ in items]))}
        return sorted(items, key=lambda item: order[item[0]])

    graphs = [(g.id, g.rel) for g in provider.graphs.values()]
    actions = [(a.id, a.rel) for a in provider.actions.values()]
    resources = [(res.id, res.rel) for res in provider.resources.values()]
    schema_ids: dict[str, str] = {}
    for action in provider.actions.values():
        for name in ("inputSchema", "outputSchema"):
            reference = action.definition.get(name)
            if isinstance(reference, str):
                rel = portable(root, Path(os.path.normpath(root / reference)))
                schema_ids[rel] = rel
    for res in provider.resources.values():
        if not res.dynamic and res.kind == "schema":
            schema_ids[portable(root, res.content_path)] = res.id
    schemas = [(schema_ids[path], path) for path in locale_sorted(list(schema_ids))]
    return {
        "graphs": by_id(graphs),
        "actions": by_id(actions),
        "resources": by_id(resources),
        "schemas": schemas,
    }


def dependency_index(provider: LoadedProvider) -> dict[str, list[str]]:
    deps = provider.graph_dependencies
    return {gid: js_sorted(deps[gid]) for gid in locale_sorted(list(deps))}


def reachable_paths(provider: LoadedProvider) -> list[str]:
    """Provider-relative paths of every reachable file except the manifest."""
    return [
        portable(provider.root, path) for path in provider.files if path != provider.manifest_path
    ]


def skill_directories(provider: LoadedProvider) -> list[str]:
    """Directories whose whole listing is reachable (a Skill's own directory)."""
    root = provider.root
    found: set[str] = set()
    for action in provider.actions.values():
        reference = action.definition.get("skill")
        if isinstance(reference, str):
            parent = Path(os.path.normpath(root / reference)).parent
            if parent != root:
                found.add(portable(root, parent))
    return js_sorted(found)


def verify_against_provider(bundle: Bundle, provider: LoadedProvider) -> None:
    """Part B, steps 7–9 of reference §6.4."""
    expected = catalog_entries(provider)
    for name in CATALOGS:
        actual = sorted(f"{e['id']}\0{e['path']}" for e in bundle.value[name])
        if actual != sorted(f"{i}\0{p}" for i, p in expected[name]):
            raise bundle.at(f"/{name}").fail(
                "bundle-catalog-mismatch",
                f"Bundle {name} catalog does not match reachable Provider definitions",
            )
    listed = sorted(entry["path"] for entry in bundle.value["files"])
    if listed != sorted([bundle.value["providerManifest"], *reachable_paths(provider)]):
        raise bundle.at("/files").fail(
            "bundle-files-mismatch", "Bundle files do not match the reachable Provider file set"
        )
    if digest_value(bundle.value["graphDependencies"]) != digest_value(dependency_index(provider)):
        raise bundle.at("/graphDependencies").fail(
            "bundle-dependencies-mismatch",
            "Bundle Graph dependency index does not match Subgraph references",
        )


# -- the IR binding ----------------------------------------------------------------------------


class BoundIR:
    """Verified IR bytes of a bundle; ``program`` is None when its IR format is not ours."""

    __slots__ = ("data", "digest", "directories", "program")

    def __init__(
        self, data: bytes, digest: str, directories: tuple[str, ...], program: r.Program | None
    ) -> None:
        self.data = data
        self.digest = digest
        self.directories = directories
        self.program = program


def binding_document(bundle_digest: str, ir_digest: str, directories: list[str]) -> dict[str, Any]:
    """The ``agc.bundle-ir.v1`` document (key order as written)."""
    unsigned = {
        "schema": BINDING_SCHEMA,
        "bundle": bundle_digest,
        "ir": ir_path(ir_digest),
        "irDigest": ir_digest,
        "directories": directories,
    }
    return {**unsigned, "digest": digest_value(unsigned)}


def ir_path(ir_digest: str) -> str:
    return f"{IR_DIRECTORY}/{ir_digest.removeprefix('sha256:')}.agir"


def _binding_fail(pointer: str, code: str, message: str) -> AgentGraphError:
    return Origin(BINDING_PATH, None, pointer).fail(code, message)


def _binding_conforms(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.keys() == _BINDING_KEYS
        and value["schema"] == BINDING_SCHEMA
        and _digest(value["bundle"])
        and _digest(value["irDigest"])
        and value["ir"] == ir_path(value["irDigest"])
        and _digest(value["digest"])
        and isinstance(value["directories"], list)
        and all(_relative(d) for d in value["directories"])
    )


def read_json(path: Path) -> Any:
    """Strict JSON (``JSON.parse`` rules: no NaN/Infinity); raises ValueError or OSError."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_JSON_BYTES:
            raise ValueError("file too large")
        data = handle.read(MAX_JSON_BYTES + 1)
    text = data.decode("utf-8").removeprefix("\ufeff")
    if "\0" in text:
        raise ValueError("NUL character")
    return json.loads(text, parse_constant=_no_constant)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def verify_ir(bundle: Bundle) -> BoundIR | None:
    """The bundle's IR, verified and decoded; ``None`` when the bundle has no binding.

    A binding that is damaged, bound to another manifest, or names an IR file that is
    missing, outside the bundle, of another digest or undecodable is refused. An IR of
    another format version is returned undecoded (``program`` None): the caller
    compiles the bundle instead.
    """
    from ..ir import codec

    binding_file = bundle.root / BINDING_PATH
    if not os.path.lexists(binding_file):
        return None
    checker = _Checker(bundle.root, BINDING_PATH, None)
    checker.contained_file(BINDING_PATH, "bundle IR binding", "")
    try:
        value = read_json(binding_file)
    except (OSError, ValueError, RecursionError) as exc:
        raise _binding_fail(
            "", "bundle-ir-binding-invalid", f"Bundle IR binding cannot be read: {exc}"
        ) from None
    if (
        not _binding_conforms(value)
        or digest_value({k: v for k, v in value.items() if k != "digest"}) != value["digest"]
    ):
        raise _binding_fail(
            "",
            "bundle-ir-binding-invalid",
            f"Bundle IR binding is not an intact {BINDING_SCHEMA} document: {BINDING_PATH}",
        )
    if value["bundle"] != bundle.digest:
        raise _binding_fail(
            "/bundle",
            "bundle-ir-unbound",
            f"Bundle IR was compiled for manifest {value['bundle']}, not {bundle.digest}",
        )
    path = checker.contained_file(value["ir"], "bundle IR", "/ir")
    with open(path, "rb") as handle:
        data = handle.read()
    if digest_bytes(data) != value["irDigest"]:
        raise _binding_fail(
            "/irDigest", "bundle-ir-digest-mismatch", f"Bundle IR digest mismatch: {value['ir']}"
        )
    try:
        program = codec.decode(data)
    except AgentGraphError as exc:
        if exc.code != "ir-version-unsupported":
            raise AgentGraphError(
                exc.code, exc.message, [Diagnostic(exc.code, exc.message, path=value["ir"])]
            ) from None
        program = None
    bound = BoundIR(data, value["irDigest"], tuple(value["directories"]), program)
    if program is not None:
        check_ir_matches(bundle, program)
    return bound


def check_ir_matches(bundle: Bundle, program: r.Program) -> None:
    """Cross-check the IR against the manifest: identity, catalogs, dependencies, digests."""

    def mismatch(what: str) -> AgentGraphError:
        return _binding_fail(
            "", "bundle-ir-mismatch", f"Bundle IR does not match the bundle manifest: {what}"
        )

    if (program.provider_id, program.provider_version) != bundle.provider:
        raise mismatch("Provider identity")
    value = bundle.value
    if sorted((g.id, g.path) for g in program.graphs) != sorted(
        (e["id"], e["path"]) for e in value["graphs"]
    ):
        raise mismatch("graphs")
    if sorted((res.id, res.path) for res in program.resources) != sorted(
        (e["id"], e["path"]) for e in value["resources"]
    ):
        raise mismatch("resources")
    if len(program.actions) != len(value["actions"]) or {a.id for a in program.actions} != {
        e["id"] for e in value["actions"]
    }:
        raise mismatch("actions")
    index = {g.id: list(g.dependencies) for g in program.graphs}
    if digest_value(index) != digest_value(value["graphDependencies"]):
        raise mismatch("graph dependencies")
    files = bundle.files
    pinned: list[tuple[str | None, str | None]] = [
        (res.content, res.digest) for res in program.resources
    ]
    pinned += [
        (ref.path, ref.digest)
        for action in program.actions
        for ref in (action.skill, action.input_schema, action.output_schema)
        if ref is not None
    ]
    for path, digest in pinned:
        if path is not None and files.get(path) != digest:
            raise mismatch(f"digest of {path}")


def directories_unchanged(bundle: Bundle, directories: Sequence[str]) -> bool:
    """Each Skill directory still holds exactly the listed files under it."""
    for directory in directories:
        prefix = directory + "/"
        listed = {p for p in bundle.files if p.startswith(prefix)}
        found = {portable(bundle.root, p) for p in list_files_recursive(bundle.root / directory)}
        if found != listed:
            return False
    return True


# -- the cold path -----------------------------------------------------------------------------


def open_bundle_program(manifest: str | os.PathLike[str]) -> Program | None:
    """A verified bundle's :class:`Program` from its IR, or ``None`` to compile instead.

    ``None`` when ``manifest`` is not a JSON bundle manifest, has no IR, its IR is of
    another format version, or anything failed a check: the caller then loads the
    bundle the full way, which repeats every check with source positions and raises
    the same error (or compiles a bundle that has no usable IR).
    """
    path = Path(os.path.abspath(manifest))
    if path.suffix.lower() != ".json":
        return None
    try:
        value = read_json(path)
    except (OSError, ValueError, RecursionError):
        return None
    if not is_bundle(value):
        return None
    try:
        bundle = verify_manifest(path, value)
        bound = verify_ir(bundle)
    except AgentGraphError:
        return None
    if bound is None or bound.program is None:
        return None
    if not directories_unchanged(bundle, bound.directories):
        return None
    from ..vm import Program

    return Program(bound.program, bundle.root, bound.data)
