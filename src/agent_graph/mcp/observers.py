"""Observers: the only way Facts enter a Run through the server.

An agent's claim creates no Fact. The user declares observers in the config file
(:mod:`.config`); before every evaluation the server runs each and writes what it saw,
one ``facts.updated`` event per observer whose values changed, with its source
(``{"kind": "observer", "id", "config", "output"}``). An observer may set or remove only
the paths it declares: one that prints anything else is refused as a whole, so a
publication check cannot also approve a Gate. A failing observer changes nothing.

Commands run as ``agc resource materialize`` runs materializers (docs/resources.md): an
argument vector without a shell, the minimal environment, stdin closed, its own process
group killed on timeout or when it writes too much.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import AgentGraphError
from ..runs.document import UNSET
from .config import HostConfig, Observer


@dataclass(frozen=True, slots=True)
class Seen:
    """What one observer reported: the updates to write (path -> value or UNSET)."""

    observer: Observer
    status: str  # ok | failed | timeout | refused
    updates: Mapping[tuple[str, ...], Any]
    digest: str | None = None
    message: str | None = None


def _leaves(value: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*prefix, key))
    elif prefix:
        yield prefix


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        if not isinstance(value, dict) or name not in value:
            return UNSET
        value = value[name]
    return value


def _inside(workspace: str, relative: str) -> str | None:
    """The file ``relative`` names inside the workspace, or None when it leads out."""
    if os.path.isabs(relative):
        return None
    root = os.path.realpath(workspace)
    target = os.path.realpath(os.path.join(root, relative))
    return target if os.path.commonpath([root, target]) == root else None


def _file(observer: Observer, workspace: str) -> Seen:
    from ..documents.files import digest_file

    assert observer.file is not None
    target = _inside(workspace, observer.file)
    if target is None:
        return Seen(observer, "refused", {}, message=f"{observer.file} is outside the workspace")
    (path,) = observer.writes
    if not os.path.isfile(target):
        return Seen(observer, "ok", {path: UNSET})
    try:
        digest = digest_file(target)
    except AgentGraphError as error:
        return Seen(observer, "failed", {}, message=error.message)
    return Seen(observer, "ok", {path: digest}, digest=digest)


def _command(observer: Observer, workspace: str, env: Mapping[str, str]) -> Seen:
    from .configured import run_configured

    assert observer.command is not None
    ran = run_configured(
        observer.command,
        workspace=workspace,
        env=env,
        timeout_ms=observer.timeout_ms,
        max_output_bytes=observer.max_output_bytes,
    )
    if ran.status != "ok":  # a failed observer's output, if any, counts for nothing
        return Seen(observer, ran.status, {}, message=ran.message)
    digest, stdout = ran.digest, ran.stdout
    try:
        printed = json.loads(stdout.decode("utf-8"), parse_constant=_no_constant)
    except ValueError as error:
        return Seen(observer, "failed", {}, digest, f"stdout is not one JSON object: {error}")
    if not isinstance(printed, dict):
        return Seen(observer, "failed", {}, digest, "stdout is not one JSON object")
    stray = [".".join(p) for p in _leaves(printed) if not observer.covers(p)]
    if stray:
        message = f"printed Facts it does not declare in writes: {', '.join(stray[:5])}"
        return Seen(observer, "refused", {}, digest, message)
    return Seen(observer, "ok", {path: _at(printed, path) for path in observer.writes}, digest)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def look(config: HostConfig, workspace: str, env: Mapping[str, str]) -> Iterator[Seen]:
    """Run every observer once, in the declared order, each as it is asked for (so what it
    saw is written before the next one runs); nothing is written here."""
    for observer in config.observers:
        if observer.kind == "file":
            yield _file(observer, workspace)
        else:
            yield _command(observer, workspace, env)


def report(seen: Seen, changed: list[str]) -> dict[str, Any]:
    """The ``observation`` member of a tool result."""
    out: dict[str, Any] = {"observer": seen.observer.id, "status": seen.status}
    out["changed"] = changed
    if seen.digest is not None:
        out["digest"] = seen.digest
    if seen.message is not None:
        out["message"] = seen.message
    return out
