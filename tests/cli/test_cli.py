"""The ``agc`` command line: validate, inspect, options, exit codes and envelopes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_graph import PROTOCOL_VERSION, __version__
from cli_support import run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_MANIFESTS = sorted(EXAMPLES.glob("*/provider.yaml"))


def test_examples_are_shipped() -> None:
    assert len(EXAMPLE_MANIFESTS) >= 4


@pytest.mark.parametrize("manifest", EXAMPLE_MANIFESTS, ids=lambda p: p.parent.name)
def test_every_example_is_valid(manifest: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", "-m", str(manifest)], capsys)
    assert code == 0, err
    assert out.startswith("Valid provider ")
    assert "graph(s)" in out.splitlines()[1]


@pytest.mark.parametrize("manifest", EXAMPLE_MANIFESTS, ids=lambda p: p.parent.name)
def test_validate_json_is_the_inspect_document(
    manifest: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["validate", "-m", str(manifest), "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["state"] == "valid"
    assert doc["schema"] == "agent-graph.inspect.v1"
    assert doc["provider"]["manifest"] == str(manifest)
    assert doc["counts"]["graphs"] == len(doc["graphs"]) >= 1
    assert doc["counts"]["nodes"] == sum(len(g["nodes"]) for g in doc["graphs"])


def test_global_options_work_before_and_after_the_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    manifest = str(EXAMPLES / "weekly-report" / "provider.yaml")
    before = run(["--format", "json", "-m", manifest, "inspect", "provider"], capsys)
    after = run(["inspect", "provider", "-m", manifest, "--format", "json"], capsys)
    assert before[0] == after[0] == 0
    assert json.loads(before[1]) == json.loads(after[1])


def test_inspect_provider_human_lines(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = str(EXAMPLES / "release-train" / "provider.yaml")
    code, out, _ = run(["inspect", "provider", "-m", manifest], capsys)
    assert code == 0
    lines = out.splitlines()
    assert "@" in lines[0]
    assert lines[1].endswith("code(s)")
    assert all(line.startswith("- ") and line.endswith("node(s)") for line in lines[2:])
    assert len(lines) >= 4  # the release train has several graphs


def test_inspect_skill_resolves_the_binding(capsys: pytest.CaptureFixture[str]) -> None:
    skill = EXAMPLES / "weekly-report" / "skills" / "weekly-report" / "SKILL.md"
    code, out, err = run(["inspect", "skill", str(skill), "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["binding"]["schema"] == "agent-graph.skill-binding.v1"
    assert doc["binding"]["graph"] in {g["id"] for g in doc["provider"]["graphs"]}
    assert doc["binding"]["manifestPath"] == str(EXAMPLES / "weekly-report" / "provider.yaml")


def test_validate_through_a_skill(capsys: pytest.CaptureFixture[str]) -> None:
    skill = EXAMPLES / "weekly-report" / "skills" / "weekly-report" / "SKILL.md"
    code, out, _ = run(["validate", "--skill", str(skill)], capsys)
    assert code == 0
    assert out.startswith("Valid provider ")


def test_version_names_package_and_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--version"], capsys)
    assert code == 0
    assert __version__ in out
    assert PROTOCOL_VERSION in out


def test_help_lists_commands_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    for word in ("validate", "inspect", "Exit codes"):
        assert word in out


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([], capsys)
    assert code == 2
    assert "Usage" in err


def test_usage_error_is_an_envelope_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", "--no-such-option", "--format", "json"], capsys)
    assert code == 2
    assert out == ""
    envelope = json.loads(err)
    assert envelope["schema"] == "agent-graph.error.v1"
    assert envelope["error"]["code"] == "usage-invalid"


def test_unknown_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["frobnicate"], capsys)
    assert code == 2
    assert "frobnicate" in err


def test_format_invalid(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = str(EXAMPLES / "weekly-report" / "provider.yaml")
    code, _, err = run(["validate", "-m", manifest, "--format", "xml"], capsys)
    assert code == 2
    assert "format-invalid" in err
    assert "xml" in err


def test_missing_manifest_is_file_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["validate", "-m", str(tmp_path / "nope.yaml"), "--format", "json"], capsys)
    assert code == 1
    assert json.loads(err)["error"]["code"] == "file-missing"


def _invalid_copy(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    shutil.copytree(EXAMPLES / "weekly-report", root)
    graph = next((root / "graphs").glob("*.yaml"))
    text = graph.read_text(encoding="utf-8")
    graph.write_text(text.replace("kind: terminal", "kind: termnal", 1), encoding="utf-8")
    return root / "provider.yaml"


def test_human_error_shows_location_source_line_and_caret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _invalid_copy(tmp_path)
    code, out, err = run(["validate", "-m", str(manifest)], capsys)
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("ERROR schema-invalid: ")
    located = [i for i, line in enumerate(lines) if line.startswith("graphs/")]
    assert located, err
    first = located[0]
    path, line_no, column, rest = lines[first].split(":", 3)
    graph = manifest.parent / path
    source_line = graph.read_text(encoding="utf-8").splitlines()[int(line_no) - 1]
    assert rest.startswith(" schema.enum: /nodes/")
    assert source_line[int(column) - 1 :].startswith("termnal")
    gutter, excerpt = lines[first + 1].split(" | ", 1)
    assert int(gutter) == int(line_no)
    assert excerpt == source_line
    caret = lines[first + 2]
    assert caret.index("^") == len(gutter) + len(" | ") + int(column) - 1


def test_json_error_lists_every_problem_with_positions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _invalid_copy(tmp_path)
    graph = next((manifest.parent / "graphs").glob("*.yaml"))
    action = next((manifest.parent / "actions").glob("*.yaml"))
    action.write_text(action.read_text(encoding="utf-8") + "surprise: 1\n", encoding="utf-8")
    code, _, err = run(["validate", "-m", str(manifest), "--format", "json"], capsys)
    assert code == 1
    error: dict[str, Any] = json.loads(err)["error"]
    assert error["code"] == "schema-invalid"
    paths = {d["path"] for d in error["diagnostics"]}
    assert f"graphs/{graph.name}" in paths
    for diagnostic in error["diagnostics"]:
        assert diagnostic["detail"]["line"] >= 1
        assert (
            diagnostic["detail"]["pointer"].startswith("/") or diagnostic["detail"]["pointer"] == ""
        )


@pytest.mark.parametrize("manifest", EXAMPLE_MANIFESTS, ids=lambda p: p.parent.name)
def test_outputs_conform_to_our_schemas(manifest: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agent_graph.documents import schema

    _, out, _ = run(["validate", "-m", str(manifest), "--format", "json"], capsys)
    assert schema.validate("inspect", json.loads(out), path="validate") is None
    _, out, _ = run(["inspect", "provider", "-m", str(manifest), "--format", "json"], capsys)
    assert schema.validate("inspect", json.loads(out), path="inspect") is None


def test_warnings_and_errors_conform_to_our_schemas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_graph.documents import schema

    root = tmp_path / "p"
    shutil.copytree(EXAMPLES / "weekly-report", root)
    manifest = root / "provider.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("^0.3.0", "^0.2.0"), encoding="utf-8"
    )
    code, out, _ = run(["validate", "-m", str(manifest), "--format", "json"], capsys)
    assert code == 0
    document = json.loads(out)
    assert [d["code"] for d in document["diagnostics"]] == ["compatibility-range-excludes"]
    assert schema.validate("inspect", document, path="validate") is None
    code, _, err = run(["validate", "-m", str(tmp_path / "none.yaml"), "--format", "json"], capsys)
    assert code == 1
    assert schema.validate("error", json.loads(err), path="error") is None
