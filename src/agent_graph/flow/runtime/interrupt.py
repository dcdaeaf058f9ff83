"""Stopping a Run cleanly: SIGINT/SIGTERM mark it interrupted and stop what it started.

Commands and adapter programs run in process groups of their own (the exec layer makes
each one a session leader), so a terminal's Ctrl-C does not reach them. On a stop
request every direct child of this process that leads its own process group gets
SIGTERM for its whole group, and SIGKILL after :data:`GRACE_S` if it is still there;
the exec layer then reaps it and the runner records the step as interrupted (C.10).
A second signal kills at once.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Final

GRACE_S: Final = 2.0


class Stop:
    """A stop request, shared by a Run, its child Runs and its branch threads."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signals = 0

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def request(self, *, kill_children: bool = True) -> None:
        first = not self._event.is_set()
        self._event.set()
        if not kill_children:
            return
        if first:
            _signal_child_groups(signal.SIGTERM)
            timer = threading.Timer(GRACE_S, _signal_child_groups, (signal.SIGKILL,))
            timer.daemon = True
            timer.start()
        else:
            _signal_child_groups(signal.SIGKILL)


def _child_groups() -> list[int]:
    """Direct children of this process that lead their own process group."""
    me = os.getpid()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        # fields: state ppid pgrp …
        if len(fields) >= 3 and fields[1] == str(me).encode() and fields[2] == entry.encode():
            found.append(int(entry))
    return found


def _signal_child_groups(signum: int) -> None:
    for pgid in _child_groups():
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)


@contextmanager
def signals_stop(stop: Stop) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM request ``stop`` instead of raising (main thread
    only; elsewhere the host's own handling stays)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.signals += 1
        stop.request()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
