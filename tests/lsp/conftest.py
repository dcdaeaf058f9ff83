"""A client driving ``agc lsp`` over stdio (pytest-lsp), on copies of the examples."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "agent_graph", "lsp"]),
    scope="module",  # one server a module: each test works in its own copy of the examples
)
async def client(lsp_client: LanguageClient) -> None:  # type: ignore[misc]
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities())
    )
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def weekly(tmp_path: Path) -> Path:
    """A copy of examples/weekly-report (tests edit and rename in it)."""
    return Path(shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "weekly-report"))


@pytest.fixture
def flows(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLES / "flows", tmp_path / "flows"))


def open_file(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    shown = path.read_text(encoding="utf-8") if text is None else text
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=shown)
        )
    )
    return uri


def change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """Replace the whole buffer (an editor sends ranges; the server must take both)."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def type_at(
    client: LanguageClient, uri: str, row: int, column: int, text: str, version: int
) -> int:
    """Type ``text`` one character a change at ``row``/``column``, as an editor sends
    keystrokes (ranged, incremental changes); returns the next version."""
    for offset, char in enumerate(text):
        at = types.Position(line=row, character=column + offset)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=at, end=at), text=char
                    )
                ],
            )
        )
        version += 1
    return version


async def diagnostics(
    client: LanguageClient,
    uri: str,
    until: Callable[[list[types.Diagnostic]], bool],
    timeout: float = 10.0,
) -> list[types.Diagnostic]:
    """The diagnostics published for ``uri`` once ``until`` holds for them."""

    async def wait() -> list[types.Diagnostic]:
        while True:
            found = client.diagnostics.get(uri)
            if found is not None and until(found):
                return found
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), timeout)


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
