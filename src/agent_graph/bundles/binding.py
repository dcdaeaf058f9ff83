"""The IR a bundle carries (``ir/binding.json`` + ``ir/<hex>.agir``) and its verification.

The binding ties the IR's digest to the manifest digest; :func:`verify_ir` checks the
binding, the IR's own digest, decodes it and cross-checks it against the manifest.
:func:`open_verified_ir` is the cold path: a bundle that passes every check hands its
IR to the caller, who wraps it in a VM ``Program`` (this package does not import the VM).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import codes
from ..canonical import digest_bytes, digest_value
from ..documents.files import read_bytes
from ..documents.json_text import read_json
from ..documents.paths import Origin, list_files_recursive, portable
from ..errors import AgentGraphError, Diagnostic
from ..ir import records as r
from .manifest import (
    BINDING_PATH,
    BINDING_SCHEMA,
    IR_DIRECTORY,
    Bundle,
    _Checker,
    _digest,
    _relative,
    is_bundle,
    verify_manifest,
)
from .trust import TrustStore

_BINDING_KEYS = frozenset(("schema", "bundle", "ir", "irDigest", "directories", "digest"))


class BoundIR:
    """Verified IR bytes of a bundle; ``program`` is None when its IR format is not ours."""

    __slots__ = ("data", "digest", "directories", "program")

    def __init__(
        self, data: bytes, digest: str, directories: tuple[str, ...], program: r.ProviderIR | None
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


def verify_ir(bundle: Bundle, *, lazy: bool = False) -> BoundIR | None:
    """The bundle's IR, verified and decoded; ``None`` when the bundle has no binding.

    ``lazy``: decode the IR's graphs on first use (``codec.decode(..., lazy=True)``;
    each is still checked before it is used). The cold path takes it; the compiler,
    which compares the IR with what the sources compile to, decodes it whole.

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
            "", codes.BUNDLE_IR_BINDING_INVALID, f"Bundle IR binding cannot be read: {exc}"
        ) from None
    if (
        not _binding_conforms(value)
        or digest_value({k: v for k, v in value.items() if k != "digest"}) != value["digest"]
    ):
        raise _binding_fail(
            "",
            codes.BUNDLE_IR_BINDING_INVALID,
            f"Bundle IR binding is not an intact {BINDING_SCHEMA} document: {BINDING_PATH}",
        )
    if value["bundle"] != bundle.digest:
        raise _binding_fail(
            "/bundle",
            codes.BUNDLE_IR_UNBOUND,
            f"Bundle IR was compiled for manifest {value['bundle']}, not {bundle.digest}",
        )
    path = checker.contained_file(value["ir"], "bundle IR", "/ir")
    data = read_bytes(Path(path), display=value["ir"])
    if digest_bytes(data) != value["irDigest"]:
        raise _binding_fail(
            "/irDigest",
            codes.BUNDLE_IR_DIGEST_MISMATCH,
            f"Bundle IR digest mismatch: {value['ir']}",
        )
    try:
        program = codec.decode(data, lazy=lazy)
    except AgentGraphError as exc:
        if exc.code != codes.IR_VERSION_UNSUPPORTED:
            raise AgentGraphError(
                exc.code, exc.message, [Diagnostic(exc.code, exc.message, path=value["ir"])]
            ) from None
        program = None
    bound = BoundIR(data, value["irDigest"], tuple(value["directories"]), program)
    if program is not None:
        check_ir_matches(bundle, program)
    return bound


def check_ir_matches(bundle: Bundle, program: r.ProviderIR) -> None:
    """Cross-check the IR against the manifest: identity, catalogs, dependencies, digests."""
    from ..ir.codec import graph_summaries

    def mismatch(what: str) -> AgentGraphError:
        return _binding_fail(
            "", codes.BUNDLE_IR_MISMATCH, f"Bundle IR does not match the bundle manifest: {what}"
        )

    if (program.provider_id, program.provider_version) != bundle.provider:
        raise mismatch("Provider identity")
    value = bundle.value
    graphs = graph_summaries(program.graphs)  # without decoding lazily decoded graphs
    if sorted((gid, path) for gid, path, _ in graphs) != sorted(
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
    index = {gid: list(dependencies) for gid, _, dependencies in graphs}
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


def open_verified_ir(
    manifest: str | os.PathLike[str], trust: TrustStore | None
) -> tuple[BoundIR, Bundle] | None:
    """A verified bundle's IR (and the bundle), or ``None`` to compile instead.

    ``None`` when ``manifest`` is not a JSON bundle manifest, has no IR, its IR is of
    another format version, ``trust`` has not seen this IR compiled from this manifest
    (or there is no store), or anything failed a check: the caller then loads the
    bundle the full way, which repeats every check with source positions and raises
    the same error, compares the IR with what the sources compile to, or compiles a
    bundle that has no usable IR.
    """
    if trust is None:
        return None
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
        # lazily: a cold evaluate decodes only the graphs it evaluates (each one still
        # checked before it is used); everything else about the IR is checked here
        bound = verify_ir(bundle, lazy=True)
    except AgentGraphError:
        return None
    if bound is None or bound.program is None:
        return None
    if not trust.vouches(bundle.digest, bound.digest, bound.directories):
        return None
    try:
        if not directories_unchanged(bundle, bound.directories):
            return None
    except AgentGraphError:
        return None
    return bound, bundle
