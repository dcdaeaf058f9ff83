"""``--agent SPEC``: which adapter runs a Run's Agent steps.

* ``script:FILE`` — answers from a file (:mod:`.script`);
* ``command:<JSON array argv>`` or ``command:NAME`` — a program that answers one JSON
  request per step (:mod:`.command`);
* ``claude`` / ``claude:<extra>`` — Claude Code, headless (:mod:`.claude`);
* ``codex`` / ``codex:<extra>`` — OpenAI Codex, headless (:mod:`.codex`);
* ``ask`` — the person at the terminal answers (:mod:`.ask`).

Adapter modules are imported only when named. Each offers ``from_spec(rest)``. A spec of
no known form (``gpt``, ``bogus:x``) is ``agent-spec-invalid``. :func:`adapter_from_spec`
also checks that the adapter can start at all — the ``claude``/``codex`` executable is on
``PATH``, a ``command:`` program resolves — so a Run that could never take its first Agent
step is refused (``agent-unavailable``) before its record exists. Relative paths in a
spec (``script:FILE``, ``command:`` argv words naming files) are taken from the invoking
directory, not the Run's ``--cwd``: :func:`portable_spec` writes them out absolute, which
is also how a printed hint repeats the spec.
"""

from __future__ import annotations

import os
import shutil
from importlib import import_module
from types import ModuleType
from typing import Final

from ... import codes
from ...errors import AgentGraphError
from .protocol import AgentAdapter

SPEC_INVALID: Final = codes.AGENT_SPEC_INVALID
HINT: Final = 'use script:FILE, command:["prog", "arg"…], command:NAME, claude[:…], codex[:…], ask'
_MODULES: Final = {k: k for k in ("script", "command", "claude", "codex", "ask")}
#: How to get each CLI adapter's program (docs/agents.md names the same commands).
INSTALL: Final = {
    "claude": ("npm install -g @anthropic-ai/claude-code", "docs/agents.md#claude-code"),
    "codex": ("npm install -g @openai/codex", "docs/agents.md#openai-codex"),
}


def split_spec(spec: str) -> tuple[str, str]:
    """``(kind, rest)`` of a spec of a known form, else ``agent-spec-invalid``."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentGraphError(SPEC_INVALID, f"--agent is empty; {HINT}")
    kind, _, rest = spec.partition(":")
    if kind not in _MODULES:
        plain = kind == spec and not any(c.isspace() for c in spec)
        also = f" (a program on PATH is command:{spec})" if plain else ""
        raise AgentGraphError(SPEC_INVALID, f"Unknown Agent adapter {spec!r}{also}; {HINT}")
    return kind, rest


def _module(kind: str) -> ModuleType:
    try:
        return import_module(f"{__package__}.{_MODULES[kind]}")
    except ImportError as error:
        raise AgentGraphError(
            SPEC_INVALID, f"The {kind} Agent adapter is not available ({error}); {HINT}"
        ) from None


def adapter_from_spec(spec: str, *, base: str | None = None) -> AgentAdapter:
    """The adapter ``spec`` names, ready to start: relative paths taken from ``base``
    (default: the working directory of this process)."""
    kind, rest = split_spec(portable_spec(spec, base=base))
    factory = getattr(_module(kind), "from_spec", None)
    if factory is None:
        raise AgentGraphError(SPEC_INVALID, f"The {kind} Agent adapter has no from_spec")
    adapter: AgentAdapter = factory(rest)
    _check_program(kind, adapter)
    return adapter


def portable_spec(spec: str, *, base: str | None = None) -> str:
    """``spec`` with its relative file paths made absolute from ``base``: the same adapter,
    whatever directory (and ``--cwd``) it is given from next."""
    kind, rest = split_spec(spec)
    here = base if base is not None else os.getcwd()
    if kind == "script" and rest:
        return "script:" + os.path.abspath(os.path.join(here, rest))
    portable = getattr(_module(kind), "portable", None)  # command: words naming files
    return f"{kind}:{portable(rest, here)}" if portable is not None else spec


def _check_program(kind: str, adapter: AgentAdapter) -> None:
    """``agent-unavailable`` when the adapter's program cannot be started at all."""
    if kind in INSTALL:
        executable = str(getattr(adapter, "executable", kind))
        if shutil.which(executable) is None:
            install, page = INSTALL[kind]
            raise AgentGraphError(
                codes.AGENT_UNAVAILABLE,
                f"--agent {kind}: the `{executable}` program is not on PATH; install it with "
                f"`{install}` and log in once (see {page})",
            )
    elif kind == "command":
        argv = getattr(adapter, "argv", ())
        program = argv[0] if argv else ""
        if os.sep in program:
            if not os.path.isfile(program) or not os.access(program, os.X_OK):
                what = "is not an executable file" if os.path.exists(program) else "does not exist"
                raise AgentGraphError(
                    codes.AGENT_UNAVAILABLE, f"--agent command: the program {program} {what}"
                )
        elif shutil.which(program) is None:
            raise AgentGraphError(
                codes.AGENT_UNAVAILABLE,
                f"--agent command: no program {program!r} on PATH (give a path, or a JSON "
                'argv such as command:["python3","agent.py"]; see docs/agents.md)',
            )
