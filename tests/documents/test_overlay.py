"""Editor buffers standing in for files (documents.overlay), at read_text only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_graph import codes
from agent_graph.compiler import CHECKED, compile_manifest
from agent_graph.documents.files import read_text
from agent_graph.documents.overlay import buffer_text, buffers
from agent_graph.errors import AgentGraphError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_buffer_is_read_instead_of_the_file_inside_the_block_only(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("on: disk\n", encoding="utf-8")
    assert buffer_text(path) is None
    with buffers({path: "in: buffer\n"}):
        assert read_text(path, display="a.yaml") == "in: buffer\n"
        # another spelling of the same file finds the same buffer
        assert read_text(tmp_path / "." / "a.yaml", display="a.yaml") == "in: buffer\n"
    assert read_text(path, display="a.yaml") == "on: disk\n"


def test_a_buffer_with_nul_is_refused_like_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("ok: 1\n", encoding="utf-8")
    with buffers({path: "ok: 1\nbad: \0\n"}), pytest.raises(AgentGraphError) as raised:
        read_text(path, display="a.yaml")
    assert raised.value.code == codes.PARSE_FAILED
    assert (raised.value.diagnostics[0].line, raised.value.diagnostics[0].column) == (2, 6)


def test_the_compiler_checks_the_buffer_not_the_disk(tmp_path: Path) -> None:
    root = Path(shutil.copytree(EXAMPLES / "weekly-report", tmp_path / "weekly"))
    graph = root / "graphs" / "report.yaml"
    text = graph.read_text(encoding="utf-8")
    broken = text.replace("{ from: publish, to: done }", "{ from: publish, to: dnoe }")
    with buffers({graph: broken}), pytest.raises(AgentGraphError) as raised:
        compile_manifest(root / "provider.yaml", stop_after=CHECKED)
    assert raised.value.code == codes.GRAPH_EDGE_NODE_MISSING
    assert compile_manifest(root / "provider.yaml", stop_after=CHECKED).provider is not None
    assert graph.read_text(encoding="utf-8") == text


def test_a_command_line_run_never_loads_the_overlay() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from agent_graph.cli import main\n"
        "code = main(['validate', '-m', sys.argv[1]])\n"
        "print(code, 'agent_graph.documents.overlay' in sys.modules)\n"
    )
    manifest = EXAMPLES / "weekly-report" / "provider.yaml"
    done = subprocess.run(
        [sys.executable, "-c", script, str(manifest)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.stdout.strip().splitlines()[-1] == "0 False", done.stderr
