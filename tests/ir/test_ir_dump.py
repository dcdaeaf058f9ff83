"""The IR pretty-printer: golden text for an example, names not indexes, stable renderings.

Regenerate the golden file after an intended change with
``AGC_UPDATE_GOLDEN=1 pytest tests/ir/test_ir_dump.py`` and review the diff.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest

import agent_graph
from agent_graph.ir import codec
from agent_graph.ir import records as r
from agent_graph.ir.dump import dump, to_json

TESTS = Path(__file__).resolve().parents[1]
EXAMPLES = TESTS.parent / "examples"
GOLDEN = TESTS / "golden" / "weekly-report.ir.txt"
MANIFESTS = sorted(EXAMPLES.glob("*/provider.yaml"))


def _compile(name: str) -> r.ProviderIR:
    return agent_graph.compile_provider(EXAMPLES / name / "provider.yaml").ir


def test_weekly_report_matches_the_golden_text() -> None:
    text = dump(_compile("weekly-report"))
    if os.environ.get("AGC_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8", newline="\n")
    assert text == GOLDEN.read_text(encoding="utf-8")


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.parent.name)
def test_dump_survives_the_codec(manifest: Path) -> None:
    program = agent_graph.compile_provider(manifest).ir
    decoded = codec.decode(codec.encode(program))
    assert dump(decoded) == dump(program)
    assert to_json(decoded) == to_json(program)


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.parent.name)
def test_one_line_per_record(manifest: Path) -> None:
    program = agent_graph.compile_provider(manifest).ir
    lines = dump(program).splitlines()
    kinds = [line.split()[0] for line in lines]
    gates = sum(1 for g in program.graphs for n in g.nodes if n.gate is not None)
    delegated = sum(
        1 for g in program.graphs for n in g.nodes if n.gate is not None and n.gate.delegated
    )
    assert kinds.count("program") == 1
    assert kinds.count("graph") == len(program.graphs)
    assert kinds.count("entry") == sum(len(g.entrypoints) for g in program.graphs)
    assert kinds.count("node") == sum(len(g.nodes) for g in program.graphs)
    assert kinds.count("edge") == sum(len(g.edges) for g in program.graphs)
    assert kinds.count("gate") == gates
    assert kinds.count("delegated") == delegated
    assert kinds.count("action") == len(program.actions)
    assert kinds.count("resource") == len(program.resources)
    assert kinds.count("host") == sum(1 for res in program.resources if res.host is not None)
    codes = len(program.catalog) if program.catalog is not None else 0
    assert kinds.count("code") == codes
    assert kinds.count("catalog") == (1 if program.catalog is None else 0)
    assert len(lines) == len(kinds)


def test_edges_and_references_are_named() -> None:
    program = _compile("weekly-report")
    text = dump(program)
    assert "  edge draft -> draft repeat on=[partial]\n" in text
    assert "  edge publish -> check-publication flow on=[unverified]\n" in text
    assert "  entry default -> draft\n" in text
    draft = next(line for line in text.splitlines() if line.startswith("  node draft "))
    assert "action=report.draft" in draft
    assert "required=[procedure.report.draft]" in draft
    assert "satisfiedBy=[report.digest exists]" in draft
    approve = next(line for line in text.splitlines() if line.startswith("  node approve "))
    assert "satisfiedBy=[report.approved == true]" in approve
    assert "document=diagnostic.report.publication-unverified" in text


def test_subgraph_calls_and_priorities_are_named() -> None:
    text = dump(_compile("release-train"))
    assert re.search(r"^graph train .* calls=\[ship, verify\]$", text, re.M)
    assert re.search(r"^  node verify-live subgraph graph=verify entry=smoke ", text, re.M)
    assert re.search(r"^  node license-scan action .*priority=-10 ", text, re.M)
    assert "catalog none" in text


def test_gate_delegation_and_host_resources() -> None:
    desk = dump(_compile("review-desk"))
    assert re.search(
        r"^    gate editorial-review authority=desk.editor delegatable=true "
        r"inspection=desk.inspect-submission resolution=desk.record-verdict prompt=",
        desk,
        re.M,
    )
    assert (
        "    delegated inspection=skip resolution=desk.accept-by-policy "
        "required=[procedure.desk.acceptance-policy] recommended=[]" in desk
    )
    views = dump(_compile("context-views"))
    assert re.search(
        r"^resource acme.team-digest protocol=host-action .*"
        r"materializer=status.build-team-digest$",
        views,
        re.M,
    )
    assert re.search(r"^  host handler=acme.build-team-digest/v1 ", views, re.M)


def test_strings_are_quoted_when_not_plain() -> None:
    base = _compile("weekly-report")
    graph = base.graphs[0]
    odd = dataclasses.replace(graph.nodes[0], description='say "hi"\nthen go', priority=5)
    program = dataclasses.replace(
        base, graphs=(dataclasses.replace(graph, nodes=(odd, *graph.nodes[1:])),)
    )
    line = next(ln for ln in dump(program).splitlines() if ln.startswith("  node draft "))
    assert line.endswith(r'label="say \"hi\"\nthen go"')
    assert " priority=5 " in line
    assert "\n" not in line


def test_json_rendering_uses_names() -> None:
    doc = to_json(_compile("weekly-report"))
    json.dumps(doc)  # plain JSON values only
    graph = doc["graphs"][0]
    ids = {n["id"] for n in graph["nodes"]}
    assert all(e["from"] in ids and e["to"] in ids for e in graph["edges"])
    assert graph["entrypoints"] == {"default": "draft"}
    draft = graph["nodes"][0]
    assert draft["action"] == "report.draft"
    assert draft["satisfiedBy"] == [{"path": ["report", "digest"], "exists": True}]
    assert draft["repeats"] == ["draft"]
    assert doc["provider"]["id"] == "example.weekly-report"
    assert doc["catalog"][-1]["document"] == "diagnostic.report.publication-unverified"


# -- Flow IR ------------------------------------------------------------------------------

FLOWS = Path(__file__).resolve().parents[2] / "examples" / "flows"


def test_a_kept_flow_program_dumps_with_nodes_named_by_their_refs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_graph import flow
    from agent_graph.cli import main

    program = flow.compile(FLOWS / "repo-stats")
    kept = tmp_path / "program.agfir"
    kept.write_bytes(program.to_bytes())
    assert main(["ir", "dump", str(kept)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("flowir root=repo-stats fingerprint=sha256:")
    nodes = [line.strip().split(" name=")[0] for line in lines if line.strip().startswith("node")]
    assert nodes == ["node ref=count", "node ref=table"]
    # a route names the node it goes to, not its index; the last one goes to the finish
    routes = [line.strip() for line in lines if line.strip().startswith("route")]
    assert routes == ['route result="已执行" node=table', 'route result="已执行"']
    assert main(["ir", "dump", str(kept), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["digest"] == program.digest
    assert document["bytes"] == len(program.to_bytes())
    assert [f["id"] for f in document["flows"]] == ["repo-stats"]


def test_damaged_flow_ir_is_refused_not_dumped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_graph import flow
    from agent_graph.cli import main

    data = bytearray(flow.compile(FLOWS / "repo-stats").to_bytes())
    data[-3] ^= 0xFF  # the body no longer matches its digest
    kept = tmp_path / "program.agfir"
    kept.write_bytes(bytes(data))
    assert main(["ir", "dump", str(kept)]) == 1
    assert "ir-corrupt" in capsys.readouterr().err
