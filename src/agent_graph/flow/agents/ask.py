"""``--agent ask``: the person at the terminal answers each Agent step (docs/agents.md).

For every Agent step the adapter writes the step's prompt (exactly what an Agent would
get) and its declared results, numbered, to the terminal, then reads the chosen result
(its number or its name; an invalid choice is asked again; Enter alone picks a step's
only result) and the content: text lines up to an empty line, or ``json:`` followed by a
JSON value. A ``新建Agent`` step gets a new reference ``ask-<hex>``; a ``复用Agent`` step
keeps the bound one.

The terminal is ``/dev/tty``, the process's controlling terminal, not stdin/stderr: the
questions and answers stay off stdout (``--format json`` piped to a file or ``jq`` still
asks), stdin redirected from a file still asks the person rather than reading the file
as answers, and "no terminal" is one check that cannot be fooled by a redirection (cron,
CI, ``setsid``, a container without ``-t``: the open fails). Without one, ``from_spec``
refuses at once with ``agent-ask-no-terminal``, before any Run record is written.

Ctrl-C (or SIGTERM) while a question is open runs the host's own handler (``agc flow``:
the Run's stop request) and abandons the question, so the Run ends *interrupted* and
resumes at this step; Ctrl-D on an empty line does the same, since a person who ends the
input wants to stop, not to fail a Run they could not then resume.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, Final

from ... import codes
from ...errors import AgentGraphError
from .protocol import AgentAnswer, AgentFailure, AgentRequest, ResultChoice

TERMINAL: Final = "/dev/tty"
JSON_PREFIX: Final = "json:"
#: Control characters a prompt may carry (command output in ``{outcome}``): shown as
#: ``^X`` so they cannot move the cursor or recolour the person's terminal.
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_READ_CHUNK: Final = 4096


class _Abandoned(Exception):
    """The question was abandoned: a stop signal arrived while it was open."""


def _visible(text: str) -> str:
    return _CONTROL.sub(lambda m: "^" + chr((ord(m.group()) + 64) % 128), text)


class _Terminal:
    """Line I/O on the controlling terminal's file descriptor, unbuffered."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        while data:
            data = data[os.write(self.fd, data) :]

    def line(self) -> str | None:
        """One line without its newline; None at end of input (Ctrl-D on an empty line)."""
        chunks: list[bytes] = []
        while True:
            chunk = os.read(self.fd, _READ_CHUNK)
            if not chunk:
                if not chunks:
                    return None
                break  # Ctrl-D after some text ends that text as a line
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                break
        return b"".join(chunks).decode("utf-8", "replace").rstrip("\r\n")


def _open_terminal(path: str) -> int:
    flags = os.O_RDWR | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    if not os.isatty(fd):
        os.close(fd)
        raise OSError(f"{path} is not a terminal")
    return fd


@contextmanager
def _terminal(path: str) -> Iterator[_Terminal]:
    fd = _open_terminal(path)
    try:
        yield _Terminal(fd)
    finally:
        os.close(fd)


@contextmanager
def _abandon_on_stop() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM run the handler that was there (the Run's stop
    request) and then abandon the open question (:class:`_Abandoned`). Only a Python
    handler is chained: an ignored or default disposition is the host's and stays."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        before = previous[signum]
        before(signum, frame)  # e.g. agc's stop request, or Python's KeyboardInterrupt
        raise _Abandoned

    for signum in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(signum)
        if callable(current):
            previous[signum] = current
            signal.signal(signum, handler)
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


def _end_of_input() -> None:
    """Ctrl-D: stop the way Ctrl-C does, through the host's own SIGINT handler (only a
    Python one: a default disposition would kill the process outright)."""
    main = threading.current_thread() is threading.main_thread()
    if main and callable(signal.getsignal(signal.SIGINT)):
        signal.raise_signal(signal.SIGINT)


def _question(request: AgentRequest) -> str:
    marker = "新建Agent" if request.marker == "new" else f"复用Agent {request.agent}"
    rule = "─" * 8
    lines = [
        "",
        f"{rule} Agent step {request.flow}.{request.node} ({marker}) {rule}",
        "The prompt an Agent would get:",
        *(f"│ {line}" for line in _visible(request.prompt).split("\n")),
    ]
    if request.rejected is not None:
        lines.append(f"(The result {request.rejected!r} was refused: it is not declared.)")
    lines.append("Answer it as the Agent. Its results:")
    lines += [
        f"  {i}. {_visible(r.name)}: {_visible(r.description)}"
        for i, r in enumerate(request.results, start=1)
    ]
    return "\n".join(lines) + "\n"


def _pick(text: str, results: tuple[ResultChoice, ...]) -> ResultChoice | None:
    text = text.strip()
    if not text and len(results) == 1:
        return results[0]
    by_name = next((r for r in results if r.name == text), None)
    if by_name is not None:
        return by_name
    if text.isdigit() and 1 <= int(text) <= len(results):
        return results[int(text) - 1]
    return None


def _read_result(term: _Terminal, results: tuple[ResultChoice, ...]) -> ResultChoice:
    if not results:
        raise AgentFailure("the step declares no result to choose from")
    span = "1" if len(results) == 1 else f"1-{len(results)}"
    default = ", Enter for 1" if len(results) == 1 else ""
    while True:
        term.write(f"Result ({span} or its name{default}): ")
        line = term.line()
        if line is None:
            _end_of_input()
            raise AgentFailure("the terminal's input ended before a result was chosen")
        choice = _pick(line, results)
        if choice is not None:
            return choice
        term.write(f"{_visible(line.strip())!r} is not a result of this step.\n")


def _read_content(term: _Terminal) -> Any:
    while True:
        term.write(f"Content (text, ended by an empty line; or {JSON_PREFIX} and a JSON value):\n")
        lines: list[str] = []
        while True:
            line = term.line()
            if line is None:
                if not lines:
                    _end_of_input()
                    raise AgentFailure("the terminal's input ended before the content")
                break
            if not line and lines:
                break
            if not line:
                continue  # an empty line before any text does not end the content
            lines.append(line)
        text = "\n".join(lines)
        if not text.startswith(JSON_PREFIX):
            return text
        try:
            return json.loads(text[len(JSON_PREFIX) :], parse_constant=_no_constant)
        except (json.JSONDecodeError, RecursionError, ValueError) as error:
            reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
            term.write(f"That is not a JSON value ({reason}); give the content again.\n")


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON data: a Run would refuse the answer and fail."""
    raise ValueError(f"{name} is not JSON data")


class AskAdapter:
    """Asks the person at ``terminal`` (normally ``/dev/tty``) for every Agent step."""

    def __init__(self, terminal: str = TERMINAL) -> None:
        self.terminal = terminal

    def ask(self, request: AgentRequest) -> AgentAnswer:
        try:
            with _terminal(self.terminal) as term:
                try:
                    with _abandon_on_stop():
                        term.write(_question(request))
                        choice = _read_result(term, request.results)
                        content = _read_content(term)
                except _Abandoned:
                    term.write("\n(interrupted)\n")
                    raise AgentFailure("interrupted while asking at the terminal") from None
        except OSError as error:
            raise AgentFailure(f"cannot use the terminal {self.terminal}: {error}") from None
        agent = f"ask-{secrets.token_hex(4)}" if request.marker == "new" else request.agent
        return AgentAnswer(choice.name, content, agent)

    def release(self, agent: str) -> None:
        """Nothing to do: the person is not a session that needs closing."""


def from_spec(rest: str, *, terminal: str = TERMINAL) -> AskAdapter:
    """``ask`` → the adapter; ``agent-ask-no-terminal`` when there is no terminal to ask on."""
    if rest:
        raise AgentGraphError(
            codes.AGENT_SPEC_INVALID, f"ask takes no arguments: --agent ask, not ask:{rest}"
        )
    try:
        os.close(_open_terminal(terminal))
    except OSError as error:
        reason = error.strerror or str(error)
        raise AgentGraphError(
            codes.AGENT_ASK_NO_TERMINAL,
            f"--agent ask needs a terminal to ask on, and this process has none ({terminal}: "
            f"{reason}); give answers from a file with --agent script:FILE (docs/agents.md)",
        ) from None
    return AskAdapter(terminal)
