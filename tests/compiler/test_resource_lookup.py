"""Which resource a reference names when a path-like id equals another resource's path.

Issue 10: ``resources/tmpl-b8.md`` declares ``id: tmpl.b8`` and ``resources/alias.md``
declares ``id: resources/tmpl-b8.md``; a node lists ``required: [resources/tmpl-b8.md]``.
The reference's rule, read from its source (TypeScript 0.2.6):

* ``src/router.ts``, ``resourcesForCandidate`` maps every node (or delegated gate)
  reference through ``locateResource(provider, referenceOrId, revision)``, which first
  looks for a loaded resource whose ``metadata.id`` is exactly the reference
  (``[...provider.resources.values()].find(...)``, provider-wide, so a resource loaded
  for another graph or as a catalog document counts) and only then resolves the
  reference as a contained path and takes the resource loaded from that file. The
  loader (``src/loader.ts``, ``loadProvider``) still loads ``resources/tmpl-b8.md`` by
  path, so its file is part of the graph revision though no Route shows it.
* ``src/testRunner.ts``, ``runGraphTests`` compares ``requiredResources`` and
  ``recommendedResources`` with the ids of that Route's locations.
* Catalog ``document`` references are not looked up by id: ``loadProvider`` stores the
  resource it loaded from the document's path (``codeCatalog.documents.set(code,
  resource)``) and ``locateCode`` shows that one.

So both entries below are the alias (id ``resources/tmpl-b8.md``, file ``alias.md``).
With ``AGC_REFERENCE_CLI`` set (and ``node`` on the PATH) the same Providers also go
through the Node reference's ``route`` and ``test`` commands and must answer the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_graph import compile_provider
from agent_graph.cli import main
from agent_graph.ir import records as r
from agent_graph.testing import run_tests
from agent_graph.vm.locations import locate_resource
from tree_support import write_tree

REF_CLI = os.environ.get("AGC_REFERENCE_CLI")
needs_reference = pytest.mark.skipif(
    not (REF_CLI and shutil.which("node")), reason="reference CLI not configured"
)

ALIAS_ID = "resources/tmpl-b8.md"  # alias.md's id, spelled like tmpl-b8.md's path

# The Provider of the report, one file after each "== <path>" line.
ISSUE = """\
== provider.yaml
schema: agent-graph.provider.v1
id: test.resource-lookup
version: 0.1.0
graphs: [graphs/main.yaml]
== graphs/main.yaml
schema: agent-graph.graph.v1
id: main
entrypoints: {default: work}
nodes:
  - id: work
    kind: action
    reasonCode: route.main.work
    action: actions/work.yaml
    resources:
      required: [resources/tmpl-b8.md]
      recommended: [resources/alias.md]
  - {id: done, kind: terminal, terminalOutcome: completed}
edges:
  - {from: work, to: done}
== actions/work.yaml
schema: agent-graph.action.v1
id: work
runner: command
effect: read
command: echo work
== resources/tmpl-b8.md
---
id: tmpl.b8
kind: template
---
The b8 template.
== resources/alias.md
---
id: resources/tmpl-b8.md
kind: procedure
---
An alias whose id looks like a path.
== tests/resources.yaml
schema: agent-graph.test.v1
name: the reference's answer
graph: main
entry: default
expect:
  statusCode: actionable
  primaryNode: work
  requiredResources: [resources/tmpl-b8.md]
  recommendedResources: [resources/tmpl-b8.md]
== tests/by-path.yaml
schema: agent-graph.test.v1
name: what agc answered before
graph: main
entry: default
expect:
  statusCode: actionable
  requiredResources: [tmpl.b8]
  recommendedResources: [resources/tmpl-b8.md]
"""

# The same collision on a delegated gate, through catalog documents, a resource only a
# catalog names, and a "./" spelling (ids compare as exact strings, paths resolve).
VARIANTS = """\
== provider.yaml
schema: agent-graph.provider.v1
id: test.resource-lookup-variants
version: 0.1.0
graphs: [graphs/main.yaml]
catalogs: {codes: codes.yaml}
== codes.yaml
schema: agent-graph.code-catalog.v1
codes:
  - {code: route.main.work, kind: route-reason, summary: Work., document: resources/tmpl-b8.md}
  - {code: route.main.ask, kind: route-reason, summary: Ask., document: docs/help.md}
  - {code: route.main.spelled, kind: route-reason, summary: Spelled.}
== graphs/main.yaml
schema: agent-graph.graph.v1
id: main
entrypoints: {default: work, ask: ask, spelled: spelled}
nodes:
  - id: work
    kind: action
    reasonCode: route.main.work
    action: actions/work.yaml
    resources:
      required: [resources/tmpl-b8.md, docs/shadow.md]
  - id: ask
    kind: gate
    reasonCode: route.main.ask
    gate: {id: ask, prompt: Go on?, authority: ops, delegatable: true}
    resources:
      required: [resources/alias.md]
    delegated:
      resources:
        required: [resources/tmpl-b8.md]
        recommended: [docs/shadow.md]
  - id: spelled
    kind: action
    reasonCode: route.main.spelled
    action: actions/work.yaml
    resources:
      required: [./resources/tmpl-b8.md, resources/./alias.md]
  - {id: done, kind: terminal, terminalOutcome: completed}
edges:
  - {from: work, to: done}
  - {from: ask, to: done}
  - {from: spelled, to: done}
== actions/work.yaml
schema: agent-graph.action.v1
id: work
runner: command
effect: read
command: echo work
== resources/tmpl-b8.md
---
id: tmpl.b8
kind: template
---
The b8 template.
== resources/alias.md
---
id: resources/tmpl-b8.md
kind: procedure
---
An alias whose id looks like a path.
== docs/help.md
---
id: docs/shadow.md
kind: diagnostic
---
Loaded only as a catalog document; its id is the path of shadow.md.
== docs/shadow.md
---
id: shadow
kind: procedure
---
Shadowed by help.md's id.
"""


def write_provider(root: Path, spec: str) -> Path:
    files: dict[str, str] = {}
    for chunk in spec.split("== ")[1:]:
        name, _, text = chunk.partition("\n")
        files[name] = text
    write_tree(root, files)
    return root / "provider.yaml"


def _ids(locations: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(x["id"], Path(x["filePath"]).name) for x in locations]


def _route(manifest: Path, entry: str, authorities: list[str] | None = None) -> dict[str, Any]:
    program = compile_provider(manifest)
    state = {"authorities": authorities or []}
    evaluation = program.evaluate("main", entry, state)
    assert evaluation.primary is not None
    route = program.route("main", entry, evaluation.primary.route_id, state)
    document: dict[str, Any] = route.to_dict()
    return document


def agc_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = main([*args, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out if captured.out else captured.err)


# -- the reported Provider -------------------------------------------------------------------


def test_route_resolves_a_reference_by_id_before_path(tmp_path: Path) -> None:
    manifest = write_provider(tmp_path, ISSUE)
    resources = _route(manifest, "default")["resources"]
    # locateResource (src/router.ts): the id match wins over the file at that path
    assert _ids(resources["required"]) == [(ALIAS_ID, "alias.md")]
    # no id is "resources/alias.md", so the path finds the same alias
    assert _ids(resources["recommended"]) == [(ALIAS_ID, "alias.md")]
    alias = tmp_path / "resources" / "alias.md"
    assert resources["required"][0]["filePath"] == str(alias)
    assert resources["required"][0]["kind"] == "procedure"


def test_the_cli_route_answers_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = write_provider(tmp_path, ISSUE)
    code, document = agc_json(["route", "main", "-m", str(manifest)], capsys)
    assert code == 0
    assert document["resources"] == _route(manifest, "default")["resources"]


def test_graph_test_expectations_follow_the_route(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_provider(tmp_path, ISSUE)
    results = {x.name: x for x in run_tests(compile_provider(manifest), tmp_path / "tests")}
    assert results["the reference's answer"].passed
    stale = results["what agc answered before"]
    assert [f.message for f in stale.failures] == [
        'requiredResources: expected ["tmpl.b8"], received ["resources/tmpl-b8.md"]'
    ]
    code, document = agc_json(["test", str(tmp_path / "tests"), "-m", str(manifest)], capsys)
    assert (code, document["total"], document["failed"]) == (1, 2, 1)


def test_the_shadowed_file_still_counts_in_the_revision(tmp_path: Path) -> None:
    """The loader loads every reference by path, so editing the file no Route shows still
    moves the graph revision (as in the reference: it is a direct file of the graph)."""
    manifest = write_provider(tmp_path, ISSUE)
    before = compile_provider(manifest).evaluate("main").revision
    (tmp_path / "resources" / "tmpl-b8.md").write_text(
        "---\nid: tmpl.b8\nkind: template\n---\nEdited.\n", encoding="utf-8"
    )
    assert compile_provider(manifest).evaluate("main").revision != before


# -- the same rule elsewhere -----------------------------------------------------------------


def test_delegated_resources_use_the_same_lookup(tmp_path: Path) -> None:
    manifest = write_provider(tmp_path, VARIANTS)
    user = _route(manifest, "ask")["resources"]
    assert _ids(user["required"]) == [(ALIAS_ID, "alias.md")]
    delegated = _route(manifest, "ask", ["ops"])["resources"]
    assert _ids(delegated["required"]) == [(ALIAS_ID, "alias.md")]
    # help.md is loaded only as a catalog document, yet its id is matched first
    assert _ids(delegated["recommended"]) == [("docs/shadow.md", "help.md")]


def test_node_references_see_catalog_document_ids(tmp_path: Path) -> None:
    manifest = write_provider(tmp_path, VARIANTS)
    resources = _route(manifest, "default")["resources"]
    assert _ids(resources["required"]) == [(ALIAS_ID, "alias.md"), ("docs/shadow.md", "help.md")]


def test_ids_compare_exactly_and_paths_resolve(tmp_path: Path) -> None:
    manifest = write_provider(tmp_path, VARIANTS)
    resources = _route(manifest, "spelled")["resources"]
    # "./resources/tmpl-b8.md" is no resource's id: its path is tmpl-b8.md itself
    assert _ids(resources["required"]) == [("tmpl.b8", "tmpl-b8.md"), (ALIAS_ID, "alias.md")]


def test_catalog_documents_are_found_by_path_only(tmp_path: Path) -> None:
    """loadProvider keeps the resource loaded from each entry's ``document`` path and
    locateCode shows it: the entry naming resources/tmpl-b8.md documents tmpl.b8."""
    manifest = write_provider(tmp_path, VARIANTS)
    program = compile_provider(manifest)
    documents: dict[str, str | None] = {}
    for entry in program.ir.catalog or ():
        if entry.document == r.NONE:
            documents[entry.code] = None
            continue
        location = locate_resource(program.root, program.ir.resources[entry.document], None)
        documents[entry.code] = location.id
    assert documents == {
        "route.main.work": "tmpl.b8",
        "route.main.ask": "docs/shadow.md",
        "route.main.spelled": None,
    }


# -- the Node reference ----------------------------------------------------------------------


def _reference(args: list[str], cwd: Path) -> tuple[int, Any]:
    assert REF_CLI is not None
    done = subprocess.run(
        ["node", REF_CLI, *args, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    return done.returncode, json.loads(done.stdout if done.stdout else done.stderr)


def _comparable(value: Any) -> Any:
    """Blank the one expected difference: 0.2's single location identity vs our three."""
    if isinstance(value, dict):
        return {
            k: "<location>"
            if k == "schema" and str(v).startswith("agent-graph.resource-location")
            else _comparable(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


@needs_reference
@pytest.mark.reference
@pytest.mark.parametrize(
    ("spec", "entry", "authorities"),
    [
        (ISSUE, "default", []),
        pytest.param(VARIANTS, "default", [], marks=pytest.mark.slow),
        pytest.param(VARIANTS, "ask", [], marks=pytest.mark.slow),
        pytest.param(VARIANTS, "ask", ["ops"], marks=pytest.mark.slow),
        pytest.param(VARIANTS, "spelled", [], marks=pytest.mark.slow),
    ],
)
def test_routes_match_the_reference(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spec: str,
    entry: str,
    authorities: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # the default workspace of both sides
    manifest = write_provider(tmp_path / "provider", spec)
    ours = _route(manifest, entry, authorities)
    args = ["route", "main", ours["routeId"], "--entry", entry, "-m", str(manifest)]
    if authorities:
        args += ["--authority", *authorities]
    code, theirs = _reference(args, tmp_path)
    assert code == 0, theirs
    assert _comparable(theirs) == _comparable(ours)


@needs_reference
@pytest.mark.reference
def test_graph_tests_match_the_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_provider(tmp_path, ISSUE)
    args = ["test", str(tmp_path / "tests"), "-m", str(manifest)]
    assert agc_json(args, capsys) == _reference(args, tmp_path)


@needs_reference
@pytest.mark.reference
def test_reference_resource_locate_agrees(tmp_path: Path) -> None:
    """``resource locate`` (locateResource itself) gives the alias for the colliding id."""
    manifest = write_provider(tmp_path, ISSUE)
    code, location = _reference(["resource", "locate", ALIAS_ID, "-m", str(manifest)], tmp_path)
    assert code == 0, location
    assert (location["id"], Path(location["filePath"]).name) == (ALIAS_ID, "alias.md")


@needs_reference
@pytest.mark.reference
def test_catalog_documents_match_the_reference(tmp_path: Path) -> None:
    manifest = write_provider(tmp_path, VARIANTS)
    program = compile_provider(manifest)
    for entry in program.ir.catalog or ():
        code, located = _reference(["code", "locate", entry.code, "-m", str(manifest)], tmp_path)
        assert code == 0, located
        ours = None
        if entry.document != r.NONE:
            resource = program.ir.resources[entry.document]
            ours = locate_resource(program.root, resource, None).to_dict()
        assert _comparable(located.get("document")) == _comparable(ours), entry.code
