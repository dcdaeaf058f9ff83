"""Ids derived from text a person typed (a Provider name, a directory, a Skill folder).

The reference's rule, so ``agc init --id "My Provider!"`` names the Provider as the Node
toolchain would (``my-provider``): lower-case; every run of characters outside
``[a-z0-9._-]`` becomes ``-``; every run of two or more dots becomes ``-`` (an id never
holds ``..``); characters outside ``[a-z0-9]`` are stripped from both ends.
"""

from __future__ import annotations

import re
from typing import Final

from .. import codes
from ..errors import AgentGraphError

_OUTSIDE: Final = re.compile(r"[^a-z0-9._-]+")
_DOTS: Final = re.compile(r"\.{2,}")
_ENDS: Final = re.compile(r"^[^a-z0-9]+|[^a-z0-9]+$")


def slug(value: str) -> str:
    """``value`` as an id, or ``id-invalid`` when nothing of it is left."""
    normalized = _ENDS.sub("", _DOTS.sub("-", _OUTSIDE.sub("-", value.lower())))
    if not normalized:
        raise AgentGraphError(codes.ID_INVALID, f"Cannot derive an id from {value!r}")
    return normalized
