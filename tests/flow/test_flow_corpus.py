"""Flow corpus: one tiny package per checklist code (A.1–A.78, docs/error-codes.md) and ours.

Each ``tests/flow_corpus/<case>/expected.yaml`` names the entry (relative to the case
directory), the code, its severity, the ``<package>/FLOW.md`` path and the 1-based
line/column the diagnostic points at (``null`` for entry errors), plus:

- ``also``: the other error codes the one change necessarily produces (the set of error
  codes returned must be exactly ``{code} | also``: no cascades);
- ``may_also``: codes a strict reading of another rule also finds for the same fault,
  which a validator may report or fold into ``code`` (the format does not say which);
- ``warnings``: warnings the change also (necessarily) produces;
- ``lenient``: run the case with ``lenient=True`` / ``--lenient``;
- ``lenient_passes``: the code is one that lenient mode turns off, so the case must
  check valid under ``--lenient``;
- ``symlinks``: ``{link: target}`` made in the temporary copy (symlinks are not kept in
  the repository);
- ``mode: list``: the code comes from discovery (``agc flow list``), not from check;
- ``valid: true``: a base package that must check valid with no diagnostic at all.

Every case is copied to a temporary directory and run from there (the entry is passed
relative to that directory, so an entry error carries that same relative path).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_graph.errors import AgentGraphError, Diagnostic
from cli_support import error_of, run

CORPUS = Path(__file__).parents[1] / "flow_corpus"
CASES = sorted(p for p in CORPUS.iterdir() if (p / "expected.yaml").is_file())
REPO = Path(__file__).resolve().parents[2]

#: The format's validation checklist (A.1–A.78, docs/flows.md "Rule numbers"), carried
#: as a fixture: item number, code and a one-line title, in item order.
APPENDIX_A = Path(__file__).parents[1] / "flow_spec_fixtures" / "appendix-a.yaml"
APPENDIX_A_ITEMS: list[dict[str, Any]] = yaml.safe_load(APPENDIX_A.read_text(encoding="utf-8"))
APPENDIX_A_CODES: tuple[str, ...] = tuple(item["code"] for item in APPENDIX_A_ITEMS)

#: Codes the implementation adds beyond Appendix A that a directory can show.
EXTRA_CORPUS_CODES = (
    "flow-fence-unterminated",
    "flow-heading-ignored",
    "flow-id-not-referenceable",
)

#: The codes lenient mode turns off (C.11, C.26).
LENIENT_OFF = {"flow-node-cannot-finish", "flow-command-unknown-field", "flow-child-reuse-first"}

ENTRY_CODES = {"flow-entry-invalid", "flow-entry-missing"}


def expected(case: Path) -> dict[str, Any]:
    value: dict[str, Any] = yaml.safe_load((case / "expected.yaml").read_text(encoding="utf-8"))
    return value


def materialize(case: Path, tmp_path: Path) -> Path:
    """A copy of the case under ``tmp_path`` with its declared symlinks made."""
    work = tmp_path / case.name
    shutil.copytree(case, work, symlinks=True)
    for link, target in (expected(case).get("symlinks") or {}).items():
        where = work / link
        where.parent.mkdir(parents=True, exist_ok=True)
        where.symlink_to(target, target_is_directory=True)
    return work


def flow_check(entry: str, *, lenient: bool = False) -> list[Diagnostic]:
    from agent_graph.flow import check

    return check(entry, lenient=lenient)


def cli_args(spec: dict[str, Any], *, lenient: bool | None = None) -> list[str]:
    args = ["flow", "check", spec["entry"]]
    if spec.get("lenient", False) if lenient is None else lenient:
        args.append("--lenient")
    return args


def errors_of(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error"]


def position(d: Diagnostic) -> tuple[str | None, int | None, int | None]:
    return (d.path, d.line, d.column)


def show(diagnostics: list[Diagnostic]) -> str:
    return "\n".join(f"{d.location()}: {d.severity} {d.code}: {d.message}" for d in diagnostics)


CHECK_CASES = [c for c in CASES if expected(c).get("mode") != "list"]
CODED_CASES = [c for c in CHECK_CASES if not expected(c).get("valid")]
ERROR_CASES = [c for c in CODED_CASES if expected(c)["severity"] == "error"]
WARNING_CASES = [c for c in CODED_CASES if expected(c)["severity"] == "warning"]
VALID_CASES = [c for c in CHECK_CASES if expected(c).get("valid")]
LIST_CASES = [c for c in CASES if expected(c).get("mode") == "list"]
LENIENT_PASS_CASES = [c for c in CODED_CASES if expected(c).get("lenient_passes")]


def ids(cases: list[Path]) -> list[str]:
    return [c.name for c in cases]


# ------------------------------------------------------------------ the corpus itself


def test_appendix_a_list_matches_the_docs() -> None:
    """The rule column of docs/error-codes.md is what code and tests cite as A.n, so it
    must give every checklist code its own item number, and no other code one."""
    assert [item["item"] for item in APPENDIX_A_ITEMS] == list(range(1, 79))
    assert all(item["title"].strip() for item in APPENDIX_A_ITEMS)
    text = (REPO / "docs" / "error-codes.md").read_text(encoding="utf-8")
    section = text.split("\n## Flow packages", 1)[1].split("\n## ", 1)[0]
    rules = dict(re.findall(r"^\| `([a-z0-9-]+)` \| (A\.\d+) \|", section, flags=re.MULTILINE))
    assert rules == {item["code"]: f"A.{item['item']}" for item in APPENDIX_A_ITEMS}


def test_every_appendix_a_code_has_a_corpus_case() -> None:
    assert len(APPENDIX_A_CODES) == 78
    assert len(set(APPENDIX_A_CODES)) == 78
    covered = {expected(c).get("code") for c in CASES}
    assert sorted(set(APPENDIX_A_CODES) - covered) == []
    assert sorted(set(EXTRA_CORPUS_CODES) - covered) == []


def test_corpus_cases_are_well_formed() -> None:
    keys = {
        "entry", "code", "path", "line", "column", "severity", "also", "may_also", "warnings",
        "lenient",
        "lenient_passes", "symlinks", "mode", "valid", "children", "note",
    }  # fmt: skip
    for case in CASES:
        spec = expected(case)
        assert set(spec) <= keys, case.name
        assert spec["note"], case.name
        assert (case / spec["entry"]).exists() or spec.get("code") == "flow-entry-missing", case
        if spec.get("valid") or spec.get("mode") == "list":
            continue
        assert spec["severity"] in ("error", "warning"), case.name
        assert spec["code"] not in spec.get("also", []), case.name
        if spec.get("lenient_passes"):
            assert spec["code"] in LENIENT_OFF, case.name
        if spec["code"] in ENTRY_CODES:
            assert spec["line"] is None, case.name
            assert spec["column"] is None, case.name
        else:
            assert isinstance(spec["line"], int), case.name
            assert isinstance(spec["column"], int), case.name
            assert (case / spec["path"]).is_file(), case.name


def test_every_corpus_code_is_catalogued() -> None:
    from agent_graph.error_codes import CODES

    codes = {expected(c)["code"] for c in CODED_CASES + LIST_CASES}
    codes |= {x for c in CODED_CASES for x in expected(c).get("also", [])}
    codes |= {x for c in CODED_CASES for x in expected(c).get("may_also", [])}
    assert sorted(c for c in codes if c not in CODES) == []


# ------------------------------------------------------------------ check()


@pytest.mark.parametrize("case", CODED_CASES, ids=ids(CODED_CASES))
def test_check_reports_the_code_at_its_position(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_graph.error_codes import CODES

    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    diagnostics = flow_check(spec["entry"], lenient=spec.get("lenient", False))
    listing = show(diagnostics)
    assert all(isinstance(d, Diagnostic) for d in diagnostics)
    assert all(d.code in CODES for d in diagnostics), listing
    want = (spec["path"], spec["line"], spec["column"])
    hits = [d for d in diagnostics if d.code == spec["code"]]
    assert hits, listing
    assert want in [position(d) for d in hits], listing
    hit = next(d for d in hits if position(d) == want)
    assert hit.severity == spec["severity"], listing
    assert hit.message
    if spec["code"] not in ENTRY_CODES:
        assert hit.detail.get("flow") == spec["path"].split("/")[0], hit
    error_codes = {d.code for d in errors_of(diagnostics)}
    warning_codes = {d.code for d in diagnostics if d.severity == "warning"}
    if spec["severity"] == "error":
        required = {spec["code"], *spec.get("also", [])}
        assert required <= error_codes <= required | set(spec.get("may_also", [])), listing
        assert warning_codes == set(spec.get("warnings", [])), listing
    else:
        assert error_codes == set(), listing
        assert warning_codes == {spec["code"], *spec.get("warnings", [])}, listing


@pytest.mark.parametrize("case", CODED_CASES, ids=ids(CODED_CASES))
def test_check_lists_diagnostics_in_document_order(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    diagnostics = flow_check(spec["entry"], lenient=spec.get("lenient", False))
    seen: list[str] = []
    for d in diagnostics:
        if d.path is not None and (not seen or seen[-1] != d.path):
            assert d.path not in seen, (
                f"{d.path} comes back after another file:\n{show(diagnostics)}"
            )
            seen.append(d.path)
    for path in seen:
        located = [(d.line, d.column or 0) for d in diagnostics if d.path == path and d.line]
        assert located == sorted(located), show(diagnostics)
    root = spec["entry"].split("/")[0] + "/FLOW.md"
    if root in seen:
        assert seen[0] == root, show(diagnostics)


@pytest.mark.parametrize("case", VALID_CASES, ids=ids(VALID_CASES))
def test_a_base_package_checks_valid(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    assert flow_check(spec["entry"]) == []
    assert flow_check(spec["entry"] + "/FLOW.md") == []
    code, out, err = run([*cli_args(spec), "--format", "json"], capsys)
    assert (code, err) == (0, ""), err
    document = json.loads(out)
    assert document["state"] == "valid"
    assert document["flow"] == spec["entry"]
    assert document["diagnostics"] == []
    assert isinstance(document["nodes"], int)
    assert document["nodes"] > 0
    assert document["children"] == spec.get("children", [])


# ------------------------------------------------------------------ compile()


@pytest.mark.parametrize("case", ERROR_CASES, ids=ids(ERROR_CASES))
def test_compile_raises_with_the_first_error(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_graph.flow import compile as flow_compile

    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    lenient = spec.get("lenient", False)
    errors = errors_of(flow_check(spec["entry"], lenient=lenient))
    with pytest.raises(AgentGraphError) as raised:
        flow_compile(spec["entry"], lenient=lenient)
    assert raised.value.code == errors[0].code
    got = [(d.code, position(d)) for d in raised.value.diagnostics if d.severity == "error"]
    assert got == [(d.code, position(d)) for d in errors]


@pytest.mark.parametrize("case", WARNING_CASES + VALID_CASES, ids=ids(WARNING_CASES + VALID_CASES))
def test_compile_accepts_a_package_with_only_warnings(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_graph.flow import compile as flow_compile

    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    assert flow_compile(spec["entry"]) is not None


# ------------------------------------------------------------------ the CLI


@pytest.mark.parametrize("case", ERROR_CASES, ids=ids(ERROR_CASES))
def test_cli_fails_with_the_first_error(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    diagnostics = flow_check(spec["entry"], lenient=spec.get("lenient", False))
    first = errors_of(diagnostics)[0]
    error = error_of(cli_args(spec), capsys)
    assert error["code"] == first.code
    if not spec.get("also") and not spec.get("may_also"):
        assert error["code"] == spec["code"]
    listed = [
        (
            d["code"],
            d.get("path"),
            d.get("detail", {}).get("line"),
            d.get("detail", {}).get("column"),
        )
        for d in error["diagnostics"]
        if d["severity"] == "error"
    ]
    assert (spec["code"], spec["path"], spec["line"], spec["column"]) in listed, listed
    assert {c for c, *_ in listed} == {d.code for d in errors_of(diagnostics)}


@pytest.mark.parametrize("case", ERROR_CASES, ids=ids(ERROR_CASES))
def test_cli_human_output_points_at_the_source(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    code, out, err = run(cli_args(spec), capsys)
    assert code == 1
    text = out + err
    assert "Traceback" not in text
    if spec["line"] is not None:
        assert f"{spec['path']}:{spec['line']}:{spec['column']}: {spec['code']}" in text, text
    else:
        assert spec["code"] in text, text


@pytest.mark.parametrize("case", WARNING_CASES, ids=ids(WARNING_CASES))
def test_cli_passes_with_the_warning(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    code, out, err = run([*cli_args(spec), "--format", "json"], capsys)
    assert (code, err) == (0, ""), err
    document = json.loads(out)
    assert document["state"] == "valid"
    found = [
        (d["code"], d["severity"], d.get("path"), d["detail"]["line"], d["detail"]["column"])
        for d in document["diagnostics"]
    ]
    want = (spec["code"], "warning", spec["path"], spec["line"], spec["column"])
    assert want in found, found


@pytest.mark.parametrize("case", LENIENT_PASS_CASES, ids=ids(LENIENT_PASS_CASES))
def test_lenient_mode_turns_the_code_off(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    assert errors_of(flow_check(spec["entry"], lenient=True)) == []
    code, out, err = run([*cli_args(spec, lenient=True), "--format", "json"], capsys)
    assert (code, err) == (0, ""), err
    assert json.loads(out)["state"] == "valid"


@pytest.mark.parametrize("case", LIST_CASES, ids=ids(LIST_CASES))
def test_discovery_case(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    error = error_of(["flow", "list", spec["entry"]], capsys)
    assert error["code"] == spec["code"]


STRICT_CASES = [
    c
    for c in ERROR_CASES
    if not expected(c).get("lenient") and expected(c)["code"] not in LENIENT_OFF
]


@pytest.mark.parametrize("case", STRICT_CASES, ids=ids(STRICT_CASES))
def test_lenient_mode_turns_off_nothing_else(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A strict error case about any other code fails the same way under lenient mode."""
    spec = expected(case)
    monkeypatch.chdir(materialize(case, tmp_path))
    strict = errors_of(flow_check(spec["entry"]))
    lenient = errors_of(flow_check(spec["entry"], lenient=True))
    assert [(d.code, position(d)) for d in lenient if d.code not in LENIENT_OFF] == [
        (d.code, position(d)) for d in strict if d.code not in LENIENT_OFF
    ]
    assert spec["code"] in {d.code for d in lenient}
