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

from ..errors import AgentGraphError

MAX_RESULT_BYTES: Final = 24 * 1024

#: Codes after which the same call may succeed once the state is looked at again.
RETRYABLE: Final = frozenset(
    {"route-revision-stale", "route-stale", "run-record-conflict", "run-locked", "run-busy"}
)

_HINTS: Final[tuple[tuple[frozenset[str], str], ...]] = (
    (
        frozenset(
            {
                "arguments-invalid",
                "json-invalid",
                "json-object-required",
                "facts-invalid",
                "outcome-invalid",
                "state-key-invalid",
                "revision-invalid",
                "authority-invalid",
                "detail-invalid",
            }
        ),
        "Fix the argument the diagnostics name and call again.",
    ),
    (
        RETRYABLE - {"run-locked", "run-busy"},
        "The Run moved on: call run_status and act on its new route.",
    ),
    (
        frozenset({"run-locked", "run-busy"}),
        "Another process holds the Run: retry in a few seconds.",
    ),
    (
        frozenset(
            {
                "graph-missing",
                "entry-missing",
                "graph-selection-missing",
                "skill-graph-conflict",
                "skill-entry-conflict",
                "provider-unresolved",
                "provider-invalid",
                "route-unavailable",
            }
        ),
        "Call providers_list to see what this server serves.",
    ),
    (
        frozenset({"run-missing", "run-target-exists", "run-provider-mismatch"}),
        "Pick another handle, or the Run's own Provider (providers_list).",
    ),
    (
        frozenset(
            {
                "parse-failed",
                "schema-invalid",
                "run-invalid",
                "run-version-unsupported",
                "run-lock-invalid",
            }
        ),
        "The Run file is left as it is; tell the user, who can repair it.",
    ),
    (
        frozenset(
            {
                "path-outside-roots",
                "absolute-path-forbidden",
                "path-outside-provider",
                "path-symlink-outside-provider",
            }
        ),
        "Use a relative path inside the server's workspace.",
    ),
    (frozenset({"gate-not-waiting"}), "Call run_status and follow its next step."),
)


def hint(code: str) -> str:
    for codes, text in _HINTS:
        if code in codes:
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
            "result-too-large",
            f"The result is {len(text.encode())} bytes, over the {MAX_RESULT_BYTES} byte cap "
            "of a tool result; ask for less (route: false) or use the agc CLI on the Run",
        )
    return text
