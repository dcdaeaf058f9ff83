"""Diagnostics as you type: what ``agc validate`` / ``agc flow check`` report, from buffers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types

from conftest import Editor, change, diagnostics, open_file, type_at

BROKEN = ("{ from: publish, to: done }", "{ from: publish, to: dnoe }")


def cli_json(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "agent_graph", *args, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    document: dict[str, Any] = json.loads(done.stdout or done.stderr)
    return document


def as_cli(found: list[types.Diagnostic]) -> list[tuple[Any, ...]]:
    """Code, message and the command line's place (carried in ``data``), each checked to
    lie on the line the range is on."""
    rows = []
    for d in found:
        assert isinstance(d.data, dict)
        line, column = d.data["detail"]["line"], d.data["detail"]["column"]
        assert d.range.start.line == line - 1
        assert d.range.start.character >= column - 1
        rows.append((d.code, d.message, line, column))
    return rows


def cli_rows(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    listed = document["error"]["diagnostics"] if "error" in document else document["diagnostics"]
    return [(d["code"], d["message"], d["detail"]["line"], d["detail"]["column"]) for d in listed]


def test_a_broken_buffer_shows_what_validate_reports_and_a_fix_clears_it(
    editor: Editor, weekly: Path, tmp_path: Path
) -> None:
    graph = weekly / "graphs" / "report.yaml"
    text = graph.read_text(encoding="utf-8")
    broken = text.replace(*BROKEN)
    saved = Path(shutil.copytree(weekly, tmp_path / "saved"))
    (saved / "graphs" / "report.yaml").write_text(broken, encoding="utf-8")
    expected = cli_rows(cli_json("validate", "-m", str(saved / "provider.yaml")))
    assert expected[0][0] == "graph-edge-node-missing"

    uri = open_file(editor, graph, broken)  # the disk keeps the valid text
    found = diagnostics(editor, uri, lambda d: bool(d))
    assert as_cli(found) == expected
    assert graph.read_text(encoding="utf-8") == text

    change(editor, uri, text, 2)
    assert diagnostics(editor, uri, lambda d: not d) == ()


def test_typing_an_edge_to_a_misspelled_node_shows_did_you_mean_before_save(
    editor: Editor, weekly: Path
) -> None:
    graph = weekly / "graphs" / "report.yaml"
    text = graph.read_text(encoding="utf-8")
    uri = open_file(editor, graph, text)
    assert diagnostics(editor, uri, lambda d: not d) == ()
    row = len(text.split("\n")) - 1  # the empty line after the last edge
    typed = "  - { from: approve, to: pubish }"
    type_at(editor, uri, row, 0, typed, 2)
    (found,) = diagnostics(
        editor, uri, lambda d: [x.code for x in d] == ["graph-edge-node-missing"]
    )
    assert found.severity == types.DiagnosticSeverity.Error
    column = typed.index("pubish")
    assert found.range == types.Range(
        start=types.Position(line=row, character=column),
        end=types.Position(line=row, character=column + len("pubish")),
    )
    assert found.message.endswith("references a missing node; did you mean publish?")
    (meant,) = found.related_information or []
    assert meant.message == "did you mean publish?"
    node_row = text.split("\n").index("  - id: publish")
    assert meant.location.uri == uri
    assert meant.location.range == types.Range(
        start=types.Position(line=node_row, character=8),
        end=types.Position(line=node_row, character=8 + len("publish")),
    )
    assert graph.read_text(encoding="utf-8") == text  # nothing was saved


def test_a_warning_in_another_file_is_published_there(editor: Editor, weekly: Path) -> None:
    graph = weekly / "graphs" / "report.yaml"
    text = graph.read_text(encoding="utf-8")
    # an unreachable node: a warning validate prints with a valid Provider
    lonely = text.replace(
        "edges:\n", "  - id: lonely\n    kind: terminal\n    terminalOutcome: completed\nedges:\n"
    )
    uri = open_file(editor, graph, lonely)
    found = diagnostics(editor, uri, lambda d: bool(d))
    assert [(d.code, d.severity) for d in found] == [
        ("node-unreachable", types.DiagnosticSeverity.Warning)
    ]
    row = lonely.split("\n").index("  - id: lonely")
    assert found[0].range == types.Range(  # the node is underlined at its id
        start=types.Position(line=row, character=8),
        end=types.Position(line=row, character=8 + len("lonely")),
    )


def test_flow_diagnostics_equal_flow_check(editor: Editor, flows: Path) -> None:
    entry = flows / "ship-release" / "FLOW.md"
    text = entry.read_text(encoding="utf-8")
    broken = text.replace("triage -->|abort| finish", "triage -->|abort| fnish")
    assert broken != text
    entry.write_text(broken, encoding="utf-8")
    expected = cli_rows(cli_json("flow", "check", str(entry.parent)))
    entry.write_text(text, encoding="utf-8")
    assert expected
    uri = open_file(editor, entry, broken)
    found = diagnostics(editor, uri, lambda d: bool(d))
    assert as_cli(found) == expected
    change(editor, uri, text, 2)
    assert diagnostics(editor, uri, lambda d: not d) == ()


def test_two_providers_in_one_workspace_stay_separate(
    editor: Editor, weekly: Path, tmp_path: Path
) -> None:
    other = Path(shutil.copytree(weekly, tmp_path / "other"))
    first = open_file(
        editor,
        weekly / "graphs" / "report.yaml",
        (weekly / "graphs" / "report.yaml").read_text().replace(*BROKEN),
    )
    second = open_file(editor, other / "graphs" / "report.yaml")
    assert diagnostics(editor, first, lambda d: bool(d))
    assert diagnostics(editor, second, lambda d: not d) == ()
