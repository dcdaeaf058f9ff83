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

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .config import Handler

MAX_ERROR_BYTES = 64 * 1024


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
    from ..exec import ExecError, minimal_env, run

    environment = minimal_env()
    environment.update(env)
    stdin = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    try:
        done = run(
            handler.command,
            cwd=workspace,
            env=environment,
            timeout_s=handler.timeout_ms / 1000,
            max_stdout=handler.max_output_bytes,
            max_stderr=MAX_ERROR_BYTES,
            stdin=stdin,
        )
    except ExecError as error:
        return Handled(handler.id, "failed", message=f"{error.code}: {error.message}")
    if done.timed_out:
        return Handled(handler.id, "timeout", message=f"ran past {handler.timeout_ms} ms")
    if done.overflow is not None:
        return Handled(
            handler.id, "failed", message=f"wrote more than its {done.overflow.stream} limit"
        )
    digest = "sha256:" + hashlib.sha256(done.stdout).hexdigest()
    if done.exit_code != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return Handled(handler.id, "failed", digest, f"exited with {done.exit_code}: {tail}")
    return Handled(handler.id, "ok", digest)
