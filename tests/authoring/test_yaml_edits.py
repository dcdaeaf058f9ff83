"""Targeted YAML edits keep every byte they do not change, and refuse bad results."""

from __future__ import annotations

import pytest

from agent_graph.authoring.yaml_edits import YamlEditor
from agent_graph.documents.yaml12 import parse_yaml
from agent_graph.errors import AgentGraphError

SOURCE = """\
# Provider notes: keep me
schema: agent-graph.provider.v1   # trailing comment
id: 'fixture.edits'
name: "Edits \\u00e9"

graphs:
  - graphs/a.yaml  # first
  # a comment between items
  - "graphs/c.yaml"
defaults: &shared
  effect: read
other: *shared
flow: [x, 'y']
compatibility: {agentGraph: "^0.2.0", node: '>=20'}
"""


def edited() -> tuple[YamlEditor, str]:
    editor = YamlEditor(SOURCE, display="provider.yaml")
    editor.replace_scalar("/compatibility/agentGraph", "^0.3.0")
    editor.replace_scalar("/id", "fixture.edited")
    editor.insert_item("/graphs", 1, "graphs/b.yaml")
    editor.insert_item("/graphs", 3, "graphs/d.yaml")
    editor.insert_item("/flow", 0, "w")
    editor.insert_item("/flow", 3, "z")
    editor.add_key("", "catalogs", {"codes": "codes.yaml"})
    editor.add_key("/compatibility", "bun", ">=1")
    return editor, editor.result()


def test_edits_read_back_as_intended() -> None:
    _, text = edited()
    value = parse_yaml(text)[0]
    original = parse_yaml(SOURCE)[0]
    assert value["graphs"] == ["graphs/a.yaml", "graphs/b.yaml", "graphs/c.yaml", "graphs/d.yaml"]
    assert value["flow"] == ["w", "x", "y", "z"]
    assert value["compatibility"] == {"agentGraph": "^0.3.0", "node": ">=20", "bun": ">=1"}
    assert value["catalogs"] == {"codes": "codes.yaml"}
    assert value["id"] == "fixture.edited"
    assert value["other"] == value["defaults"] == original["defaults"]
    assert list(value)[: len(original)] == list(original)  # key order kept


def test_untouched_lines_stay_byte_identical() -> None:
    _, text = edited()
    new_lines = text.splitlines()
    for line in SOURCE.splitlines():
        if any(s in line for s in ("id:", "compatibility", "flow:")):
            continue
        assert line in new_lines, line
    # quoting style of replaced values is kept
    assert "id: 'fixture.edited'" in new_lines
    assert 'compatibility: {agentGraph: "^0.3.0", node: \'>=20\', bun: ">=1"}' in new_lines
    assert "flow: [w, x, 'y', z]" in new_lines
    assert (
        new_lines.index("  - graphs/b.yaml") == new_lines.index("  # a comment between items") + 1
    )


def test_anchor_survives_a_replace_next_to_it() -> None:
    editor = YamlEditor("a: &x one\nb: two\n", display="f.yaml")
    editor.replace_scalar("/a", "three")
    assert editor.result() == "a: &x three\nb: two\n"


def test_an_aliased_scalar_is_not_changed_behind_the_aliases_back() -> None:
    editor = YamlEditor("a: &x one\nb: *x\n", display="f.yaml")
    editor.replace_scalar("/a", "two")  # would change b too
    with pytest.raises(AgentGraphError) as caught:
        editor.result()
    assert caught.value.code == "yaml-edit-failed"


def test_json_text_stays_json() -> None:
    editor = YamlEditor(
        '{\n  "schema": "old",\n  "list": ["a"]\n}\n', display="f.json", is_json=True
    )
    editor.replace_scalar("/schema", "new")
    editor.insert_item("/list", 1, "b")
    assert editor.result() == '{\n  "schema": "new",\n  "list": ["a", "b"]\n}\n'


def test_a_result_that_reads_back_differently_is_refused() -> None:
    editor = YamlEditor("a: 1\n", display="f.yaml")
    editor.replace_scalar("/a", "2")
    editor.expected["a"] = "something else"  # what a wrong splice would look like
    with pytest.raises(AgentGraphError) as caught:
        editor.result()
    assert caught.value.code == "yaml-edit-failed"


def test_block_scalars_are_not_guessed() -> None:
    editor = YamlEditor("a: |\n  text\n", display="f.yaml")
    with pytest.raises(AgentGraphError) as caught:
        editor.replace_scalar("/a", "x")
    assert caught.value.code == "yaml-edit-failed"
    assert caught.value.diagnostics[0].line == 1


def test_syntax_error_is_parse_failed_with_position() -> None:
    with pytest.raises(AgentGraphError) as caught:
        YamlEditor("a: [1\n", display="f.yaml")
    assert caught.value.code == "parse-failed"
    assert caught.value.diagnostics[0].line is not None


@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_inserted_lines_take_the_files_own_line_ending(newline: str) -> None:
    """N14: an import into a CRLF file added LF lines; every edit keeps the file's ending."""
    text = newline.join(["id: demo", "graphs:", "  - graphs/a.yaml", "codes:", "  first: 1", ""])
    editor = YamlEditor(text, display="provider.yaml")
    editor.insert_item("/graphs", 1, "graphs/b.yaml")
    editor.add_key("/codes", "second", 2)
    editor.add_key("/codes", "nested", {"a": 1})
    result = editor.result()
    assert parse_yaml(result)[0] == {
        "id": "demo",
        "graphs": ["graphs/a.yaml", "graphs/b.yaml"],
        "codes": {"first": 1, "second": 2, "nested": {"a": 1}},
    }
    lines = result.split(newline)
    assert len(lines) == len(text.split(newline)) + 4  # b.yaml, second, nested and a
    assert not any("\r" in line or "\n" in line for line in lines)  # no other ending
