"""Agent bindings (docs/flow-runs.md §Execution, §5.4, B.27–B.35, C.8, C.34, C.35).

Each Run has at most one bound Agent (``agentBinding`` in its record). An Agent is
bound to at most one *active* Run at a time: this process keeps the table of Agents its
active Runs hold, and binding one that another active Run holds is refused (starting a
Run with it: ``agent-bound``; an adapter that answers a child's 新建Agent with the
parent's Agent: the child fails with ``agent_binding``). Runs driven by other processes
are not visible here; the Agent platform is where such a guarantee can be made.
"""

from __future__ import annotations

import threading


class Bindings:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: dict[str, str] = {}

    def holder(self, agent: str) -> str | None:
        with self._lock:
            return self._holders.get(agent)

    def bind(self, agent: str, run_id: str) -> bool:
        """Bind ``agent`` to ``run_id``; False when another active Run holds it."""
        with self._lock:
            holder = self._holders.get(agent)
            if holder is not None and holder != run_id:
                return False
            self._holders[agent] = run_id
            return True

    def unbind(self, agent: str, run_id: str) -> None:
        with self._lock:
            if self._holders.get(agent) == run_id:
                del self._holders[agent]


#: The process's table (shared by every Run this process drives).
BINDINGS = Bindings()
