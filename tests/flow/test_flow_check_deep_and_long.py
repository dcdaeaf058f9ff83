"""``flow.check()`` never raises for bad input (issue 26, N9/N10): a command block's
``stdin`` nested past the interpreter's stack, and a 执行Flow id longer than a directory
name can be, are coded diagnostics at the place in FLOW.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_graph import codes, flow
from flow_run_support import call, package

GRAPH = "start((开始)) --> a[a]\na -->|已执行| finish((结束))"


def _command_block(body: str) -> str:
    return f'## a\n\n```执行自定义命令\n{{"command": "node", "args": [], {body}}}\n```\n'


@pytest.mark.parametrize("depth", [985, 20_000])
@pytest.mark.parametrize("shape", ["[", '{"a":'])
def test_a_deeply_nested_stdin_is_a_positioned_diagnostic(
    tmp_path: Path, depth: int, shape: str
) -> None:
    closing = "]" if shape == "[" else "}"
    inner = "" if shape == "[" else '"{outcome}"'
    body = f'"stdin": {shape * depth}{inner}{closing * depth}'
    found = flow.check(package(tmp_path, "deep", GRAPH, _command_block(body)))
    deep = [d for d in found if d.code == codes.FLOW_COMMAND_JSON_INVALID]
    assert len(deep) == 1
    assert "nested" in deep[0].message
    assert deep[0].path == "deep/FLOW.md"
    assert deep[0].line is not None
    assert deep[0].column is not None


def test_a_flow_id_longer_than_a_directory_name_is_a_positioned_diagnostic(
    tmp_path: Path,
) -> None:
    graph = "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| finish"
    found = flow.check(package(tmp_path, "long", graph, call("c", "x" * 300)))
    invalid = [d for d in found if d.code == codes.FLOW_REF_ID_INVALID]
    assert len(invalid) == 1
    assert "300 characters" in invalid[0].message
    assert invalid[0].line is not None
    assert codes.UNEXPECTED_ERROR not in {d.code for d in found}


def test_a_flow_id_of_255_characters_is_looked_for(tmp_path: Path) -> None:
    graph = "start((开始)) --> c[c]\nc -->|已完成| finish((结束))\nc -->|已失败| finish"
    found = flow.check(package(tmp_path, "long", graph, call("c", "x" * 255)))
    assert codes.FLOW_REF_TARGET_MISSING in {d.code for d in found}


AGENT_GRAPH = "start((开始)) --> a[a]\na -->|ok| finish((结束))"


@pytest.mark.parametrize(
    ("script", "code", "words"),
    [
        ("scripts/a\\u0000b.mjs", codes.RESOURCE_PATH_INVALID, "holds a NUL"),
        ("scripts/" + "a" * 5000 + ".mjs", codes.RESOURCE_MISSING, "does not exist"),
        ("scripts/" + ("a" * 200 + "/") * 30 + "x.mjs", codes.RESOURCE_MISSING, "does not exist"),
    ],
    ids=["nul", "long-name", "long-path"],
)
def test_a_script_path_the_system_refuses_is_a_positioned_diagnostic(
    tmp_path: Path, script: str, code: str, words: str
) -> None:
    """Found by the FLOW.md fuzz: these raised ValueError / ENAMETOOLONG out of check()."""
    block = f'## a\n\n```执行自定义命令\n{{"command": "node", "args": ["{script}"]}}\n```\n'
    found = flow.check(package(tmp_path, "odd", GRAPH, block))
    wrong = [d for d in found if d.code == code]
    assert len(wrong) == 1, [(d.code, d.message[:80]) for d in found]
    assert words in wrong[0].message
    assert wrong[0].line is not None


def test_a_reference_link_the_system_refuses_is_a_positioned_diagnostic(tmp_path: Path) -> None:
    link = "references/" + "é" * 3000 + ".md"
    body = f"## a\n\n```新建Agent\nRead [it]({link}).\n```\n\n### ok\n\nDone.\n"
    found = flow.check(package(tmp_path, "odd", AGENT_GRAPH, body))
    missing = [d for d in found if d.code == codes.RESOURCE_MISSING]
    assert len(missing) == 1
    assert "does not exist" in missing[0].message
    assert missing[0].line is not None


@pytest.mark.parametrize("shape", ["name", "path"])
def test_an_entry_path_the_system_refuses_is_entry_missing(tmp_path: Path, shape: str) -> None:
    """Found while fuzzing: ENAMETOOLONG came out of check() from the entry's own path."""
    entry = tmp_path / ("a" * 5000 if shape == "name" else "a/" * 3000 + "FLOW.md")
    found = flow.check(entry)
    assert [d.code for d in found] == [codes.FLOW_ENTRY_MISSING]
    assert found[0].path == str(entry)
