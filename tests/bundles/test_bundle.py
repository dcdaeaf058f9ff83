"""Loading built bundles: every check of reference §6.4, the IR binding, and round trips.

A bundle is refused, with the reference's code, when any part of it was damaged or
mixed with another build: a file, the manifest, the IR or its binding, a symlink
pointing out. ``compile_provider`` evaluates an intact ``agc`` bundle from its IR
(without importing the YAML or JSON Schema machinery) and gives exactly the answers
the sources give; a bundle without IR compiles as it loads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agent_graph
from agent_graph import bundles as b
from agent_graph.canonical import digest_bytes, digest_value
from agent_graph.cli import main
from agent_graph.compiler import load_provider
from agent_graph.compiler.provider.builder import build_bundle
from agent_graph.documents import schema
from agent_graph.documents.sources import MAX_FILE_BYTES, read_structured
from agent_graph.errors import AgentGraphError
from agent_graph.ir import codec

TESTS = Path(__file__).resolve().parents[1]
EXAMPLES = TESTS.parent / "examples"
MANIFESTS = sorted(EXAMPLES.glob("*/provider.yaml"))
CASES = sorted(EXAMPLES.glob("*/tests/*.yaml"))


TRUST = b.TrustStore(os.environ[b.TRUST_ENV])  # a temporary folder (conftest.py)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root / "provider.yaml"


TINY = {
    "provider.yaml": "schema: agent-graph.provider.v1\nid: tiny\nversion: 1.0.0\n"
    "graphs: [graphs/main.yaml]\n",
    "graphs/main.yaml": "schema: agent-graph.graph.v1\nid: main\nentrypoints: {default: write}\n"
    "nodes:\n"
    "  - {id: write, kind: action, reasonCode: route.write, action: actions/write.yaml,\n"
    "     resources: {required: [resources/guide.md]},\n"
    "     satisfiedBy: [{path: note.done, exists: true}]}\n"
    "  - {id: end, kind: terminal, terminalOutcome: completed}\n"
    "edges:\n  - {from: write, to: end}\n",
    "actions/write.yaml": "schema: agent-graph.action.v1\nid: write\nrunner: agent\n"
    "effect: write\nskill: skills/writer/SKILL.md\n",
    "resources/guide.md": "---\nid: guide\nkind: procedure\nmedia-type: text/markdown\n---\n"
    "Write the note.\n",
    "skills/writer/SKILL.md": "---\nname: writer\ndescription: Writes notes.\n---\nWrite.\n",
    "skills/writer/notes.md": "Extra notes shipped with the Skill.\n",
    "tests/fresh.yaml": "not part of the bundle\n",
}


def build(manifest: Path, out: Path) -> Path:
    """Build, then load once with the trust store, which verifies the IR and remembers it."""
    build_bundle(load_provider(manifest), out)
    agent_graph.compile_provider(out / "manifest.json", trust=TRUST)
    return out / "manifest.json"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every example, plus the tiny Provider, built once (read-only for the tests)."""
    base = tmp_path_factory.mktemp("bundles")
    out = {m.parent.name: build(m, base / m.parent.name) for m in MANIFESTS}
    out["tiny"] = build(write(base / "tiny-src", TINY), base / "tiny")
    return out


@pytest.fixture
def tiny(built: dict[str, Path], tmp_path: Path) -> Path:
    """A private copy of the tiny bundle, for tampering."""
    shutil.copytree(built["tiny"].parent, tmp_path / "bundle")
    return tmp_path / "bundle" / "manifest.json"


def refused(manifest: Path) -> AgentGraphError:
    """Both the loader and ``compile_provider`` refuse it, with the same code."""
    with pytest.raises(AgentGraphError) as loaded:
        load_provider(manifest)
    with pytest.raises(AgentGraphError) as compiled:
        agent_graph.compile_provider(manifest)
    assert compiled.value.code == loaded.value.code
    return loaded.value


def manifest_of(path: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


def rewrite(path: Path, change: Callable[[dict[str, Any]], None], *, sign: bool = True) -> None:
    """Edit the manifest; ``sign`` recomputes its digest as a careful forger would."""
    value = manifest_of(path)
    change(value)
    if sign:
        value["digest"] = digest_value({k: v for k, v in value.items() if k != "digest"})
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def relist(path: Path, rel: str) -> None:
    """Record a file's current digest in the manifest (and re-sign it)."""
    digest = digest_bytes((path.parent / rel).read_bytes())

    def change(value: dict[str, Any]) -> None:
        for name in (*b.CATALOGS, "files"):
            for entry in value[name]:
                if entry["path"] == rel:
                    entry["digest"] = digest

    rewrite(path, change)


def drop_ir(path: Path) -> None:
    shutil.rmtree(path.parent / "ir")


# -- the fast path and round trips -------------------------------------------------------------


def _text(document: Any, root: Path) -> str:
    """A route or evaluation as JSON, with its installed root (paths differ) abstracted."""
    return json.dumps(document.to_dict(), sort_keys=True).replace(str(root), "<root>")


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_bundle_evaluates_and_routes_exactly_as_its_sources(
    case: Path, built: dict[str, Path]
) -> None:
    value = read_structured(case, display=case.name).value
    example = case.parent.parent
    manifest = built[example.name]
    program = agent_graph.open_bundle(manifest, trust=TRUST)
    assert program is not None, "an agc bundle evaluates from its IR"
    source = agent_graph.compile_provider(example / "provider.yaml")
    assert program.to_bytes() == source.to_bytes()
    state = value.get("state", {})
    graph, entry = value["graph"], value.get("entry", "default")
    ours, theirs = program.evaluate(graph, entry, state), source.evaluate(graph, entry, state)
    assert _text(ours, manifest.parent) == _text(theirs, example)
    assert ours.revision == theirs.revision
    for candidate in ours.candidates:
        routed = program.route(graph, entry, candidate.route_id, state, ours.revision)
        expected = source.route(graph, entry, candidate.route_id, state, theirs.revision)
        assert _text(routed, manifest.parent) == _text(expected, example)


@pytest.mark.parametrize("name", [m.parent.name for m in MANIFESTS])
def test_the_full_loader_accepts_the_bundle_and_lowers_to_the_bound_ir(
    name: str, built: dict[str, Path]
) -> None:
    manifest = built[name]
    provider = load_provider(manifest)
    assert provider.root == manifest.parent
    assert provider.manifest_path == manifest.parent / "provider.yaml"
    from agent_graph.compiler.provider.lower import lower

    bound = b.verify_ir(b.verify_manifest(manifest, manifest_of(manifest)))
    assert bound is not None
    assert codec.encode(lower(provider)) == bound.data


def test_the_ir_path_needs_no_yaml_or_json_schema(built: dict[str, Path]) -> None:
    code = (
        "import sys, agent_graph\n"
        f"p = agent_graph.compile_provider({str(built['weekly-report'])!r}, "
        f"trust={str(TRUST.directory)!r})\n"
        "e = p.evaluate('report', 'default', {})\n"
        "print(e.primary.node.id)\n"
        "heavy = {'yaml', 'jsonschema', 'jsonschema_rs', 'lark', 'click', 'pyuca'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["draft", "[]"]


def test_a_bundle_without_ir_compiles_as_it_loads(tiny: Path) -> None:
    drop_ir(tiny)
    assert agent_graph.open_bundle(tiny, trust=TRUST) is None
    program = agent_graph.compile_provider(tiny)
    assert program.root == tiny.parent
    assert program.evaluate("main").primary is not None


def test_an_ir_of_another_format_version_is_ignored_and_the_bundle_compiled(tiny: Path) -> None:
    binding_path = tiny.parent / b.BINDING_PATH
    binding = json.loads(binding_path.read_text(encoding="utf-8"))
    old = tiny.parent / binding["ir"]
    import msgpack

    outer = msgpack.unpackb(old.read_bytes())
    outer[1] = codec.FORMAT_VERSION + 1
    data = msgpack.packb(outer, use_bin_type=True)
    old.unlink()
    digest = digest_bytes(data)
    (tiny.parent / b.ir_path(digest)).write_bytes(data)
    fresh = b.binding_document(binding["bundle"], digest, binding["directories"])
    binding_path.write_text(json.dumps(fresh), encoding="utf-8")
    assert agent_graph.open_bundle(tiny, trust=TRUST) is None
    assert agent_graph.compile_provider(tiny).evaluate("main").primary is not None


def test_the_source_manifest_is_not_a_bundle() -> None:
    assert agent_graph.open_bundle(MANIFESTS[0], trust=TRUST) is None
    assert agent_graph.open_bundle(MANIFESTS[0].parent / "missing.json", trust=TRUST) is None


# -- Part A --------------------------------------------------------------------------------------


def test_a_tampered_file_is_refused(tiny: Path) -> None:
    with (tiny.parent / "graphs" / "main.yaml").open("a", encoding="utf-8") as graph:
        graph.write("# edited\n")
    error = refused(tiny)
    assert error.code == "bundle-file-digest-mismatch"
    assert error.message == "Bundle file digest mismatch: graphs/main.yaml"
    assert error.diagnostics[0].path == "manifest.json"
    assert error.diagnostics[0].line is not None


def test_a_removed_file_is_refused(tiny: Path) -> None:
    (tiny.parent / "resources" / "guide.md").unlink()
    assert refused(tiny).code == "file-missing"


def test_an_edited_manifest_is_refused(tiny: Path) -> None:
    rewrite(tiny, lambda v: v["provider"].update(version="9.9.9"), sign=False)
    error = refused(tiny)
    assert error.code == "bundle-digest-mismatch"
    assert str(tiny) in error.message


def test_a_manifest_outside_the_schema_is_refused(tiny: Path) -> None:
    rewrite(tiny, lambda v: v.update(extra=True))
    error = refused(tiny)
    assert error.code == "schema-invalid"
    assert any(d.code == "schema.additionalProperties" for d in error.diagnostics)


def test_a_file_listed_twice_is_refused(tiny: Path) -> None:
    rewrite(tiny, lambda v: v["files"].append(dict(v["files"][0])))
    assert refused(tiny).code == "bundle-file-duplicate"


def test_a_catalog_entry_must_match_the_files(tiny: Path) -> None:
    def change(value: dict[str, Any]) -> None:
        value["graphs"][0]["digest"] = value["actions"][0]["digest"]

    rewrite(tiny, change)
    error = refused(tiny)
    assert error.code == "bundle-catalog-mismatch"
    assert error.message == "Bundle catalog entry does not match files: graphs/main.yaml"


def test_the_provider_manifest_must_be_listed(tiny: Path) -> None:
    def change(value: dict[str, Any]) -> None:
        value["files"] = [f for f in value["files"] if f["path"] != "provider.yaml"]

    rewrite(tiny, change)
    assert refused(tiny).code == "bundle-provider-unlisted"


def test_a_symlink_pointing_out_of_the_bundle_is_refused(tiny: Path, tmp_path: Path) -> None:
    target = tiny.parent / "skills" / "writer" / "notes.md"
    outside = tmp_path / "outside.md"
    outside.write_bytes(target.read_bytes())  # same bytes: only the link gives it away
    target.unlink()
    target.symlink_to(outside)
    assert refused(tiny).code == "path-symlink-outside-provider"


def test_a_symlink_inside_the_bundle_is_followed(tiny: Path) -> None:
    # the reference compares real paths; a link that stays inside is a regular file to it
    ir_dir = tiny.parent / "ir"
    moved = tiny.parent / "ir-real"
    ir_dir.rename(moved)
    ir_dir.symlink_to(moved, target_is_directory=True)
    assert agent_graph.open_bundle(tiny, trust=TRUST) is not None


def test_a_symlinked_directory_pointing_out_is_refused(tiny: Path, tmp_path: Path) -> None:
    skills = tiny.parent / "skills"
    shutil.move(str(skills), str(tmp_path / "skills"))
    skills.symlink_to(tmp_path / "skills", target_is_directory=True)
    assert refused(tiny).code == "path-symlink-outside-provider"


# -- Part B (a bundle without IR reaches it; with IR the binding fails first) -----------------


def test_an_extra_listed_file_is_refused(tiny: Path) -> None:
    drop_ir(tiny)
    extra = tiny.parent / "extra.md"
    extra.write_text("unreachable\n", encoding="utf-8")

    def change(value: dict[str, Any]) -> None:
        value["files"].append({"path": "extra.md", "digest": digest_bytes(extra.read_bytes())})

    rewrite(tiny, change)
    error = refused(tiny)
    assert error.code == "bundle-files-mismatch"


def test_a_file_added_to_a_skill_directory_is_refused(tiny: Path) -> None:
    # the Skill directory is reachable as a whole: a new file changes the file set
    (tiny.parent / "skills" / "writer" / "new.md").write_text("new\n", encoding="utf-8")
    assert agent_graph.open_bundle(tiny, trust=TRUST) is None
    assert refused(tiny).code == "bundle-files-mismatch"


def test_the_catalog_must_match_the_provider(tiny: Path) -> None:
    drop_ir(tiny)
    rewrite(tiny, lambda v: v["resources"][0].update(id="renamed"))
    error = refused(tiny)
    assert error.code == "bundle-catalog-mismatch"
    assert error.message == "Bundle resources catalog does not match reachable Provider definitions"


def test_the_dependency_index_must_match(tiny: Path) -> None:
    drop_ir(tiny)
    rewrite(tiny, lambda v: v["graphDependencies"].update(main=["other"]))
    assert refused(tiny).code == "bundle-dependencies-mismatch"


def test_the_provider_identity_must_match(tiny: Path) -> None:
    drop_ir(tiny)
    rewrite(tiny, lambda v: v["provider"].update(id="someone-else"))
    error = refused(tiny)
    assert error.code == "bundle-provider-mismatch"
    assert error.message == (
        "Bundle identifies someone-else@1.0.0, but its Provider manifest identifies tiny@1.0.0"
    )


# -- the IR and its binding ----------------------------------------------------------------------


def _binding(manifest: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((manifest.parent / b.BINDING_PATH).read_text("utf-8"))
    return value


def test_a_truncated_ir_is_refused(tiny: Path) -> None:
    ir = tiny.parent / _binding(tiny)["ir"]
    ir.write_bytes(ir.read_bytes()[:-7])
    assert refused(tiny).code == "bundle-ir-digest-mismatch"


def test_a_removed_ir_file_is_refused(tiny: Path) -> None:
    (tiny.parent / _binding(tiny)["ir"]).unlink()
    assert refused(tiny).code == "file-missing"


def test_an_ir_swapped_in_from_another_bundle_is_refused(
    tiny: Path, built: dict[str, Path]
) -> None:
    other = built["weekly-report"]
    swapped = (other.parent / _binding(other)["ir"]).read_bytes()
    (tiny.parent / _binding(tiny)["ir"]).write_bytes(swapped)
    assert refused(tiny).code == "bundle-ir-digest-mismatch"


def test_the_ir_directory_of_another_bundle_is_refused(tiny: Path, built: dict[str, Path]) -> None:
    drop_ir(tiny)
    shutil.copytree(built["weekly-report"].parent / "ir", tiny.parent / "ir")
    error = refused(tiny)
    assert error.code == "bundle-ir-unbound"


def test_an_edited_and_resigned_manifest_no_longer_matches_its_ir(tiny: Path) -> None:
    rewrite(tiny, lambda v: v["graphDependencies"].update(main=["other"]))
    assert refused(tiny).code == "bundle-ir-unbound"


def test_an_ir_rebound_to_a_manifest_it_was_not_compiled_from_is_refused(
    tiny: Path, built: dict[str, Path]
) -> None:
    other = built["weekly-report"]
    data = (other.parent / _binding(other)["ir"]).read_bytes()
    drop_ir(tiny)
    digest = digest_bytes(data)
    (tiny.parent / "ir").mkdir()
    (tiny.parent / b.ir_path(digest)).write_bytes(data)
    forged = b.binding_document(manifest_of(tiny)["digest"], digest, [])
    (tiny.parent / b.BINDING_PATH).write_text(json.dumps(forged), encoding="utf-8")
    error = refused(tiny)
    assert error.code == "bundle-ir-mismatch"
    assert "Provider identity" in error.message


@pytest.mark.parametrize(
    "damage",
    [
        lambda v: v.update(directories=["skills"]),  # not re-signed
        lambda v: v.update(schema="agc.bundle-ir.v2"),
        lambda v: v.update(ir="ir/other.agir"),
        lambda v: v.pop("digest"),
    ],
    ids=["unsigned-edit", "schema", "path", "no-digest"],
)
def test_a_damaged_binding_is_refused(tiny: Path, damage: Callable[[dict[str, Any]], Any]) -> None:
    path = tiny.parent / b.BINDING_PATH
    value = _binding(tiny)
    damage(value)
    path.write_text(json.dumps(value), encoding="utf-8")
    assert refused(tiny).code == "bundle-ir-binding-invalid"


def test_a_binding_that_is_not_json_is_refused(tiny: Path) -> None:
    (tiny.parent / b.BINDING_PATH).write_text("{", encoding="utf-8")
    error = refused(tiny)
    assert error.code == "bundle-ir-binding-invalid"
    assert error.diagnostics[0].path == b.BINDING_PATH


def test_a_symlinked_ir_pointing_out_is_refused(tiny: Path, tmp_path: Path) -> None:
    ir = tiny.parent / _binding(tiny)["ir"]
    outside = tmp_path / "elsewhere.agir"
    outside.write_bytes(ir.read_bytes())
    ir.unlink()
    ir.symlink_to(outside)
    assert refused(tiny).code == "path-symlink-outside-provider"


def test_an_ir_directory_pointing_out_of_the_bundle_is_refused(tiny: Path, tmp_path: Path) -> None:
    shutil.move(str(tiny.parent / "ir"), str(tmp_path / "ir"))
    (tiny.parent / "ir").symlink_to(tmp_path / "ir", target_is_directory=True)
    assert refused(tiny).code == "path-symlink-outside-provider"


def test_undecodable_ir_with_matching_digests_is_corrupt(tiny: Path) -> None:
    binding = _binding(tiny)
    (tiny.parent / binding["ir"]).unlink()
    data = b"\x94\xaeagent-graph.ir\x01\xc4\x00\xc4\x00"  # a header, nothing behind it
    digest = digest_bytes(data)
    (tiny.parent / b.ir_path(digest)).write_bytes(data)
    forged = b.binding_document(binding["bundle"], digest, binding["directories"])
    (tiny.parent / b.BINDING_PATH).write_text(json.dumps(forged), encoding="utf-8")
    error = refused(tiny)
    assert error.code == "ir-corrupt"
    assert error.diagnostics[0].path == b.ir_path(digest)


@pytest.mark.slow
def test_every_damaged_byte_is_detected(built: dict[str, Path], tmp_path: Path) -> None:
    """Flip every byte of every file of a small bundle (four bit patterns in turn)."""
    root = tmp_path / "bundle"
    shutil.copytree(built["tiny"].parent, root)
    manifest = root / "manifest.json"
    files = sorted(p for p in root.rglob("*") if p.is_file())
    assert {p.relative_to(root).as_posix() for p in files} >= {"manifest.json", b.BINDING_PATH}
    flips = 0
    for path in files:
        original = path.read_bytes()
        size = len(original)
        for offset in range(size):
            damaged = bytearray(original)
            damaged[offset] ^= (0x01, 0x20, 0x80, 0x5A)[offset % 4]
            path.write_bytes(bytes(damaged))
            with pytest.raises(AgentGraphError):
                agent_graph.compile_provider(manifest)
            flips += 1
        path.write_bytes(original)
    assert flips > 3000
    assert agent_graph.open_bundle(manifest, trust=TRUST) is not None  # restored, it loads again


# -- the manifest shape check is the schema --------------------------------------------------


def test_the_shape_check_agrees_with_the_bundle_schema(built: dict[str, Path]) -> None:
    import random

    valid = manifest_of(built["weekly-report"])
    assert b.conforms(valid)
    rng = random.Random(7)
    # fmt: off
    odd: list[Any] = [
        None, True, 1, 1.5, "", "x", "/abs", "C:x", "a/../b", "..", "a/..\nb", "\n/..",
        "sha256:" + "a" * 64, "sha256:" + "A" * 64, "sha256:" + "a" * 63,
        "sha256:" + "a" * 64 + "\n", [], {}, ["x", "x"], ["x"], {"id": "x"},
        {"id": "x", "version": "1"}, {"path": "a", "digest": "b"},
    ]
    # fmt: on

    def mutate(value: Any, depth: int = 0) -> Any:
        if isinstance(value, dict) and value and rng.random() < 0.7:
            key = rng.choice(sorted(value))
            choice = rng.random()
            if choice < 0.15:
                value.pop(key)
            elif choice < 0.25:
                value["extra"] = 1
            elif choice < 0.6 or depth > 3:
                value[key] = rng.choice(odd)
            else:
                value[key] = mutate(value[key], depth + 1)
            return value
        if isinstance(value, list) and value and rng.random() < 0.7:
            index = rng.randrange(len(value))
            if rng.random() < 0.5:
                value[index] = rng.choice(odd)
            else:
                value[index] = mutate(value[index], depth + 1)
            return value
        return rng.choice(odd)

    verdicts = {True: 0, False: 0}
    for _ in range(1500):
        value = mutate(json.loads(json.dumps(valid)))
        expected = schema.validate("bundle", value, path="manifest.json") is None
        assert b.conforms(value) is expected, value
        verdicts[expected] += 1
    assert verdicts[True] > 20
    assert verdicts[False] > 500


def test_the_json_size_cap_is_the_loader_cap() -> None:
    assert b.MAX_JSON_BYTES == MAX_FILE_BYTES


# -- the CLI --------------------------------------------------------------------------------------


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_command_takes_the_bundle_manifest(
    built: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = str(built["weekly-report"])
    source = str(EXAMPLES / "weekly-report" / "provider.yaml")
    for args in (["validate"], ["inspect", "provider"], ["evaluate", "report"]):
        code, out, err = _cli([*args, "-m", manifest, "--format", "json"], capsys)
        assert code == 0, err
        from_bundle = out.replace(str(built["weekly-report"].parent), "<root>")
        code, out, _ = _cli([*args, "-m", source, "--format", "json"], capsys)
        assert out.replace(str(EXAMPLES / "weekly-report"), "<root>") == from_bundle
    code, out, _ = _cli(["route", "report", "-m", manifest, "--format", "json"], capsys)
    assert code == 0
    route = json.loads(out)
    assert route["revision"].startswith("sha256:")
    assert str(built["weekly-report"].parent) in json.dumps(route)  # files point into the bundle


def test_a_refused_bundle_is_an_error_envelope(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tiny.parent / "graphs" / "main.yaml").write_text("changed\n", encoding="utf-8")
    code, out, err = _cli(["evaluate", "main", "-m", str(tiny), "--format", "json"], capsys)
    assert code == 1
    assert out == ""
    envelope = json.loads(err)
    assert envelope["error"]["code"] == "bundle-file-digest-mismatch"
    diagnostic = envelope["error"]["diagnostics"][0]
    assert diagnostic["path"] == "manifest.json"
    assert diagnostic["detail"]["pointer"].startswith("/files/")


def test_the_bundle_ir_dumps_like_any_ir(
    built: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = built["tiny"]
    ir = manifest.parent / _binding(manifest)["ir"]
    code, out, err = _cli(["ir", "dump", str(ir), "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["digest"] == _binding(manifest)["irDigest"]
    assert os.path.basename(ir) == _binding(manifest)["irDigest"].split(":")[1] + ".agir"
