"""Shared set-up for the ``agc mcp serve`` tests: a workspace with the weekly-report
observers, and an in-process SDK client with scripted elicitation answers."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WEEKLY = ROOT / "examples" / "weekly-report"

#: Prints ``{"publication": {"url": …}}`` once a report is in ``published/``.
OBSERVE_PUBLICATION = """\
import json, os
found = sorted(os.listdir("published")) if os.path.isdir("published") else []
print(json.dumps({"publication": {"url": "published/" + found[-1]}} if found else {}))
"""


def config_text(*extra: str) -> str:
    lines = [
        "schema: agent-graph.mcp-config.v1",
        "observers:",
        "  - id: report-draft",
        "    writes: [report.digest]",
        "    file: REPORT.md",
        "  - id: publication",
        "    writes: [publication]",
        f"    command: [{sys.executable}, observe_publication.py]",
        *extra,
    ]
    return "\n".join(lines) + "\n"


@dataclass
class Workspace:
    root: Path
    runs: Path
    config: Path

    def draft(self) -> None:
        (self.root / "REPORT.md").write_text("# Week 48\n", encoding="utf-8")

    def publish(self) -> None:
        (self.root / "published").mkdir(exist_ok=True)
        (self.root / "published" / "2026-W48-report.md").write_text("# Week 48\n", encoding="utf-8")

    def run_file(self, handle: str) -> Path:
        return self.runs / "graph" / f"{handle}.json"


def workspace(tmp_path: Path, *extra: str) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "observe_publication.py").write_text(OBSERVE_PUBLICATION, encoding="utf-8")
    config = root / "agc-mcp.yaml"
    config.write_text(config_text(*extra), encoding="utf-8")
    return Workspace(root, tmp_path / "runs", config)


def serve_args(ws: Workspace, manifest: Path = WEEKLY, tools: str = "all") -> list[str]:
    return [
        "-m",
        str(manifest),
        "--runs",
        str(ws.runs),
        "--workspace",
        str(ws.root),
        "--config",
        str(ws.config),
        "--tools",
        tools,
    ]


@dataclass
class Answers:
    """Elicitation answers, in order; each request asked is kept for inspection."""

    queue: list[tuple[str, dict[str, Any] | None]] = field(default_factory=list)
    asked: list[Any] = field(default_factory=list)
    during: Callable[[], None] | None = None  # runs while the user "reads" the form

    def add(self, action: str, content: dict[str, Any] | None = None) -> None:
        self.queue.append((action, content))

    async def __call__(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        self.asked.append(params)
        if self.during is not None:
            self.during()
        action, content = self.queue.pop(0)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]


Body = Callable[[Any], Awaitable[None]]


def with_client(server: Any, mode: str, body: Body, answers: Answers | None = None) -> None:
    """Run ``body(client)`` against ``server`` in process (``mode``: legacy or auto)."""
    import anyio
    from mcp import Client

    async def main() -> None:
        callback = answers if answers is not None else None
        async with Client(
            server, mode=mode, elicitation_callback=callback, raise_exceptions=True
        ) as client:
            await body(client)

    anyio.run(main)
