"""Stopping a Run cleanly: SIGINT/SIGTERM mark it interrupted and stop what it started.

Commands and adapter programs run in process groups of their own (the exec layer makes
each one a session leader), so a terminal's Ctrl-C does not reach them. On a stop
request every direct child of this process that leads its own process group gets
SIGTERM for its whole group, and SIGKILL after :data:`GRACE_S` if it is still there;
the exec layer then reaps it and the runner records the step as interrupted (C.10).
A second signal kills at once.

A process serving several Runs at once (``agc mcp serve``) cannot signal every group it
started for one of them. There a Run's driver thread is marked with :meth:`Stop.owning`
and ``request(kill_children=False, kill_own=True)`` signals only the groups whose leader
that thread started (Linux lists a thread's own children in
``/proc/self/task/<tid>/children``): the Run's running command, nothing of another Run.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Final

GRACE_S: Final = 2.0


class Stop:
    """A stop request, shared by a Run, its child Runs and its branch threads."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signals = 0
        #: native ids of the threads whose commands are this Run's (see :meth:`owning`)
        self._threads: set[int] = set()
        self._lock = threading.Lock()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    @contextmanager
    def owning(self) -> Iterator[None]:
        """While inside, what the current thread starts is this Run's to kill
        (``kill_own``); a command started on another thread (a parallel branch) is not."""
        me = threading.get_native_id()
        with self._lock:
            self._threads.add(me)
        try:
            yield
        finally:
            with self._lock:
                self._threads.discard(me)

    def request(self, *, kill_children: bool = True, kill_own: bool = False) -> None:
        """Stop the Run; ``kill_children`` signals every group this process started,
        ``kill_own`` only those started by the threads inside :meth:`owning`."""
        first = not self._event.is_set()
        self._event.set()
        if kill_children:
            groups: Callable[[], list[int]] = _child_groups
        elif kill_own:
            groups = self._own_groups
        else:
            return
        if first:
            _signal_groups(groups, signal.SIGTERM)
            timer = threading.Timer(GRACE_S, _signal_groups, (groups, signal.SIGKILL))
            timer.daemon = True
            timer.start()
        else:
            _signal_groups(groups, signal.SIGKILL)

    def _own_groups(self) -> list[int]:
        with self._lock:
            threads = sorted(self._threads)
        found = []
        for tid in threads:
            try:
                with open(f"/proc/self/task/{tid}/children", "rb") as handle:
                    children = handle.read().split()
            except OSError:
                continue
            found += [int(pid) for pid in children if _leads_group(pid.decode())]
        return found


def _child_groups() -> list[int]:
    """Direct children of this process that lead their own process group."""
    me = str(os.getpid()).encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.isdigit():
            fields = _stat_fields(entry)
            if len(fields) >= 3 and fields[1] == me and fields[2] == entry.encode():
                found.append(int(entry))
    return found


def _leads_group(pid: str) -> bool:
    fields = _stat_fields(pid)
    return len(fields) >= 3 and fields[2] == pid.encode()


def _stat_fields(pid: str) -> list[bytes]:
    """``/proc/PID/stat`` after the command name: state, ppid, pgrp, …; empty when the
    process is gone (the name is cut at its last ``)``, since it may hold spaces)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2 :].split()


def _signal_groups(groups: Callable[[], list[int]], signum: int) -> None:
    for pgid in groups():
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
