"""The ``command:`` adapter: one process per Agent step, JSON in, JSON out.

``--agent 'command:["python3","agent.py"]'`` (a JSON array argv) or
``--agent command:my-agent`` (one program name without spaces, found on ``PATH``;
arguments need the array form). For every Agent step the program is started once, in
the Run's working directory, with the inherited environment and no shell, and gets on
stdin the request as compact UTF-8 JSON (:meth:`AgentRequest.to_json`)::

    {"runId","flow","node","marker":"new"|"reuse","agent":<bound ref or null>,
     "prompt","results":[{"name","description"}]}

(plus ``"attempt":2,"rejected":<name>`` on the single re-prompt after an undeclared
result, C.1). It answers on stdout with one JSON object::

    {"result":<name>,"content":<any JSON>,"agent":<ref>}

``agent`` is the Agent that answered, which the Run binds; absent or null, it is the
request's ``agent`` (so a program that keeps no identity still works with ``复用Agent``).

Failures, each :class:`AgentFailure` with category ``agent_execution``: the program
cannot start; it runs past the timeout (its whole process group is killed); it is killed
by a signal or exits non-zero (the summary ends with its last stderr lines); its stdout
is not one JSON object, has no ``result``, or a ``result`` that is not a string. The
result name is not checked against the node here: the runner does that (one re-prompt,
then ``outcome_validation``), the same for every adapter.

Timeout: ``from_spec(rest, timeout_s=…)``; else ``$AGC_AGENT_TIMEOUT`` (seconds); else
30 minutes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from ._transport import (
    AgentSpecError,
    answer_from,
    decode,
    invoke,
    parse_argv_json,
    process_failure,
    resolve_timeout,
    tail,
)
from .answer_search import too_deep_failure
from .protocol import AgentAdapter, AgentAnswer, AgentFailure, AgentRequest

__all__ = ["CommandAdapter", "from_spec", "parse_argv", "portable"]


class CommandAdapter:
    """Runs ``argv`` once per Agent step (see the module docstring for the wire format)."""

    def __init__(self, argv: Sequence[str], *, timeout_s: float | None = None) -> None:
        args = tuple(argv)
        if not args or not all(isinstance(a, str) for a in args) or not args[0]:
            raise AgentSpecError("command: the argv must be a non-empty array of strings")
        self.argv = args
        self.timeout_s = resolve_timeout(timeout_s)

    def ask(self, request: AgentRequest) -> AgentAnswer:
        payload = json.dumps(request.to_json(), ensure_ascii=False, separators=(",", ":"))
        what = f"The agent command `{self.argv[0]}`"
        done = invoke(
            self.argv, cwd=request.cwd, stdin=payload.encode("utf-8"), timeout_s=self.timeout_s
        )
        failure = process_failure(done, what)
        if failure is not None:
            raise failure
        text = decode(done.stdout).strip()
        if not text:
            raise AgentFailure(f"{what} printed nothing on stdout{tail(done.stderr)}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise AgentFailure(f"{what} printed something that is not JSON{tail(text)}") from None
        except RecursionError:  # deep, not broken: its own coded failure
            raise too_deep_failure(what) from None
        agent = value.get("agent") if isinstance(value, dict) else None
        if agent is not None and not isinstance(agent, str):
            raise AgentFailure(f"{what} answered with an `agent` that is not a string: {agent!r}")
        return answer_from(value, agent if agent is not None else request.agent, what)

    def release(self, agent: str) -> None:
        """Nothing to do: the program owns whatever ``agent`` names."""


def parse_argv(rest: str) -> tuple[str, ...]:
    """The argv of ``command:<rest>``; :class:`AgentSpecError` (``agent-spec-invalid``, a
    ``ValueError``) for a malformed ``rest``."""
    text = rest.strip()
    if not text:
        raise AgentSpecError("command: needs a program: command:NAME or command:[JSON argv]")
    if text.startswith("["):
        argv = parse_argv_json(text, "command:")
        if not argv or not argv[0]:
            raise AgentSpecError("command: the argv array must name a program")
        return argv
    if text[0] in '{"' or any(c.isspace() for c in text):
        # `command:python3 agent.py` would silently look for a program of that name
        raise AgentSpecError(
            f"command: {text!r} is not a program name; give arguments as a JSON array: "
            'command:["python3","agent.py"]'
        )
    return (text,)


def portable(rest: str, base: str) -> str:
    """``rest`` with a program path holding a ``/`` and every argument naming an existing
    file made absolute from ``base`` (``["python3","agent.py"]`` finds agent.py where it
    was typed, not in the Run's --cwd); a bare program name stays a ``PATH`` name."""
    argv = parse_argv(rest)
    if not rest.strip().startswith("[") and os.sep not in argv[0]:
        return rest
    program, *args = argv
    if os.sep in program:
        program = os.path.abspath(os.path.join(base, program))
    named = [os.path.abspath(os.path.join(base, a)) if _names_file(base, a) else a for a in args]
    return json.dumps([program, *named], ensure_ascii=False)


def _names_file(base: str, word: str) -> bool:
    if not word or word.startswith("-"):
        return False
    try:
        return os.path.isfile(os.path.join(base, word))
    except (OSError, ValueError):  # a NUL or an over-long name names no file
        return False


def from_spec(rest: str, *, timeout_s: float | None = None) -> AgentAdapter:
    """The adapter for ``command:<rest>`` (argv as given: ``--agent`` goes through
    :func:`.spec.adapter_from_spec`, which resolves it from the invoking directory first)."""
    return CommandAdapter(parse_argv(rest), timeout_s=timeout_s)
