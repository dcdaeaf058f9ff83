"""Bad and large input through the whole validator: structured errors only, never a crash."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_graph.cli import main
from agent_graph.compiler import load_provider
from agent_graph.errors import AgentGraphError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from generate import write_chain_provider  # noqa: E402

EXAMPLE = ROOT / "examples" / "weekly-report"
FUZZ_TARGETS = sorted(
    (example, p.relative_to(example))
    for example in (ROOT / "examples").iterdir()
    if (example / "provider.yaml").is_file()
    for p in example.rglob("*")
    if p.is_file() and p.name != "README.md" and "tests" not in p.relative_to(example).parts
)


def _mutate(data: bytes, kind: int, at: int, payload: bytes) -> bytes:
    pos = at % (len(data) + 1)
    if kind == 0:  # truncate
        return data[:pos]
    if kind == 1:  # insert garbage
        return data[:pos] + payload + data[pos:]
    if kind == 2:  # overwrite
        return data[:pos] + payload + data[pos + len(payload) :]
    if kind == 3:  # delete a span
        return data[:pos] + data[pos + len(payload) + 1 :]
    # duplicate a line (duplicate keys, repeated list items …)
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    index = at % len(lines)
    return b"".join(lines[: index + 1] + lines[index:])


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("AGC_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    target=st.sampled_from(FUZZ_TARGETS),
    mutations=st.lists(
        st.tuples(
            st.integers(0, 4),
            st.integers(0, 1 << 16),
            st.sampled_from(
                [
                    b"\x00",
                    b"\xff\xfe",
                    b": ",
                    b"- ",
                    b"\n  ",
                    b"{",
                    b"]",
                    b"&a",
                    b"*a",
                    b"---\n",
                    b"..",
                    b"/etc/passwd",
                    b"\t",
                    b"kind: gate",
                    b"!!binary",
                    b'"',
                    b"~",
                ]
            )
            | st.binary(min_size=1, max_size=8),
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_mutated_providers_give_structured_errors(
    tmp_path_factory: pytest.TempPathFactory,
    target: tuple[Path, Path],
    mutations: list[tuple[int, int, bytes]],
) -> None:
    example, file = target
    root = tmp_path_factory.mktemp("fuzz") / "p"
    shutil.copytree(example, root)
    path = root / file
    data = path.read_bytes()
    for kind, at, payload in mutations:
        data = _mutate(data, kind, at, payload)
    path.write_bytes(data)
    error = _load_error(root / "provider.yaml")
    if error is None:
        return
    assert error.code
    assert error.code == error.code.strip()
    assert error.diagnostics, error.code
    for diagnostic in error.diagnostics:
        assert diagnostic.code
        assert diagnostic.message
        assert diagnostic.path is not None
        assert diagnostic.line is None or diagnostic.line >= 1
        assert diagnostic.column is None or diagnostic.column >= 1


_JUNK: list[Any] = [
    None,
    7,
    "",
    "Not An Id",
    "../outside.yaml",
    "actions/publsh.yaml",
    [],
    {},
    [1],
    {"a": 1},
    True,
]
_MEMBERS = [
    "id",
    "kind",
    "action",
    "reasonCode",
    "gate",
    "graph",
    "entry",
    "resources",
    "satisfiedBy",
    "satisfiedby",
    "delegated",
    "inspectionAction",
    "resolutionAction",
]


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("AGC_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    example=st.sampled_from(sorted(p.parent for p in (ROOT / "examples").glob("*/provider.yaml"))),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["nodes", "edges"]),
            st.integers(0, 40),
            st.sampled_from([*_MEMBERS, "from", "to", "kind", "outcomes", None]),
            st.sampled_from([*_JUNK, "<drop>"]),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_schema_invalid_graphs_are_checked_as_far_as_sound_without_crashing(
    tmp_path_factory: pytest.TempPathFactory,
    example: Path,
    edits: list[tuple[str, int, str | None, Any]],
) -> None:
    """Junk in a node's or an edge's members (or a junk node) leaves the rest of the
    graph checked (``graph_checks.salvage``); whatever it is, the result is structured."""
    root = tmp_path_factory.mktemp("salvage") / "p"
    shutil.copytree(example, root)
    graph_path = next((root / "graphs").glob("*.yaml"))
    graph = yaml.safe_load(graph_path.read_text(encoding="utf-8"))
    for group, index, member, junk in edits:
        items = graph[group]
        if not items:
            continue
        position = index % len(items)
        junk = copy.deepcopy(junk)  # the samples are shared between examples
        if member is None or not isinstance(items[position], dict):
            items[position] = None if junk == "<drop>" else junk
        elif junk == "<drop>":
            items[position].pop(member, None)
        else:
            items[position][member] = junk
    graph_path.write_text(json.dumps(graph, indent=1) + "\n", encoding="utf-8")
    error = _load_error(root / "provider.yaml")
    if error is None:
        return
    assert error.diagnostics, error.code
    for diagnostic in error.diagnostics:
        assert diagnostic.path is not None
        assert diagnostic.message


def _load_error(manifest: Path) -> AgentGraphError | None:
    """The structured error of loading ``manifest``; any other exception fails the test."""
    try:
        load_provider(manifest)
    except AgentGraphError as exc:
        return exc
    return None


def test_huge_file_is_refused_with_a_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "p"
    shutil.copytree(EXAMPLE, root)
    graph = next((root / "graphs").glob("*.yaml"))
    with graph.open("ab") as handle:
        handle.write(b"# padding\n" * (50 * 1024 * 1024 // 10))
    assert main(["validate", "-m", str(root / "provider.yaml"), "--format", "json"]) == 1
    error = json.loads(capsys.readouterr().err)["error"]
    assert error["code"] == "file-too-large"
    assert error["diagnostics"][0]["path"] == f"graphs/{graph.name}"


def test_directory_as_manifest_is_file_missing(tmp_path: Path) -> None:
    with pytest.raises(AgentGraphError) as caught:
        load_provider(tmp_path)
    assert caught.value.code == "file-missing"


def test_every_problem_of_a_broken_provider_is_reported_in_one_run(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(EXAMPLE, root)
    graph = next((root / "graphs").glob("*.yaml"))
    text = graph.read_text(encoding="utf-8")
    text = text.replace("action: actions/publish.yaml", "action: actions/missing.yaml", 1)
    text += "  - { from: done, to: draft }\n"
    graph.write_text(text, encoding="utf-8")
    catalog = root / "codes.yaml"
    if catalog.is_file():
        text = catalog.read_text(encoding="utf-8")
        text = text.replace("route.report.draft", "route.report.drafting")
        catalog.write_text(text, encoding="utf-8")
    with pytest.raises(AgentGraphError) as caught:
        load_provider(root / "provider.yaml")
    codes = [d.code for d in caught.value.diagnostics]
    assert caught.value.code == codes[0] == "graph-terminal-edge-invalid"
    assert "file-missing" in codes
    if catalog.is_file():
        assert "route-reason-code-missing" in codes


@pytest.mark.slow
def test_100k_node_chain_validates(tmp_path: Path) -> None:
    manifest = write_chain_provider(tmp_path / "chain", 100_000)
    start = time.perf_counter()
    provider = load_provider(manifest)
    elapsed = time.perf_counter() - start
    graph = provider.graphs["chain"]
    assert len(graph.definition["nodes"]) == 100_000
    assert len(graph.definition["edges"]) == 99_999
    assert provider.graph_digests["chain"].startswith("sha256:")
    print(f"100,000-node chain validated in {elapsed:.1f} s")


@pytest.mark.slow
def test_100k_node_chain_with_a_cycle_is_reported_not_crashed(tmp_path: Path) -> None:
    manifest = write_chain_provider(tmp_path / "chain", 100_000)
    graph = manifest.parent / "graphs" / "chain.yaml"
    with graph.open("a", encoding="utf-8") as handle:
        handle.write("  - { from: n99998, to: n0 }\n")
    with pytest.raises(AgentGraphError) as caught:
        load_provider(manifest)
    assert caught.value.code == "graph-flow-cycle"
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.pointer == "/edges/99999"
    assert diagnostic.message.endswith("n99998 -> n0")
