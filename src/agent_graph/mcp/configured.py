"""Running a command the user configured (an observer, a Gate handler): an argument
vector without a shell, in the Run's workspace, the minimal environment plus the
server's variables, its own process group killed on timeout or when it writes too much.

Both kinds read the outcome the same way, so it is decided here once: a start failure,
a timeout, an overflow, a non-zero exit (with the tail of stderr) or the stdout it
printed and that output's digest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..canonical import digest_bytes

MAX_ERROR_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Ran:
    status: str  # ok | failed | timeout
    stdout: bytes = b""
    digest: str | None = None  # of stdout, once the command ran to its end
    message: str | None = None


def run_configured(
    command: tuple[str, ...] | list[str],
    *,
    workspace: str,
    env: Mapping[str, str],
    timeout_ms: int,
    max_output_bytes: int,
    stdin: bytes | None = None,
) -> Ran:
    from ..exec import ExecError, minimal_env, run

    environment = minimal_env()
    environment.update(env)
    try:
        done = run(
            command,
            cwd=workspace,
            env=environment,
            timeout_s=timeout_ms / 1000,
            max_stdout=max_output_bytes,
            max_stderr=MAX_ERROR_BYTES,
            stdin=stdin,
        )
    except ExecError as error:
        return Ran("failed", message=f"{error.code}: {error.message}")
    if done.timed_out:
        return Ran("timeout", message=f"ran past {timeout_ms} ms")
    if done.overflow is not None:
        return Ran("failed", message=f"wrote more than its {done.overflow.stream} limit")
    digest = digest_bytes(done.stdout)
    if done.exit_code != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return Ran("failed", digest=digest, message=f"exited with {done.exit_code}: {tail}")
    return Ran("ok", done.stdout, digest)
