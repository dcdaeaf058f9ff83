"""An editor-like client driving ``agc lsp`` over stdio, on copies of the examples.

The client is pygls' own, on an event loop in a thread of its own, so the tests are plain
functions: requests go through :meth:`Editor.run`, published diagnostics are kept by URI
and waited for with :func:`diagnostics`. One server runs per test module.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
T = TypeVar("T")


class Editor:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = LanguageClient("agc-lsp-tests", "1")
        self.published: dict[str, Sequence[types.Diagnostic]] = {}
        self.seen = threading.Condition()
        self.stderr: list[bytes] = []

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(_: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            with self.seen:
                self.published[params.uri] = params.diagnostics
                self.seen.notify_all()

        self.run(self._start())

    async def _start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "agent_graph", "lsp")
        server = self.client._server
        assert server is not None
        assert server.stderr is not None
        self.drain = asyncio.create_task(self._drain(server.stderr))  # a full pipe would block it
        await self.client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities())
        )
        self.client.initialized(types.InitializedParams())

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.stderr.append(chunk)

    def run(self, work: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    def send(self, notify: Callable[[], None]) -> None:
        """A notification, written from the client's own loop."""

        async def sent() -> None:
            notify()

        self.run(sent())

    def close(self) -> None:
        async def stop() -> None:
            await self.client.shutdown_async(None)
            self.client.exit(None)
            server = self.client._server
            if server is not None:
                await asyncio.wait_for(server.wait(), 10)
            await self.client.stop()

        try:
            self.run(stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture(scope="module")
def editor() -> Iterator[Editor]:
    started = Editor()
    yield started
    started.close()


@pytest.fixture
def weekly(tmp_path: Path) -> Path:
    """A copy of examples/weekly-report (tests edit and rename in it)."""
    return Path(shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "weekly-report"))


@pytest.fixture
def flows(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLES / "flows", tmp_path / "flows"))


def open_file(editor: Editor, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    shown = path.read_text(encoding="utf-8") if text is None else text
    item = types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=shown)
    editor.send(
        lambda: editor.client.text_document_did_open(
            types.DidOpenTextDocumentParams(text_document=item)
        )
    )
    return uri


def change(editor: Editor, uri: str, text: str, version: int) -> None:
    """Replace the whole buffer (an editor sends ranges; the server must take both)."""
    send_change(editor, uri, types.TextDocumentContentChangeWholeDocument(text=text), version)


def type_at(editor: Editor, uri: str, row: int, column: int, text: str, version: int) -> int:
    """Type ``text`` one character a change at ``row``/``column``, as an editor sends
    keystrokes (ranged, incremental changes); returns the next version."""
    for offset, char in enumerate(text):
        at = types.Position(line=row, character=column + offset)
        key = types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=char)
        send_change(editor, uri, key, version)
        version += 1
    return version


def send_change(editor: Editor, uri: str, content: Any, version: int) -> None:
    params = types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[content],
    )
    editor.send(lambda: editor.client.text_document_did_change(params))


def diagnostics(
    editor: Editor,
    uri: str,
    until: Callable[[Sequence[types.Diagnostic]], bool],
    timeout: float = 10.0,
) -> Sequence[types.Diagnostic]:
    """The diagnostics published for ``uri`` once ``until`` holds for them."""
    with editor.seen:
        found = editor.seen.wait_for(
            lambda: uri in editor.published and until(editor.published[uri]), timeout
        )
        assert found, (uri, editor.published.get(uri), b"".join(editor.stderr)[-2000:])
        return editor.published[uri]


def position_of(path: Path, needle: str, occurrence: int = 0, offset: int = 0) -> types.Position:
    """The position of the ``occurrence``-th ``needle`` in the file (plus ``offset``)."""
    seen = 0
    for row, line in enumerate(path.read_text(encoding="utf-8").split("\n")):
        start = line.find(needle)
        while start >= 0:
            if seen == occurrence:
                return types.Position(line=row, character=start + offset)
            seen += 1
            start = line.find(needle, start + 1)
    raise AssertionError(f"{needle!r} not in {path}")
