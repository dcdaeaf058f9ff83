"""SHA-256 that loads OpenSSL only once a process has hashed enough to need it.

``hashlib`` loads OpenSSL's libcrypto as it is imported: about 4 ms of a cold
``agc evaluate`` that hashes a few kilobytes (the bundle's IR, the revision). CPython's
own ``_sha256`` loads in microseconds but hashes about eight times slower (some 4 ns a
byte more). So the first :data:`BUDGET` bytes a process hashes, in inputs of that size
or less, go to ``_sha256``; after that, and for any larger input or incremental hash,
``hashlib`` is loaded and used for everything (a host that evaluates many states pays
the slower hash for a millisecond at most). A process that already loaded ``hashlib``
uses it from the start.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any, Final, Protocol

__all__ = ["BUDGET", "Hash", "sha256", "sha256_hex"]

#: Bytes hashed without OpenSSL before it is loaded (their extra cost stays near 1 ms,
#: a quarter of loading it).
BUDGET: Final = 256 * 1024


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
_loaded = sys.modules.get("hashlib")
_openssl: Callable[[bytes], Any] | None = None if _loaded is None else _loaded.sha256
_left = BUDGET if _SMALL_SHA256 is not None else 0


def sha256(data: bytes = b"") -> Hash:
    """A SHA-256 hash object over ``data``. Without ``data`` (an incremental hash, its
    total size unknown) it comes from ``hashlib``."""
    global _left, _openssl
    if _openssl is None:
        size, builtin = len(data), _SMALL_SHA256
        if builtin is not None and 0 < size <= _left:
            _left -= size
            small: Hash = builtin(data)
            return small
        import hashlib

        _openssl = hashlib.sha256
    made: Hash = _openssl(data)
    return made


def sha256_hex(data: bytes) -> str:
    """``sha256:`` + the hex SHA-256 of ``data``."""
    return "sha256:" + sha256(data).hexdigest()
