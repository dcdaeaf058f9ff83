"""Host handlers the user configured: how an approved Gate's resolution Action is applied.

A Gate with a resolution Action (``runner: host``, ``handler: desk.record-verdict``) gets
no Facts from an approval: the Action applies the decision. When the config names a
command for that handler (``handlers.<id>.command``), the server runs it right after the
user approved, as observers run (an argv without a shell, in the Run's workspace, the
minimal environment, its process group killed on timeout or overflow), with the decision
as one JSON object on stdin. A handler that exits 0 is the host's report that the
resolution ran; its effect is still only what the observers see next. Handlers run for
nothing else: not for a rejection, not for an agent's call, not for a route's plan.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .config import Handler


@dataclass(frozen=True, slots=True)
class Handled:
    handler: str
    status: str  # ok | failed | timeout
    digest: str | None = None  # of its stdout
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"handler": self.handler, "status": self.status}
        if self.digest is not None:
            out["output"] = self.digest
        if self.message is not None:
            out["message"] = self.message
        return out


def handler_of(resolution: Mapping[str, Any], handlers: Mapping[str, Handler]) -> Handler | None:
    """The configured handler that applies ``resolution`` (a route's resolution Action),
    or None when its plan names no handler the config declares."""
    for step in resolution.get("commandPlan", ()):
        found = handlers.get(step.get("handler", ""))
        if found is not None:
            return found
    return None


def run_handler(
    handler: Handler, workspace: str, env: Mapping[str, str], request: Mapping[str, Any]
) -> Handled:
    from .configured import run_configured

    stdin = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    ran = run_configured(
        handler.command,
        workspace=workspace,
        env=env,
        timeout_ms=handler.timeout_ms,
        max_output_bytes=handler.max_output_bytes,
        stdin=stdin,
    )
    return Handled(handler.id, ran.status, ran.digest, ran.message)
