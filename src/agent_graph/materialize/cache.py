"""The materialization cache: ``<cache>/<hex><ext>`` and ``<cache>/<hex>.receipt.json``.

Text media types (any with ``json`` or ``markdown`` in them, or ``text/*``) are decoded
as the reference does: stdout as UTF-8, **lossily** (an invalid byte sequence becomes
U+FFFD), the digest being ``digest_text`` of the decoded text and the file its UTF-8
encoding, so digests agree with the reference for the same output. Every other media
type gets ``.bin`` and keeps the bytes exactly (digest of the raw bytes): a deliberate
difference from 0.2.6, which decoded binary output as text too.

Reading a cached file back (:func:`read_cached`) checks it against the digest its
receipt records: an output edited or replaced on disk is ``materialization-changed``,
never served as the view of that revision.

Both files are written atomically (a temporary file beside the target, synced, then
renamed), the content first; concurrent materializations of one Resource each replace
whole files, so one consistent file remains.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import codes
from ..canonical import digest_bytes, digest_text
from ..documents.files import write_atomic
from ..errors import AgentGraphError

MATERIALIZATION_SCHEMA = "agent-graph.materialization.v1"
BINARY = ".bin"


def extension_for(media_type: str) -> str:
    """``.json`` when the media type contains ``json``, ``.md`` when it contains
    ``markdown``, ``.txt`` for other ``text/`` types, else ``.bin``."""
    if "json" in media_type:
        return ".json"
    if "markdown" in media_type:
        return ".md"
    if media_type.startswith("text/"):
        return ".txt"
    return BINARY


def content_of(output: bytes, media_type: str) -> tuple[bytes, str]:
    """The bytes to cache and their digest."""
    if extension_for(media_type) == BINARY:
        return output, digest_bytes(output)
    text = output.decode("utf-8", "replace")
    return text.encode("utf-8"), digest_text(text)


def _failed(target: Path, exc: OSError) -> AgentGraphError:
    return AgentGraphError(
        codes.MATERIALIZER_CACHE_FAILED, f"Cannot write the materialization cache {target}: {exc}"
    )


def store(cache: Path, media_type: str, output: bytes, receipt: dict[str, Any]) -> tuple[str, Path]:
    """Write the content and its receipt (``receipt`` plus ``digest``, ``mediaType`` and
    ``file``); returns the digest and the content path. On failure nothing new is left."""
    data, digest = content_of(output, media_type)
    token = digest.removeprefix("sha256:")
    target = cache / f"{token}{extension_for(media_type)}"
    receipt_path = cache / f"{token}.receipt.json"
    document = {**receipt, "digest": digest, "mediaType": media_type, "file": str(target)}
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if cache.exists() and not cache.is_dir():
        raise AgentGraphError(
            codes.MATERIALIZER_CACHE_FAILED,
            f"The materialization cache is not a directory: {cache}",
        )
    existed = target.exists()
    try:
        write_atomic(target, data)
    except OSError as exc:
        raise _failed(target, exc) from None
    try:
        write_atomic(receipt_path, text.encode("utf-8"))
    except OSError as exc:
        if not existed and not receipt_path.exists():
            target.unlink(missing_ok=True)
        raise _failed(receipt_path, exc) from None
    return digest, target


def read_cached(target: Path, media_type: str, digest: str) -> bytes:
    """The cached content at ``target`` when it still has ``digest`` (the receipt's),
    else ``materialization-changed``."""
    from ..documents.files import read_bytes

    try:
        data = read_bytes(target, str(target))
    except AgentGraphError as error:
        raise _changed(target, f"it cannot be read ({error.message})") from None
    found = digest_bytes(data) if extension_for(media_type) == BINARY else _text_digest(data)
    if found != digest:
        raise _changed(target, f"its digest is {found}, its receipt says {digest}")
    return data


def _text_digest(data: bytes) -> str:
    try:
        return digest_text(data.decode("utf-8"))
    except UnicodeDecodeError:  # the cache holds UTF-8 text only: someone wrote this
        return digest_bytes(data)


def _changed(target: Path, why: str) -> AgentGraphError:
    return AgentGraphError(
        codes.MATERIALIZATION_CHANGED,
        f"The cached materialization {target} changed after it was written: {why}; "
        "materialize the view again",
    )
