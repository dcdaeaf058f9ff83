"""What ``agc evaluate`` on a built bundle imports: none of the heavy parts.

A bundle carries compiled IR, so evaluating it needs neither YAML nor JSON Schema nor the
compiler, and not the Run store, the Flow front end or the pictures either. Each of
those would add tens of milliseconds to every cold start of a host's ``agc evaluate``;
the quick benchmark's cold-start ratio is the timing side of this, this is the exact one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_graph.compiler import load_provider
from agent_graph.compiler.provider.builder import build_bundle

ROOT = Path(__file__).resolve().parents[2]
HEAVY_PACKAGES = ("yaml", "jsonschema", "jsonschema_rs", "referencing", "pyuca", "lark")
HEAVY_PARTS = (
    "agent_graph.compiler",
    "agent_graph.runs",
    "agent_graph.documents.yaml12",
    "agent_graph.documents.schema",
    "agent_graph.flow",
    "agent_graph.pictures",
    "agent_graph.materialize",
    "agent_graph.authoring",
)
PROBE = """
import contextlib, io, json, sys
from agent_graph.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "output": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def test_evaluating_a_bundle_imports_no_heavy_part(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    build_bundle(load_provider(ROOT / "examples" / "weekly-report" / "provider.yaml"), bundle)
    args = ["evaluate", "report", "-m", str(bundle / "manifest.json"), "--format", "json"]
    env_trust = {"AGC_TRUST_CACHE": str(tmp_path / "trust")}
    # The first run verifies the bundle by compiling its sources and records the IR in the
    # trust store (docs/trust.md); every later cold start is the trusted fast path.
    for attempt in range(2):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
            env={**os.environ, **env_trust},
        )
        probe = json.loads(done.stdout)
        assert probe["code"] == 0
        assert json.loads(probe["output"])["statusCode"] == "actionable"
        if attempt == 0:
            continue
        modules = probe["modules"]
        heavy = [
            m for m in modules if m.split(".")[0] in HEAVY_PACKAGES or m.startswith(HEAVY_PARTS)
        ]
        assert heavy == []
