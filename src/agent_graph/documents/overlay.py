"""Texts that stand in for files while a block runs: an editor's unsaved buffers.

A language server checks what the author is typing, not what is saved. Every definition
file is read through :func:`agent_graph.documents.files.read_text`, which asks
:func:`buffer_text` first once this module is loaded; a command-line run never loads it,
and outside :func:`buffers` the answer is always None, so the disk is read as before.
Paths are compared by their real path, so a symlinked checkout or a ``..`` spelling finds
the same buffer.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

_ACTIVE: ContextVar[Mapping[str, str] | None] = ContextVar("agent_graph_buffers", default=None)


def real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


@contextmanager
def buffers(texts: Mapping[Path, str]) -> Iterator[None]:
    """Read ``texts`` (path -> text) instead of those files' bytes while the block runs."""
    token = _ACTIVE.set({real(path): text for path, text in texts.items()})
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def buffer_text(path: str | os.PathLike[str]) -> str | None:
    """The buffer standing in for ``path``, or None (always None outside :func:`buffers`)."""
    active = _ACTIVE.get()
    if not active:
        return None
    return active.get(real(path))
