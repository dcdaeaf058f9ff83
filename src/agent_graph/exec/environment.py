"""Child environments: always exactly what the caller passes, never inherited implicitly.

A caller that wants its own environment passed on asks for it by name,
:func:`inherited_env`: a checked, read-only copy of ``os.environ`` made again only when
``os.environ`` changed (in name, value or order), which :func:`checked` takes as it is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from .. import codes
from .codes import ExecError

# What the reference materializer passes through from its parent (docs/resources.md).
DEFAULT_ENV_NAMES = (
    "PATH",
    "PATHEXT",
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "TMPDIR",
    "TMP",
    "TEMP",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
)


def minimal_env(
    names: Iterable[str] = DEFAULT_ENV_NAMES, *, source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The named variables that are set in ``source`` (default ``os.environ``), in the
    order of ``names``. Add ``"HOME"`` and the like explicitly when a child needs them."""
    origin = os.environ if source is None else source
    return {name: origin[name] for name in names if name in origin}


def check_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env``; names are non-empty strings without ``=`` or NUL, values strings
    without NUL (what ``execve`` can carry)."""
    if not isinstance(env, Mapping):
        raise ExecError(codes.EXEC_ENV_INVALID, "The environment must be a mapping of strings")
    out: dict[str, str] = {}
    for name, value in env.items():
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise ExecError(codes.EXEC_ENV_INVALID, f"Invalid environment variable name: {name!r}")
        if not isinstance(value, str) or "\0" in value:
            raise ExecError(
                codes.EXEC_ENV_INVALID,
                f"Environment variable `{name}` must be a string without NUL",
            )
        out[name] = value
    return out


class _Inherited:
    """The last checked copy of ``os.environ`` and the raw store it was made from (its
    items, and its names in order: equal dicts may differ in order)."""

    __slots__ = ("copy", "keys", "raw")

    def __init__(self, raw: dict[bytes, bytes], copy: Mapping[str, str]) -> None:
        self.raw = raw
        self.keys = tuple(raw)
        self.copy = copy

    def matches(self, raw: dict[bytes, bytes]) -> bool:
        # dict equality and a tuple of names, not a list of items: 1.4 -> 0.6 us
        return raw == self.raw and tuple(raw) == self.keys


_inherited: _Inherited | None = None


def _raw_environ() -> dict[bytes, bytes] | None:
    """``os.environ``'s own store (CPython on POSIX: the encoded names and values, which
    its every change goes through), or None where there is none to watch."""
    data = getattr(os.environ, "_data", None)
    return data if type(data) is dict else None


def inherited_env() -> Mapping[str, str]:
    """``os.environ`` as it is now, checked (``exec-env-invalid``), as a read-only mapping
    (same names, values and order as ``dict(os.environ)``).

    The copy is kept and handed out again while ``os.environ`` stays as it was (compared
    on its raw items, a C-level comparison), so a caller that runs many commands neither
    copies, decodes nor checks its variables for each (36 variables: ``dict(os.environ)``
    and its check 22 us, this 0.7 us)."""
    global _inherited
    raw = _raw_environ()
    if raw is None:
        return MappingProxyType(check_env(os.environ))
    kept = _inherited
    if kept is not None and kept.matches(raw):
        return kept.copy
    made = _Inherited(dict(raw), MappingProxyType(check_env(os.environ)))
    if made.matches(raw):  # else another thread changed it meanwhile: not kept
        _inherited = made
    return made.copy


def checked(env: Mapping[str, str]) -> Mapping[str, str]:
    """``env`` ready for a child: :func:`inherited_env`'s mapping as it is (checked when
    made, and read-only), any other checked and copied (:func:`check_env`)."""
    kept = _inherited
    if kept is not None and env is kept.copy:
        return env
    return check_env(env)
