"""Finding a loaded Resource by id or contained descriptor path (reference §3.5)."""

from __future__ import annotations

import os
import re

from .. import codes
from ..errors import AgentGraphError
from ..ir import records as r
from ..spelling import did_you_mean
from ..vm import Program
from ..vm.locations import Location, locate_resource

LABEL = "resource reference"
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def _relative(program: Program, reference: str) -> str:
    """``reference`` as a Provider-relative POSIX path (lexically, as the reference's
    ``resolveContainedPath``): absolute → ``absolute-path-forbidden``; escaping the root
    → ``path-outside-provider``."""
    if os.path.isabs(reference) or _DRIVE.match(reference) or reference.startswith("\\"):
        raise AgentGraphError(
            codes.ABSOLUTE_PATH_FORBIDDEN, f"{LABEL} must be relative: {reference}"
        )
    root = str(program.root)
    rel = os.path.relpath(os.path.normpath(os.path.join(root, reference)), root)
    rel = rel.replace("\\", "/")
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        raise AgentGraphError(
            codes.PATH_OUTSIDE_PROVIDER, f"{LABEL} escapes the provider root: {reference}"
        )
    return rel


def find_resource(program: Program, id_or_path: str) -> r.Resource:
    """The Resource whose id is exactly ``id_or_path`` (first in load order), else the one
    loaded from that contained descriptor (or Markdown) path; else ``resource-missing``.
    A static descriptor's content file is not a key."""
    if not isinstance(id_or_path, str) or not id_or_path:
        raise AgentGraphError(
            codes.RESOURCE_MISSING, f"Provider {program.provider_id} has no resource {id_or_path!r}"
        )
    resources = program.ir.resources
    for resource in resources:
        if resource.id == id_or_path:
            return resource
    rel = _relative(program, id_or_path)
    for resource in resources:
        if resource.path == rel:
            return resource
    known = [resource.id for resource in resources] + [resource.path for resource in resources]
    raise AgentGraphError(
        codes.RESOURCE_MISSING,
        f"Provider {program.provider_id} has no resource {id_or_path}"
        + did_you_mean(id_or_path, known),
    )


def locate(program: Program, id_or_path: str) -> Location:
    """The 0.3.1 location envelope of a Resource, outside any Route: a file location
    (static), a graph-action location (context view) or a host-action location; dynamic
    ones carry no ``revision`` and no location carries a ``readState``."""
    return locate_resource(program.root, find_resource(program, id_or_path), None)
