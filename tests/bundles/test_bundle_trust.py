"""A bundle's IR is trusted only as what its own sources compile to (docs/trust.md).

The two tampers of the hardening audit: an IR of another Provider swapped into a
bundle with its binding rewritten, and a graph edited inside a bundle with the
manifest re-signed and the binding re-pointed (so the IR is stale). Both keep every
digest consistent, so only compiling the sources and comparing bytes catches them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agent_graph
from agent_graph import bundles as b
from agent_graph.canonical import digest_bytes, digest_value
from agent_graph.cli import main
from agent_graph.compiler import load_provider
from agent_graph.compiler.provider.builder import build_bundle
from agent_graph.errors import AgentGraphError

WEEKLY = Path(__file__).resolve().parents[2] / "examples" / "weekly-report"
DRAFTED = {"report": {"digest": "sha256:1f"}}
# the gate is satisfied by a draft digest instead of an approval: publishing needs no user
GATE = "      - path: report.approved\n        equals: true\n"
NO_GATE = "      - path: report.digest\n        exists: true\n"


def build(source: Path, out: Path) -> Path:
    build_bundle(load_provider(source / "provider.yaml"), out)
    return out / "manifest.json"


def without_gate(tmp_path: Path) -> Path:
    root = tmp_path / "no-gate-src"
    shutil.copytree(WEEKLY, root)
    graph = root / "graphs" / "report.yaml"
    text = graph.read_text(encoding="utf-8")
    assert GATE in text
    graph.write_text(text.replace(GATE, NO_GATE), encoding="utf-8")
    return root


def rebind(manifest: Path, ir: bytes | None = None) -> None:
    """Rewrite ir/binding.json consistently: for ``ir`` (else the present IR) and the
    manifest's current digest."""
    root = manifest.parent
    binding_path = root / b.BINDING_PATH
    binding = json.loads(binding_path.read_text(encoding="utf-8"))
    if ir is not None:
        (root / binding["ir"]).unlink()
        digest = digest_bytes(ir)
        (root / b.ir_path(digest)).write_bytes(ir)
    else:
        digest = binding["irDigest"]
    bundle_digest = json.loads(manifest.read_text(encoding="utf-8"))["digest"]
    document = b.binding_document(bundle_digest, digest, binding["directories"])
    binding_path.write_text(json.dumps(document), encoding="utf-8")


def resign(manifest: Path, rel: str) -> None:
    """Update one listed file's digest (in files and its catalog) and the manifest digest."""
    value: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8"))
    digest = digest_bytes((manifest.parent / rel).read_bytes())
    for name in ("files", *b.CATALOGS):
        for entry in value[name]:
            if entry["path"] == rel:
                entry["digest"] = digest
    unsigned = {k: v for k, v in value.items() if k != "digest"}
    value["digest"] = digest_value(unsigned)
    manifest.write_text(json.dumps(value), encoding="utf-8")


def cli(*args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "agent_graph", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def swapped(tmp_path: Path) -> Path:
    """The weekly report's bundle carrying the IR of the gate-less variant, bound consistently."""
    honest = build(WEEKLY, tmp_path / "honest")
    other = build(without_gate(tmp_path), tmp_path / "other")
    binding = json.loads((other.parent / b.BINDING_PATH).read_text(encoding="utf-8"))
    rebind(honest, (other.parent / binding["ir"]).read_bytes())
    return honest


@pytest.fixture
def stale(tmp_path: Path) -> Path:
    """The weekly report's bundle with its graph edited, manifest re-signed, binding re-pointed."""
    manifest = build(WEEKLY, tmp_path / "stale")
    graph = manifest.parent / "graphs" / "report.yaml"
    graph.write_text(graph.read_text(encoding="utf-8").replace(GATE, NO_GATE), encoding="utf-8")
    resign(manifest, "graphs/report.yaml")
    rebind(manifest)
    return manifest


@pytest.mark.parametrize("tamper", ["swapped", "stale"])
def test_a_tampered_bundle_is_refused_by_the_library(
    tamper: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    manifest: Path = request.getfixturevalue(tamper)
    store = b.TrustStore(tmp_path / "trust")
    for trust in (None, store):
        with pytest.raises(AgentGraphError) as info:
            agent_graph.compile_provider(manifest, trust=trust)
        assert info.value.code == "bundle-ir-unverified"
        assert agent_graph.open_bundle(manifest, trust=trust) is None
    assert not list(store.directory.glob("*.json"))  # nothing was vouched for
    codes = [d.code for d in agent_graph.check_provider(manifest)]
    assert codes == ["bundle-ir-unverified"]


@pytest.mark.parametrize("tamper", ["swapped", "stale"])
def test_a_tampered_bundle_is_refused_by_every_command(
    tamper: str, request: pytest.FixtureRequest
) -> None:
    manifest: Path = request.getfixturevalue(tamper)
    facts = json.dumps(DRAFTED)
    for args in (
        ["validate"],
        ["evaluate", "report", "--facts", facts],
        ["route", "report", "--facts", facts],
        ["test", str(WEEKLY / "tests")],
    ):
        code, out, err = cli(*args, "-m", str(manifest), "--format", "json")
        assert code == 1, (args, out)
        assert json.loads(err)["error"]["code"] == "bundle-ir-unverified", args


def test_the_honest_bundle_still_says_what_its_sources_say(tmp_path: Path) -> None:
    manifest = build(WEEKLY, tmp_path / "honest")
    bundle = agent_graph.compile_provider(manifest).evaluate(
        "report", "default", {"facts": DRAFTED}
    )
    source = agent_graph.compile_provider(WEEKLY / "provider.yaml")
    expected = source.evaluate("report", "default", {"facts": DRAFTED})
    assert (bundle.status_code, bundle.primary and bundle.primary.node.id) == (
        expected.status_code,
        expected.primary and expected.primary.node.id,
    )
    assert expected.status_code == "waiting-user"


def test_a_verified_ir_is_remembered_and_then_read_without_compiling(tmp_path: Path) -> None:
    manifest = build(WEEKLY, tmp_path / "honest")
    store = b.TrustStore(tmp_path / "trust")
    assert agent_graph.open_bundle(manifest, trust=store) is None  # never verified yet
    agent_graph.compile_provider(manifest, trust=store)  # compiles, compares, remembers
    assert len(list(store.directory.glob("*.json"))) == 1
    assert agent_graph.open_bundle(manifest, trust=store) is not None
    code = (
        "import sys, agent_graph\n"
        "p = agent_graph.compile_provider(sys.argv[1], trust=sys.argv[2])\n"
        "print(p.evaluate('report', 'default', {}).primary.node.id)\n"
        "heavy = {'yaml', 'jsonschema', 'jsonschema_rs', 'lark', 'click'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(manifest), str(store.directory)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == ["draft", "[]"]


def test_a_store_entry_for_another_ir_does_not_vouch(tmp_path: Path, swapped: Path) -> None:
    # the store vouched for the honest IR of this manifest; the swapped one is still checked
    store = b.TrustStore(tmp_path / "trust")
    honest = build(WEEKLY, tmp_path / "honest-again")
    agent_graph.compile_provider(honest, trust=store)
    assert json.loads(honest.read_text())["digest"] == json.loads(swapped.read_text())["digest"]
    with pytest.raises(AgentGraphError) as info:
        agent_graph.compile_provider(swapped, trust=store)
    assert info.value.code == "bundle-ir-unverified"


def test_the_cli_store_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(b.TRUST_ENV, str(tmp_path / "mine"))
    store = b.cli_trust_store()
    assert store is not None
    assert store.directory == tmp_path / "mine"
    monkeypatch.setenv(b.TRUST_ENV, "off")
    assert b.cli_trust_store() is None
    manifest = build(WEEKLY, tmp_path / "honest")
    monkeypatch.setenv(b.TRUST_ENV, str(tmp_path / "cli"))
    assert main(["evaluate", "report", "-m", str(manifest), "--format", "json"]) == 0
    assert len(list((tmp_path / "cli").glob("*.json"))) == 1  # the CLI remembered it
    assert os.environ[b.TRUST_ENV] == str(tmp_path / "cli")


def test_a_binding_that_drops_its_skill_directories_finds_no_verdict(tmp_path: Path) -> None:
    """N4: with a verdict, `directories: []` in a re-digested binding turned off the check
    that nothing was added to a Skill directory. The trusted path now refuses exactly what
    the verifying path refuses."""
    manifest = build(WEEKLY, tmp_path / "honest")
    store = b.TrustStore(tmp_path / "trust")
    agent_graph.compile_provider(manifest, trust=store)  # the verdict for the honest bundle
    binding_path = manifest.parent / b.BINDING_PATH
    binding = json.loads(binding_path.read_text(encoding="utf-8"))
    assert binding["directories"], "the weekly report binds a Skill directory"
    forged = b.binding_document(binding["bundle"], binding["irDigest"], [])
    binding_path.write_text(json.dumps(forged), encoding="utf-8")
    (manifest.parent / binding["directories"][0] / "evil.sh").write_text("rm -rf ~\n", "utf-8")

    assert agent_graph.open_bundle(manifest, trust=store) is None  # no trusted fast path
    refusals = []
    for trust in (None, store):
        with pytest.raises(AgentGraphError) as info:
            agent_graph.compile_provider(manifest, trust=trust)
        refusals.append((info.value.code, info.value.message))
    assert refusals[0] == refusals[1]
    code, _, err = cli("evaluate", "report", "-m", str(manifest), "--format", "json")
    assert code == 1
    assert json.loads(err)["error"]["code"] == refusals[0][0]
