"""Tool results and tool errors, as the model sees them.

Claude Code hands the model ``structuredContent`` and drops ``content`` when both are
present, so every result is one JSON object whose first member is ``next``; ``content``
carries the same JSON as text for clients that read only that. A result stays under
:data:`MAX_RESULT_BYTES`; longer material is left to resources.

What the model can act on is a *tool error* (``isError``): one text block, ``ERROR
<code>: <message>``, a hint, then ``{"next", "retryable", "error": agent-graph.error.v1}``
(the envelope unchanged). No ``structuredContent``, so no client checks an error against
the success schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .. import codes
from ..errors import AgentGraphError

MAX_RESULT_BYTES: Final = 24 * 1024

#: Codes after which the same call may succeed once the state is looked at again.
RETRYABLE: Final = frozenset(
    {
        codes.ROUTE_REVISION_STALE,
        codes.ROUTE_STALE,
        codes.RUN_RECORD_CONFLICT,
        codes.RUN_LOCKED,
        codes.RUN_BUSY,
    }
)

_HINTS: Final[tuple[tuple[frozenset[str], str], ...]] = (
    (
        frozenset(
            {
                codes.ARGUMENTS_INVALID,
                codes.JSON_INVALID,
                codes.JSON_OBJECT_REQUIRED,
                codes.FACTS_INVALID,
                codes.OUTCOME_INVALID,
                codes.STATE_KEY_INVALID,
                codes.REVISION_INVALID,
                codes.AUTHORITY_INVALID,
                codes.DETAIL_INVALID,
            }
        ),
        "Fix the argument the diagnostics name and call again.",
    ),
    (
        RETRYABLE - {codes.RUN_LOCKED, codes.RUN_BUSY},
        "The Run moved on: call run_status and act on its new route.",
    ),
    (
        frozenset({codes.RUN_LOCKED, codes.RUN_BUSY}),
        "Another process holds the Run: retry in a few seconds.",
    ),
    (
        frozenset(
            {
                codes.GRAPH_MISSING,
                codes.ENTRY_MISSING,
                codes.GRAPH_SELECTION_MISSING,
                codes.SKILL_GRAPH_CONFLICT,
                codes.SKILL_ENTRY_CONFLICT,
                codes.PROVIDER_UNRESOLVED,
                codes.PROVIDER_INVALID,
                codes.ROUTE_UNAVAILABLE,
            }
        ),
        "Call providers_list to see what this server serves.",
    ),
    (
        frozenset({codes.RUN_MISSING, codes.RUN_TARGET_EXISTS, codes.RUN_PROVIDER_MISMATCH}),
        "Pick another handle, or the Run's own Provider (providers_list).",
    ),
    (
        frozenset(
            {
                codes.PARSE_FAILED,
                codes.SCHEMA_INVALID,
                codes.RUN_INVALID,
                codes.RUN_VERSION_UNSUPPORTED,
                codes.RUN_LOCK_INVALID,
            }
        ),
        "The Run file is left as it is; tell the user, who can repair it.",
    ),
    (
        frozenset(
            {
                codes.PATH_OUTSIDE_ROOTS,
                codes.ABSOLUTE_PATH_FORBIDDEN,
                codes.PATH_OUTSIDE_PROVIDER,
                codes.PATH_SYMLINK_OUTSIDE_PROVIDER,
            }
        ),
        "Use a relative path inside the server's workspace.",
    ),
    (frozenset({codes.GATE_NOT_WAITING}), "Call run_status and follow its next step."),
)


def hint(code: str) -> str:
    for family, text in _HINTS:
        if code in family:
            return text
    return "Tell the user; this needs a person."


@dataclass(frozen=True, slots=True)
class ToolError:
    """A tool error: the text the model reads."""

    code: str
    text: str


def tool_error(error: AgentGraphError, next_call: Mapping[str, Any] | None = None) -> ToolError:
    retryable = error.code in RETRYABLE
    body: dict[str, Any] = {
        "next": dict(next_call) if next_call else {"say": hint(error.code), "waitsFor": "agent"},
        "retryable": retryable,
        "error": error.to_dict(),
    }
    text = f"ERROR {error.code}: {error.message}\n{hint(error.code)}\n{_compact(body)}"
    if len(text.encode()) > MAX_RESULT_BYTES:
        body["error"]["error"]["diagnostics"] = body["error"]["error"]["diagnostics"][:3]
        text = f"ERROR {error.code}: {error.message[:2000]}\n{hint(error.code)}\n{_compact(body)}"
    return ToolError(error.code, text)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def result_text(result: Mapping[str, Any]) -> str:
    """The JSON text of a result, refused (``result-too-large``) over the cap."""
    text = _compact(result)
    if len(text.encode()) > MAX_RESULT_BYTES:
        raise AgentGraphError(
            codes.RESULT_TOO_LARGE,
            f"The result is {len(text.encode())} bytes, over the {MAX_RESULT_BYTES} byte cap "
            "of a tool result; ask for less (route: false) or use the agc CLI on the Run",
        )
    return text
