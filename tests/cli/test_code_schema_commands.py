"""``agc code list|locate`` and ``agc schema list|path|extract``.

Golden JSON and human output on the examples with a Code Catalog (weekly-report,
review-desk) and on one without (release-train); ``Program.codes`` and
``Program.locate_code``; misuse codes; the schema names (the reference's, with its
``resource-location`` split into the three 0.3 envelopes), ``extract`` refusing to
replace a different file unless ``--force``; every listed schema is valid JSON Schema
2020-12. The last section compares with the Node reference CLI; it runs only when
``AGC_REFERENCE_CLI`` is set (``AGC_REFERENCE_DIR`` adds the reference's examples).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_graph import compile_provider
from agent_graph.documents import schema as S
from cli_support import error_of, ok_json, run
from slow_support import fast_sample

TESTS = Path(__file__).resolve().parents[1]
EXAMPLES = TESTS.parent / "examples"
WEEKLY = EXAMPLES / "weekly-report"
DESK = EXAMPLES / "review-desk"
TRAIN = EXAMPLES / "release-train"  # no Code Catalog

UNVERIFIED_DOC = WEEKLY / "resources" / "diagnostics" / "publication-unverified.md"
UNVERIFIED_DIGEST = "sha256:d14d25ca27937d1dff60e6f6564425bb54679264901cbccbaba1e02c2c626512"

WEEKLY_CODES: list[dict[str, Any]] = [
    {
        "code": "route.report.draft",
        "kind": "route-reason",
        "summary": "This week's report has no recorded draft digest yet.",
    },
    {
        "code": "route.report.approval-required",
        "kind": "route-reason",
        "summary": "The draft is ready and needs an approver before it goes out.",
    },
    {
        "code": "route.report.publish",
        "kind": "route-reason",
        "summary": "The report is approved and can be published.",
    },
    {
        "code": "route.report.check-publication",
        "kind": "route-reason",
        "summary": "Publishing claimed success but left no publication URL; verify it.",
    },
    {
        "code": "report.publication-unverified",
        "kind": "diagnostic",
        "severity": "warning",
        "summary": "A publication run finished without recording where the report went.",
        "document": "resources/diagnostics/publication-unverified.md",
    },
]

DESK_CODES: list[dict[str, Any]] = [
    {
        "code": "route.desk.collect",
        "kind": "route-reason",
        "summary": "A submission has arrived and has not been collected yet.",
    },
    {
        "code": "route.desk.editorial-review",
        "kind": "route-reason",
        "summary": "The collected submission needs an editorial verdict.",
    },
    {
        "code": "route.desk.legal-signoff",
        "kind": "route-reason",
        "summary": "The accepted submission needs a legal sign-off before it is merged.",
    },
    {
        "code": "route.desk.merge",
        "kind": "route-reason",
        "summary": "The submission is accepted and signed off; merge it.",
    },
    {
        "code": "route.desk.return",
        "kind": "route-reason",
        "summary": "The submission was turned down; tell the author why.",
    },
]

#: The reference CLI's schema names (0.2.6, its ``schemaTypes()``).
REFERENCE_NAMES = [
    "action",
    "bundle",
    "code-catalog",
    "code-location",
    "error",
    "evaluation",
    "graph",
    "provider",
    "resource",
    "resource-location",
    "resource-read-receipts",
    "route",
    "run",
    "skill-binding",
    "test-case",
]
LOCATION_NAMES = [
    "resource-location.file",
    "resource-location.graph-action",
    "resource-location.host-action",
]


def m(example: Path, *args: str) -> list[str]:
    return ["-m", str(example / "provider.yaml"), *args]


# -- code list ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("example", "codes"), [(WEEKLY, WEEKLY_CODES), (DESK, DESK_CODES)], ids=["weekly", "desk"]
)
def test_code_list_json(
    example: Path, codes: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    doc = ok_json(m(example, "code", "list"), capsys)
    assert list(doc) == ["provider", "catalog", "codes"]
    assert doc == {
        "provider": f"example.{example.name}",
        "catalog": str(example / "codes.yaml"),
        "codes": codes,
    }


@pytest.mark.parametrize(
    ("example", "codes"), [(WEEKLY, WEEKLY_CODES), (DESK, DESK_CODES)], ids=["weekly", "desk"]
)
def test_code_list_human(
    example: Path, codes: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(m(example, "code", "list"), capsys)
    assert (code, err) == (0, "")
    assert out == "".join(f"{c['code']} [{c['kind']}] {c['summary']}\n" for c in codes)


def test_code_list_human_golden_weekly(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(m(WEEKLY, "code", "list"), capsys)
    assert out.splitlines()[0] == (
        "route.report.draft [route-reason] This week's report has no recorded draft digest yet."
    )
    assert out.splitlines()[-1] == (
        "report.publication-unverified [diagnostic] "
        "A publication run finished without recording where the report went."
    )


def test_code_list_without_a_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok_json(m(TRAIN, "code", "list"), capsys)
    assert doc == {"provider": "example.release-train", "codes": []}
    assert run(m(TRAIN, "code", "list"), capsys) == (0, "\n", "")


def test_code_list_from_a_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = tmp_path / "bundle"
    assert run([*m(WEEKLY, "build", str(bundle)), "--format", "json"], capsys)[0] == 0
    doc = ok_json(["-m", str(bundle / "manifest.json"), "code", "list"], capsys)
    assert doc == {
        "provider": "example.weekly-report",
        "catalog": str(bundle / "codes.yaml"),
        "codes": WEEKLY_CODES,
    }
    location = ok_json(
        ["-m", str(bundle / "manifest.json"), "code", "locate", "report.publication-unverified"],
        capsys,
    )
    assert location["document"]["filePath"] == str(
        bundle / "resources" / "diagnostics" / "publication-unverified.md"
    )
    assert location["document"]["digest"] == UNVERIFIED_DIGEST


# -- code locate --------------------------------------------------------------------------


UNVERIFIED_LOCATION = {
    "schema": "agent-graph.code-location.v1",
    "provider": "example.weekly-report",
    "code": "report.publication-unverified",
    "kind": "diagnostic",
    "summary": "A publication run finished without recording where the report went.",
    "severity": "warning",
    "document": {
        "schema": "agent-graph.resource-location.file.v1",
        "id": "diagnostic.report.publication-unverified",
        "kind": "diagnostic",
        "mediaType": "text/markdown",
        "digest": UNVERIFIED_DIGEST,
        "filePath": str(UNVERIFIED_DOC),
    },
}


def test_code_locate_with_a_document(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok_json(m(WEEKLY, "code", "locate", "report.publication-unverified"), capsys)
    assert doc == UNVERIFIED_LOCATION
    assert list(doc) == list(UNVERIFIED_LOCATION)
    assert S.validate("code-location", doc, path="stdout") is None
    code, out, err = run(m(WEEKLY, "code", "locate", "report.publication-unverified"), capsys)
    assert (code, err) == (0, "")
    assert out == (
        "report.publication-unverified [diagnostic]\n"
        "A publication run finished without recording where the report went.\n"
        f"Document: {UNVERIFIED_DOC}\n"
    )


def test_code_locate_without_a_document(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok_json(m(DESK, "code", "locate", "route.desk.merge"), capsys)
    assert doc == {
        "schema": "agent-graph.code-location.v1",
        "provider": "example.review-desk",
        "code": "route.desk.merge",
        "kind": "route-reason",
        "summary": "The submission is accepted and signed off; merge it.",
    }
    assert S.validate("code-location", doc, path="stdout") is None
    assert run(m(DESK, "code", "locate", "route.desk.merge"), capsys) == (
        0,
        "route.desk.merge [route-reason]\nThe submission is accepted and signed off; merge it.\n",
        "",
    )


@pytest.mark.parametrize(
    ("example", "provider"),
    [(WEEKLY, "example.weekly-report"), (TRAIN, "example.release-train")],
    ids=["unknown-code", "no-catalog"],
)
def test_code_locate_missing(
    example: Path, provider: str, capsys: pytest.CaptureFixture[str]
) -> None:
    error = error_of(m(example, "code", "locate", "route.nope"), capsys)
    assert error == {
        "code": "code-missing",
        "message": f"Provider {provider} has no catalog entry for route.nope",
        "diagnostics": [],
    }
    code, out, err = run(m(example, "code", "locate", "route.nope"), capsys)
    assert (code, out) == (1, "")
    assert err == f"ERROR code-missing: Provider {provider} has no catalog entry for route.nope\n"


def test_program_codes_and_locate_code() -> None:
    program = compile_provider(WEEKLY / "provider.yaml")
    assert program.has_catalog
    assert [e.code for e in program.codes()] == [c["code"] for c in WEEKLY_CODES]
    assert [e.raw for e in program.codes()] == WEEKLY_CODES
    assert program.locate_code("report.publication-unverified").to_dict() == UNVERIFIED_LOCATION
    located = program.locate_code("route.report.draft")
    assert (located.severity, located.document) == (None, None)
    train = compile_provider(TRAIN / "provider.yaml")
    assert (train.has_catalog, train.codes()) == (False, ())


@pytest.mark.parametrize(
    "args",
    [["code"], ["code", "locate"], ["code", "list", "extra"], ["code", "find", "x"]],
    ids=["no-subcommand", "no-code", "extra-argument", "unknown-subcommand"],
)
def test_code_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(m(WEEKLY, *args), capsys)
    assert (code, out) == (2, "")


def test_code_misuse_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([*m(WEEKLY, "code", "list"), "--format", "xml"], capsys)
    assert code == 2
    assert "format-invalid" in err
    missing = error_of(["-m", str(tmp_path / "none.yaml"), "code", "list"], capsys)
    assert missing["code"] == "file-missing"


# -- schema list / path -------------------------------------------------------------------


def test_schema_list(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok_json(["schema", "list"], capsys)
    assert doc == {"root": str(S.schema_root()), "schemas": list(S.SCHEMA_NAMES)}
    assert run(["schema", "list"], capsys) == (0, "".join(f"{n}\n" for n in S.SCHEMA_NAMES), "")


def test_schema_names_cover_the_reference_and_0_3() -> None:
    names = set(S.SCHEMA_NAMES)
    assert set(REFERENCE_NAMES) - names == {"resource-location"}
    assert set(LOCATION_NAMES) <= names
    assert {
        "resource.file",
        "resource.graph-action",
        "resource.host-action",
        "host-action-result",
        "inspect",
        "materialization",
    } <= names


def test_every_listed_schema_has_its_identity_and_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ok_json(["schema", "list"], capsys)["schemas"]:
        doc = ok_json(["schema", "path", name], capsys)
        assert doc == {"name": name, "path": str(S.schema_root() / f"{name}.schema.json")}
        assert run(["schema", "path", name], capsys) == (0, doc["path"] + "\n", "")
        document = json.loads(Path(doc["path"]).read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(document)
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert document["$id"] == f"https://agent-graph.dev/schemas/{name}.schema.json"


def test_materialization_receipt_schema() -> None:
    receipt = {
        "schema": "agent-graph.materialization.v1",
        "provider": "example.context-views",
        "resource": "status.current",
        "revision": "sha256:" + "ab" * 32,
        "digest": "sha256:" + "cd" * 32,
        "mediaType": "application/json",
        "file": "/cache/" + "cd" * 32 + ".json",
    }
    assert S.validate("materialization", receipt, path="r.json") is None
    for key in receipt:
        partial = {k: v for k, v in receipt.items() if k != key}
        assert S.validate("materialization", partial, path="r.json") is not None
    bad = {**receipt, "revision": "sha256:XYZ"}
    assert S.validate("materialization", bad, path="r.json") is not None


@pytest.mark.parametrize("command", [["path"], ["extract", "--output", "x.json"]])
def test_schema_unknown_name(
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    error = error_of(["schema", command[0], "grph", *command[1:]], capsys)
    assert error["code"] == "schema-type-unknown"
    assert error["message"] == "Unknown schema type: grph (did you mean graph?)"
    error = error_of(["schema", command[0], "resource-location", *command[1:]], capsys)
    assert error["code"] == "schema-type-unknown"
    assert error["message"].startswith("Unknown schema type: resource-location; 0.3 split it")
    assert all(name in error["message"] for name in LOCATION_NAMES)
    error = error_of(["schema", command[0], "zzzz", *command[1:]], capsys)
    assert error["message"] == "Unknown schema type: zzzz"
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    "args",
    [["schema"], ["schema", "path"], ["schema", "extract", "graph"], ["schema", "extract"]],
    ids=["no-subcommand", "no-name", "no-output", "nothing"],
)
def test_schema_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(args, capsys)
    assert (code, out) == (2, "")


# -- schema extract -----------------------------------------------------------------------


def _two_space(name: str) -> bytes:
    return (json.dumps(S.schema_document(name), indent=2, ensure_ascii=False) + "\n").encode()


def test_schema_extract_every_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in S.SCHEMA_NAMES:
        target = tmp_path / "out" / f"{name}.json"  # the directory is created
        doc = ok_json(["schema", "extract", name, "--output", str(target)], capsys)
        assert doc == {"name": name, "path": str(target)}
        assert target.read_bytes() == _two_space(name)
        extracted = json.loads(target.read_text(encoding="utf-8"))
        assert extracted == S.schema_document(name)
        Draft202012Validator.check_schema(extracted)
        assert target.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"{n}.json" for n in S.SCHEMA_NAMES
    )  # nothing left behind


def test_schema_extract_relative_output_and_human(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(["schema", "extract", "run", "--output", "run.json"], capsys) == (
        0,
        f"{tmp_path / 'run.json'}\n",
        "",
    )


def test_schema_extract_refuses_other_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "graph.json"
    target.write_text('{"mine": true}\n')
    error = error_of(["schema", "extract", "graph", "--output", str(target)], capsys)
    assert error["code"] == "schema-target-exists"
    assert str(target) in error["message"]
    assert "--force" in error["message"]
    assert target.read_text() == '{"mine": true}\n'
    code, out, err = run(["schema", "extract", "graph", "--output", str(target)], capsys)
    assert (code, out) == (1, "")
    assert err.startswith("ERROR schema-target-exists: Refusing to replace ")
    target.chmod(0o600)
    doc = ok_json(["schema", "extract", "graph", "--output", str(target), "--force"], capsys)
    assert doc == {"name": "graph", "path": str(target)}
    assert target.read_bytes() == _two_space("graph")
    assert target.stat().st_mode & 0o777 == 0o600  # a replaced file keeps its mode
    assert [p.name for p in tmp_path.iterdir()] == ["graph.json"]


def test_schema_extract_identical_file_is_fine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "route.json"
    target.write_bytes(_two_space("route"))
    os.utime(target, (1_000_000, 1_000_000))
    doc = ok_json(["schema", "extract", "route", "--output", str(target)], capsys)
    assert doc == {"name": "route", "path": str(target)}
    assert target.read_bytes() == _two_space("route")
    assert target.stat().st_mtime == 1_000_000  # left as it was


def test_schema_extract_refuses_a_directory_even_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "d").mkdir()
    for extra in ([], ["--force"]):
        args = ["schema", "extract", "graph", "--output", str(tmp_path / "d"), *extra]
        error = error_of(args, capsys)
        assert error["code"] == "schema-target-exists"
        assert "not a regular file" in error["message"]
    assert list((tmp_path / "d").iterdir()) == []


# -- parity with the Node reference CLI ---------------------------------------------------

REF_CLI = os.environ.get("AGC_REFERENCE_CLI")
REF_DIR = os.environ.get("AGC_REFERENCE_DIR")
_needs_reference = pytest.mark.skipif(
    not (REF_CLI and shutil.which("node")), reason="reference CLI not configured"
)
# The reference (0.2.6) has one location identity; ours are the 0.3.1 split envelopes.
_LEGACY_LOCATION = "agent-graph.resource-location.v1"


def _reference_providers() -> list[Path]:
    ours = [WEEKLY, DESK, TRAIN]  # context-views uses 0.3-only resources
    if not REF_DIR:
        return ours
    return ours + sorted(p.parent for p in Path(REF_DIR, "examples").glob("*/provider.yaml"))


def _reference(args: list[str], cwd: Path, fmt: str = "json") -> tuple[int, str]:
    assert REF_CLI is not None
    done = subprocess.run(
        ["node", REF_CLI, *args, "--format", fmt],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    return done.returncode, done.stdout if done.returncode == 0 else done.stderr


def _legacy(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _legacy(v) for k, v in value.items()}
        if str(out.get("schema", "")).startswith("agent-graph.resource-location."):
            out["schema"] = _LEGACY_LOCATION
        return out
    if isinstance(value, list):
        return [_legacy(v) for v in value]
    return value


def _without_root(value: Any, root: Path) -> Any:
    """``value`` with the Provider's absolute root replaced (the only absolute paths)."""
    text = json.dumps(value).replace(json.dumps(str(root))[1:-1], "<root>")
    return json.loads(text)


@_needs_reference
@pytest.mark.reference
@pytest.mark.parametrize(
    "provider",
    fast_sample(_reference_providers(), lambda p: p.name == "release-train"),
    ids=lambda p: p.name,
)
def test_code_commands_match_the_reference(
    provider: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = m(provider, "code", "list")
    ref_code, ref_text = _reference(args, tmp_path)
    code, out, err = run([*args, "--format", "json"], capsys)
    assert code == ref_code == 0, (err, ref_text)
    ours, theirs = json.loads(out), json.loads(ref_text)
    assert _without_root(ours, provider) == _without_root(theirs, provider)
    assert run(args, capsys)[1] == _reference(args, tmp_path, "human")[1]
    for name in [c["code"] for c in theirs["codes"]] + ["route.no-such-code"]:
        args = m(provider, "code", "locate", name)
        ref_code, ref_text = _reference(args, tmp_path)
        code, out, err = run([*args, "--format", "json"], capsys)
        assert code == ref_code
        if code:
            assert json.loads(err)["error"] == json.loads(ref_text)["error"]
            continue
        mine = _without_root(_legacy(json.loads(out)), provider)
        assert mine == _without_root(json.loads(ref_text), provider)
        assert run(args, capsys)[1] == _reference(args, tmp_path, "human")[1]


@_needs_reference
@pytest.mark.reference
def test_schema_names_match_the_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, ref_text = _reference(["schema", "list"], tmp_path)
    theirs = json.loads(ref_text)["schemas"]
    assert theirs == REFERENCE_NAMES
    ours = ok_json(["schema", "list"], capsys)["schemas"]
    assert set(theirs) - set(ours) == {"resource-location"}
    ref_code, ref_err = _reference(["schema", "path", "nope"], tmp_path)
    assert ref_code == 1
    assert error_of(["schema", "path", "nope"], capsys) == json.loads(ref_err)["error"]
