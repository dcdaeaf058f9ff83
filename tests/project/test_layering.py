"""The package's layers, read from its imports (``ast``, not text search).

Every module under ``src/agent_graph`` belongs to one top-level part (``vm``,
``compiler``, ``documents`` …; the root package ``agent_graph/__init__.py`` is the
part ``ROOT``). :data:`ALLOWED` says which parts each part may import; anything
else, and any cycle between parts, fails with the module and line of the import.
Function-local and ``TYPE_CHECKING`` imports count too: a lazy import is still a
dependency.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

import agent_graph
from tree_support import write_tree as _write

PACKAGE = Path(agent_graph.__file__).resolve().parent
BASE = {
    "codes",
    "errors",
    "canonical",
    "js_numbers",
    "protocol",
    "frozen",
    "collector",
    "spelling",
}

#: part -> the parts it may import (its own modules always).
ALLOWED: dict[str, set[str]] = {
    "protocol": set(),
    "codes": set(),  # the constants of every error code, which every part spells codes with
    "spelling": set(),  # did-you-mean: the known name a mistyped one most likely means
    "collector": set(),  # pausing the cyclic garbage collector while big structures are built
    "frozen": set(),  # frozen records and cached generated code
    "errors": {"frozen"},
    "error_codes": {"codes"},  # what each code means, and its section of the docs
    "schemas": set(),
    # JavaScript number semantics, which canonical re-exports (the JSON readers use them
    # without loading canonical's collation tables)
    "js_numbers": set(),
    "canonical": {"codes", "errors", "js_numbers"},
    "ir": {"codes", "errors", "canonical", "frozen", "collector"},
    "exec": {"codes", "errors"},
    "documents": BASE | {"schemas"},
    "vm": BASE | {"ir", "exec"},  # exec: stdlib only (argument vectors of command plans)
    "bundles": BASE | {"documents", "ir"},
    "runs": BASE | {"documents", "ir", "vm"},
    "materialize": BASE | {"vm", "ir", "exec", "documents"},
    # the compiler's facade (compile_manifest, compile_flow) over its two front ends; each
    # front end runs its pass table through the shared machinery and imports no other
    "compiler": BASE | {"compiler.passes", "compiler.provider", "compiler.flow", "bundles"},
    "compiler.passes": set(),
    "compiler.provider": BASE
    | {"compiler.passes", "documents", "bundles", "ir", "exec", "schemas"},
    "compiler.flow": BASE | {"compiler.passes", "documents", "ir"},
    "ROOT": BASE | {"compiler", "bundles", "vm"},
    # which Provider a host names (manifest, Skill binding, registry) and the one call that
    # loads it: through the root package's open_bundle / program_of
    "selection": BASE | {"ROOT", "compiler", "compiler.provider", "bundles", "vm"},
    # Provider authoring (init, import, migrate): writes sources, reads them back through the
    # compiler to prove what it wrote validates
    "authoring": BASE | {"documents", "compiler", "compiler.provider", "schemas"},
    # Flow packages: the facade (check, compile, run) wires the front end to the runtime
    "flow": BASE | {"compiler", "compiler.flow", "ir", "flow.runtime", "flow.agents"},
    # the runtime runs Flow IR: no front end; the durable record, commands through exec
    "flow.runtime": BASE | {"documents", "ir", "exec", "flow.agents"},
    # Agent adapters: the protocol and its transports, nothing of the runtime's; an answer
    # script is read through the documents layer's capped reader
    "flow.agents": BASE | {"exec", "documents"},
    # pictures of graphs (Mermaid, DOT, SVG through Graphviz) and explanations: they read the
    # VM's evaluation trace and the Flow IR, and run Graphviz through exec; they evaluate nothing
    "pictures": BASE | {"ir", "vm", "exec"},
    # agc mcp serve's host: loads Providers through selection, keeps Runs, runs observers,
    # drives Flow Runs through the facade and the runtime like agc flow does, serves a Run's
    # explanation and picture as agc explain / agc graph draw them; one adapter module
    # inside it imports the MCP SDK
    "mcp": BASE
    | {
        "pictures",
        "selection",
        "runs",
        "vm",
        "documents",
        "materialize",
        "exec",
        "schemas",
        "flow",
        "flow.runtime",
        "flow.agents",
        "ir",
    },
    # agc lsp's server: checks buffers through the compiler's front ends (the pass tables)
    # and reads them through the documents layer; one module inside it imports pygls
    "lsp": BASE | {"compiler", "compiler.provider", "compiler.flow", "documents"},
    # graph tests; explain --reach and test --coverage also read the IR records the VM
    # evaluates (node kinds, edge outcome masks, fact checks) to search and to count
    "testing": BASE | {"ROOT", "documents", "vm", "ir"},
    "pytest_plugin": BASE | {"ROOT", "testing", "vm"},
    "cli": BASE
    | {
        "ROOT",
        "selection",
        "compiler",
        "documents",
        "bundles",
        "ir",
        "vm",
        "runs",
        "exec",
        "testing",
        "materialize",
        "authoring",
        "flow",
        "flow.runtime",
        "compiler.flow",
        "compiler.provider",
        "pictures",
        "mcp",
        "lsp",
    },
    "__main__": {"cli"},
}


class Import(NamedTuple):
    module: str  # importing module, dotted
    line: int
    target: str  # imported agent_graph module, dotted


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(root: Path) -> Iterator[Import]:
    """Every import of a module of ``root``'s package by a module of it."""
    top = root.name
    modules = {module_name(root, p) for p in root.rglob("*.py")}
    for path in sorted(root.rglob("*.py")):
        name = module_name(root, path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == top:
                        yield Import(name, node.lineno, alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] != top:
                    continue
                for alias in node.names:
                    # `from pkg import sub` imports the submodule when there is one
                    candidate = f"{source}.{alias.name}"
                    yield Import(name, node.lineno, candidate if candidate in modules else source)


#: Parts inside a part: each front end, the pass machinery, the Flow runtime and its Agents.
SUB_PARTS = {"compiler.passes", "compiler.provider", "compiler.flow", "flow.runtime", "flow.agents"}


def part_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 3 and f"{parts[1]}.{parts[2]}" in SUB_PARTS:
        return f"{parts[1]}.{parts[2]}"
    return "ROOT" if len(parts) == 1 else parts[1]


def violations(root: Path, allowed: dict[str, set[str]]) -> list[str]:
    found = []
    for imp in imports_of(root):
        source, target = part_of(imp.module), part_of(imp.target)
        if source == target:
            continue
        if source not in allowed:
            found.append(f"{imp.module}: part {source!r} has no row in ALLOWED")
        elif target not in allowed[source]:
            found.append(f"{imp.module}:{imp.line} imports {imp.target} ({source} -> {target})")
    return sorted(set(found))


def part_cycles(root: Path) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for imp in imports_of(root):
        source, target = part_of(imp.module), part_of(imp.target)
        if source != target:
            graph.setdefault(source, set()).add(target)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        trail.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        trail.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_every_part_imports_only_what_its_layer_allows() -> None:
    assert violations(PACKAGE, ALLOWED) == []


def test_no_cycle_between_parts_root_package_included() -> None:
    assert part_cycles(PACKAGE) == []


def module_cycles(root: Path) -> list[list[str]]:
    """Circles of modules importing each other (lazy and TYPE_CHECKING imports count)."""
    graph: dict[str, set[str]] = {}
    for imp in imports_of(root):
        if imp.module != imp.target and not imp.target.startswith(imp.module + "."):
            graph.setdefault(imp.module, set()).add(imp.target)
    found: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        trail.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, trail)
        trail.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_no_two_modules_import_each_other_in_a_circle() -> None:
    # a package's __init__ importing its own submodules is no circle (the prefix rule)
    assert module_cycles(PACKAGE) == []


def test_every_part_is_in_the_table() -> None:
    parts = {part_of(module_name(PACKAGE, p)) for p in PACKAGE.rglob("*.py")}
    assert parts - set(ALLOWED) == set()


def test_the_table_keeps_the_design_rules() -> None:
    # the layering rules of docs/architecture.md, as data: if ALLOWED drifts, this fails
    assert not {"compiler", "documents", "bundles", "runs"} & (ALLOWED["vm"] | ALLOWED["ir"])
    assert "compiler" not in ALLOWED["runs"]
    assert "vm" not in ALLOWED["compiler"]
    front_ends = {"compiler", "compiler.flow", "compiler.provider"}
    assert not front_ends & (ALLOWED["flow.runtime"] | ALLOWED["flow.agents"])
    assert not {"flow.runtime", "flow"} & (ALLOWED["compiler.flow"] | ALLOWED["flow.agents"])
    assert not {"compiler.provider"} & ALLOWED["compiler.flow"]
    assert not {"compiler.flow"} & ALLOWED["compiler.provider"]
    assert not {"compiler", "vm"} & ALLOWED["bundles"]
    assert not {"compiler", "vm", "bundles", "ir"} & ALLOWED["documents"]


def test_a_bad_import_is_caught_with_its_place(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path / "agent_graph",
        {
            "__init__.py": "",
            "vm/__init__.py": "",
            "vm/evaluate.py": "def f():\n    from ..compiler import lower\n",
            "compiler/__init__.py": "lower = 1\n",
            "compiler/lower.py": "from agent_graph.vm import evaluate\n",
        },
    )
    found = violations(pkg, ALLOWED)
    assert found == [
        "agent_graph.compiler.lower:1 imports agent_graph.vm.evaluate (compiler -> vm)",
        "agent_graph.vm.evaluate:2 imports agent_graph.compiler.lower (vm -> compiler)",
    ]
    assert part_cycles(pkg) == [["compiler", "vm", "compiler"]]


def test_a_runtime_import_of_the_flow_front_end_is_caught(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path / "agent_graph",
        {
            "__init__.py": "",
            "flow/__init__.py": "",
            "flow/runtime/__init__.py": "",
            "flow/runtime/api.py": "def run():\n    from ...compiler.flow import package\n",
            "compiler/__init__.py": "",
            "compiler/flow/__init__.py": "",
            "compiler/flow/package.py": "",
        },
    )
    assert violations(pkg, ALLOWED) == [
        "agent_graph.flow.runtime.api:2 imports agent_graph.compiler.flow.package "
        "(flow.runtime -> compiler.flow)"
    ]


def test_a_root_package_cycle_is_caught(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path / "agent_graph",
        {
            "__init__.py": "from .compiler import x\n",
            "compiler/__init__.py": "from .. import PROTOCOL_VERSION\nx = 1\n",
        },
    )
    assert part_cycles(pkg) == [["ROOT", "compiler", "ROOT"]]
    assert violations(pkg, ALLOWED) == [
        "agent_graph.compiler:1 imports agent_graph (compiler -> ROOT)"
    ]


_CHILD = """
import json, sys
import agent_graph.runs

def loaded():
    return sorted(
        m for m, mod in sys.modules.items()
        if mod is not None and m.split(".")[0] in ("yaml", "jsonschema")
    )

after_import = loaded()
from agent_graph.runs import FileRunStore
store = FileRunStore()
store.start(sys.argv[1], provider="acme.demo", graph="main")
store.record(sys.argv[1], "main/draft", "completed")
run = store.load(sys.argv[1])
print(json.dumps({
    "after_import": after_import,
    "after_read": loaded(),
    "compiler": sorted(m for m in sys.modules if m.startswith("agent_graph.compiler")),
    "events": len(run.document["events"]),
}))
"""


@pytest.mark.parametrize("blocked", [False, True])
def test_runs_read_json_without_yaml_or_json_schema(tmp_path: Path, blocked: bool) -> None:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    prelude = ""
    if blocked:  # and it works with those packages absent, not just unimported
        prelude = "import sys\nsys.modules['yaml'] = None\nsys.modules['jsonschema'] = None\n"
    done = subprocess.run(
        [sys.executable, "-c", prelude + _CHILD, str(tmp_path / "run.json")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {"after_import": [], "after_read": [], "compiler": [], "events": 2}
