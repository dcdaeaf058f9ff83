"""``agc build``: the reference's bundle layout plus bound IR, deterministic and safe.

The last section runs only with the Node reference (``AGC_REFERENCE_CLI`` and
``AGC_REFERENCE_DIR``): both toolchains build byte-identical bundles (apart from our
``ir/``), load each other's bundles, evaluate them identically, and write
``provider.yaml`` with the same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import agent_graph
from agent_graph import bundles as b
from agent_graph.bundles import TrustStore
from agent_graph.canonical import digest_bytes, digest_value
from agent_graph.cli import main
from agent_graph.compiler import load_provider
from agent_graph.compiler.provider import builder, yaml_writer
from agent_graph.compiler.provider.builder import build_bundle, provider_yaml
from agent_graph.documents.sources import read_structured
from agent_graph.documents.yaml12 import parse_yaml
from agent_graph.errors import AgentGraphError
from slow_support import fast_sample

TESTS = Path(__file__).resolve().parents[1]
EXAMPLES = TESTS.parent / "examples"
MANIFESTS = sorted(EXAMPLES.glob("*/provider.yaml"))
WEEKLY = EXAMPLES / "weekly-report" / "provider.yaml"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root / "provider.yaml"


def small(root: Path, **extra: str) -> Path:
    """A two-node Provider with a Skill directory, a test and an unreferenced file."""
    files = {
        "provider.yaml": "schema: agent-graph.provider.v1\nid: small\nversion: 1.0.0\n"
        "description: A small Provider.\ngraphs: [graphs/main.yaml]\n",
        "graphs/main.yaml": "schema: agent-graph.graph.v1\nid: main\n"
        "entrypoints: {default: write}\nnodes:\n"
        "  - {id: write, kind: action, reasonCode: route.write, action: actions/write.yaml,\n"
        "     resources: {required: [resources/guide.md]}}\n"
        "  - {id: end, kind: terminal, terminalOutcome: completed}\n"
        "edges:\n  - {from: write, to: end}\n",
        "actions/write.yaml": "schema: agent-graph.action.v1\nid: write\nrunner: agent\n"
        "effect: write\nskill: skills/writer/SKILL.md\n",
        "resources/guide.md": "---\nid: guide\nkind: procedure\nmedia-type: text/markdown\n"
        "---\nWrite the note.\n",
        "skills/writer/SKILL.md": "---\nname: writer\ndescription: Writes.\n---\nWrite.\n",
        "skills/writer/notes.md": "More notes.\n",
        "tests/fresh.yaml": "schema: agent-graph.test.v1\n",
        "unreferenced.md": "never shipped\n",
    }
    files.update(extra)
    return write(root, files)


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def build_error(manifest: Path, out: Path) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as caught:
        build_bundle(load_provider(manifest), out)
    return caught.value


# -- layout ------------------------------------------------------------------------------------


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.parent.name)
def test_the_bundle_holds_exactly_the_reachable_files(manifest: Path, tmp_path: Path) -> None:
    provider = load_provider(manifest)
    result = build_bundle(provider, tmp_path / "out")
    files = tree(tmp_path / "out")
    reachable = {os.path.relpath(p, provider.root) for p in provider.files}
    reachable.discard(os.path.basename(provider.manifest_path))
    bound = {b.BINDING_PATH, result.ir_path}
    assert set(files) == reachable | {"provider.yaml", "manifest.json"} | bound
    assert not any(name.startswith("tests/") for name in files)
    for rel in reachable:
        assert files[rel] == (provider.root / rel).read_bytes()
    manifest_value = json.loads(files["manifest.json"])
    assert manifest_value == result.manifest
    assert list(manifest_value) == [
        "schema", "provider", "providerManifest", "graphs", "actions", "resources",
        "schemas", "files", "graphDependencies", "digest",
    ]  # fmt: skip
    assert files["manifest.json"] == (json.dumps(manifest_value, indent=2) + "\n").encode()
    unsigned = {k: v for k, v in manifest_value.items() if k != "digest"}
    assert manifest_value["digest"] == digest_value(unsigned)
    listed = [f["path"] for f in manifest_value["files"]]
    assert listed == sorted(listed)
    assert set(listed) == reachable | {"provider.yaml"}
    for entry in manifest_value["files"]:
        assert entry["digest"] == digest_bytes(files[entry["path"]])
    assert result.ir_path == f"ir/{result.ir_digest.split(':')[1]}.agir"
    assert digest_bytes(files[result.ir_path]) == result.ir_digest


def test_the_weekly_report_catalogs(tmp_path: Path) -> None:
    manifest = build_bundle(load_provider(WEEKLY), tmp_path / "out").manifest
    assert [g["id"] for g in manifest["graphs"]] == ["report"]
    assert [a["id"] for a in manifest["actions"]] == [
        "report.check-publication",
        "report.draft",
        "report.publish",
    ]
    assert manifest["graphDependencies"] == {"report": []}
    assert manifest["providerManifest"] == "provider.yaml"
    assert manifest["provider"] == {"id": "example.weekly-report", "version": "1.0.0"}


def test_subgraph_dependencies_are_indexed(tmp_path: Path) -> None:
    manifest = EXAMPLES / "release-train" / "provider.yaml"
    value = build_bundle(load_provider(manifest), tmp_path / "out").manifest
    deps = value["graphDependencies"]
    assert deps["train"] == sorted(deps["train"])
    assert "verify" in deps["train"]
    assert list(deps) == sorted(deps)


def test_action_schema_references_are_normalised(tmp_path: Path) -> None:
    manifest = small(
        tmp_path / "src",
        **{
            "actions/write.yaml": "schema: agent-graph.action.v1\nid: write\nrunner: host\n"
            "effect: write\nhandler: small.write\ninputSchema: ./schemas/in.json\n"
            "outputSchema: schemas//out.json\n",
            "schemas/in.json": '{"type": "object"}\n',
            "schemas/out.json": '{"type": "object"}\n',
        },
    )
    trust = TrustStore(tmp_path / "trust")
    result = build_bundle(load_provider(manifest), tmp_path / "out", trust=trust)
    assert [(s["id"], s["path"]) for s in result.manifest["schemas"]] == [
        ("schemas/in.json", "schemas/in.json"),
        ("schemas/out.json", "schemas/out.json"),
    ]
    # the reference's bundle of this Provider fails to load; ours loads, from its IR too
    load_provider(tmp_path / "out" / "manifest.json")
    assert agent_graph.open_bundle(tmp_path / "out" / "manifest.json", trust=trust) is not None


def test_a_schema_resource_names_its_schema_entry(tmp_path: Path) -> None:
    manifest = small(
        tmp_path / "src",
        **{
            "actions/write.yaml": "schema: agent-graph.action.v1\nid: write\nrunner: host\n"
            "effect: write\nhandler: small.write\noutputSchema: schemas/out.json\n",
            "schemas/out.json": '{"type": "object"}\n',
            "resources/shape.yaml": "schema: agent-graph.resource.file.v1\nid: shape\n"
            "kind: schema\nmediaType: application/schema+json\npath: schemas/out.json\n",
            "graphs/main.yaml": "schema: agent-graph.graph.v1\nid: main\n"
            "entrypoints: {default: write}\nnodes:\n"
            "  - {id: write, kind: action, reasonCode: route.write, action: actions/write.yaml,\n"
            "     resources: {required: [resources/shape.yaml]}}\n"
            "  - {id: end, kind: terminal, terminalOutcome: completed}\n"
            "edges:\n  - {from: write, to: end}\n",
        },
    )
    trust = TrustStore(tmp_path / "trust")
    result = build_bundle(load_provider(manifest), tmp_path / "out", trust=trust)
    assert [(s["id"], s["path"]) for s in result.manifest["schemas"]] == [
        ("shape", "schemas/out.json")
    ]


# -- determinism and replacement ---------------------------------------------------------------


def test_the_same_sources_give_byte_identical_bundles(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    first = build_bundle(load_provider(manifest), tmp_path / "one")
    second = build_bundle(load_provider(manifest), tmp_path / "two")
    assert tree(tmp_path / "one") == tree(tmp_path / "two")
    assert first.manifest == second.manifest
    assert first.ir_digest == second.ir_digest


def test_a_rebuild_replaces_the_previous_bundle_and_leaves_nothing_behind(tmp_path: Path) -> None:
    # a file the older build wrote (the Skill directory brings it) and the new one does not;
    # a file a user added to the bundle is refused instead (test_hardening_outputs.py)
    manifest = small(tmp_path / "src", **{"skills/writer/stale.txt": "from an older build\n"})
    out = tmp_path / "dist" / "provider"
    build_bundle(load_provider(manifest), out)
    assert (out / "skills" / "writer" / "stale.txt").is_file()
    (tmp_path / "src" / "skills" / "writer" / "stale.txt").unlink()
    (tmp_path / "src" / "resources" / "guide.md").write_text(
        "---\nid: guide\nkind: procedure\nmedia-type: text/markdown\n---\nChanged.\n",
        encoding="utf-8",
    )
    build_bundle(load_provider(manifest), out)
    assert not (out / "skills" / "writer" / "stale.txt").exists()
    assert b"Changed." in (out / "resources" / "guide.md").read_bytes()
    assert sorted(p.name for p in out.parent.iterdir()) == ["provider"]
    assert len(list((out / "ir").glob("*.agir"))) == 1


def test_a_failed_build_leaves_the_previous_output_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "dist" / "provider"
    build_bundle(load_provider(manifest), out)
    before = tree(out)

    def broken(*_: Any) -> Any:
        raise AgentGraphError("boom", "compilation failed halfway")

    monkeypatch.setattr(builder, "_compile_bundle", broken)
    with pytest.raises(AgentGraphError, match="halfway"):
        build_bundle(load_provider(manifest), out)
    assert tree(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["provider"]


def test_a_failed_swap_puts_the_previous_output_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "dist" / "provider"
    build_bundle(load_provider(manifest), out)
    before = tree(out)
    real_rename = os.rename

    def rename(src: Any, dst: Any) -> None:
        if ".tmp-" in str(src):
            raise OSError(28, "No space left on device")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    error = build_error(manifest, out)
    assert error.code == "build-write-failed"
    assert tree(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["provider"]


# -- refusals ----------------------------------------------------------------------------------


def test_the_provider_root_and_source_files_are_never_overwritten(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    src = tmp_path / "src"
    for target in (src, src / "graphs", tmp_path, src / "skills" / "writer"):
        error = build_error(manifest, target)
        assert error.code == "build-output-overlaps-source"
        assert error.message == (
            "Build output must not replace the provider root or any referenced source file"
        )
    assert (src / "graphs" / "main.yaml").is_file()
    link = tmp_path / "link"
    link.symlink_to(src / "graphs", target_is_directory=True)
    assert build_error(manifest, link).code == "build-output-overlaps-source"


def test_an_output_inside_the_root_that_holds_no_source_is_allowed(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    result = build_bundle(load_provider(manifest), tmp_path / "src" / "dist" / "provider")
    assert (result.destination / "manifest.json").is_file()
    assert not (result.destination / "unreferenced.md").exists()


@pytest.mark.parametrize("kind", ["directory", "file"])
def test_an_output_that_is_not_a_bundle_is_left_alone(tmp_path: Path, kind: str) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "mine"
    if kind == "directory":
        out.mkdir()
        (out / "notes.txt").write_text("precious\n", encoding="utf-8")
    else:
        out.write_text("precious\n", encoding="utf-8")
    error = build_error(manifest, out)
    assert error.code == "build-output-exists"
    if kind == "directory":
        assert (out / "notes.txt").read_text(encoding="utf-8") == "precious\n"
    else:
        assert out.read_text(encoding="utf-8") == "precious\n"


def test_an_empty_output_directory_is_used(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    (tmp_path / "out").mkdir()
    build_bundle(load_provider(manifest), tmp_path / "out")
    assert (tmp_path / "out" / "manifest.json").is_file()


def test_a_file_carrying_the_source_path_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "src"
    manifest = small(
        src,
        **{
            "skills/writer/notes.md": f"Look in {src}/data for inputs.\n",
        },
    )
    error = build_error(manifest, tmp_path / "out")
    assert error.code == "build-absolute-path-leak"
    assert error.message == (
        "Referenced file contains the source Provider absolute path: skills/writer/notes.md"
    )
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob("out.tmp-*"))


def test_a_manifest_carrying_the_source_path_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "src"
    manifest = small(src)
    text = manifest.read_text(encoding="utf-8").replace("A small Provider.", f"Lives in {src}")
    manifest.write_text(text, encoding="utf-8")
    error = build_error(manifest, tmp_path / "out")
    assert error.code == "build-absolute-path-leak"
    assert error.message.endswith(": provider.yaml")


def test_a_reachable_file_where_the_bundle_writes_its_own_is_refused(tmp_path: Path) -> None:
    manifest = small(
        tmp_path / "src",
        **{"actions/write.yaml": "schema: agent-graph.action.v1\nid: write\nrunner: agent\n"
           "effect: write\nskill: skills/writer/SKILL.md\nfiles: [manifest.json]\n",
           "manifest.json": "{}\n"},
    )  # fmt: skip
    error = build_error(manifest, tmp_path / "out")
    assert error.code == "build-path-conflict"
    assert "manifest.json" in error.message


# -- provider.yaml -------------------------------------------------------------------------------


def test_provider_yaml_is_the_reference_styling(tmp_path: Path) -> None:
    manifest = {
        "schema": "agent-graph.provider.v1",
        "id": "example.getting-started",
        "version": "0.1.0",
        "description": "Minimal agent-led workflow.",
        "graphs": ["graphs/main.yaml"],
        "compatibility": {"agentGraph": "^0.2.0", "node": ">=20"},
    }
    assert provider_yaml(manifest) == (
        "schema: agent-graph.provider.v1\n"
        "id: example.getting-started\n"
        "version: 0.1.0\n"
        "description: Minimal agent-led workflow.\n"
        "graphs:\n"
        "  - graphs/main.yaml\n"
        "compatibility:\n"
        "  agentGraph: ^0.2.0\n"
        '  node: ">=20"\n'
    )


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("true", '"true"'),
        ("0o17", '"0o17"'),
        ("1.5", '"1.5"'),
        ("", '""'),
        ("yes", "yes"),
        ("2024-01-01", "2024-01-01"),
        ("a: b", '"a: b"'),
        ('say "hi"', 'say "hi"'),
        ('"hi" said', "'\"hi\" said'"),
        ("'hi' said", "\"'hi' said\""),
        ("#hash", '"#hash"'),
        ("two\nlines", "|-\n  two\n  lines"),
        ("ends\n", "|\n  ends"),
        ("  indented\nnext", "|2-\n    indented\n  next"),
        ("bell\x07", '"bell\\a"'),
    ],
)
def test_provider_yaml_quotes_only_what_would_read_back_differently(
    text: str, written: str
) -> None:
    manifest = {"schema": "agent-graph.provider.v1", "description": text}
    out = provider_yaml(manifest)
    assert out == f"schema: agent-graph.provider.v1\ndescription: {written}\n"
    assert parse_yaml(out)[0] == manifest


def test_text_the_reference_styling_garbles_is_written_as_json() -> None:
    # the `yaml` package writes NEL raw inside double quotes, where YAML reads a space
    manifest = {"schema": "agent-graph.provider.v1", "description": "a\x85b"}
    out = provider_yaml(manifest)
    assert out.startswith("{\n")
    assert parse_yaml(out)[0] == manifest


def test_text_yaml_cannot_hold_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "src"
    small(root)
    (root / "provider.yaml").unlink()
    (root / "provider.json").write_text(
        '{"schema": "agent-graph.provider.v1", "id": "small", "version": "1.0.0", '
        '"description": "\\ud800", "graphs": ["graphs/main.yaml"]}',
        encoding="utf-8",
    )
    # a lone surrogate is refused where the JSON is read, with its place (hardening
    # finding 5), before the builder's own check could see it
    error = build_error(root / "provider.json", tmp_path / "out")
    assert error.code == "parse-failed"
    assert (error.diagnostics[0].line, error.diagnostics[0].column) == (1, 90)


# -- CLI -----------------------------------------------------------------------------------------


def test_agc_build_defaults_to_dist_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    small(tmp_path / "src")
    monkeypatch.chdir(tmp_path / "src")
    assert main(["build"]) == 0
    out = capsys.readouterr().out.splitlines()
    dest = tmp_path / "src" / "dist" / "provider"
    manifest = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    assert out == [
        f"Built small@1.0.0 at {dest}",
        f"Bundle digest: {manifest['digest']}",
        f"Compiled IR: {json.loads((dest / b.BINDING_PATH).read_text('utf-8'))['ir']}",
    ]
    assert main(["build", "other", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(
        (tmp_path / "src" / "other" / "manifest.json").read_text(encoding="utf-8")
    )


def test_agc_build_errors_are_envelopes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    small(tmp_path / "src")
    monkeypatch.chdir(tmp_path / "src")
    assert main(["build", ".", "--format", "json"]) == 1
    envelope = json.loads(capsys.readouterr().err)
    assert envelope["error"]["code"] == "build-output-overlaps-source"


def test_a_bundle_rebuilds_from_its_own_manifest(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    first = build_bundle(load_provider(manifest), tmp_path / "one")
    again = build_bundle(load_provider(tmp_path / "one" / "manifest.json"), tmp_path / "two")
    assert again.manifest == first.manifest
    assert tree(tmp_path / "one") == tree(tmp_path / "two")


# -- the Node reference ----------------------------------------------------------------------------

REF_CLI = os.environ.get("AGC_REFERENCE_CLI")
REF_DIR = os.environ.get("AGC_REFERENCE_DIR")
needs_reference = pytest.mark.skipif(
    not (REF_CLI and REF_DIR and shutil.which("node")), reason="reference CLI not configured"
)


def _reference_manifests() -> list[Path]:
    # our examples the 0.2.6 reference can read (context-views uses 0.3-only resources)
    ours = [m for m in MANIFESTS if m.parent.name != "context-views"]
    if not REF_DIR:
        return ours
    return ours + sorted(Path(REF_DIR, "examples").glob("**/provider.yaml"))


def _node(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert REF_CLI is not None
    return subprocess.run(
        ["node", REF_CLI, *args], capture_output=True, text=True, check=False, cwd=cwd
    )


def _name(manifest: Path) -> str:
    return manifest.parent.name if manifest.parent.name != "provider" else "provider-registry"


class _Builds(dict[str, tuple[Path, Path]]):
    """``name -> (agc bundle, reference bundle)``, each pair built by both toolchains on first
    use (the fast set, which runs a few of the cases, builds only the Providers they need)."""

    def __init__(self, base: Path) -> None:
        super().__init__()
        self.base = base
        self.manifests = {_name(manifest): manifest for manifest in _reference_manifests()}

    def __missing__(self, name: str) -> tuple[Path, Path]:
        manifest = self.manifests[name]
        ours, theirs = self.base / f"agc-{name}", self.base / f"node-{name}"
        build_bundle(load_provider(manifest), ours)
        done = _node("build", str(theirs), "-m", str(manifest))
        assert done.returncode == 0, done.stderr
        self[name] = (ours, theirs)
        return ours, theirs


@pytest.fixture(scope="module")
def both_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """``name -> (agc bundle, reference bundle)`` for every manifest the reference reads."""
    return _Builds(tmp_path_factory.mktemp("cross"))


@needs_reference
@pytest.mark.reference
@pytest.mark.parametrize("manifest", fast_sample(_reference_manifests(), 1), ids=_name)
def test_both_toolchains_build_the_same_bundle(
    manifest: Path, both_builds: dict[str, tuple[Path, Path]]
) -> None:
    ours, theirs = both_builds[_name(manifest)]
    mine = {k: v for k, v in tree(ours).items() if not k.startswith("ir/")}
    assert mine == tree(theirs)


@needs_reference
@pytest.mark.reference
@pytest.mark.parametrize("manifest", fast_sample(_reference_manifests(), 1), ids=_name)
def test_each_toolchain_loads_the_others_bundle(
    manifest: Path, both_builds: dict[str, tuple[Path, Path]]
) -> None:
    ours, theirs = both_builds[_name(manifest)]
    done = _node("validate", "-m", str(ours / "manifest.json"), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "valid"
    assert agent_graph.open_bundle(theirs / "manifest.json") is None  # no IR: compiled on load
    program = agent_graph.compile_provider(theirs / "manifest.json")
    assert program.to_bytes() == agent_graph.compile_provider(ours / "manifest.json").to_bytes()


def _reference_cases() -> list[Path]:
    cases = []
    for manifest in _reference_manifests():
        for case in sorted(manifest.parent.glob("tests/*.yaml")):
            value = read_structured(case, display=case.name).value
            outcomes = value.get("state", {}).get("outcomes", {})
            # 0.2.6 keeps a recorded waiting-user actionable; 0.3 settles it
            if "waiting-user" not in map(str, outcomes.values()):
                cases.append(case)
    return cases


@needs_reference
@pytest.mark.reference
@pytest.mark.parametrize(
    "case", fast_sample(_reference_cases(), 2), ids=lambda p: f"{p.parent.parent.name}/{p.stem}"
)
def test_both_bundles_evaluate_alike(
    case: Path,
    both_builds: dict[str, tuple[Path, Path]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    ours, theirs = both_builds[case.parent.parent.name]
    value = read_structured(case, display=case.name).value
    state = value.get("state", {})
    args = [value["graph"], "--entry", value.get("entry", "default")]
    if "facts" in state:
        args += ["--facts", json.dumps(state["facts"])]
    if "outcomes" in state:
        args += ["--outcomes", json.dumps(state["outcomes"])]
    if state.get("authorities"):
        args += ["--authority", *state["authorities"]]
    done = _node("evaluate", *args, "-m", str(theirs / "manifest.json"), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert main(["evaluate", *args, "-m", str(ours / "manifest.json"), "--format", "json"]) == 0
    mine = capsys.readouterr().out.replace(str(ours), "<root>")
    assert json.loads(mine) == json.loads(done.stdout.replace(str(theirs), "<root>"))


@needs_reference
@pytest.mark.reference
def test_provider_yaml_has_the_reference_bytes(tmp_path: Path) -> None:
    import random

    assert REF_DIR is not None
    rng = random.Random(3)
    atoms = [
        "a", " ", "  ", "\n", "\n\n", "\t", ":", "#", "-", "?", "'", '"', "---", "...", "%",
        "@", "`", "|", ">", "{", "}", "[", "]", ",", "&", "*", "!", "\\", "é", "\x00", "\x07",
        "\x1b", "true", "null", "1", "0x1F", "0o17", ".5", "1e3", "~", "x" * 45, "\r", "😀",
    ]  # fmt: skip
    texts = ["", " ", "a b", "a\n", "a\n\n", " \na", "a\n  b\nc", "'q'", "--- x"]
    texts += ["".join(rng.choice(atoms) for _ in range(rng.randint(1, 6))) for _ in range(800)]
    documents = [
        {"schema": "agent-graph.provider.v1", "description": t, "graphs": [t, "g.yaml"],
         "catalogs": {}, "compatibility": {"node": t}}
        for t in texts
    ]  # fmt: skip
    script = (
        f"const YAML = require({json.dumps(str(Path(REF_DIR, 'node_modules', 'yaml')))});"
        "const values = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(values.map(v => YAML.stringify(v, {lineWidth: 0}))));"
    )
    done = subprocess.run(
        ["node", "-e", script], input=json.dumps(documents), capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    for document, expected in zip(documents, json.loads(done.stdout), strict=True):
        assert yaml_writer._reference_style(document) == expected
