"""``materialize``: run a context view's materializer once and cache its output (§7).

Checks, in the reference's order, each with its code:

1. ``revision`` matches ``^sha256:[a-f0-9]{64}$`` → ``revision-invalid`` (it is not
   compared with any evaluation);
2. the Resource is found (:func:`~.locate.find_resource`) → ``absolute-path-forbidden``,
   ``path-outside-provider``, ``resource-missing``;
3. a static Resource → ``resource-static``; a host-action Resource →
   ``materializer-host-required`` (its host-action location is in the error's detail:
   the host runs the handler itself);
4. the materializer is loaded (``materializer-missing``) and ``effect: read``
   (``materializer-effect-invalid``);
5. the limits are positive safe integers → ``materializer-option-invalid``;
6. the process (:func:`agent_graph.exec.run`): a command runner is the author's exact
   shell command (``/bin/sh -c``), a script runner the argv ``<runtime> <abs entry>
   <args…>`` without a shell (as the Route's ``CommandStep.argv``), any other runner →
   ``materializer-runner-invalid``. Working directory: the Provider root for
   ``cwd: provider``, else the workspace (default: the process's). Environment: only
   the variables of §7 set in this process, then ``extra_env``, then
   ``AGENT_GRAPH_PROVIDER_ROOT``, ``AGENT_GRAPH_WORKSPACE``, ``AGENT_GRAPH_REVISION``
   and ``AGENT_GRAPH_INPUT`` (compact JSON of ``input``, key order kept; ``null``).
   stdin is empty and closed, the child leads its own process group, and the whole
   group is killed on timeout, on a limit and after the leader exits. A runtime that
   cannot be started → ``materializer-runtime-missing``; a workspace that does not
   exist → ``materializer-workspace-missing``; another start failure →
   ``materializer-start-failed``;
7. failures (no file, no receipt): ``materializer-timeout``,
   ``materializer-output-limit``, ``materializer-error-limit``, ``materializer-failed``
   (non-zero exit, or ``null`` for a signal, with the trimmed stderr);
8. success: the cache (:mod:`.cache`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import codes
from ..canonical import js_number
from ..errors import AgentGraphError, Diagnostic
from ..exec import ExecError, minimal_env, run, shell_argv
from ..ir import records as r
from ..vm import Program
from ..vm.locations import GRAPH_ACTION_LOCATION, HostActionLocation, locate_resource
from .cache import MATERIALIZATION_SCHEMA, store
from .locate import find_resource

DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_ERROR_BYTES = 1024 * 1024
MAX_SAFE_INTEGER = 2**53 - 1

_REVISION = re.compile(r"sha256:[a-f0-9]{64}")
# the Route's script runtimes (vm/route.py)
RUNTIMES = {"node": "node", "bun": "bun", "python": "python3", "shell": "sh"}

__all__ = [
    "DEFAULT_MAX_ERROR_BYTES",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_TIMEOUT_MS",
    "MATERIALIZATION_SCHEMA",
    "Materialized",
    "materialize",
]


@dataclass(frozen=True, slots=True)
class Materialized:
    """A materialized context view: the cached file and its digest, for ``revision``.
    :meth:`to_dict` is the graph-action location with ``digest`` and ``filePath`` in
    place of ``materialize`` (docs/resources.md)."""

    id: str
    kind: str
    media_type: str
    revision: str
    digest: str
    file_path: str
    receipt_path: str

    def read(self) -> bytes:
        """The cached content, checked against :attr:`digest` (``materialization-changed``
        when the file was edited or replaced since it was written)."""
        from .cache import read_cached

        return read_cached(Path(self.file_path), self.media_type, self.digest)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": GRAPH_ACTION_LOCATION,
            "id": self.id,
            "kind": self.kind,
            "mediaType": self.media_type,
            "revision": self.revision,
            "digest": self.digest,
            "filePath": self.file_path,
        }


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: compact, key order as given, non-ASCII kept."""
    import json

    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        text = js_number(value)
        return text if text not in ("NaN", "Infinity", "-Infinity") else "null"
    if isinstance(value, Mapping):
        members = (
            f"{json.dumps(str(k), ensure_ascii=False)}:{js_json(v)}" for k, v in value.items()
        )
        return "{" + ",".join(members) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_json(x) for x in value) + "]"
    raise AgentGraphError(
        codes.MATERIALIZER_OPTION_INVALID, f"input must be JSON, not {type(value).__name__}"
    )


def _positive(value: Any, name: str) -> int:
    valid = isinstance(value, int) and not isinstance(value, bool)
    if not valid or value <= 0 or value > MAX_SAFE_INTEGER:
        raise AgentGraphError(
            codes.MATERIALIZER_OPTION_INVALID, f"{name} must be a positive integer: {value}"
        )
    result: int = value
    return result


def _fail(code: str, message: str, path: str | None = None, **detail: Any) -> AgentGraphError:
    return AgentGraphError(code, message, [Diagnostic(code, message, path=path, detail=detail)])


def _at(diagnostic: Diagnostic, path: str) -> Diagnostic:
    """The diagnostic placed on the Resource's descriptor (for the human output)."""
    return diagnostic if diagnostic.path is not None else dataclasses.replace(diagnostic, path=path)


def _argv(program: Program, action: r.Action) -> tuple[str, ...]:
    if action.runner == "command" and action.command is not None:
        return shell_argv(action.command)
    if action.runner == "script" and action.entry is not None and action.runtime in RUNTIMES:
        return (RUNTIMES[action.runtime], str(program.root / action.entry), *action.args)
    raise AgentGraphError(
        codes.MATERIALIZER_RUNNER_INVALID,
        f"Materializer {action.id} must use command or script runner",
    )


def _materializer(program: Program, resource: r.Resource) -> r.Action:
    if resource.protocol == r.HOST_ACTION:
        located = locate_resource(program.root, resource, None)
        assert isinstance(located, HostActionLocation)
        message = (
            f"Resource {resource.id} is produced by the host handler {located.handler} "
            f"(input schema {located.input_schema}, input digest {located.input_digest}); "
            "the host materializes it, not agc"
        )
        raise _fail(
            codes.MATERIALIZER_HOST_REQUIRED,
            message,
            path=resource.path,
            location=located.to_dict(),
            inputDigest=located.input_digest,
        )
    if resource.protocol not in (r.GRAPH_ACTION, r.LEGACY_VIEW):
        raise AgentGraphError(
            codes.RESOURCE_STATIC,
            f"Resource {resource.id} is static and does not need materialization",
        )
    actions = program.ir.actions
    if not 0 <= resource.materializer < len(actions):
        raise AgentGraphError(
            codes.MATERIALIZER_MISSING, f"Resource {resource.id} references missing materializer"
        )
    action = actions[resource.materializer]
    if action.effect != "read":
        raise AgentGraphError(
            codes.MATERIALIZER_EFFECT_INVALID, f"Materializer {action.id} must be read-only"
        )
    return action


def _start_error(action: r.Action, argv: tuple[str, ...], exc: ExecError) -> AgentGraphError:
    detail = {"exec": exc.code, **exc.detail}
    if exc.code in (codes.EXEC_NOT_FOUND, codes.EXEC_NOT_EXECUTABLE):
        return _fail(
            codes.MATERIALIZER_RUNTIME_MISSING,
            f"Materializer {action.id} cannot start {argv[0]}: {exc.message}",
            **detail,
        )
    if exc.code in (codes.EXEC_CWD_MISSING, codes.EXEC_CWD_INVALID):
        return _fail(
            codes.MATERIALIZER_WORKSPACE_MISSING,
            f"Materializer {action.id} cannot run in its working directory: {exc.message}",
            **detail,
        )
    if exc.code == codes.EXEC_ENV_INVALID:
        return _fail(codes.MATERIALIZER_OPTION_INVALID, exc.message, **detail)
    return _fail(
        codes.MATERIALIZER_START_FAILED,
        f"Materializer {action.id} cannot start: {exc.message}",
        **detail,
    )


def _capture(
    program: Program,
    action: r.Action,
    *,
    workspace: str,
    revision: str,
    input_json: str,
    limits: tuple[int, int, int],
    extra_env: Mapping[str, str] | None,
) -> bytes:
    timeout_ms, max_output, max_error = limits
    argv = _argv(program, action)
    cwd = str(program.root) if action.cwd == "provider" else workspace
    env = minimal_env()
    env.update(extra_env or {})
    env.update(
        {
            "AGENT_GRAPH_PROVIDER_ROOT": str(program.root),
            "AGENT_GRAPH_WORKSPACE": workspace,
            "AGENT_GRAPH_REVISION": revision,
            "AGENT_GRAPH_INPUT": input_json,
        }
    )
    try:
        done = run(
            argv,
            cwd=cwd,
            env=env,
            timeout_s=timeout_ms / 1000,
            max_stdout=max_output,
            max_stderr=max_error,
        )
    except ExecError as exc:
        raise _start_error(action, argv, exc) from None
    if done.timed_out:
        raise AgentGraphError(
            codes.MATERIALIZER_TIMEOUT,
            f"Materializer {action.id} exceeded the {timeout_ms}ms timeout",
        )
    if done.overflow is not None:
        if done.overflow.stream == "stdout":
            raise AgentGraphError(
                codes.MATERIALIZER_OUTPUT_LIMIT,
                f"Materializer {action.id} exceeded the {max_output} byte stdout limit",
            )
        raise AgentGraphError(
            codes.MATERIALIZER_ERROR_LIMIT,
            f"Materializer {action.id} exceeded the {max_error} byte stderr limit",
        )
    if done.exit_code != 0:
        code = "null" if done.exit_code is None else str(done.exit_code)
        stderr = done.stderr.decode("utf-8", "replace").strip()
        detail: dict[str, Any] = {"exitCode": done.exit_code}
        if done.signal is not None:
            detail["signal"] = done.signal_name
        raise _fail(
            codes.MATERIALIZER_FAILED,
            f"Materializer {action.id} exited with {code}: {stderr}",
            **detail,
        )
    return done.stdout


def materialize(
    program: Program,
    id_or_path: str,
    *,
    cache: str | os.PathLike[str],
    revision: str,
    workspace: str | os.PathLike[str] | None = None,
    input: Any = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    max_error_bytes: int = DEFAULT_MAX_ERROR_BYTES,
    extra_env: Mapping[str, str] | None = None,
) -> Materialized:
    """Run the materializer of the context view ``id_or_path`` for ``revision`` and cache
    its stdout (see the module's docstring for every check and code)."""
    if not isinstance(revision, str) or not _REVISION.fullmatch(revision):
        raise AgentGraphError(
            codes.REVISION_INVALID, f"Dynamic resource revision is invalid: {revision}"
        )
    resource = find_resource(program, id_or_path)
    action = _materializer(program, resource)
    limits = (
        _positive(timeout_ms, "timeoutMs"),
        _positive(max_output_bytes, "maxOutputBytes"),
        _positive(max_error_bytes, "maxErrorBytes"),
    )
    where = os.path.abspath(os.fspath(workspace) if workspace is not None else os.getcwd())
    try:
        output = _capture(
            program,
            action,
            workspace=where,
            revision=revision,
            input_json=js_json(input),
            limits=limits,
            extra_env=extra_env,
        )
    except AgentGraphError as exc:
        exc.diagnostics = [_at(d, resource.path) for d in exc.diagnostics]
        raise
    receipt = {
        "schema": MATERIALIZATION_SCHEMA,
        "provider": program.provider_id,
        "resource": resource.id,
        "revision": revision,
    }
    cache_dir = Path(os.path.abspath(os.fspath(cache)))
    digest, target = store(cache_dir, resource.media_type, output, receipt)
    return Materialized(
        resource.id,
        resource.kind,
        resource.media_type,
        revision,
        digest,
        str(target),
        str(target.with_name(f"{digest.removeprefix('sha256:')}.receipt.json")),
    )
