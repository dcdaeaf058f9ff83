"""What the process-backed adapters (``command:``, ``claude``, ``codex``) share: the
timeout option, one supervised run through :mod:`agent_graph.exec`, turning how a
process ended into an :class:`AgentFailure`, and finding the answer object in text a
model wrote.

Every failure here is category ``agent_execution`` (C.31): the Agent could not give an
answer. Whether the answer's result is one the node declares is the runner's check.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import AgentGraphError
from .answer_search import Meter, too_deep, too_deep_failure
from .answer_search import find_answer_object as find_answer_object
from .protocol import AgentAnswer, AgentFailure, AgentRequest, ResultChoice
from .spec import SPEC_INVALID

if TYPE_CHECKING:
    from agent_graph.exec import Completed

#: Seconds one Agent step may take before its process group is killed. Coding agents
#: legitimately work for many minutes; the limit is there to stop a hang, not a turn.
DEFAULT_TIMEOUT_S = 30 * 60.0
#: Overrides the default for every process-backed adapter (a number of seconds).
TIMEOUT_ENV = "AGC_AGENT_TIMEOUT"
#: SIGTERM first so a real agent CLI can save its session, then SIGKILL.
TERM_GRACE_S = 1.0
# Event streams (codex --json) carry command output; cap generously, never unbounded.
MAX_STDOUT = 64 * 1024 * 1024
MAX_STDERR = 8 * 1024 * 1024
_SUMMARY_TAIL = 400
#: Seconds the reply search may take even when the CLI used up its whole timeout, so an
#: answer that arrived in time is not lost; the search of a capped reply takes far less.
SEARCH_GRACE_S = 1.0


class AgentSpecError(AgentGraphError, ValueError):
    """A malformed ``--agent`` spec or adapter option: code ``agent-spec-invalid``, and a
    :class:`ValueError` for hosts that build adapters from Python."""

    def __init__(self, message: str) -> None:
        super().__init__(SPEC_INVALID, message)


def resolve_timeout(timeout_s: float | None) -> float:
    """``timeout_s`` if given, else ``$AGC_AGENT_TIMEOUT``, else 30 minutes.

    Raises :class:`AgentSpecError` when the value is not a positive finite number.
    """
    source = "timeout"
    value: object = timeout_s
    if timeout_s is None:
        raw = os.environ.get(TIMEOUT_ENV, "").strip()
        if not raw:
            return DEFAULT_TIMEOUT_S
        source = f"${TIMEOUT_ENV}"
        try:
            value = float(raw)
        except ValueError:
            raise AgentSpecError(f"{source} must be a number of seconds: {raw!r}") from None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise AgentSpecError(f"{source} must be a positive number of seconds: {value!r}")
    return float(value)


def parse_argv_json(rest: str, what: str) -> tuple[str, ...]:
    """``rest`` as a JSON array of strings (``[]`` for an empty ``rest``)."""
    text = rest.strip()
    if not text:
        return ()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AgentSpecError(f"{what}: not a JSON array of strings ({exc.msg}): {text}") from None
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise AgentSpecError(f"{what}: must be a JSON array of strings: {text}")
    if any("\0" in x for x in value):
        raise AgentSpecError(f"{what}: an argument holds a NUL byte")
    return tuple(value)


def invoke(
    argv: Sequence[str],
    *,
    cwd: str,
    stdin: bytes | None,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
) -> Completed:
    """Run ``argv`` once, supervised; a program that cannot start is an AgentFailure."""
    from agent_graph.exec import ExecError, run

    try:
        return run(
            argv,
            cwd=cwd,
            env=dict(os.environ) if env is None else dict(env),
            timeout_s=timeout_s,
            max_stdout=MAX_STDOUT,
            max_stderr=MAX_STDERR,
            stdin=stdin,
            term_grace_s=TERM_GRACE_S,
        )
    except ExecError as exc:
        raise AgentFailure(f"Cannot start the agent `{argv[0]}`: {exc.message}") from exc


def process_failure(done: Completed, what: str) -> AgentFailure | None:
    """How ``done`` failed as a process (timeout, output limit, signal, non-zero exit), or
    None when it exited 0. Crashes carry the end of stderr: that is where CLIs explain."""
    if done.timed_out:
        return AgentFailure(
            f"{what} did not answer within {done.timeout_s:g} s; its process group was killed"
        )
    if done.overflow is not None:
        return AgentFailure(
            f"{what} wrote more than {done.overflow.limit} bytes to {done.overflow.stream}; "
            "its process group was killed"
        )
    if done.signal is not None:
        return AgentFailure(f"{what} was killed by {done.signal_name}{tail(done.stderr)}")
    if done.exit_code != 0:
        return AgentFailure(f"{what} exited with {done.exit_code}{tail(done.stderr)}")
    return None


def tail(data: bytes | str, limit: int = _SUMMARY_TAIL) -> str:
    """``": <the last non-empty lines>"`` joined with `` | ``, at most ``limit``
    characters (an empty string when there is nothing to show)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    picked: list[str] = []
    size = 0
    for line in reversed(lines[-5:]):
        picked.insert(0, line)
        size += len(line) + 3
        if size >= limit:
            break
    joined = " | ".join(picked)
    if len(joined) > limit:
        joined = "…" + joined[-(limit - 1) :]
    return ": " + joined


def decode(data: bytes) -> str:
    """Lossy UTF-8, as for command output (C.5): a stray byte must not lose an answer."""
    return data.decode("utf-8", "replace")


def search_reply(text: str, done: Completed, what: str) -> dict[str, Any] | None:
    """The answer object in ``text``, a reply of the process ``done``, searched within
    what is left of its timeout (at least :data:`SEARCH_GRACE_S`); see
    :func:`~.answer_search.find_answer_object` for the order and the coded refusals."""
    left = max(done.timeout_s - done.elapsed_s, SEARCH_GRACE_S)
    return find_answer_object(text, what, meter=Meter(time.monotonic() + left))


def answer_from(value: Any, agent: str | None, what: str) -> AgentAnswer:
    """An :class:`AgentAnswer` from a decoded answer object (``result`` a non-empty
    string, ``content`` any JSON, absent meaning null) bound to ``agent``."""
    if not isinstance(value, dict):
        raise AgentFailure(f"{what} answered with {_kind(value)}, not a JSON object")
    if "result" not in value:
        raise AgentFailure(f"{what} answered without a `result`: {_preview(value)}")
    result = value["result"]
    if not isinstance(result, str) or not result:
        raise AgentFailure(f"{what} answered with a `result` that is not a name: {result!r}")
    if too_deep(value):
        raise too_deep_failure(what)
    return AgentAnswer(result=result, content=value.get("content"), agent=agent)


def loads_reply(text: str, what: str) -> Any:
    """``text`` decoded as JSON; an :class:`AgentFailure` when it is not JSON, and the
    coded ``agent-answer-too-deep`` one when it is nested past the decoder's stack (so a
    deep answer is not reported as "not JSON")."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise AgentFailure(f"{what} printed something that is not JSON ({error.msg})") from None
    except RecursionError:
        raise too_deep_failure(what) from None


def answer_schema(results: Sequence[ResultChoice], *, content: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of an answer to a node with ``results``: ``result`` one of their
    names, ``content`` as given (each CLI accepts a different subset of JSON Schema)."""
    names = [r.name for r in results]
    result: dict[str, Any] = {"type": "string", "description": "the result name you submit"}
    if names:
        result["enum"] = names
    return {
        "type": "object",
        "properties": {"result": result, "content": content},
        "required": ["result", "content"],
        "additionalProperties": False,
    }


def transport_note(request: AgentRequest, *, content: str) -> str:
    """What an agent CLI needs beyond the three prompt parts (§3.2): that its final reply
    *is* the result submission, and in which shape. ``content`` says what the content may
    be for this transport. On the re-prompt it names the rejected result (C.1)."""
    names = ", ".join(json.dumps(r.name, ensure_ascii=False) for r in request.results)
    lines = [
        "",
        "---",
        "How to submit your result here: your final reply is the submission. End your turn",
        'with only a JSON object {"result": <one of: ' + names + '>, "content": <content>},',
        'no prose around it. "result" is exactly one of the result names above; "content"',
        f"is the result content ({content}).",
    ]
    if request.rejected is not None:
        lines.append(
            f"Your previous answer named the result {json.dumps(request.rejected)}, which this "
            "step does not allow; answer again with one of the names listed."
        )
    return "\n".join(lines) + "\n"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _preview(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
