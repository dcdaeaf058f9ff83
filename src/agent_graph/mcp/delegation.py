"""Gate authorities the user delegated, held in this process for one client connection.

Choosing ``delegate`` in a delegatable Gate's form puts the Gate's authority into this
table for that Run and that connection only: the evaluations the connection's calls make
then hold it (the VM routes the Gate by ``session-authority``, with its delegated
Action), while the Run file never sees it, so the CLI, another client and a restarted
server all find the Gate waiting for the user again. A connection that ends takes its
delegations with it. Stateless (2026-07-28) calls have no connection that outlives them,
so they are never offered the choice.
"""

from __future__ import annotations

import threading


class Delegations:
    def __init__(self) -> None:
        self._held: dict[tuple[str, str], set[str]] = {}
        self._lock = threading.Lock()

    def held(self, connection: str | None, handle: str) -> tuple[str, ...]:
        if connection is None:
            return ()
        with self._lock:
            return tuple(sorted(self._held.get((connection, handle), ())))

    def grant(self, connection: str, handle: str, authority: str) -> None:
        with self._lock:
            self._held.setdefault((connection, handle), set()).add(authority)

    def __len__(self) -> int:
        """How many (connection, Run) pairs hold a delegation now."""
        with self._lock:
            return len(self._held)

    def forget(self, connection: str) -> None:
        """The connection ended: what it was delegated ends with it."""
        with self._lock:
            for key in [k for k in self._held if k[0] == connection]:
                del self._held[key]
