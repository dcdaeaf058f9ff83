"""The editor's side of the conversation without the protocol: buffers in, answers out.

Positions here are 0-based lines and code-point columns (:mod:`.server` converts to and
from the client's UTF-16). Each file is answered by its owner (:mod:`.owners`); an
owner's index is rebuilt only when a buffer changed since it was built.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..documents.overlay import buffers
from ..documents.sources import read_text
from ..errors import AgentGraphError
from . import complete as completion
from . import flow_index, hover, navigate, provider_index, rename
from .checks import Finding, findings
from .owners import Owner, owner_of
from .spans import Span, lines_of


@dataclass(slots=True)
class Session:
    texts: dict[Path, str] = field(default_factory=dict)
    generation: int = 0
    _indexes: dict[Owner, tuple[int, object]] = field(default_factory=dict)
    _published: dict[Owner, set[Path]] = field(default_factory=dict)
    _lines: dict[Path, tuple[int, list[str]]] = field(default_factory=dict)
    _outside: set[Path] = field(default_factory=set)  # files asked about outside their owner

    # -- buffers ------------------------------------------------------------------------
    def update(self, path: Path, text: str) -> None:
        self.texts[_abs(path)] = text
        self.generation += 1
        self._lines.clear()

    def close(self, path: Path) -> None:
        self.texts.pop(_abs(path), None)
        self.generation += 1

    def touched(self) -> None:
        """Files changed on disk (saved, created, deleted): indexes are stale."""
        self.generation += 1

    def owner(self, path: Path) -> Owner | None:
        path = _abs(path)
        return owner_of(path, self.texts.get(path))

    def lines(self, path: Path) -> list[str]:
        """The file's lines (its buffer's when open); kept until the next change, since a
        publish converts every range of a file with them."""
        path = _abs(path)
        kept = self._lines.get(path)
        if kept is not None and kept[0] == self.generation:
            return kept[1]
        text = self.texts.get(path)
        if text is None:
            try:
                text = read_text(path, display=path.name)
            except AgentGraphError:
                text = ""
        lines = lines_of(text.removeprefix("\ufeff"))
        self._lines[path] = (self.generation, lines)
        return lines

    # -- diagnostics --------------------------------------------------------------------
    def diagnostics(self, path: Path) -> dict[Path, list[Finding]]:
        """The owner's findings by file; files it reported before and not now get []."""
        owner = self.owner(path)
        if owner is None:
            return {_abs(path): []}
        placed = findings(owner, self.texts)
        before = self._published.get(owner, set())
        self._published[owner] = set(placed)
        for stale in before - set(placed):
            placed[stale] = []
        placed.setdefault(_abs(path), [])
        return placed

    # -- indexes ------------------------------------------------------------------------
    def _index(self, owner: Owner) -> object:
        kept = self._indexes.get(owner)
        if kept is not None and kept[0] == self.generation:
            return kept[1]
        built: object
        if owner.kind == "provider":
            root = owner.path.parent
            outside = tuple(
                p
                for p in sorted({*self.texts, *self._outside})
                if root not in p.parents and self.owner(p) == owner
            )
            with buffers(self.texts):
                built = provider_index.build(owner.path, outside)
        else:
            built = flow_index.build(owner.path, self.texts)
        self._indexes[owner] = (self.generation, built)
        return built

    def _provider(self, path: Path) -> provider_index.ProviderIndex | None:
        owner = self.owner(path)
        if owner is None or owner.kind != "provider":
            return None
        if owner.path.parent not in path.parents and path not in self._outside:
            self._outside.add(path)  # a bound SKILL.md outside the Provider's directory
            self.generation += 1
        built = self._index(owner)
        assert isinstance(built, provider_index.ProviderIndex)
        return built

    def _flow(self, path: Path) -> flow_index.FlowIndex | None:
        owner = self.owner(path)
        if owner is None or owner.kind != "flow":
            return None
        built = self._index(owner)
        assert isinstance(built, flow_index.FlowIndex)
        return built

    # -- requests -----------------------------------------------------------------------
    def definition(self, path: Path, line: int, column: int) -> Span | None:
        path = _abs(path)
        flow = self._flow(path)
        if flow is not None:
            return flow_index.definition(flow, line, column)
        index = self._provider(path)
        return navigate.definition(index, path, line, column) if index is not None else None

    def references(self, path: Path, line: int, column: int, declared: bool) -> list[Span]:
        path = _abs(path)
        flow = self._flow(path)
        if flow is not None:
            return flow_index.references(flow, line, column)
        index = self._provider(path)
        if index is None:
            return []
        return navigate.references(index, path, line, column, declared=declared)

    def hover(self, path: Path, line: int, column: int) -> str | None:
        path = _abs(path)
        flow = self._flow(path)
        if flow is not None:
            return flow_index.hover(flow, line, column)
        index = self._provider(path)
        return hover.hover(index, path, line, column) if index is not None else None

    def rename(self, path: Path, line: int, column: int, new: str) -> list[Span]:
        """Spans to rewrite; raises ``lsp-rename-refused`` (Flow nodes are not renamed)."""
        path = _abs(path)
        index = self._provider(path)
        if index is None:
            return rename.rename(provider_index.ProviderIndex(path, path), path, line, column, new)
        return rename.rename(index, path, line, column, new)

    def complete(self, path: Path, line: int, column: int) -> list[completion.Item]:
        path = _abs(path)
        flow = self._flow(path)
        if flow is not None:
            typed = self.lines(path)[line][:column] if line < len(self.lines(path)) else ""
            if "-->" not in typed:  # node refs are expected only after an arrow
                return []
            refs = dict.fromkeys(r.name for r in flow.refs if r.child is None)
            return [
                completion.Item(name, "node", flow.kinds.get(name, ("", ""))[0]) for name in refs
            ]
        index = self._provider(path)
        if index is None:
            return []
        return completion.complete(index, path, self.lines(path), line, column)


def _abs(path: Path) -> Path:
    return Path(os.path.abspath(path))
