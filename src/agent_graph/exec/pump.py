"""Concurrent, bounded pipe I/O: feed stdin, read stdout and stderr through one ``poll``.

Never more than ``limit + 1`` bytes of a stream are held: a read asks for at most what
is left before the limit plus one byte, and the byte past the limit is dropped again as
soon as it proves the overflow. Past its limit a stream is still read (so a child that
is being terminated is not blocked on a full pipe), but the bytes are discarded.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import time

from .result import Overflow, Stream

CHUNK = 65536
#: The longest wait one ``poll`` takes (its timeout is an int of milliseconds); a longer
#: one is made of several steps, the caller's loop checking its deadline between them.
_MAX_WAIT_MS = 2**31 - 1
_READ = select.POLLIN | select.POLLPRI


class _Capture:
    __slots__ = ("closed", "data", "fd", "limit", "name", "over")

    def __init__(self, name: Stream, fd: int, limit: int) -> None:
        self.name: Stream = name
        self.fd = fd
        self.closed = False
        self.limit = limit
        self.data = bytearray()
        self.over = False


class _Feed:
    __slots__ = ("fd", "pending", "registered")

    def __init__(self, fd: int, data: bytes) -> None:
        self.fd = fd
        self.pending = memoryview(data)
        self.registered = False


class Pump:
    """Owns the parent's ends of the pipes, as descriptors, from the moment it is made
    (one that fails to be made has closed them) until :meth:`close`; optionally watches a
    descriptor that becomes readable when the child exits (its caller's to close), so
    waiting for output also waits for the exit."""

    def __init__(
        self,
        stdout: int,
        stderr: int,
        limits: tuple[int, int],
        *,
        stdin: int | None = None,
        data: bytes = b"",
        wake: int | None = None,
    ) -> None:
        self.overflow: Overflow | None = None
        # poll, not epoll through selectors: with two or three descriptors per process,
        # epoll's own descriptor, a control call per (un)registration and the selector's
        # keys cost more than they save (exec.run of `true`: 0.265 -> 0.245 ms CPU)
        self._poll = select.poll()
        self._targets: dict[int, _Capture | _Feed | None] = {}
        self._captures = (
            _Capture("stdout", stdout, limits[0]),
            _Capture("stderr", stderr, limits[1]),
        )
        self._feed = _Feed(stdin, data) if stdin is not None else None
        self._wake = wake
        try:
            for capture in self._captures:
                os.set_blocking(capture.fd, False)
                self._watch(capture.fd, _READ, capture)
            if self._feed is not None:
                if data:
                    os.set_blocking(self._feed.fd, False)
                    self._watch(self._feed.fd, select.POLLOUT, self._feed)
                    self._feed.registered = True
                else:
                    self.close_stdin()
            if wake is not None:
                self._watch(wake, _READ, None)
        except BaseException:
            self.close()
            raise

    def _watch(self, fd: int, events: int, target: _Capture | _Feed | None) -> None:
        self._poll.register(fd, events)
        self._targets[fd] = target

    def _unwatch(self, fd: int) -> None:
        if self._targets.pop(fd, _NOT_WATCHED) is not _NOT_WATCHED:
            self._poll.unregister(fd)

    @property
    def reading(self) -> bool:
        """Whether a stream is still open (no end of file yet)."""
        return not (self._captures[0].closed and self._captures[1].closed)

    def output(self) -> tuple[bytes, bytes]:
        return bytes(self._captures[0].data), bytes(self._captures[1].data)

    def step(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the pipes (or the wake descriptor), then
        move what is ready. A hang-up or error counts as ready: the read or write that
        follows meets the end of file or the broken pipe."""
        wait = math.ceil(min(max(timeout, 0.0) * 1000, _MAX_WAIT_MS))
        targets = self._targets
        for fd, _ in self._poll.poll(wait):
            target = targets.get(fd)
            if isinstance(target, _Capture):
                self._read(target)
            elif isinstance(target, _Feed):
                self._write(target)

    def drain(self, timeout: float) -> None:
        """Read until both streams end or ``timeout`` seconds pass; stdin is closed first."""
        self.close_stdin()
        self.stop_waking()
        deadline = time.monotonic() + timeout
        while self.reading:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.step(left)

    def stop_waking(self) -> None:
        """Stop watching the wake descriptor (it stays open: its owner closes it)."""
        if self._wake is not None:
            self._unwatch(self._wake)
            self._wake = None

    def close_stdin(self) -> None:
        feed = self._feed
        if feed is None:
            return
        self._feed = None
        if feed.registered:
            self._unwatch(feed.fd)
        feed.pending = memoryview(b"")
        close_fd(feed.fd)

    def close(self) -> None:
        self.close_stdin()
        self.stop_waking()
        for capture in self._captures:
            self._finish(capture)

    def _read(self, capture: _Capture) -> None:
        want = CHUNK if capture.over else min(CHUNK, capture.limit + 1 - len(capture.data))
        try:
            chunk = os.read(capture.fd, want)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._finish(capture)
            return
        if capture.over:
            return
        capture.data += chunk
        if len(capture.data) > capture.limit:
            del capture.data[capture.limit :]
            capture.over = True
            if self.overflow is None:
                self.overflow = Overflow(capture.name, capture.limit)

    def _write(self, feed: _Feed) -> None:
        try:
            written = os.write(feed.fd, feed.pending[:CHUNK])
        except BlockingIOError:
            return
        except OSError:  # BrokenPipeError: the child closed its stdin; the rest is moot
            self.close_stdin()
            return
        feed.pending = feed.pending[written:]
        if not feed.pending:
            self.close_stdin()

    def _finish(self, capture: _Capture) -> None:
        if not capture.closed:
            capture.closed = True
            self._unwatch(capture.fd)
            close_fd(capture.fd)


_NOT_WATCHED = object()


def close_fd(fd: int | None) -> None:
    """Close one of the parent's pipe ends, ignoring errors."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
