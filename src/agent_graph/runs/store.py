"""The ``RunStore`` protocol and the one implementation of its operations.

A store keeps Runs under references (a file path for :class:`FileRunStore`, any
string for :class:`MemoryRunStore`). Every operation (docs/runs.md)
is written once here, over a handful of storage primitives, so the stores
differ only in where bytes live and how writers are serialised:

* each mutation is a read-modify-write under the Run's lock: load and check
  the stored document, build the new one, check it, then replace it;
* ``start``, ``checkpoint`` and ``resume`` create their target and refuse to
  replace anything already there (``run-target-exists``);
* every document is checked on the way in and the way out
  (:func:`~agent_graph.runs.validation.check_document`), so a damaged Run is
  reported and left exactly as it was.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, runtime_checkable

from .. import codes
from ..errors import AgentGraphError
from .document import (
    NO_DETAIL,
    Clock,
    Run,
    checkpointed,
    new_document,
    new_run_id,
    recorded,
    resumed,
    timestamp,
    utc_now,
    with_authorities,
    with_facts,
)
from .validation import check_document

RunRef = str | os.PathLike[str]
K = TypeVar("K")


class Checkpoint(NamedTuple):
    """What ``checkpoint`` wrote: the source Run (with its new event) and the copy."""

    run: Run
    checkpoint: Run


@runtime_checkable
class RunStore(Protocol):
    """Where a host keeps its Runs. Every method raises :class:`AgentGraphError`."""

    def exists(self, ref: RunRef) -> bool: ...

    def start(
        self,
        ref: RunRef,
        *,
        provider: str,
        graph: str,
        entry: str = "default",
        workspace: str | os.PathLike[str] | None = None,
        facts: Mapping[str, Any] | None = None,
        authorities: Iterable[str] = (),
        run_id: str | None = None,
    ) -> Run: ...

    def load(self, ref: RunRef) -> Run: ...

    def record(self, ref: RunRef, key: str, outcome: str, detail: Any = NO_DETAIL) -> Run: ...

    def set_facts(self, ref: RunRef, facts: Mapping[str, Any], *, replace: bool = False) -> Run: ...

    def update(
        self, ref: RunRef, change: Callable[[dict[str, Any], str], dict[str, Any] | None]
    ) -> tuple[Run, bool]: ...

    def set_authorities(self, ref: RunRef, authorities: Iterable[str]) -> Run: ...

    def clear_authorities(self, ref: RunRef) -> Run: ...

    def checkpoint(self, ref: RunRef, target: RunRef) -> Checkpoint: ...

    def resume(self, checkpoint: RunRef, target: RunRef) -> Run: ...

    def events(self, ref: RunRef) -> list[dict[str, Any]]: ...


class BaseRunStore(ABC, Generic[K]):
    """The operations of :class:`RunStore` over storage primitives keyed by ``K``."""

    def __init__(self, *, clock: Clock = utc_now, ids: Callable[[], str] = new_run_id) -> None:
        self._clock = clock
        self._ids = ids

    # -- primitives ----------------------------------------------------------------------

    @abstractmethod
    def _key(self, ref: RunRef) -> K:
        """The canonical key of a reference."""

    @abstractmethod
    def _display(self, key: K) -> str:
        """How messages name a Run (an absolute path for files)."""

    @abstractmethod
    def _basename(self, key: K) -> str:
        """The last name of a reference (the checkpoint events record it)."""

    @abstractmethod
    def _exists(self, key: K) -> bool: ...

    def _stored(self, key: K) -> bool:
        """Whether a Run may be stored at ``key`` (a mutation takes no lock otherwise)."""
        return self._exists(key)

    def _prepare(self, key: K) -> None:
        """Make room for a new Run at ``key`` (a file's directory), before its lock is taken."""

    @abstractmethod
    def _read(self, key: K) -> dict[str, Any]:
        """The stored document, checked; the error a host can act on otherwise."""

    @abstractmethod
    def _locked(self, keys: Sequence[K]) -> AbstractContextManager[None]:
        """Hold the write locks of ``keys`` (deadlock-free for any key order)."""

    @abstractmethod
    def _replace(self, key: K, document: dict[str, Any]) -> None:
        """Replace a stored Run atomically (the caller holds its lock)."""

    @abstractmethod
    def _create(self, key: K, document: dict[str, Any]) -> None:
        """Store a new Run; ``FileExistsError`` if something is there (lock held)."""

    @abstractmethod
    def _discard(self, key: K) -> None:
        """Remove a Run this operation created (undo; lock held)."""

    # -- operations ----------------------------------------------------------------------

    def _now(self) -> str:
        return timestamp(self._clock())

    def _refuse(self, key: K, label: str) -> AgentGraphError:
        where = self._display(key)
        return AgentGraphError(
            codes.RUN_TARGET_EXISTS, f"{label} refuses to replace an existing path: {where}"
        )

    def _create_new(self, key: K, document: dict[str, Any], label: str) -> None:
        self._prepare(key)
        with self._locked([key]):
            self._create_locked(key, document, label)

    def _create_locked(self, key: K, document: dict[str, Any], label: str) -> None:
        if self._exists(key):
            raise self._refuse(key, label)
        try:
            self._create(key, document)
        except FileExistsError:  # someone who does not take our lock got there first
            raise self._refuse(key, label) from None

    def _mutate(self, ref: RunRef, change: Callable[[dict[str, Any], str], dict[str, Any]]) -> Run:
        key = self._key(ref)
        if not self._stored(key):
            self._read(key)  # the "cannot read" error, before any lock (or directory) is made
        with self._locked([key]):
            changed = change(self._read(key), self._now())
            check_document(changed, self._display(key))
            self._replace(key, changed)
        return Run(changed)

    def exists(self, ref: RunRef) -> bool:
        return self._exists(self._key(ref))

    def update(
        self, ref: RunRef, change: Callable[[dict[str, Any], str], dict[str, Any] | None]
    ) -> tuple[Run, bool]:
        """One locked read-modify-write composed by a host from the document operations
        (:mod:`.document`): ``change`` gets the stored document and the time, and returns
        the new document, or None to leave the Run untouched. Returns the Run as it now is
        and whether it was written. ``change`` may raise to refuse (nothing is written)."""
        key = self._key(ref)
        if not self._stored(key):
            self._read(key)
        with self._locked([key]):
            current = self._read(key)
            changed = change(current, self._now())
            if changed is None:
                return Run(current), False
            check_document(changed, self._display(key))
            self._replace(key, changed)
        return Run(changed), True

    def start(
        self,
        ref: RunRef,
        *,
        provider: str,
        graph: str,
        entry: str = "default",
        workspace: str | os.PathLike[str] | None = None,
        facts: Mapping[str, Any] | None = None,
        authorities: Iterable[str] = (),
        run_id: str | None = None,
    ) -> Run:
        """Create a Run with its ``run.started`` event; never replaces an existing one."""
        key = self._key(ref)
        if self._exists(key):
            raise self._refuse(key, "Run start")
        document = new_document(
            run_id=run_id if run_id is not None else self._ids(),
            provider=provider,
            graph=graph,
            entry=entry,
            workspace=workspace,
            facts=facts,
            authorities=authorities,
            at=self._now(),
        )
        check_document(document, self._display(key))
        self._create_new(key, document, "Run start")
        return Run(document)

    def load(self, ref: RunRef) -> Run:
        return Run(self._read(self._key(ref)))

    def record(self, ref: RunRef, key: str, outcome: str, detail: Any = NO_DETAIL) -> Run:
        """Record the latest outcome of a state key (``afterAction.recordNode``)."""
        return self._mutate(ref, lambda doc, at: recorded(doc, key, outcome, at, detail))

    def set_facts(self, ref: RunRef, facts: Mapping[str, Any], *, replace: bool = False) -> Run:
        """Shallow-merge ``facts`` into the Run's Facts, or replace them all."""
        return self._mutate(ref, lambda doc, at: with_facts(doc, facts, at, replace=replace))

    def set_authorities(self, ref: RunRef, authorities: Iterable[str]) -> Run:
        """Replace the session authorities (an empty list clears them)."""
        # a generator is read once, here; a lone string is left for the check to refuse
        values = authorities if isinstance(authorities, (str, bytes)) else list(authorities)
        return self._mutate(ref, lambda doc, at: with_authorities(doc, values, at))

    def clear_authorities(self, ref: RunRef) -> Run:
        return self.set_authorities(ref, ())

    def checkpoint(self, ref: RunRef, target: RunRef) -> Checkpoint:
        """Append ``run.checkpointed`` and write a copy without authorities to ``target``.

        The copy is created first: if ``target`` is taken, nothing changes; if the
        source cannot be replaced afterwards, the copy is removed again.
        """
        source_key, target_key = self._key(ref), self._key(target)
        if self._exists(target_key):
            raise self._refuse(target_key, "Checkpoint")
        self._read(source_key)  # a damaged source fails here, before any lock file is made
        self._prepare(target_key)
        with self._locked([source_key, target_key]):
            if self._exists(target_key):
                raise self._refuse(target_key, "Checkpoint")
            source, snapshot = checkpointed(
                self._read(source_key), self._basename(target_key), self._now()
            )
            check_document(source, self._display(source_key))
            check_document(snapshot, self._display(target_key))
            self._create_locked(target_key, snapshot, "Checkpoint")
            try:
                self._replace(source_key, source)
            except BaseException:
                self._discard(target_key)
                raise
        return Checkpoint(Run(source), Run(snapshot))

    def resume(self, checkpoint: RunRef, target: RunRef) -> Run:
        """A new Run at ``target`` from a checkpoint: authorities cleared, ``run.resumed``."""
        checkpoint_key, target_key = self._key(checkpoint), self._key(target)
        if self._exists(target_key):
            raise self._refuse(target_key, "Run resume")
        document = resumed(self._read(checkpoint_key), self._basename(checkpoint_key), self._now())
        check_document(document, self._display(target_key))
        self._create_new(target_key, document, "Run resume")
        return Run(document)

    def events(self, ref: RunRef) -> list[dict[str, Any]]:
        """The append-only event log, oldest first."""
        return self.load(ref).events
