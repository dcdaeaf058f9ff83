"""SHA-256 that loads OpenSSL only for inputs large enough to need it.

``hashlib`` loads OpenSSL's libcrypto as it is imported: about 4 ms of a cold
``agc evaluate`` that hashes a few kilobytes (the bundle's IR, the revision). CPython's
own ``_sha256`` loads in microseconds but hashes about eight times slower, so it takes
inputs up to :data:`SMALL` bytes and ``hashlib`` everything larger (and every
incremental hash, whose total size is not known up front).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Final, Protocol

__all__ = ["SMALL", "Hash", "sha256", "sha256_hex"]

#: Inputs up to this many bytes are hashed without loading OpenSSL (about 0.3 ms here).
SMALL: Final = 64 * 1024


class Hash(Protocol):
    def update(self, data: bytes, /) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...


def _builtin() -> Callable[[bytes], Any] | None:
    try:
        module = importlib.import_module("_sha256")  # absent from builds without it
    except ImportError:  # pragma: no cover - every CPython we support has it
        return None
    found: Callable[[bytes], Any] = module.sha256
    return found


_SMALL_SHA256: Final = _builtin()


def sha256(data: bytes = b"") -> Hash:
    """A SHA-256 hash object over ``data``. Without ``data`` (an incremental hash, its
    total size unknown) it comes from ``hashlib``."""
    if data and len(data) <= SMALL and _SMALL_SHA256 is not None:
        small: Hash = _SMALL_SHA256(data)
        return small
    import hashlib

    return hashlib.sha256(data)


def sha256_hex(data: bytes) -> str:
    """``sha256:`` + the hex SHA-256 of ``data``."""
    return "sha256:" + sha256(data).hexdigest()
