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
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import AgentGraphError
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


# A fenced block: ``` or ~~~, an optional info string (json, JSON, jsonc …), the body.
_FENCE = re.compile(r"(```|~~~)[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)\n[ \t]*\1", re.DOTALL)


def find_answer_object(text: str) -> dict[str, Any] | None:
    """The answer object in what a model wrote, or None.

    Tried in order, because a model asked for "only a JSON object" still sometimes wraps
    it in a fence or a sentence: the whole text; each fenced block (``json`` or
    untagged first); then every ``{`` from the left, decoding one JSON value there. In
    each stage an object with a ``result`` key wins over one without, so an example
    object quoted before the answer does not shadow it.
    """
    stripped = text.strip()
    whole = _loads(stripped)
    if isinstance(whole, dict):
        return whole
    fenced: list[dict[str, Any]] = []
    for match in _FENCE.finditer(text):
        if not _is_json_tag(match.group(2)):
            continue
        value = _loads(match.group(3).strip())
        if isinstance(value, dict):
            fenced.append(value)
    best = _prefer_result(fenced)
    if best is not None:
        return best
    # objects inside code of another language (```python …) are not the answer
    prose = _FENCE.sub(lambda m: m.group(0) if _is_json_tag(m.group(2)) else "", text)
    return _prefer_result(_scan_objects(prose))


def _is_json_tag(tag: str) -> bool:
    return not tag or tag.lower().startswith("json")


def _prefer_result(candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    for value in candidates:
        if "result" in value:
            return value
    return candidates[0] if candidates else None


def _scan_objects(text: str, limit: int = 200) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    start = text.find("{")
    while start != -1 and len(found) < limit:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        start = text.find("{", end)
    return found


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


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
    return AgentAnswer(result=result, content=value.get("content"), agent=agent)


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
