"""SVG through Graphviz ``dot``: found on ``PATH`` (or named by ``$AGC_GRAPHVIZ_DOT``).

``dot`` runs as an argument vector with a minimal environment, the DOT text on stdin,
a time limit and capped output (:mod:`agent_graph.exec`), so a huge or hostile graph
costs at most :data:`TIMEOUT_S` and never hangs the command. Codes: ``graphviz-missing``
(not installed; the message says how to install it), ``graphviz-timeout``,
``graphviz-failed`` (it exited non-zero, was killed, or wrote too much).
"""

from __future__ import annotations

import os
import shutil
from typing import Final

from .. import codes
from ..errors import AgentGraphError
from ..exec import ExecError

#: Seconds ``dot`` may take (a 1,000-node graph takes a few; 100,000 nodes would take hours).
TIMEOUT_S: Final = 120.0
MAX_SVG_BYTES: Final = 256 * 1024 * 1024
MAX_ERROR_BYTES: Final = 64 * 1024
DOT_VARIABLE: Final = "AGC_GRAPHVIZ_DOT"
INSTALL_HINT: Final = (
    "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
    "Windows: winget install graphviz), or use --format dot or mermaid"
)


def find_dot() -> str:
    """The ``dot`` program to run, or ``graphviz-missing``."""
    named = os.environ.get(DOT_VARIABLE) or "dot"
    found = shutil.which(named)
    if found is None:
        where = f"${DOT_VARIABLE}={named}" if os.environ.get(DOT_VARIABLE) else "PATH"
        raise AgentGraphError(
            codes.GRAPHVIZ_MISSING,
            f"SVG needs Graphviz's dot, which is not on {where}: {INSTALL_HINT}",
        )
    return found


def to_svg(dot_text: str, timeout_s: float | None = None) -> bytes:
    """The SVG ``dot -Tsvg`` draws for ``dot_text`` (within ``timeout_s``, default
    :data:`TIMEOUT_S`, read at call time)."""
    from ..exec import minimal_env, run

    if timeout_s is None:
        timeout_s = TIMEOUT_S
    program = find_dot()
    try:
        completed = run(
            [program, "-Tsvg"],
            cwd=os.getcwd(),
            env=minimal_env(),
            timeout_s=timeout_s,
            max_stdout=MAX_SVG_BYTES,
            max_stderr=MAX_ERROR_BYTES,
            stdin=dot_text.encode("utf-8"),
        )
    except ExecError as error:  # exists but cannot start (permissions, format …)
        raise AgentGraphError(
            codes.GRAPHVIZ_FAILED, f"Graphviz dot did not start: {error}"
        ) from None
    if completed.timed_out:
        raise AgentGraphError(
            codes.GRAPHVIZ_TIMEOUT,
            f"Graphviz dot took longer than {timeout_s:g} s; the graph is too large to lay "
            "out as SVG: use --format dot or mermaid",
        )
    if not completed.ok:
        reason = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        how = (
            f"exit code {completed.exit_code}"
            if completed.exit_code is not None
            else (completed.signal_name or "killed (output too large)")
        )
        said = f": {reason[0]}" if reason else ""
        raise AgentGraphError(codes.GRAPHVIZ_FAILED, f"Graphviz dot failed ({how}){said}")
    return completed.stdout
