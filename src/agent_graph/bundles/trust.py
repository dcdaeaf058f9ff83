"""Which bundle IRs a host trusts: those it has seen compiled from the bundle's own sources.

A host pins a bundle by its manifest digest, which covers every source file's bytes.
The IR beside them is derived data that the manifest does not cover: whoever can
replace the IR can also rewrite its binding, so the binding proves nothing about
where the IR came from. An IR is therefore trusted only when this toolchain has
compiled the bundle's sources and obtained exactly its bytes. A :class:`TrustStore`
remembers that verdict, keyed by (manifest digest, IR digest, Skill directories, agc
version, IR format), so the next load of the same bundle skips the compile. The Skill
directories are in the key because the trusted path takes them from the binding, which
anyone can rewrite and re-digest: a binding listing fewer directories than the sources
compile to (``directories: []`` turns off the check that nothing was added to a Skill)
finds no verdict and takes the verifying path, which refuses what it always refused.
The store belongs to the host (a folder it chooses, outside any bundle); a bundle can
never vouch for itself.
See ``docs/trust.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from ..protocol import __version__

#: Environment variable naming the CLI's trust store folder; ``off`` disables it.
TRUST_ENV = "AGC_TRUST_CACHE"


class TrustStore:
    """A folder of verdicts: one small file per IR verified against its bundle's sources."""

    __slots__ = ("directory",)

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _entry(self, manifest_digest: str, ir_digest: str, directories: Sequence[str]) -> Path:
        from ..ir.codec import FORMAT_VERSION

        listed = json.dumps(sorted(directories))
        key = f"{manifest_digest}\n{ir_digest}\n{listed}\n{__version__}\n{FORMAT_VERSION}"
        return self.directory / f"{hashlib.sha256(key.encode()).hexdigest()}.json"

    def vouches(self, manifest_digest: str, ir_digest: str, directories: Sequence[str]) -> bool:
        """Whether this IR, with these Skill directories to check, was verified for this
        manifest (by this agc version)."""
        return self._entry(manifest_digest, ir_digest, directories).is_file()

    def remember(self, manifest_digest: str, ir_digest: str, directories: Sequence[str]) -> None:
        """Record a verified IR and the Skill directories its sources compile to; a store
        that cannot be written only costs speed."""
        entry = self._entry(manifest_digest, ir_digest, directories)
        record = {
            "bundle": manifest_digest,
            "ir": ir_digest,
            "directories": sorted(directories),
            "agc": __version__,
        }
        temp = entry.with_name(f".{entry.name}.{os.urandom(4).hex()}")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            temp.write_text(json.dumps(record) + "\n", encoding="utf-8")
            os.replace(temp, entry)
        except OSError:
            temp.unlink(missing_ok=True)


def cli_trust_store() -> TrustStore | None:
    """The CLI's store: ``$AGC_TRUST_CACHE``, else the user's cache folder; None when ``off``."""
    configured = os.environ.get(TRUST_ENV)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off") else TrustStore(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return TrustStore(Path(base) / "agent-graph" / "trusted-ir")


def as_store(trust: TrustStore | str | os.PathLike[str] | None) -> TrustStore | None:
    return trust if isinstance(trust, TrustStore) or trust is None else TrustStore(trust)
