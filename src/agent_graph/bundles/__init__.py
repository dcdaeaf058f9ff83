"""Built bundles: reading and verifying ``manifest.json`` and the IR bound to it.

Below the compiler and beside the VM: it imports neither (the compiler uses it to
load a bundle's sources; the root package wraps a verified IR in a ``Program``).
"""

from __future__ import annotations

from ..documents.files import MAX_FILE_BYTES as MAX_JSON_BYTES
from ..documents.json_text import read_json
from .binding import (
    BoundIR,
    binding_document,
    check_ir_matches,
    directories_unchanged,
    ir_path,
    open_verified_ir,
    verify_ir,
)
from .manifest import (
    BINDING_PATH,
    BINDING_SCHEMA,
    BUNDLE_SCHEMA,
    CATALOGS,
    IR_DIRECTORY,
    MANIFEST_NAME,
    PROVIDER_MANIFEST,
    Bundle,
    check_identity,
    conforms,
    is_bundle,
    verify_manifest,
)
from .trust import TRUST_ENV, TrustStore, as_store, cli_trust_store

__all__ = [
    "BINDING_PATH",
    "BINDING_SCHEMA",
    "BUNDLE_SCHEMA",
    "CATALOGS",
    "IR_DIRECTORY",
    "MANIFEST_NAME",
    "MAX_JSON_BYTES",
    "PROVIDER_MANIFEST",
    "TRUST_ENV",
    "BoundIR",
    "Bundle",
    "TrustStore",
    "as_store",
    "binding_document",
    "check_identity",
    "check_ir_matches",
    "cli_trust_store",
    "conforms",
    "directories_unchanged",
    "ir_path",
    "is_bundle",
    "open_verified_ir",
    "read_json",
    "verify_ir",
    "verify_manifest",
]
