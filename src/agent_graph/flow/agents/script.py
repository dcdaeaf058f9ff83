"""``script:FILE``: answers read from a file, one JSON object per line, in order.

Each line is ``{"result": <name>, "content": <any JSON>, "agent": <ref>}`` (``content``
defaults to null). Every Agent step of the process takes the next line, parent and
child Runs alike, in execution order. A resume continues from the first line the Run has
not used (:meth:`ScriptAdapter.continue_after`, with the count the runtime derives from
the record), so a scripted Run that is interrupted and resumed with the same script uses
each line once. A rejected (undeclared) answer uses up its line and the single re-prompt
takes the next one. Blank lines are skipped.

``agent`` may be left out: a ``新建Agent`` step then gets ``script-agent-<line>`` and a
``复用Agent`` step keeps the bound Agent. A line that is not such an object, and running
out of lines, are :class:`AgentFailure` (``agent_execution``) naming the file and line.
Meant for tests, demos and CI: no model is involved.
"""

from __future__ import annotations

import errno
import json
import os
import threading
from pathlib import Path
from typing import Any, Final

from ... import codes
from .answer_search import too_deep, too_deep_failure
from .protocol import AgentAnswer, AgentFailure, AgentRequest

#: The largest answer script read (32 MiB, the Provider files' cap): answers are lines of
#: JSON, so more is a mistaken path (a log, a device), not a script.
MAX_SCRIPT_BYTES: Final = 32 * 1024 * 1024
#: The words of the failure when every line is used (the runtime's count relies on them).
EXHAUSTED: Final = "no answer left"


def _read(path: Path) -> bytes:
    """The file's bytes through the capped, non-blocking reader every input file goes
    through (a FIFO is refused rather than waited on, ``/dev/zero`` is cut at the cap)."""
    from ...documents.files import read_bytes

    if not os.path.lexists(path):  # as before: a missing script is a bad --agent spec
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    return read_bytes(Path(os.path.abspath(path)), str(path), MAX_SCRIPT_BYTES)


class ScriptAdapter:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        text = _read(self.path).decode("utf-8")
        self._lines = [(n, x) for n, x in enumerate(text.splitlines(), start=1) if x.strip()]
        self._next = 0
        self._lock = threading.Lock()
        self.requests: list[AgentRequest] = []
        self.released: list[str] = []

    def continue_after(self, used: int) -> None:
        """The next answer is the line after the first ``used`` ones (a resumed Run's)."""
        with self._lock:
            self._next = max(0, min(used, len(self._lines)))

    def ask(self, request: AgentRequest) -> AgentAnswer:
        with self._lock:
            self.requests.append(request)
            if self._next >= len(self._lines):
                raise AgentFailure(
                    f"{self.path}: {EXHAUSTED} for {request.flow}.{request.node} "
                    f"(the script has {len(self._lines)} answer line(s))"
                )
            number, line = self._lines[self._next]
            self._next += 1
        where = f"{self.path}:{number}"
        try:
            value: Any = json.loads(line)
        except json.JSONDecodeError as error:
            raise AgentFailure(f"{where}: the answer is not JSON ({error.msg})") from None
        except RecursionError:  # deep, not broken: its own coded failure
            raise too_deep_failure(where) from None
        if too_deep(value):
            raise too_deep_failure(where)
        if not isinstance(value, dict) or not isinstance(value.get("result"), str):
            raise AgentFailure(f"{where}: the answer has no `result` name")
        agent = value.get("agent")
        if agent is not None and not isinstance(agent, str):
            raise AgentFailure(f"{where}: `agent` must be a string")
        if agent is None:
            agent = f"script-agent-{number}" if request.marker == "new" else request.agent
        return AgentAnswer(value["result"], value.get("content"), agent)

    def release(self, agent: str) -> None:
        with self._lock:
            self.released.append(agent)


def from_spec(rest: str) -> ScriptAdapter:
    """``script:FILE`` → the adapter (``agent-spec-invalid`` when FILE cannot be read)."""
    from ...errors import AgentGraphError

    if not rest:
        raise AgentGraphError(codes.AGENT_SPEC_INVALID, "script: needs a file: --agent script:FILE")
    try:
        return ScriptAdapter(rest)
    except AgentGraphError as error:  # a special file, or over the cap: the reader's code
        raise AgentGraphError(
            error.code, f"The answer script {rest} is refused: {error.message}"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise AgentGraphError(
            codes.AGENT_SPEC_INVALID, f"Cannot read the answer script {rest}: {reason}"
        ) from None
