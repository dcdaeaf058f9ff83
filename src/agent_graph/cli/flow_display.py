"""What ``agc flow run|resume|status|events`` show a person: the running steps on the
terminal, a Run's result as text, and which command visits the timeout killed.

The progress line is drawn only on a terminal (stderr is a TTY): one line, the running
nodes with their elapsed seconds, redrawn twice a second and cleared before any other
output and at the end, so stdout and non-terminal stderr carry nothing of it.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

#: Redraws per second of the progress line (whole seconds are shown; twice a second
#: keeps the count from lagging a full second behind).
_TICK_S = 0.5
#: The most lines of a result the summary prints; the rest is one `agc flow status` away.
RESULT_LINES = 20
_WIDTH = 500
_COMMAND_KEYS = frozenset({"status", "exitCode", "stdout", "stderr"})

Event = dict[str, Any]


class Progress:
    """The progress line on ``stream`` (a terminal); :meth:`wrap` puts it around the
    function that prints events, :meth:`close` clears it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._running: dict[tuple[str, str], tuple[str, float]] = {}
        self._lock = threading.Lock()
        self._shown = False
        self._done = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="agc-progress", daemon=True)
        self._ticker.start()

    def wrap(self, show: Callable[[Event, int], None] | None) -> Callable[[Event, int], None]:
        def on_event(event: Event, depth: int) -> None:
            with self._lock:
                self._clear()
                if show is not None:
                    show(event, depth)
                self._track(event)
                self._draw()

        return on_event

    def close(self) -> None:
        self._done.set()
        self._ticker.join(timeout=2)
        with self._lock:
            self._running.clear()
            self._clear()

    def _track(self, event: Event) -> None:
        key = (str(event.get("runId")), str(event.get("visit")))
        kind = event.get("type")
        if kind == "visit-started":
            self._running[key] = (str(event.get("node")), time.monotonic())
        elif kind in ("visited", "visit-failed", "visit-interrupted"):
            self._running.pop(key, None)
        elif kind in ("run-completed", "run-failed", "run-interrupted"):
            run = str(event.get("runId"))
            for gone in [k for k in self._running if k[0] == run]:
                del self._running[gone]

    def _tick(self) -> None:
        while not self._done.wait(_TICK_S):
            with self._lock:
                self._draw()

    def _draw(self) -> None:
        if not self._running:
            self._clear()
            return
        at = time.monotonic()
        steps = ", ".join(f"{node} ({int(at - t0)} s)" for node, t0 in self._running.values())
        width = max(10, shutil.get_terminal_size((80, 24)).columns - 1)
        line = f"running {steps}"
        if len(line) > width:  # a wrapped line could not be cleared with one \r
            line = line[: width - 1] + "…"
        self.stream.write(f"\r\x1b[K{line}")
        self.stream.flush()
        self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def is_command_content(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == _COMMAND_KEYS


def result_lines(value: Any, more: str) -> list[str]:
    """``Result: …`` as text: a string as it is, a command's stdout (and how it ended when
    it failed), other JSON compact; at most :data:`RESULT_LINES` lines, then ``more``."""
    from ..flow.runtime.commands import timed_out

    notes: list[str] = []
    if is_command_content(value):
        text = str(value["stdout"])
        if timed_out(value):
            notes.append("(the command timed out: --command-timeout)")
        elif value["status"] != "success":
            notes.append(f"(the command failed: exit code {value['exitCode']})")
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False)
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    if not lines and not notes:
        return ["Result: (empty)"]
    shown = [
        line if len(line) <= _WIDTH else line[: _WIDTH - 1] + "…" for line in lines[:RESULT_LINES]
    ]
    if len(shown) == 1 and not notes:
        return [f"Result: {shown[0]}"]
    out = ["Result:", *(f"  {line}" for line in shown)]
    if len(lines) > len(shown):
        out.append(f"  … {len(lines) - len(shown)} more line(s): {more}")
    return out + [f"  {note}" for note in notes]


def ended_how(content: Any) -> str:
    """``", timed out"`` for a command the timeout killed, else nothing."""
    from ..flow.runtime.commands import timed_out

    return ", timed out" if timed_out(content) else ""
