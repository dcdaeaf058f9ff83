"""One way in: ``agent_graph.selection.load`` turns a manifest, a Skill binding or a
registry locator into the Program or the checked Provider in one call, and the CLI asks
nothing else (``cli/context.load``); hints are the CLI's, worked out from the failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_graph.bundles import TrustStore
from agent_graph.cli import main
from agent_graph.compiler import load_provider
from agent_graph.compiler.provider.builder import build_bundle
from agent_graph.errors import AgentGraphError
from agent_graph.selection import Loaded, ManifestMissing, Selection, load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WEEKLY = EXAMPLES / "weekly-report"
SKILL = WEEKLY / "skills" / "weekly-report" / "SKILL.md"


def _evaluate(loaded: Loaded) -> str:
    assert loaded.program is not None
    evaluation = loaded.program.evaluate("report", "default", {"facts": {}, "outcomes": {}})
    return json.dumps(evaluation.to_dict(), sort_keys=True)


def test_a_manifest_is_compiled_from_its_sources_when_there_is_no_bundle() -> None:
    loaded = load(Selection(str(WEEKLY / "provider.yaml")))
    assert loaded.state is not None
    assert loaded.provider.id == "example.weekly-report"
    assert loaded.program is not None
    assert loaded.program.provider_id == "example.weekly-report"
    assert loaded.binding is None


def test_a_directory_names_its_provider_yaml() -> None:
    by_dir = load(Selection(str(WEEKLY)), need="both")
    by_file = load(Selection(str(WEEKLY / "provider.yaml")), need="both")
    assert by_dir.runnable.digest == by_file.runnable.digest


def test_need_provider_checks_without_lowering() -> None:
    loaded = load(Selection(str(WEEKLY)), need="provider")
    assert loaded.program is None
    assert loaded.provider.id == "example.weekly-report"
    assert loaded.state is not None
    assert loaded.state.ir is None  # stopped before lowering


def test_a_skill_binding_loads_its_provider_and_names_graph_and_entry() -> None:
    loaded = load(Selection(skill=str(SKILL)), need="both")
    assert loaded.binding is not None
    assert (loaded.binding.binding.graph, loaded.binding.binding.entry) == ("report", "default")
    assert loaded.provider.id == "example.weekly-report"
    assert _evaluate(loaded) == _evaluate(load(Selection(str(WEEKLY))))


def test_a_trusted_bundle_is_opened_without_reading_sources(tmp_path: Path) -> None:
    trust = TrustStore(tmp_path / "trust")
    out = tmp_path / "bundle"
    build_bundle(load_provider(WEEKLY / "provider.yaml"), out, trust=trust)
    manifest = str(out / "manifest.json")
    first = load(Selection(manifest), trust=trust)
    assert first.state is None  # the bundle's IR, verified when it was built
    assert first.program is not None
    # the same Program as compiling the sources, and "both" compiles them
    both = load(Selection(manifest), need="both", trust=trust)
    assert both.state is not None
    assert both.runnable.digest == first.program.digest
    assert _evaluate(first) == _evaluate(both)


@pytest.mark.parametrize("given", [None, "dir"])
def test_a_missing_manifest_says_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str | None
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir").mkdir()
    with pytest.raises(ManifestMissing) as raised:
        load(Selection(given))
    error = raised.value
    assert error.code == "file-missing"
    assert error.directory == ("." if given is None else "dir")
    assert [d.path for d in error.diagnostics] == ["provider.yaml"]
    assert error.diagnostics[0].detail == {}  # no CLI hint in the library


def test_a_named_missing_file_is_the_compilers_error(tmp_path: Path) -> None:
    with pytest.raises(AgentGraphError) as raised:
        load(Selection(str(tmp_path / "nope.yaml")))
    assert raised.value.code == "file-missing"
    assert not isinstance(raised.value, ManifestMissing)


def test_the_cli_adds_the_init_hint_from_the_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["validate", "--format", "json"])
    assert code == 1
    envelope = json.loads(capsys.readouterr().err)
    (diagnostic,) = envelope["error"]["diagnostics"]
    assert diagnostic["code"] == "file-missing"
    assert diagnostic["detail"]["next"] == f"agc init --id {tmp_path.name}"


def test_the_cli_gives_no_init_hint_where_init_would_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "codes.yaml").write_text("mine\n", encoding="utf-8")  # init would refuse
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--format", "json"]) == 1
    (diagnostic,) = json.loads(capsys.readouterr().err)["error"]["diagnostics"]
    assert "next" not in diagnostic.get("detail", {})
