"""What a Flow runtime asks an Agent, and what comes back (docs/agents.md, §3.2, §5, C.1, C.13).

One small protocol: :meth:`AgentAdapter.ask` takes an :class:`AgentRequest` (the three
prompt parts already composed, the declared results, the bound Agent or None) and
returns an :class:`AgentAnswer`. Adapters turn a transport's failure (a crash, a hang,
output that is not an answer) into :class:`AgentFailure`; whether the answer's result
is one the node declares is the runner's business (one re-prompt, then
``outcome_validation``), so every adapter behaves the same there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

Marker = Literal["new", "reuse"]


@dataclass(frozen=True, slots=True)
class ResultChoice:
    """A result the node declares: its name and the description under its ``###``."""

    name: str
    description: str


@dataclass(frozen=True, slots=True)
class AgentRequest:
    """One Agent step.

    ``marker``: ``new`` (新建Agent: start a new Agent) or ``reuse`` (复用Agent: continue
    ``agent``, the Run's bound Agent). ``prompt``: exactly the three parts of §3.2.
    ``cwd``: the Run's working directory (the Agent works there). ``attempt`` is 2 on the
    single re-prompt after an undeclared result, whose name is ``rejected``.
    """

    run_id: str
    flow: str
    node: str
    marker: Marker
    agent: str | None
    prompt: str
    results: tuple[ResultChoice, ...]
    cwd: str
    attempt: int = 1
    rejected: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire form the ``command:`` adapter writes to its program's stdin."""
        out: dict[str, Any] = {
            "runId": self.run_id,
            "flow": self.flow,
            "node": self.node,
            "marker": self.marker,
            "agent": self.agent,
            "prompt": self.prompt,
            "results": [{"name": r.name, "description": r.description} for r in self.results],
        }
        if self.attempt > 1:
            out["attempt"] = self.attempt
            out["rejected"] = self.rejected
        return out


@dataclass(frozen=True, slots=True)
class AgentAnswer:
    """``result``: a result name; ``content``: any JSON value; ``agent``: the Agent that
    answered (its reference, e.g. a session id), which the Run binds."""

    result: str
    content: Any
    agent: str | None


class AgentFailure(Exception):
    """The Agent could not answer: ``category`` (C.31, normally ``agent_execution``) and
    a one-line ``summary`` for the Run's error. ``code`` is the error code when the
    failure has one of its own (a reply too large, an answer nested too deep); the
    summary then names it too, because a Run's error records only category and summary."""

    def __init__(
        self, summary: str, category: str = "agent_execution", *, code: str | None = None
    ) -> None:
        super().__init__(summary)
        self.summary = summary
        self.category = category
        self.code = code


@runtime_checkable
class AgentAdapter(Protocol):
    """What a host brings to run Agent steps."""

    def ask(self, request: AgentRequest) -> AgentAnswer:
        """Run one Agent step and return its answer (raise :class:`AgentFailure`)."""
        ...

    def release(self, agent: str) -> None:
        """The Run no longer binds ``agent`` (C.8, C.34); its sessions stay where they are."""
        ...
