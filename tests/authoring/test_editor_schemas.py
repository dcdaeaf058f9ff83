"""Editor validation: what yaml-language-server would do with the mapping ``agc init`` writes.

``agc init --editor vscode`` writes ``.vscode/settings.json`` (``yaml.schemas``: a
workspace-relative schema path -> globs) and the schemas into ``.agent-graph/schemas``.
These tests read that mapping back, match each glob as yaml-language-server matches it
(its ``convertSimple2RegExpPattern``: ``*`` is ``.*`` across ``/``, the pattern anchored at
the end of the file's URI), load each schema with ``$ref``s resolved beside it, as an
editor loads it from disk, and validate every matched file with ``jsonschema`` in the
draft the schema declares, and in draft 7 (what yaml-language-server before 2020-12
support evaluates). Every Provider file of every shipped example and of a fresh init is
matched by exactly the schema of its type and accepted; a misspelled field is refused,
for each file type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, ValidationError
from jsonschema.validators import validator_for
from referencing import Registry, Resource

from agent_graph.documents.yaml12 import parse_yaml
from cli_support import ok_json, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/provider.yaml"))
SETTINGS = ".vscode/settings.json"

#: File identity -> the schema file that must describe it.
SCHEMA_OF = {
    "agent-graph.provider.v1": "provider.schema.json",
    "agent-graph.graph.v1": "graph.schema.json",
    "agent-graph.action.v1": "action.schema.json",
    "agent-graph.resource.file.v1": "resource-descriptor.schema.json",
    "agent-graph.resource.graph-action.v1": "resource-descriptor.schema.json",
    "agent-graph.resource.host-action.v1": "resource-descriptor.schema.json",
    "agent-graph.code-catalog.v1": "code-catalog.schema.json",
    "agent-graph.test.v1": "test-case.schema.json",
}

#: Per file type: (identity, pointer of the mapping, correct key, misspelling).
MISSPELLINGS = [
    ("agent-graph.provider.v1", "", "graphs", "graph"),
    ("agent-graph.graph.v1", "", "entrypoints", "entrypoint"),
    ("agent-graph.graph.v1", "/nodes/0", "reasonCode", "reasoncode"),
    ("agent-graph.action.v1", "", "runner", "runer"),
    ("agent-graph.resource.file.v1", "", "mediaType", "media-type"),
    ("agent-graph.resource.graph-action.v1", "", "materializer", "materialiser"),
    ("agent-graph.resource.host-action.v1", "", "materializer", "materialiser"),
    ("agent-graph.code-catalog.v1", "", "codes", "code"),
    ("agent-graph.code-catalog.v1", "/codes/0", "summary", "sumary"),
    ("agent-graph.test.v1", "", "expect", "expects"),
    ("agent-graph.test.v1", "/expect", "primaryNode", "primarynode"),
]

#: JSON Schema draft 7's keywords; ``$defs`` is only a place ``#/$defs/…`` points into.
DRAFT7_KEYWORDS = {
    *("$schema", "$id", "$ref", "$comment", "$defs", "definitions", "title", "description"),
    *("default", "examples", "readOnly", "writeOnly", "type", "enum", "const", "format"),
    *("multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"),
    *("maxLength", "minLength", "pattern", "items", "additionalItems", "maxItems"),
    *("minItems", "uniqueItems", "contains", "maxProperties", "minProperties", "required"),
    *("properties", "patternProperties", "additionalProperties", "dependencies"),
    *("propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not"),
    *("contentMediaType", "contentEncoding"),
}


def yls_pattern(glob: str) -> re.Pattern[str]:
    """A ``yaml.schemas`` glob as yaml-language-server compiles it (FilePatternAssociation)."""
    escaped = re.sub(r"[-\\{}+?|^$.,\[\]()#\s]", lambda m: "\\" + m.group(), glob)
    return re.compile(escaped.replace("*", ".*") + "$")


class Editor:
    """The schemas a workspace's ``.vscode/settings.json`` maps, loaded as an editor would."""

    def __init__(self, workspace: Path) -> None:
        settings = json.loads((workspace / SETTINGS).read_text(encoding="utf-8"))
        self.mapping: dict[str, list[str]] = settings["yaml.schemas"]
        self.workspace = workspace
        resources = [
            (path.as_uri(), Resource.from_contents(json.loads(path.read_text(encoding="utf-8"))))
            for path in sorted((workspace / ".agent-graph/schemas").glob("*.json"))
        ]
        self.registry: Registry[Any] = Registry().with_resources(resources).crawl()

    def schema_paths(self) -> Iterator[tuple[Path, list[str]]]:
        for key, globs in self.mapping.items():
            assert key.startswith("./"), key  # relative to the workspace: no machine path
            yield (self.workspace / key).resolve(), globs

    def schemas_for(self, file: Path) -> list[Path]:
        uri = file.resolve().as_uri()
        return [
            path
            for path, globs in self.schema_paths()
            if any(yls_pattern(glob).search(uri) for glob in globs)
        ]

    def errors(
        self, schema_path: Path, value: Any, *, draft7: bool = False
    ) -> list[ValidationError]:
        schema = self.registry.contents(schema_path.as_uri())
        cls = Draft7Validator if draft7 else validator_for(schema)
        resolver_base = {**schema, "$id": schema_path.as_uri()}  # its base is where it lies
        validator = cls(resolver_base, registry=self.registry)
        return list(validator.iter_errors(value))


def every_error(errors: list[ValidationError]) -> Iterator[ValidationError]:
    for error in errors:
        yield error
        yield from every_error(list(error.context))


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("editor") / "provider"
    from agent_graph.cli import main

    assert main(["init", str(root), "--id", "acme.editor", "--editor", "vscode"]) == 0
    return root


@pytest.fixture(scope="module")
def editor(fresh: Path) -> Editor:
    return Editor(fresh)


def provider_files(root: Path) -> list[tuple[Path, Any]]:
    """Every YAML file under ``root`` with its value (the editor's schemas are for YAML)."""
    paths = sorted([*root.rglob("*.yaml"), *root.rglob("*.yml")])
    return [
        (path, parse_yaml(path.read_text(encoding="utf-8"))[0])
        for path in paths
        if ".agent-graph" not in path.parts
    ]


@pytest.mark.parametrize("root", [*EXAMPLES, None], ids=[*(p.name for p in EXAMPLES), "init"])
def test_every_provider_file_is_mapped_to_its_schema_and_accepted(
    root: Path | None, editor: Editor, fresh: Path
) -> None:
    root = fresh if root is None else root
    files = provider_files(root)
    seen = set()
    for path, value in files:
        identity = value.get("schema") if isinstance(value, dict) else None
        assert identity in SCHEMA_OF, path  # examples hold nothing else in YAML
        schemas = editor.schemas_for(path)
        assert [s.name for s in schemas] == [SCHEMA_OF[identity]], path
        for draft7 in (False, True):
            errors = editor.errors(schemas[0], value, draft7=draft7)
            assert errors == [], (path, draft7, [e.message for e in errors])
        seen.add(identity)
    if root == fresh:
        assert seen == set(SCHEMA_OF) - {
            "agent-graph.resource.graph-action.v1",
            "agent-graph.resource.host-action.v1",
        }


def test_the_examples_hold_every_file_type(editor: Editor) -> None:
    identities = {value["schema"] for root in EXAMPLES for _, value in provider_files(root)}
    assert identities == set(SCHEMA_OF)  # so the test above covers each of them


def _member(value: Any, pointer: str) -> dict[str, Any]:
    for part in filter(None, pointer.split("/")):
        value = value[int(part)] if isinstance(value, list) else value[part]
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize(
    ("identity", "pointer", "key", "wrong"), MISSPELLINGS, ids=lambda v: str(v)
)
def test_a_misspelled_field_is_refused(
    identity: str, pointer: str, key: str, wrong: str, editor: Editor
) -> None:
    path, value = next(
        (p, v)
        for root in EXAMPLES
        for p, v in provider_files(root)
        if v["schema"] == identity and key in _member(v, pointer)
    )
    here = _member(value, pointer)
    here[wrong] = here.pop(key)
    (schema,) = editor.schemas_for(path)
    for draft7 in (False, True):
        found = list(every_error(editor.errors(schema, value, draft7=draft7)))
        unexpected = [
            e for e in found if e.validator == "additionalProperties" and repr(wrong) in e.message
        ]
        assert unexpected, (path, draft7, [e.message for e in found])


def test_a_resource_with_an_unknown_identity_is_refused(editor: Editor, fresh: Path) -> None:
    path = fresh / "resources" / "procedure.yaml"
    value = parse_yaml(path.read_text(encoding="utf-8"))[0]
    (schema,) = editor.schemas_for(path)
    for identity in ("agent-graph.resource.v1", "agent-graph.resource.fil.v1"):
        errors = editor.errors(schema, {**value, "schema": identity})
        assert [e.validator for e in errors] == ["enum"], identity
    assert [e.validator for e in editor.errors(schema, {"id": "x"})] == ["required"]


def test_the_schemas_speak_draft_7(editor: Editor) -> None:
    """yaml-language-server evaluated only draft 7 keywords for years: none other is used,
    so editors of every version enforce the same rules as ``agc validate``."""

    def keywords(node: Any) -> Iterator[str]:
        if not isinstance(node, dict):
            return
        yield from node
        for name in ("properties", "patternProperties", "$defs", "definitions"):
            for sub in node.get(name, {}).values():
                yield from keywords(sub)
        for name in ("items", "additionalProperties", "propertyNames", "contains", "not"):
            yield from keywords(node.get(name))
        for name in ("if", "then", "else"):
            yield from keywords(node.get(name))
        for name in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(name, []):
                yield from keywords(sub)

    for path, _ in editor.schema_paths():
        used = set(keywords(json.loads(path.read_text(encoding="utf-8"))))
        assert used <= DRAFT7_KEYWORDS, (path.name, used - DRAFT7_KEYWORDS)


def test_the_mapping_names_no_machine_path(fresh: Path) -> None:
    text = (fresh / SETTINGS).read_text(encoding="utf-8")
    assert str(fresh) not in text
    assert str(Path.home()) not in text
    for path in (fresh / ".agent-graph/schemas").glob("*.json"):
        assert str(fresh) not in path.read_text(encoding="utf-8")


def test_init_with_an_existing_vscode_settings_file_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".vscode").mkdir()
    (tmp_path / SETTINGS).write_text('{"editor.tabSize": 4}\n', encoding="utf-8")
    code, _, err = run(["init", str(tmp_path), "--id", "a", "--editor", "vscode"], capsys)
    assert code == 1
    assert f"replace existing content: {tmp_path / SETTINGS}; add the yaml.schemas" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".vscode", "settings.json"]


# -- agc schema extract --all ---------------------------------------------------------------


def test_extract_all_writes_what_the_mapping_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh: Path
) -> None:
    target = tmp_path / ".agent-graph" / "schemas"
    document = ok_json(["schema", "extract", "--all", str(target)], capsys)
    listed = ok_json(["schema", "list"], capsys)["schemas"]
    names = [entry["name"] for entry in document["schemas"]]
    assert names == [*listed, "resource-descriptor"]
    for entry in document["schemas"]:
        assert Path(entry["path"]).parent == target
    for path in (fresh / ".agent-graph/schemas").iterdir():  # what init wrote is the same
        assert (target / path.name).read_bytes() == path.read_bytes()
    (tmp_path / ".vscode").mkdir()
    (tmp_path / SETTINGS).write_bytes((fresh / SETTINGS).read_bytes())
    extracted = Editor(tmp_path)
    graph = fresh / "graphs" / "main.yaml"
    (schema,) = extracted.schemas_for(graph)
    assert extracted.errors(schema, parse_yaml(graph.read_text(encoding="utf-8"))[0]) == []


def test_extract_all_refuses_other_content_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ok_json(["schema", "extract", "--all", str(tmp_path)], capsys)  # again: identical, fine
    ok_json(["schema", "extract", "--all", "--output", str(tmp_path)], capsys)
    (tmp_path / "run.schema.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "action.schema.json").unlink()
    code, out, err = run(["schema", "extract", "--all", str(tmp_path), "--format", "json"], capsys)
    assert (code, out) == (1, "")
    error = json.loads(err)["error"]
    assert error["code"] == "schema-target-exists"
    assert str(tmp_path / "run.schema.json") in error["message"]
    assert not (tmp_path / "action.schema.json").exists()  # checked before anything is written
    ok_json(["schema", "extract", "--all", str(tmp_path), "--force"], capsys)
    assert (tmp_path / "action.schema.json").is_file()
    assert json.loads((tmp_path / "run.schema.json").read_text(encoding="utf-8")) != {}


@pytest.mark.parametrize(
    "args",
    [["--all"], ["--all", "d", "--output", "e"], ["graph"], ["--output", "x.json"]],
    ids=["no-folder", "two-folders", "no-output", "no-name"],
)
def test_extract_usage_errors(
    args: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["schema", "extract", *args], capsys)
    assert (code, out) == (2, "")
    assert list(tmp_path.iterdir()) == []


def test_the_documented_mapping_is_the_written_one(fresh: Path) -> None:
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```json\n(.*?)```", text, re.S)
    written = json.loads((fresh / SETTINGS).read_text(encoding="utf-8"))
    assert json.loads(block) == written
    lua = dict(re.findall(r'\[schemas \.\. "([^"]+)"\] = \{ ([^}]*) \}', text))
    assert {f"./.agent-graph/schemas/{name}": re.findall(r'"([^"]+)"', globs)
            for name, globs in lua.items()} == written["yaml.schemas"]  # fmt: skip
