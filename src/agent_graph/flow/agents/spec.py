"""``--agent SPEC``: which adapter runs a Run's Agent steps.

* ``script:FILE`` — answers from a file (:mod:`.script`);
* ``command:<JSON array argv>``, ``command:NAME`` or a plain command name — a program
  that answers one JSON request per step (:mod:`.command`);
* ``claude`` / ``claude:<extra>`` — Claude Code, headless (:mod:`.claude`);
* ``codex`` / ``codex:<extra>`` — OpenAI Codex, headless (:mod:`.codex`);
* ``ask`` — the person at the terminal answers (:mod:`.ask`).

Adapter modules are imported only when named. Each offers ``from_spec(rest)``. A spec
that names no adapter, or one whose module is not available, is ``agent-spec-invalid``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Final

from ... import codes
from ...errors import AgentGraphError
from .protocol import AgentAdapter

SPEC_INVALID: Final = codes.AGENT_SPEC_INVALID
HINT: Final = 'use script:FILE, command:["prog", "arg"…], command:NAME, claude[:…], codex[:…], ask'
_MODULES: Final = {k: k for k in ("script", "command", "claude", "codex", "ask")}


def adapter_from_spec(spec: str) -> AgentAdapter:
    if not isinstance(spec, str) or not spec.strip():
        raise AgentGraphError(SPEC_INVALID, f"--agent is empty; {HINT}")
    kind, colon, rest = spec.partition(":")
    if kind not in _MODULES:
        if colon or any(c.isspace() for c in spec):
            raise AgentGraphError(SPEC_INVALID, f"Unknown Agent adapter {spec!r}; {HINT}")
        kind, rest = "command", spec  # a plain command name
    try:
        module = import_module(f"{__package__}.{_MODULES[kind]}")
    except ImportError as error:
        raise AgentGraphError(
            SPEC_INVALID, f"The {kind} Agent adapter is not available ({error}); {HINT}"
        ) from None
    factory = getattr(module, "from_spec", None)
    if factory is None:
        raise AgentGraphError(SPEC_INVALID, f"The {kind} Agent adapter has no from_spec")
    adapter: AgentAdapter = factory(rest)
    return adapter
