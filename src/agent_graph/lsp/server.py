"""The one module that imports pygls: the protocol around :class:`.session.Session`.

Buffers come from pygls' workspace (incremental sync); each change re-checks the owner
after :data:`DEBOUNCE` seconds without another change, from the unsaved text. Positions
go to and from the client in UTF-16 units, the protocol's default encoding.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Final

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from ..errors import AgentGraphError
from ..protocol import __version__
from . import SERVER_NAME
from .checks import Finding
from .complete import Item
from .session import Session
from .spans import Span, from_utf16, to_utf16

#: Seconds a buffer has to stay unchanged before it is checked (typing is not re-checked
#: on every key).
DEBOUNCE: Final = 0.15
_SEVERITY: Final = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
_ITEM_KIND: Final = {
    "node": types.CompletionItemKind.Reference,
    "code": types.CompletionItemKind.Constant,
    "resource": types.CompletionItemKind.Reference,
    "graph": types.CompletionItemKind.Module,
    "file": types.CompletionItemKind.File,
}
_TRIGGERS: Final = [":", " ", "/", ">", "[", ","]


class AgentGraphServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SERVER_NAME, __version__)
        self.session = Session()
        self.pending: dict[str, asyncio.TimerHandle] = {}


def _path(uri: str) -> Path:
    found = to_fs_path(uri)
    if found is None:
        raise JsonRpcInvalidParams(f"not a file URI: {uri}")
    return Path(found)


def _uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def _range(server: AgentGraphServer, span: Span) -> types.Range:
    lines = server.session.lines(span.path)
    text = lines[span.line] if span.line < len(lines) else ""
    return types.Range(
        start=types.Position(line=span.line, character=to_utf16(text, span.start)),
        end=types.Position(line=span.line, character=to_utf16(text, span.end)),
    )


def _location(server: AgentGraphServer, span: Span) -> types.Location:
    return types.Location(uri=_uri(span.path), range=_range(server, span))


def _at(server: AgentGraphServer, uri: str, position: types.Position) -> tuple[Path, int, int]:
    path = _path(uri)
    lines = server.session.lines(path)
    text = lines[position.line] if position.line < len(lines) else ""
    return path, position.line, from_utf16(text, position.character)


def _diagnostic(server: AgentGraphServer, found: Finding) -> types.Diagnostic:
    d = found.diagnostic
    related = [
        types.DiagnosticRelatedInformation(location=_location(server, where), message=message)
        for where, message in found.related
    ]
    # the command line's own place and detail, as agc validate --format json prints them
    # (the range may be narrower: an edge's misspelled end rather than the whole edge)
    shown = d.to_dict()
    data: dict[str, Any] = {k: shown[k] for k in ("path", "detail") if k in shown}
    return types.Diagnostic(
        range=_range(server, found.span),
        message=d.message,
        severity=_SEVERITY.get(d.severity, types.DiagnosticSeverity.Error),
        code=d.code,
        source=SERVER_NAME,
        related_information=related or None,
        data=data or None,
    )


def publish(server: AgentGraphServer, path: Path) -> None:
    """Check the owner of ``path`` now and publish every file's diagnostics."""
    for file, found in server.session.diagnostics(path).items():
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=_uri(file), diagnostics=[_diagnostic(server, f) for f in found]
            )
        )


def _schedule(server: AgentGraphServer, uri: str, delay: float) -> None:
    pending = server.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    path = _path(uri)
    loop = asyncio.get_running_loop()
    server.pending[uri] = loop.call_later(delay, _run_check, server, uri, path)


def _run_check(server: AgentGraphServer, uri: str, path: Path) -> None:
    server.pending.pop(uri, None)
    publish(server, path)


def _buffer(server: AgentGraphServer, uri: str) -> None:
    server.session.update(_path(uri), server.workspace.get_text_document(uri).source)


def _item(item: Item) -> types.CompletionItem:
    return types.CompletionItem(
        label=item.label, kind=_ITEM_KIND.get(item.kind), detail=item.detail or None
    )


def build_server() -> AgentGraphServer:
    server = AgentGraphServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AgentGraphServer, params: types.DidOpenTextDocumentParams) -> None:
        _buffer(ls, params.text_document.uri)
        _schedule(ls, params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AgentGraphServer, params: types.DidChangeTextDocumentParams) -> None:
        _buffer(ls, params.text_document.uri)
        _schedule(ls, params.text_document.uri, DEBOUNCE)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AgentGraphServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.session.touched()
        _schedule(ls, params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AgentGraphServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.session.close(_path(params.text_document.uri))
        _schedule(ls, params.text_document.uri, 0)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: AgentGraphServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.session.touched()

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: AgentGraphServer, params: types.DefinitionParams) -> types.Location | None:
        found = ls.session.definition(*_at(ls, params.text_document.uri, params.position))
        return _location(ls, found) if found is not None else None

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: AgentGraphServer, params: types.ReferenceParams) -> list[types.Location]:
        where = _at(ls, params.text_document.uri, params.position)
        spans = ls.session.references(*where, params.context.include_declaration)
        return [_location(ls, span) for span in spans]

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: AgentGraphServer, params: types.HoverParams) -> types.Hover | None:
        text = ls.session.hover(*_at(ls, params.text_document.uri, params.position))
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    def rename(ls: AgentGraphServer, params: types.RenameParams) -> types.WorkspaceEdit:
        where = _at(ls, params.text_document.uri, params.position)
        try:
            spans = ls.session.rename(*where, params.new_name)
        except AgentGraphError as error:
            raise JsonRpcInvalidParams(f"{error.code}: {error.message}") from None
        changes: dict[str, list[types.TextEdit]] = {}
        for span in spans:
            edit = types.TextEdit(range=_range(ls, span), new_text=params.new_name)
            changes.setdefault(_uri(span.path), []).append(edit)
        return types.WorkspaceEdit(changes=changes)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=_TRIGGERS)
    )
    def completion(ls: AgentGraphServer, params: types.CompletionParams) -> types.CompletionList:
        items = ls.session.complete(*_at(ls, params.text_document.uri, params.position))
        return types.CompletionList(is_incomplete=False, items=[_item(i) for i in items])

    return server


def serve_stdio() -> None:
    build_server().start_io()
