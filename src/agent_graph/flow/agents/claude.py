"""The ``claude`` adapter: Agent steps run by Claude Code in headless (print) mode.

``--agent claude`` or ``--agent 'claude:["--model","sonnet","--permission-mode","acceptEdits"]'``
(a JSON array of extra CLI arguments, passed through unchanged). Per Agent step::

    claude -p --output-format json --json-schema <answer schema> [--resume <session>] <extra…>

with the prompt on stdin, in the Run's working directory, with the inherited environment
(authentication is the CLI's own: a prior ``claude`` login or ``ANTHROPIC_API_KEY``).

* ``新建Agent`` (marker ``new``) starts a new session; ``复用Agent`` (``reuse``) passes
  ``--resume <request.agent>``. The agent reference is the session id: the answer binds
  the ``session_id`` of the reply's envelope, so if a CLI version hands out a new id on
  resume, the next ``复用Agent`` follows it.
* The answer is structured output. ``--json-schema`` restricts the reply to
  ``{"result": <one of the node's result names>, "content": <any JSON>}`` and the CLI
  returns it in the envelope's ``structured_output``; in case a CLI version leaves that
  out, the same shape is asked for in a short transport note appended after the three
  prompt parts, and the ``result`` text is searched for the object (whole text, a fenced
  ``json`` block, or the first JSON object with a ``result`` key).
* Failures (category ``agent_execution``): the CLI cannot start, times out (process group
  killed), crashes without an envelope, reports ``is_error`` or a non-``success``
  ``subtype`` (``error_max_turns``, ``error_during_execution`` …; those can come with exit
  0), returns no answer object, or resumes a session it does not know (it exits non-zero).
  A ``复用Agent`` step without a bound session is ``agent_binding``.

Agents that edit files need permission to, since print mode cannot ask: pass e.g.
``["--permission-mode","acceptEdits"]`` (edits only) and ``["--allowedTools","Bash(node:*)"]``
for the commands the Flow needs, or ``bypassPermissions`` inside a disposable sandbox.

Interfaces (looked up for this adapter; stored copies of public pages):

* Headless / programmatic use, ``-p``, ``--output-format json`` (``result``, ``session_id``,
  ``is_error``, ``total_cost_usd`` …), ``--resume``, prompt from stdin (``echo … | claude -p``),
  ``--json-schema`` → ``structured_output``:
  https://docs.claude.com/en/docs/claude-code/headless (read as the localized copies
  https://docs.claude.com/ko/docs/claude-code/headless and
  https://docs.claude.com/de/docs/claude-code/sdk/sdk-headless, and the history mirror
  https://spybara.com/anthropic/claude-code/history/docs/en/2026-01-29-2103..2026-01-30-1807/headless/
  for the ``--json-schema`` / ``structured_output`` paragraph).
* The envelope with ``structured_output`` and an empty ``result``:
  https://claude-cli-mastery.pages.dev/building-workflows/structured-output
* Flags (``--permission-mode`` modes, ``--allowedTools``, ``--session-id``,
  ``--fork-session``; ``--max-turns`` is not in ``claude --help`` and is not passed):
  https://docs.arantic.com/claude-code/flags (a copy
  of https://code.claude.com/docs/en/cli-reference).
* Known envelope quirks handled here: ``is_error`` with exit 0 and error subtypes
  (https://github.com/TheMorpheus407/RepoLens/issues/214,
  https://github.com/anthropics/claude-code-action/issues/823), an empty ``result``
  (https://github.com/anthropics/claude-code/issues/38706), and a JSON *array* of messages
  ending in the ``result`` message (https://github.com/open-horizon-labs/superego/issues/20).

Ambiguities, and the choice made: whether ``--resume`` keeps the session id in print mode
differs between versions (``--fork-session`` exists to force a new one) — we bind whatever
id the envelope reports. Whether the CLI enforces the schema or only tries is described
differently by third-party pages — we parse the result text too. The prompt goes on stdin,
not argv, so a long prompt cannot exceed the argument size limit and a prompt starting
with ``-`` cannot be taken for an option.

Timeout: ``from_spec(rest, timeout_s=…)``; else ``$AGC_AGENT_TIMEOUT``; else 30 minutes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ._transport import (
    answer_from,
    answer_schema,
    decode,
    invoke,
    parse_argv_json,
    process_failure,
    resolve_timeout,
    search_reply,
    tail,
    transport_note,
)
from .answer_search import too_deep_failure
from .protocol import AgentAdapter, AgentAnswer, AgentFailure, AgentRequest

__all__ = ["ClaudeAdapter", "from_spec"]

EXECUTABLE = "claude"
# Any JSON value: a string normally, structured data when a result's description asks.
_CONTENT: dict[str, Any] = {
    "description": "the result content: a string, or JSON data if the result asks for it"
}


class ClaudeAdapter:
    """Claude Code headless; see the module docstring."""

    def __init__(
        self,
        extra_args: Sequence[str] = (),
        *,
        executable: str = EXECUTABLE,
        timeout_s: float | None = None,
    ) -> None:
        self.extra_args = tuple(extra_args)
        self.executable = executable
        self.timeout_s = resolve_timeout(timeout_s)

    def argv(self, request: AgentRequest) -> list[str]:
        """The command line for ``request`` (the prompt goes on stdin)."""
        schema = answer_schema(request.results, content=_CONTENT)
        argv = [self.executable, "-p", "--output-format", "json"]
        argv += ["--json-schema", json.dumps(schema, ensure_ascii=False, separators=(",", ":"))]
        if request.marker == "reuse":
            argv += ["--resume", _bound(request)]
        return argv + list(self.extra_args)

    def ask(self, request: AgentRequest) -> AgentAnswer:
        argv = self.argv(request)
        prompt = request.prompt + transport_note(
            request, content="any JSON value; normally a string"
        )
        done = invoke(argv, cwd=request.cwd, stdin=prompt.encode("utf-8"), timeout_s=self.timeout_s)
        what = f"Claude Code (`{self.executable}`)"
        if done.timed_out or done.overflow is not None:
            raise _expect(process_failure(done, what))
        envelope = _envelope(decode(done.stdout), what)
        if envelope is None:
            failure = process_failure(done, what)
            if failure is not None:
                raise failure
            raise AgentFailure(f"{what} printed no JSON result envelope{tail(done.stdout)}")
        problem = _envelope_error(envelope)
        if problem is not None:
            raise AgentFailure(f"{what} reported an error: {problem}")
        failure = process_failure(done, what)
        if failure is not None:
            raise failure
        session = envelope.get("session_id")
        if not isinstance(session, str) or not session:
            if request.marker == "new":
                raise AgentFailure(f"{what} reported no session_id for the new session")
            session = request.agent
        structured = envelope.get("structured_output")
        if isinstance(structured, dict):
            return answer_from(structured, session, what)
        text = envelope.get("result")
        if not isinstance(text, str) or not text.strip():
            raise AgentFailure(f"{what} returned neither structured output nor a result text")
        found = search_reply(text, done, what)
        if found is None:
            raise AgentFailure(f"{what} replied without a JSON answer object{tail(text)}")
        return answer_from(found, session, what)

    def release(self, agent: str) -> None:
        """Nothing to do: the session stays with Claude Code (C.8, C.34)."""


def _bound(request: AgentRequest) -> str:
    if not request.agent:
        raise AgentFailure(
            f"`{request.node}` continues the Run's Agent (复用Agent) but no session is bound",
            "agent_binding",
        )
    return request.agent


def _expect(failure: AgentFailure | None) -> AgentFailure:
    assert failure is not None  # the callers checked timed_out / overflow
    return failure


def _envelope(stdout: str, what: str) -> dict[str, Any] | None:
    """The ``result`` message: the whole stdout as one object, the last ``type: result``
    element of an array of messages, or the last line that is such an object (a CLI
    that prints a warning line before its JSON). An envelope nested past the decoder's
    stack holds an answer nested that deep: ``agent-answer-too-deep``, not "no envelope"."""
    text = stdout.strip()
    if not text:
        return None
    candidates: list[Any] = []
    try:
        candidates.append(json.loads(text))
    except RecursionError:
        raise too_deep_failure(what) from None
    except json.JSONDecodeError:
        for line in reversed(text.splitlines()):
            try:
                candidates.append(json.loads(line))
            except json.JSONDecodeError:
                continue
            except RecursionError:
                raise too_deep_failure(what) from None
            break
    for value in candidates:
        if isinstance(value, dict) and _is_result(value):
            return value
        if isinstance(value, list):
            for item in reversed(value):
                if isinstance(item, dict) and item.get("type") == "result":
                    return item
    return None


def _is_result(value: dict[str, Any]) -> bool:
    return value.get("type") == "result" or "session_id" in value or "is_error" in value


def _envelope_error(envelope: dict[str, Any]) -> str | None:
    subtype = envelope.get("subtype")
    failed = envelope.get("is_error") is True or (isinstance(subtype, str) and subtype != "success")
    if not failed:
        return None
    # `success` says the turn ran to its end, not what went wrong: with `is_error` the
    # reason is only in `result` ("Not logged in"), so the summary starts there
    parts = [subtype] if isinstance(subtype, str) and subtype != "success" else []
    errors = envelope.get("errors")
    if isinstance(errors, list) and errors:
        parts.append("; ".join(str(e) for e in errors[:3]))
    result = envelope.get("result")
    if isinstance(result, str) and result.strip():
        parts.append(tail(result)[2:])
    return ": ".join(parts) or "is_error, with no message"


def from_spec(rest: str, *, timeout_s: float | None = None) -> AgentAdapter:
    """The adapter for ``claude`` / ``claude:<JSON array of extra args>``;
    :class:`~._transport.AgentSpecError` (``agent-spec-invalid``) for a malformed ``rest``."""
    return ClaudeAdapter(parse_argv_json(rest, "claude:"), timeout_s=timeout_s)
