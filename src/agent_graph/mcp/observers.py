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

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import AgentGraphError
from ..runs.document import UNSET
from .config import HostConfig, Observer

MAX_ERROR_BYTES = 64 * 1024


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
    from ..exec import ExecError, minimal_env, run

    assert observer.command is not None
    environment = minimal_env()
    environment.update(env)
    try:
        done = run(
            observer.command,
            cwd=workspace,
            env=environment,
            timeout_s=observer.timeout_ms / 1000,
            max_stdout=observer.max_output_bytes,
            max_stderr=MAX_ERROR_BYTES,
        )
    except ExecError as error:
        return Seen(observer, "failed", {}, message=f"{error.code}: {error.message}")
    if done.timed_out:
        return Seen(observer, "timeout", {}, message=f"ran past {observer.timeout_ms} ms")
    if done.overflow is not None:
        return Seen(
            observer, "failed", {}, message=f"wrote more than its {done.overflow.stream} limit"
        )
    if done.exit_code != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return Seen(observer, "failed", {}, message=f"exited with {done.exit_code}: {tail}")
    digest = "sha256:" + hashlib.sha256(done.stdout).hexdigest()
    try:
        printed = json.loads(done.stdout.decode("utf-8"), parse_constant=_no_constant)
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
