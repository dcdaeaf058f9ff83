"""``script:FILE``: answers read from a file, one JSON object per line, in order.

Each line is ``{"result": <name>, "content": <any JSON>, "agent": <ref>}`` (``content``
defaults to null). Every Agent step of the process takes the next line, parent and
child Runs alike, in execution order; each ``run``/``resume`` builds a new adapter, so
it starts at the first line again. A rejected (undeclared) answer uses up its line and
the single re-prompt takes the next one. Blank lines are skipped.

``agent`` may be left out: a ``新建Agent`` step then gets ``script-agent-<line>`` and a
``复用Agent`` step keeps the bound Agent. A line that is not such an object, and running
out of lines, are :class:`AgentFailure` (``agent_execution``) naming the file and line.
Meant for tests, demos and CI: no model is involved.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any, Final

from ... import codes
from .protocol import AgentAnswer, AgentFailure, AgentRequest

#: The largest answer script read (32 MiB, the Provider files' cap): answers are lines of
#: JSON, so more is a mistaken path (a log, a device), not a script.
MAX_SCRIPT_BYTES: Final = 32 * 1024 * 1024


class NotScript(Exception):
    """The file is no answer script: ``code`` and ``reason`` say why."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def _read(path: Path) -> bytes:
    """The file's bytes, opened without blocking (a FIFO would wait for a writer forever)
    and read to the cap + 1 at most (``/dev/zero`` never ends)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotScript(codes.FILE_READ_FAILED, "not a regular file")
        if info.st_size > MAX_SCRIPT_BYTES:
            raise _too_large()
        chunks: list[bytes] = []
        size = 0
        # the size a file reports may be stale (it grows): the cap is on what is read
        while size <= MAX_SCRIPT_BYTES and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > MAX_SCRIPT_BYTES:
        raise _too_large()
    return b"".join(chunks)


def _too_large() -> NotScript:
    return NotScript(
        codes.FILE_TOO_LARGE, f"over the {MAX_SCRIPT_BYTES // (1024 * 1024)} MiB limit"
    )


class ScriptAdapter:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        text = _read(self.path).decode("utf-8")
        self._lines = [(n, x) for n, x in enumerate(text.splitlines(), start=1) if x.strip()]
        self._next = 0
        self._lock = threading.Lock()
        self.requests: list[AgentRequest] = []
        self.released: list[str] = []

    def ask(self, request: AgentRequest) -> AgentAnswer:
        with self._lock:
            self.requests.append(request)
            if self._next >= len(self._lines):
                raise AgentFailure(
                    f"{self.path}: no answer left for {request.flow}.{request.node} "
                    f"(the script has {len(self._lines)} answer line(s))"
                )
            number, line = self._lines[self._next]
            self._next += 1
        where = f"{self.path}:{number}"
        try:
            value: Any = json.loads(line)
        except json.JSONDecodeError as error:
            raise AgentFailure(f"{where}: the answer is not JSON ({error.msg})") from None
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
    except NotScript as error:
        raise AgentGraphError(
            error.code, f"Cannot read the answer script {rest}: {error.reason}"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise AgentGraphError(
            codes.AGENT_SPEC_INVALID, f"Cannot read the answer script {rest}: {reason}"
        ) from None
