"""Definition, references, hover, rename and completion on copies of the examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from conftest import Editor, open_file, position_of


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def definition(editor: Editor, path: Path, at: types.Position) -> types.Location:
    uri = open_file(editor, path)
    found = editor.run(
        editor.client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(uri), position=at)
        )
    )
    assert isinstance(found, types.Location), found
    return found


def line_of(location: types.Location) -> str:
    path = Path(location.uri.removeprefix("file://"))
    row = path.read_text(encoding="utf-8").split("\n")[location.range.start.line]
    return row[location.range.start.character : location.range.end.character]


def test_definitions_in_a_provider(editor: Editor, weekly: Path) -> None:
    graph = weekly / "graphs" / "report.yaml"
    edge_to = position_of(graph, "to: publish", offset=5)
    found = definition(editor, graph, edge_to)
    assert found.uri == graph.as_uri()
    assert line_of(found) == "publish"
    assert found.range.start.line == position_of(graph, "id: publish").line

    found = definition(editor, graph, position_of(graph, "actions/draft.yaml", offset=2))
    assert found.uri == (weekly / "actions" / "draft.yaml").as_uri()

    code_at = position_of(graph, "route.report.publish", offset=3)
    found = definition(editor, graph, code_at)
    assert found.uri == (weekly / "codes.yaml").as_uri()
    assert line_of(found) == "route.report.publish"

    entry = position_of(graph, "default: draft", offset=10)
    found = definition(editor, graph, entry)
    assert found.range.start.line == position_of(graph, "id: draft").line

    test = weekly / "tests" / "02-partial-draft-repeats.yaml"
    found = definition(editor, test, position_of(test, "graph: report", offset=8))
    assert (found.uri, line_of(found)) == (graph.as_uri(), "report")
    found = definition(editor, test, position_of(test, "report/draft", offset=8))
    assert found.range.start.line == position_of(graph, "id: draft").line


def test_definitions_in_a_flow(editor: Editor, flows: Path) -> None:
    entry = flows / "ship-release" / "FLOW.md"
    target = position_of(entry, "| announce", offset=3)
    found = definition(editor, entry, target)
    assert line_of(found) == "Announce the release"
    found = definition(editor, entry, position_of(entry, '"repo-stats"', offset=2))
    assert found.uri == (flows / "repo-stats" / "FLOW.md").as_uri()


def test_references_of_a_node_and_of_a_code(editor: Editor, weekly: Path) -> None:
    graph = weekly / "graphs" / "report.yaml"
    uri = open_file(editor, graph)
    found = editor.run(
        editor.client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(uri),
                position=position_of(graph, "id: publish", offset=5),
                context=types.ReferenceContext(include_declaration=True),
            )
        )
    )
    places = sorted((f.uri.rsplit("/", 1)[1], f.range.start.line) for f in found or [])
    names = {name for name, _ in places}
    assert "report.yaml" in names
    # the edges approve -> publish, publish -> done, publish -> check-publication
    assert sum(1 for name, _ in places if name == "report.yaml") == 4
    assert {"06-publish-after-approval.yaml"} <= names
    found = editor.run(
        editor.client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(uri),
                position=position_of(graph, "route.report.draft", offset=2),
                context=types.ReferenceContext(include_declaration=True),
            )
        )
    )
    assert {f.uri.rsplit("/", 1)[1] for f in found or []} >= {
        "codes.yaml",
        "report.yaml",
        "01-fresh-week.yaml",
    }


def test_hover_on_a_node_and_a_code(editor: Editor, weekly: Path) -> None:
    graph = weekly / "graphs" / "report.yaml"
    uri = open_file(editor, graph)
    shown = editor.run(
        editor.client.text_document_hover_async(
            types.HoverParams(
                text_document=doc(uri), position=position_of(graph, "to: approve", offset=5)
            )
        )
    )
    assert shown is not None
    text = shown.contents.value  # type: ignore[union-attr]
    assert "gate node of Graph report" in text
    assert "authority `report.publish`, delegatable" in text
    assert "`report.approved` equals True" in text
    shown = editor.run(
        editor.client.text_document_hover_async(
            types.HoverParams(
                text_document=doc(uri), position=position_of(graph, "id: publish", offset=5)
            )
        )
    )
    assert "runner command, effect external" in shown.contents.value  # type: ignore[union-attr]
    shown = editor.run(
        editor.client.text_document_hover_async(
            types.HoverParams(
                text_document=doc(uri), position=position_of(graph, "route.report.draft", offset=1)
            )
        )
    )
    assert "no recorded draft digest" in shown.contents.value  # type: ignore[union-attr]


def test_rename_a_node_everywhere_and_refuse_a_collision(editor: Editor, weekly: Path) -> None:
    graph = weekly / "graphs" / "report.yaml"
    uri = open_file(editor, graph)
    at = position_of(graph, "id: draft", offset=5)
    edit = editor.run(
        editor.client.text_document_rename_async(
            types.RenameParams(text_document=doc(uri), position=at, new_name="write")
        )
    )
    assert edit is not None
    assert edit.changes is not None
    for file_uri, edits in edit.changes.items():
        path = Path(file_uri.removeprefix("file://"))
        lines = path.read_text(encoding="utf-8").split("\n")
        for change in edits:
            r = change.range
            assert lines[r.start.line][r.start.character : r.end.character] == "draft"
            assert change.new_text == "write"
    counts = {u.rsplit("/", 1)[1]: len(e) for u, e in edit.changes.items()}
    # the node, the entry, the repeat edge's two ends and draft -> approve
    assert counts["report.yaml"] == 5
    assert counts["02-partial-draft-repeats.yaml"] == 2  # an outcome key and primaryNode
    with pytest.raises(JsonRpcException, match="lsp-rename-refused"):
        editor.run(
            editor.client.text_document_rename_async(
                types.RenameParams(text_document=doc(uri), position=at, new_name="publish")
            )
        )


def test_completion_where_a_reference_is_expected(editor: Editor, weekly: Path) -> None:
    graph = weekly / "graphs" / "report.yaml"
    text = graph.read_text(encoding="utf-8")
    typed = text + "  - { from: approve, to: \n"
    uri = open_file(editor, graph, typed)
    row = len(typed.split("\n")) - 2
    column = len("  - { from: approve, to: ")
    found = editor.run(
        editor.client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc(uri), position=types.Position(line=row, character=column)
            )
        )
    )
    assert isinstance(found, types.CompletionList)
    assert {i.label for i in found.items} == {
        "draft",
        "approve",
        "publish",
        "check-publication",
        "done",
    }
    code_row = position_of(graph, "reasonCode: route.report.draft")
    found = editor.run(
        editor.client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc(uri),
                position=types.Position(
                    line=code_row.line, character=code_row.character + len("reasonCode: ")
                ),
            )
        )
    )
    assert isinstance(found, types.CompletionList)
    catalog = (weekly / "codes.yaml").read_text(encoding="utf-8")
    listed = {line.split(": ", 1)[1] for line in catalog.split("\n") if "- code: " in line}
    assert {i.label for i in found.items} == listed
    assert len(listed) == 5
    action_row = position_of(graph, "action: actions/draft.yaml")
    found = editor.run(
        editor.client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc(uri),
                position=types.Position(
                    line=action_row.line, character=action_row.character + len("action: ")
                ),
            )
        )
    )
    assert isinstance(found, types.CompletionList)
    assert [i.label for i in found.items] == [
        "actions/check-publication.yaml",
        "actions/draft.yaml",
        "actions/publish.yaml",
    ]
