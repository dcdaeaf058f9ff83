"""The ``codex`` adapter: Agent steps run by the OpenAI Codex CLI, non-interactively.

``--agent codex`` or ``--agent 'codex:["--sandbox","workspace-write","-m","gpt-5-codex"]'``
(a JSON array of extra ``codex exec`` options, passed through unchanged). Per Agent step::

    codex exec --json --output-schema <file> --output-last-message <file> <extra…> -
    codex exec --json --output-schema <file> --output-last-message <file> <extra…> resume <thread> -

with the prompt on stdin (``-``), in the Run's working directory, with the inherited
environment (authentication is the CLI's own: ``codex login`` or ``CODEX_API_KEY``).

* ``新建Agent`` (marker ``new``) runs ``codex exec``; ``复用Agent`` (``reuse``) runs
  ``codex exec … resume <request.agent>``. The agent reference is the thread id that the
  JSONL stream's first event reports (``{"type":"thread.started","thread_id":…}``; the
  source emits it from the session's configuration, so for a resumed thread too), so the
  next ``复用Agent`` follows it.
* The answer is structured output: ``--output-schema`` gives the model the strict schema
  ``{"result": <one of the node's result names>, "content": <string>}`` and its final
  message is that JSON. Strict schemas cannot say "any JSON", so Codex's result content
  is a string (C.13: the normal case). The final message is the last ``item.completed``
  of type ``agent_message``, else the ``--output-last-message`` file. The same shape is
  asked for in a transport note appended after the three prompt parts, because a resumed
  turn may run without the schema (below), and the text is searched for the object (whole
  text, a fenced ``json`` block, or the first JSON object with a ``result`` key).
* Failures (category ``agent_execution``): the CLI cannot start, times out (process group
  killed), exits non-zero (the summary is the ``turn.failed`` / ``error`` message, else the
  end of stderr; a resume of an unknown thread is one), or ends without an answer object.
  A ``复用Agent`` step without a bound thread is ``agent_binding``.

Options: every option we add, and the extra arguments, go *before* the ``resume``
subcommand: ``--json`` and ``--output-last-message`` are global in current versions but
``--output-schema``, ``--sandbox`` and others are ``exec`` options that only parse there.
``codex exec`` runs read-only by default and refuses a working directory outside a Git
repository: agents that edit files need ``["--sandbox","workspace-write"]``, and a Run
outside a repository needs ``["--skip-git-repo-check"]``.

Interfaces (looked up for this adapter; stored copies of public pages):

* Non-interactive mode (``codex exec``, stderr progress, ``--json``, ``--output-schema``,
  ``-o``/``--output-last-message``, ``codex exec resume <SESSION_ID>``, ``--sandbox``,
  ``--ephemeral``, stdin prompts): https://developers.openai.com/codex/noninteractive
  (https://developers.openai.com/codex/noninteractive.md; flags:
  https://developers.openai.com/codex/cli/reference#codex-exec).
* The JSONL events (``thread.started``/``thread_id``, ``turn.completed``, ``turn.failed``,
  ``error``, ``item.completed`` with ``agent_message`` text — "a JSON string when
  structured output is requested"): the CLI's own source,
  https://github.com/openai/codex/blob/main/codex-rs/exec/src/exec_events.rs and
  https://github.com/openai/codex/blob/main/codex-rs/exec/src/event_processor_with_jsonl_output.rs;
  summarised at https://takopi.banteg.xyz/reference/runners/codex/exec-json-cheatsheet.
* Which options are global, ``resume``'s ``SESSION_ID`` and ``-`` for a stdin prompt:
  https://github.com/openai/codex/blob/main/codex-rs/exec/src/cli.rs
* The output schema is sent as ``strict: true`` (every property required,
  ``additionalProperties: false``): https://github.com/openai/codex/blob/main/codex-rs/exec/src/lib.rs

Ambiguities, and the choice made: releases before 0.132 did not accept ``--output-schema``
*after* ``resume`` and might not apply it to a resumed turn
(https://github.com/openai/codex/issues/14343, https://github.com/openai/codex/issues/22998;
0.132 and later take it there too, openai/codex#23123); we pass it before the subcommand,
where every release parses it, and rely on the prompt note and text parsing when it is
ignored. Older versions used ``item_type``/``assistant_message`` for
the final message item (openai/codex#4525, "Remove legacy codex exec --json format", read in
a mirror of the repository's history: https://dev.pivoine.art/valknar/llmx/src/commit/349ef7edc64c305139d4b727c01a893b3fd90380/codex-rs/exec/src);
both are read. An
``error`` event can be a transient reconnect notice, so it only explains a failure, it
does not make one.

Timeout: ``from_spec(rest, timeout_s=…)``; else ``$AGC_AGENT_TIMEOUT``; else 30 minutes.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
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
from .answer_search import MAX_REPLY_CHARS
from .protocol import AgentAdapter, AgentAnswer, AgentFailure, AgentRequest

__all__ = ["CodexAdapter", "from_spec"]

EXECUTABLE = "codex"
_CONTENT: dict[str, Any] = {"type": "string", "description": "the result content"}
_MESSAGE_TYPES = frozenset({"agent_message", "assistant_message"})


class CodexAdapter:
    """OpenAI Codex ``codex exec``; see the module docstring."""

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

    def argv(self, request: AgentRequest, schema_file: str, last_file: str) -> list[str]:
        """The command line for ``request`` (the prompt goes on stdin: the final ``-``)."""
        argv = [self.executable, "exec", "--json"]
        argv += ["--output-schema", schema_file, "--output-last-message", last_file]
        argv += self.extra_args
        if request.marker == "reuse":
            argv += ["resume", _bound(request)]
        return [*argv, "-"]

    def ask(self, request: AgentRequest) -> AgentAnswer:
        what = f"Codex (`{self.executable}`)"
        prompt = request.prompt + transport_note(request, content="a string")
        with tempfile.TemporaryDirectory(prefix="agc-codex-") as scratch:
            schema_file = os.path.join(scratch, "answer.schema.json")
            last_file = os.path.join(scratch, "last-message.txt")
            with open(schema_file, "w", encoding="utf-8") as out:
                json.dump(answer_schema(request.results, content=_CONTENT), out)
            argv = self.argv(request, schema_file, last_file)
            done = invoke(
                argv, cwd=request.cwd, stdin=prompt.encode("utf-8"), timeout_s=self.timeout_s
            )
            last_message = _read(last_file)
        stream = _Stream.parse(decode(done.stdout))
        if done.timed_out or done.overflow is not None or done.signal is not None:
            raise _expect(process_failure(done, what))
        if done.exit_code != 0 or stream.failed is not None:
            reason = stream.failed or stream.error
            if reason is not None:
                raise AgentFailure(f"{what} failed: {reason}{_exit(done.exit_code)}")
            raise _expect(process_failure(done, what))
        message = stream.message if stream.message is not None else last_message
        if message is None or not message.strip():
            raise AgentFailure(f"{what} ended without a final agent message{tail(done.stderr)}")
        thread = stream.thread_id
        if thread is None:
            if request.marker == "new":
                raise AgentFailure(f"{what} reported no thread id (no thread.started event)")
            thread = request.agent
        found = search_reply(message, done, what)
        if found is None:
            raise AgentFailure(f"{what} replied without a JSON answer object{tail(message)}")
        return answer_from(found, thread, what)

    def release(self, agent: str) -> None:
        """Nothing to do: the thread stays with Codex (C.8, C.34)."""


@dataclass
class _Stream:
    """What the JSONL event stream says; lines that are not JSON objects are skipped
    (a CLI may print a notice on stdout), unknown event types are ignored."""

    thread_id: str | None = None
    message: str | None = None
    failed: str | None = None
    error: str | None = None

    @classmethod
    def parse(cls, stdout: str) -> _Stream:
        out = cls()
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(event, dict):
                out._take(event)
        return out

    def _take(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "thread.started":
            thread = event.get("thread_id")
            if isinstance(thread, str) and thread and self.thread_id is None:
                self.thread_id = thread
        elif kind == "item.completed":
            item = event.get("item")
            if isinstance(item, dict):
                item_type = item.get("type", item.get("item_type"))
                text = item.get("text")
                if item_type in _MESSAGE_TYPES and isinstance(text, str):
                    self.message = text
        elif kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            self.failed = message if isinstance(message, str) and message else "turn failed"
        elif kind == "error":
            message = event.get("message")
            if isinstance(message, str) and message:
                self.error = message


def _bound(request: AgentRequest) -> str:
    if not request.agent:
        raise AgentFailure(
            f"`{request.node}` continues the Run's Agent (复用Agent) but no thread is bound",
            "agent_binding",
        )
    return request.agent


def _expect(failure: AgentFailure | None) -> AgentFailure:
    assert failure is not None  # the callers checked how the process ended
    return failure


def _exit(code: int | None) -> str:
    return f" (exit {code})" if code not in (None, 0) else ""


def _read(path: str) -> str | None:
    """The last-message file, read to one character past the searched limit: longer is
    refused by the search (``agent-reply-too-large``) however long it is."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_REPLY_CHARS + 1)
    except OSError:
        return None


def from_spec(rest: str, *, timeout_s: float | None = None) -> AgentAdapter:
    """The adapter for ``codex`` / ``codex:<JSON array of extra exec options>``;
    :class:`~._transport.AgentSpecError` (``agent-spec-invalid``) for a malformed ``rest``."""
    return CodexAdapter(parse_argv_json(rest, "codex:"), timeout_s=timeout_s)
