"""pygls stays inside agent_graph.lsp.server; without it ``agc lsp`` says how to install it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import agent_graph

PACKAGE = Path(agent_graph.__file__).resolve().parent


def test_one_module_imports_pygls() -> None:
    importers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(name.split(".")[0] in ("pygls", "lsprotocol") for name in names):
                importers.add(path.relative_to(PACKAGE).as_posix())
    assert importers == {"lsp/server.py"}


def test_without_pygls_agc_lsp_fails_with_the_install_command() -> None:
    blocked = (
        "import sys; sys.modules['pygls'] = None; sys.modules['lsprotocol'] = None\n"
        "from agent_graph.cli import main\n"
        "sys.argv = ['agc', 'lsp', '--format', 'json']\n"
        "sys.exit(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1, done.stderr
    envelope = json.loads(done.stdout or done.stderr)
    assert envelope["error"]["code"] == "lsp-server-missing"
    assert "pip install 'agent-graph[lsp]'" in envelope["error"]["message"]


def test_checking_a_provider_leaves_pygls_unloaded() -> None:
    manifest = PACKAGE.parents[1] / "examples" / "weekly-report" / "provider.yaml"
    script = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from agent_graph.lsp.session import Session\n"
        "found = Session().diagnostics(Path(sys.argv[1]))\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')]\n"
        "print(json.dumps({'files': len(found), 'loaded': loaded}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(manifest)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"files": 1, "loaded": []}
