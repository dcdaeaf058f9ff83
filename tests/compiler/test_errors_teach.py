"""Errors that teach (issue 10, a new user's report): each finding of the report, pinned.

Human output is checked line by line (golden lines), so a change of wording is a
deliberate change of these tests; ``--format json`` envelopes are checked to be the
error's own document, unchanged by the human rendering.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_graph.cli.render import error_lines, visible
from agent_graph.errors import AgentGraphError, Diagnostic
from cli_support import run
from tree_support import write_tree

DOCS = Path(__file__).resolve().parents[2] / "docs"
CORPUS = Path(__file__).resolve().parents[1] / "corpus"

PROVIDER = """\
schema: agent-graph.provider.v1
id: teach.case
version: 1.0.0
graphs:
  - graphs/main.yaml
compatibility:
  agentGraph: ^0.3.0
"""

GRAPH = """\
schema: agent-graph.graph.v1
id: main
entrypoints:
  default: work
nodes:
  - id: work
    kind: action
    reasonCode: route.main.work
    action: actions/work.yaml
    satisfiedBy:
      - path: work.done
        exists: true
  - id: done
    kind: terminal
    terminalOutcome: completed
edges:
  - from: work
    to: done
"""

ACTION = """\
schema: agent-graph.action.v1
id: work
runner: command
effect: write
command: make work
"""


def provider(tmp_path: Path, **replace: str) -> Path:
    """A small valid Provider under ``tmp_path/p``; ``replace`` swaps whole files."""
    files = {
        "provider.yaml": PROVIDER,
        "graphs/main.yaml": GRAPH,
        "actions/work.yaml": ACTION,
    }
    files.update({name.replace("__", "/").replace("_", "."): v for name, v in replace.items()})
    return write_tree(tmp_path / "p", files) / "provider.yaml"


def human(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, out, err = run(args, capsys)
    assert code == 1, out
    assert out == ""
    return err.splitlines()


def envelope(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = run([*args, "--format", "json"], capsys)
    assert code == 1, out
    value: dict[str, Any] = json.loads(err)
    return value


# --------------------------------------------------------------------------- 1. unknown members


def test_an_unknown_member_is_shown_at_its_key_with_the_name_it_misspells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = GRAPH.replace("    satisfiedBy:", "    satisfiedby:")
    manifest = provider(tmp_path, graphs__main_yaml=graph)
    assert human(["validate", "-m", str(manifest)], capsys) == [
        "ERROR schema-invalid: graphs/main.yaml does not match graph.schema.json",
        "graphs/main.yaml:10:5: schema.additionalProperties: /nodes/0 has an unknown member "
        "`satisfiedby`; did you mean `satisfiedBy`?",
        "   10 |     satisfiedby:",
        "      |     ^",
        "1 error(s), 0 warning(s)",
    ]
    (diagnostic,) = envelope(["validate", "-m", str(manifest)], capsys)["error"]["diagnostics"]
    assert diagnostic["code"] == "schema.additionalProperties"  # the code is kept
    assert diagnostic["detail"]["pointer"] == "/nodes/0/satisfiedby"
    assert (diagnostic["detail"]["line"], diagnostic["detail"]["column"]) == (10, 5)
    assert diagnostic["detail"]["params"] == {"additionalProperty": "satisfiedby"}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("reasoncode: route.main.work", "did you mean `reasonCode`?"),  # case only
        ("reasonCod: route.main.work", "did you mean `reasonCode`?"),  # a letter short
        ("acton: actions/work.yaml", "did you mean `action`?"),
        ("colour: blue", None),  # nothing close: no suggestion
    ],
)
def test_a_suggestion_only_when_an_allowed_name_is_close(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, expected: str | None
) -> None:
    graph = GRAPH.replace("    kind: action\n", f"    kind: action\n    {line}\n", 1)
    manifest = provider(tmp_path, graphs__main_yaml=graph)
    diagnostics = envelope(["validate", "-m", str(manifest)], capsys)["error"]["diagnostics"]
    name = line.split(":")[0]
    unknown = next(d for d in diagnostics if d["detail"]["pointer"] == f"/nodes/0/{name}")
    text = f"/nodes/0 has an unknown member `{name}`"
    assert unknown["message"] == (text if expected is None else f"{text}; {expected}")
    assert (unknown["detail"]["line"], unknown["detail"]["column"]) == (8, 5)


def test_unknown_members_in_json_flow_and_quoted_keys_are_placed_at_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flow = GRAPH.replace(
        "      - path: work.done\n        exists: true\n",
        '      - {path: work.done, "exist": true}\n',
    ).replace("  - id: done\n", "  - 'id': done\n    'notes': x\n")
    manifest = provider(tmp_path, graphs__main_yaml=flow)
    diagnostics = envelope(["validate", "-m", str(manifest)], capsys)["error"]["diagnostics"]
    placed = {
        d["detail"]["pointer"]: (d["detail"]["line"], d["detail"]["column"])
        for d in diagnostics
        if d["code"] == "schema.additionalProperties"
    }
    assert placed == {"/nodes/0/satisfiedBy/0/exist": (11, 27), "/nodes/1/notes": (13, 5)}

    action = {"schema": "agent-graph.action.v1", "id": "work", "runner": "command"}
    text = json.dumps({**action, "effect": "write", "command": "make", "comand": "x"}, indent=2)
    manifest = provider(tmp_path, actions__work_yaml=text)
    (diagnostic,) = envelope(["validate", "-m", str(manifest)], capsys)["error"]["diagnostics"]
    assert diagnostic["message"] == "/ has an unknown member `comand`; did you mean `command`?"
    assert (diagnostic["detail"]["line"], diagnostic["detail"]["column"]) == (7, 3)


def test_without_the_text_a_key_is_placed_by_its_value_or_its_object() -> None:
    from agent_graph.documents import schema
    from agent_graph.documents.sourcemap import SourceMap

    value: dict[str, Any] = {"schema": "agent-graph.action.v1", "id": "w", "runner": "command"}
    value |= {"effect": "write", "command": "m", "extra": "x", "more": [1]}
    source = SourceMap({"": (1, 1), "/extra": (6, 8), "/more": (8, 3), "/more/0": (8, 5)})
    problem = schema.validate("action", value, path="a.yaml", source=source)
    assert problem is not None
    placed = {d.pointer: (d.line, d.column) for d in problem.diagnostics}
    assert placed == {"/extra": (6, 8), "/more": (1, 1)}


# --------------------------------------------------------------------------- 2. patterns in words


def test_a_pattern_is_explained_in_words_and_kept_in_the_detail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = provider(tmp_path, provider_yaml=PROVIDER.replace("teach.case", "Teach_Case"))
    assert human(["validate", "-m", str(manifest)], capsys) == [
        "ERROR schema-invalid: provider.yaml does not match provider.schema.json",
        "provider.yaml:2:5: schema.pattern: /id does not have the required form. Identifier: "
        "lowercase letters, digits and . _ / - inside, starting and ending with a letter or "
        "digit.",
        "    2 | id: Teach_Case",
        "      |     ^",
        "1 error(s), 0 warning(s)",
    ]
    (diagnostic,) = envelope(["validate", "-m", str(manifest)], capsys)["error"]["diagnostics"]
    assert diagnostic["detail"]["params"] == {"pattern": "^[a-z0-9](?:[a-z0-9._/-]*[a-z0-9])?$"}
    assert "^[a-z0-9]" not in diagnostic["message"]


def test_a_forbidden_pattern_is_explained_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = provider(tmp_path, provider_yaml=PROVIDER.replace("- graphs/", "- ../graphs/"))
    diagnostics = envelope(["validate", "-m", str(manifest)], capsys)["error"]["diagnostics"]
    diagnostic = diagnostics[0]
    assert diagnostic["code"] == "schema.not"
    assert diagnostic["message"] == (
        "/graphs/0 does not have the required form. A non-empty path relative to the "
        "Provider root: no leading '/', no drive letter and no '..' segment."
    )
    assert diagnostic["detail"]["params"]["pattern"].startswith("^(?:/|[A-Za-z]:")


# --------------------------------------------------------------------------- 3. BOM, UTF-16


def test_a_byte_order_mark_before_frontmatter_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = CORPUS / "23-frontmatter-missing-bom"
    # issue 27: a path below the working directory is written relative to it, as the
    # location before the message is
    guide = (root / "resources" / "guide.md").relative_to(Path.cwd())
    assert human(["validate", "-m", str(root / "provider.yaml")], capsys) == [
        f"resources/guide.md:1:1: frontmatter-missing: Markdown resource requires YAML "
        f"frontmatter: {guide} (it starts with an invisible UTF-8 byte order mark, U+FEFF, "
        "before the opening ---; save the file without one)",
        "    1 | <U+FEFF>---",
        "      | ^",
        "1 error(s), 0 warning(s)",
    ]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_utf16_file_is_named_and_its_excerpt_prints_no_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str
) -> None:
    manifest = provider(tmp_path)
    manifest.write_bytes(PROVIDER.encode(encoding))
    lines = human(["validate", "-m", str(manifest)], capsys)
    name = "UTF-32" if "32" in encoding else "UTF-16"
    assert lines[0] == (
        f"provider.yaml:1:1: parse-failed: Cannot parse {manifest}: the file is {name} text, "
        "not UTF-8; save it as UTF-8"
    )
    assert lines[-1] == "1 error(s), 0 warning(s)"
    assert lines[1].startswith("    1 | ")
    assert "s\u2400c\u2400h\u2400e\u2400m\u2400a" in lines[1] or encoding != "utf-16-le"
    assert not [c for line in lines for c in line if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0]


@pytest.mark.parametrize(
    ("text", "column", "shown", "caret"),
    [
        ("a\0b", 3, "a\u2400b", 2),
        ("\ufeff---", 1, "<U+FEFF>---", 0),
        ("x\u202ey: 1", 3, "x<U+202E>y: 1", 9),  # a bidi override shown, not obeyed
        ("\ta\x1b[31m", 3, " a\u241b[31m", 2),
        ("a\x85b", 3, "a\\x85b", 5),
        ("\x7f", 2, "\u2421", 1),
        ("ok", 9, "ok", 8),
    ],
)
def test_an_excerpt_shows_control_characters_visibly(
    text: str, column: int, shown: str, caret: int
) -> None:
    assert visible(text, column) == (shown, caret)


# --------------------------------------------------------------------------- 4. -m


def test_m_accepts_a_directory_holding_provider_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = provider(tmp_path)
    code, out, err = run(["validate", "-m", str(manifest.parent)], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "Valid provider teach.case@1.0.0"
    code, out, err = run(
        ["evaluate", "main", "-m", str(manifest.parent), "--format", "json"], capsys
    )
    assert code == 0, err


def test_m_a_directory_without_provider_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert human(["validate", "-m", str(tmp_path)], capsys) == [
        f"provider.yaml: file-missing: {tmp_path} is a directory without provider.yaml; pass -m "
        "the Provider manifest (or the directory that holds its provider.yaml)",
        "1 error(s), 0 warning(s)",
        f"Next: agc init {tmp_path} --id {tmp_path.name}",  # pytest's names are ids already
    ]
    assert envelope(["validate", "-m", str(tmp_path)], capsys)["error"]["code"] == "file-missing"
    assert run(["init", str(tmp_path), "--id", tmp_path.name], capsys)[0] == 0  # as printed
    assert run(["validate", "-m", str(tmp_path)], capsys)[0] == 0


@pytest.mark.parametrize(
    ("name", "schema"),
    [("graphs/main.yaml", "agent-graph.graph.v1"), ("actions/work.yaml", "agent-graph.action.v1")],
)
def test_m_another_agent_graph_document_says_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, schema: str
) -> None:
    target = provider(tmp_path).parent / name
    assert human(["validate", "-m", str(target)], capsys) == [
        f"{target.name}:1:9: schema-invalid: {target}: this is an {schema} file, not a "
        "Provider manifest; pass -m the Provider's provider.yaml (or its directory)",
        f"    1 | schema: {schema}",
        "      |         ^",
        "1 error(s), 0 warning(s)",
    ]
    error = envelope(["validate", "-m", str(target)], capsys)["error"]
    assert error["code"] == "schema-invalid"
    assert [d["detail"]["pointer"] for d in error["diagnostics"]] == ["/schema"]


def test_no_manifest_in_the_working_directory_mentions_m(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = (
        f"No provider.yaml in the working directory {tmp_path}; pass -m PATH "
        "(a Provider manifest, or a directory holding provider.yaml)"
    )
    assert human(["validate"], capsys) == [
        f"provider.yaml: file-missing: {text}",
        "1 error(s), 0 warning(s)",
        f"Next: agc init --id {tmp_path.name}",  # pytest's names are ids already
    ]
    error = envelope(["validate"], capsys)["error"]
    assert (error["code"], error["message"]) == ("file-missing", text)
    assert error["diagnostics"][0]["path"] == "provider.yaml"


# --------------------------------------------------------------------------- 5. ir dump


def test_ir_dump_of_a_manifest_points_at_m(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = provider(tmp_path)
    monkeypatch.chdir(manifest.parent)
    assert human(["ir", "dump", "provider.yaml"], capsys) == [
        f"ERROR ir-corrupt: {manifest} is a YAML document, not compiled IR; to dump the IR of "
        "the Provider it defines, pass it with -m: agc ir dump -m provider.yaml",
    ]
    (manifest.parent / "p.json").write_text('{"schema": "x"}\n', encoding="utf-8")
    error = envelope(["ir", "dump", "p.json"], capsys)["error"]
    assert error["code"] == "ir-corrupt"
    assert error["message"].startswith(f"{manifest.parent / 'p.json'} is a JSON document")
    code, out, err = run(["ir", "dump", "-m", "provider.yaml"], capsys)
    assert code == 0, err
    assert out.startswith("ir irDigest=sha256:")
    assert out.splitlines()[1].startswith("program teach.case 1.0.0 ")


def test_ir_dump_of_other_bytes_is_still_damaged_ir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for data in (b"x\n", b"\x94\xaeagent-graph", b"\0\0\0"):
        (tmp_path / "f.agir").write_bytes(data)
        error = envelope(["ir", "dump", str(tmp_path / "f.agir")], capsys)["error"]
        assert error["code"] == "ir-corrupt"
        assert error["message"].startswith("Compiled IR is damaged: ")


# --------------------------------------------------------------------------- 6. registries


def test_an_unresolved_provider_names_our_registry(capsys: pytest.CaptureFixture[str]) -> None:
    skill = CORPUS / "73-provider-unresolved" / "skills" / "operator" / "SKILL.md"
    error = envelope(["validate", "--skill", str(skill)], capsys)["error"]
    assert error["code"] == "provider-unresolved"
    assert error["message"] == (
        "Provider corpus.case is not available: no Provider registry maps it to a manifest "
        "(agc --registry FILE, or read_registry(FILE) from Python; see docs/registry.md)"
    )
    assert "BundleResolver" not in error["message"]


def test_the_registry_format_documented_is_the_one_read(tmp_path: Path) -> None:
    from agent_graph.compiler.provider.skills import read_registry

    text = (DOCS / "registry.md").read_text(encoding="utf-8")
    blocks = [textwrap.dedent(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    registries = [b for b in blocks if "registry.yaml" in b or b.startswith("example.")]
    assert len(registries) == 2
    for index, block in enumerate(registries):
        path = tmp_path / f"r{index}" / "registry.yaml"
        path.parent.mkdir()
        path.write_text(block, encoding="utf-8")
        registry = read_registry(path)
        weekly = registry.paths["example.weekly-report"]
        assert weekly == (tmp_path / "weekly-report" / "provider.yaml")
    assert read_registry(tmp_path / "r0" / "registry.yaml").paths["example.review-desk"] == Path(
        "/opt/providers/review-desk/manifest.json"
    )
    documented = set(re.findall(r"\| `([a-z-]+)` \|", text))
    assert documented == {
        "registry-invalid",
        "provider-unresolved",
        "file-missing",
        "provider-id-mismatch",
    }


# --------------------------------------------------------------------------- 7. each problem once


def test_a_parse_error_is_printed_once_without_repeating_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = provider(tmp_path, provider_yaml=PROVIDER.replace("1.0.0", "1.0.0 x: y"))
    lines = human(["validate", "-m", str(manifest)], capsys)
    error = envelope(["validate", "-m", str(manifest)], capsys)["error"]
    assert error["message"].endswith(" at line 3, column 17")  # the envelope keeps it
    assert lines == [
        f"provider.yaml:3:17: parse-failed: Cannot parse {manifest}: mapping values are not "
        "allowed in this context",
        "    3 | version: 1.0.0 x: y",
        "      |                 ^",
        "1 error(s), 0 warning(s)",
    ]


def test_a_missing_file_is_one_line_and_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.yaml"
    assert human(["validate", "-m", str(missing)], capsys) == [
        f"nope.yaml: file-missing: provider manifest does not exist: {missing}",
        "1 error(s), 0 warning(s)",
    ]


def test_the_headline_stays_when_it_says_more_and_without_diagnostics() -> None:
    bare = AgentGraphError("no-route", "Graph g cannot reach a terminal")
    assert error_lines(bare) == ["ERROR no-route: Graph g cannot reach a terminal"]
    only_warning = AgentGraphError(
        "x-failed", "It failed", [Diagnostic("w", "careful", "warning", "a.yaml", 2, 1)]
    )
    assert error_lines(only_warning) == [
        "ERROR x-failed: It failed",
        "a.yaml:2:1: warning: w: careful",
        "1 error(s), 1 warning(s)",
    ]
    same = AgentGraphError("c", "said once", [Diagnostic("c", "said once", path="f")])
    assert error_lines(same) == ["f: c: said once", "1 error(s), 0 warning(s)"]
    other_column = Diagnostic("c", "bad at line 2, column 9", path="f", line=2, column=4)
    other_line = Diagnostic("c", "bad at line 20", path="f", line=2)
    assert error_lines(AgentGraphError("c", "m", [other_column, other_line]))[1:3] == [
        "f:2:4: c: bad at line 2, column 9",
        "f:2: c: bad at line 20",
    ]


def test_json_envelopes_are_the_errors_own_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = provider(tmp_path, provider_yaml=PROVIDER.replace("1.0.0", "1.0.0 x: y"))
    code, _, err = run(["validate", "-m", str(manifest), "--format", "json"], capsys)
    assert code == 1
    doc = json.loads(err)
    rebuilt = AgentGraphError(
        doc["error"]["code"],
        doc["error"]["message"],
        [
            Diagnostic(
                d["code"],
                d["message"],
                d["severity"],
                d.get("path"),
                d["detail"].get("line"),
                d["detail"].get("column"),
            )
            for d in doc["error"]["diagnostics"]
        ],
    )
    expected = json.dumps(rebuilt.to_dict(), ensure_ascii=False, separators=(",", ":"))
    assert err == expected + "\n"


# --------------------------------------------------------------------------- 9. --help


def test_help_lists_each_command_by_its_whole_first_sentence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agent_graph.cli.app import commands, first_sentence

    for group in ([], ["run"], ["ir"], ["inspect"]):
        code, out, _ = run([*group, "--help"], capsys)
        assert code == 0
        listing = out.split("Commands:\n", 1)[1]
        assert "..." not in listing
        words = re.sub(r"-\s+", "-", " ".join(listing.split()))  # unwrap "route-\nid"
        found = [c for c in commands() if c.name == group[0]] if group else commands()
        subs = list(found[0].commands.values()) if group else found  # type: ignore[attr-defined]
        for command in subs:
            assert command.help is not None
            assert f"{command.name} {first_sentence(command.help)}" in words


def test_first_sentence_rules() -> None:
    from agent_graph.cli.app import first_sentence

    assert first_sentence("One thing. Another.") == "One thing."
    assert first_sentence("Uses provider.yaml, then\n  more words.\n\nDetail.") == (
        "Uses provider.yaml, then more words."
    )
    assert first_sentence("\b\nNo stop") == "No stop"


# --------------------------------------------------------------------------- 10. corpus claim


def test_the_corpus_claim_of_the_error_code_docs_holds() -> None:
    text = (DOCS / "error-codes.md").read_text(encoding="utf-8")
    claim = text.split("## Reading files", 1)[0].split("The codes `agc validate`", 1)[1]
    exceptions = set(re.findall(r"`([a-z0-9.-]+)`", claim.split("except", 1)[1].split("(")[0]))
    loading = text.split("## Reading files", 1)[1].split("## Evaluation and routing", 1)[0]
    codes = set(re.findall(r"^\| `([a-z0-9.-]+)` \|", loading, re.M))
    cases = [yaml.safe_load(p.read_text("utf-8")) for p in CORPUS.glob("*/expected.yaml")]
    pinned = {case["code"] for case in cases}
    assert exceptions
    assert exceptions <= codes
    assert sorted(codes - exceptions - pinned) == []  # every other loading code has a case
    assert sorted(exceptions & pinned) == []  # and the exceptions really have none
