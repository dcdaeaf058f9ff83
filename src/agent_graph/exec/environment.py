"""Child environments: always exactly what the caller passes, never inherited implicitly."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

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
