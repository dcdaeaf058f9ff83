"""``MemoryRunStore``: Runs kept in this process, for tests and embedded hosts.

Documents are stored as the bytes a file would hold and read back with the same
codec and checks, so a Run behaves exactly as it would in :class:`FileRunStore`
(same numbers, same errors); only durability differs. Thread-safe: writers are serialised
and readers, as with files, never wait for a writer's read-modify-write.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .. import codes
from ..errors import AgentGraphError
from . import codec
from .document import Clock, new_run_id, utc_now
from .store import BaseRunStore, RunRef
from .validation import check_document


class MemoryRunStore(BaseRunStore[str]):
    """Runs under string references (paths are just names here)."""

    def __init__(self, *, clock: Clock = utc_now, ids: Callable[[], str] = new_run_id) -> None:
        super().__init__(clock=clock, ids=ids)
        self._runs: dict[str, bytes] = {}
        self._lock = threading.Lock()  # the mapping, for a moment
        # a writer's whole read-modify-write: readers never wait for it, as with files
        self._writers = threading.RLock()

    def _key(self, ref: RunRef) -> str:
        return os.fspath(ref)

    def _display(self, key: str) -> str:
        return key

    def _basename(self, key: str) -> str:
        return key.replace("\\", "/").rsplit("/", 1)[-1]

    def _exists(self, key: str) -> bool:
        with self._lock:
            return key in self._runs

    def _read(self, key: str) -> dict[str, Any]:
        with self._lock:
            data = self._runs.get(key)
        if data is None:
            raise AgentGraphError(codes.FILE_READ_FAILED, f"Cannot read {key}: no such Run")
        return check_document(codec.loads(data.decode("utf-8")), key, parsed=True)

    @contextmanager
    def _locked(self, keys: Sequence[str]) -> Iterator[None]:
        with self._writers:
            yield

    def _replace(self, key: str, document: dict[str, Any]) -> None:
        data = codec.dumps(document)
        with self._lock:
            self._runs[key] = data

    def _create(self, key: str, document: dict[str, Any]) -> None:
        data = codec.dumps(document)
        with self._lock:
            if key in self._runs:
                raise FileExistsError(key)
            self._runs[key] = data

    def _discard(self, key: str) -> None:
        with self._lock:
            self._runs.pop(key, None)

    def references(self) -> list[str]:
        """Every stored reference, sorted."""
        with self._lock:
            return sorted(self._runs)
