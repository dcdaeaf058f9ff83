"""Process groups: signal a whole group, and tell whether any member is still alive."""

from __future__ import annotations

import contextlib
import os
import time

_PROC = "/proc"


def signal_group(pgid: int, signum: int) -> None:
    """Send ``signum`` to every member of ``pgid``; an empty group is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def group_alive(pgid: int) -> bool:
    """Whether a member of ``pgid`` is alive. Zombies (dead, waiting for whoever adopted
    them to reap them) do not count where ``/proc`` can tell them apart."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _live_member_in_proc(pgid)


def wait_group_gone(pgid: int, timeout_s: float) -> bool:
    """Poll until no member of ``pgid`` is alive (True) or ``timeout_s`` passes (False)."""
    deadline = time.monotonic() + timeout_s
    delay = 0.001
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
    return True


def _live_member_in_proc(pgid: int) -> bool:
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return True  # no /proc: a zombie member counts as alive
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"{_PROC}/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False
