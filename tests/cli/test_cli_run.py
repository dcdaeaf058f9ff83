"""``agc run …``: options, outputs (JSON and human lines), codes, and docs/runs.md's loop.

The page's shell and Python examples are run as written. The last section compares
with the Node reference CLI; it runs only when ``AGC_REFERENCE_CLI`` is set.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cli_support import error_of, ok_json, run

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
WEEKLY = ROOT / "examples" / "weekly-report"
MANIFEST = str(WEEKLY / "provider.yaml")
SKILL = str(WEEKLY / "skills" / "weekly-report" / "SKILL.md")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def lines(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, out, err = run(args, capsys)
    assert code == 0, err
    return out.splitlines()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def start(capsys: pytest.CaptureFixture[str], *extra: str, state: str = "run.json") -> str:
    ok_json(["run", "start", "report", "-m", MANIFEST, "--state", state, *extra], capsys)
    return state


# -- start --------------------------------------------------------------------------------


def test_start(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "facts.json").write_text('{"report": {"digest": "sha256:1f"}}', encoding="utf-8")
    args = ["run", "start", "report", "-m", MANIFEST, "--state", "runs/r.json", "--facts"]
    doc = ok_json([*args, "@facts.json", "--authority", "z.z", "a.a", "z.z"], capsys)
    assert list(doc) == [
        "schema", "id", "provider", "graph", "entry", "workspace", "createdAt", "updatedAt",
        "facts", "outcomes", "authorities", "events",
    ]  # fmt: skip
    assert doc["provider"] == "example.weekly-report"
    assert (doc["graph"], doc["entry"], doc["workspace"]) == ("report", "default", str(here))
    assert doc["authorities"] == ["a.a", "z.z"]
    assert doc["facts"] == {"report": {"digest": "sha256:1f"}}
    assert doc["events"] == [{"sequence": 1, "at": doc["createdAt"], "type": "run.started"}]
    assert TIME.match(doc["createdAt"])
    assert doc["updatedAt"] == doc["createdAt"]
    assert json.loads((here / "runs" / "r.json").read_text(encoding="utf-8")) == doc
    text = lines(
        ["run", "start", "report", "-m", MANIFEST, "--state", "h.json", "--workspace", "ws"],
        capsys,
    )
    run_id = json.loads((here / "h.json").read_text(encoding="utf-8"))["id"]
    assert text == [
        f"Started run {run_id}",
        f"State: {here / 'h.json'}",
        f"Next: agc run status --state {here / 'h.json'} -m {MANIFEST}",
    ]
    assert json.loads((here / "h.json").read_text(encoding="utf-8"))["workspace"] == str(
        here / "ws"
    )


def test_start_through_a_skill_binding(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok_json(["run", "start", "--skill", SKILL, "--state", "r.json"], capsys)
    assert (doc["graph"], doc["entry"]) == ("report", "default")
    error = error_of(["run", "start", "other", "--skill", SKILL, "--state", "s.json"], capsys)
    assert error["code"] == "skill-graph-conflict"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["nope"], "graph-missing", "Provider example.weekly-report has no graph nope"),
        (["report", "--entry", "x"], "entry-missing", "Graph report has no entry x"),
        (["report", "--facts", "[1]"], "json-object-required", "facts must be a JSON object"),
        (["report", "--facts", "{"], "json-invalid", None),
    ],
)
def test_start_errors(
    here: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: str,
    message: str | None,
) -> None:
    error = error_of(["run", "start", *args, "-m", MANIFEST, "--state", "r.json"], capsys)
    assert error["code"] == code
    if message is not None:
        assert error["message"] == message
    assert not (here / "r.json").exists()


def test_start_without_a_graph(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Provider of one Graph has it taken; of several, the refusal lists them."""
    doc = ok_json(["run", "start", "-m", MANIFEST, "--state", "r.json"], capsys)
    assert (doc["graph"], doc["entry"]) == ("report", "default")
    train = str(ROOT / "examples" / "release-train" / "provider.yaml")
    error = error_of(["run", "start", "-m", train, "--state", "s.json"], capsys)
    assert error["code"] == "graph-selection-missing"
    assert error["message"].endswith("name one of the Provider's Graphs: train, verify, ship")
    assert not (here / "s.json").exists()


def test_start_refuses_an_existing_file(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "r.json").write_text("mine\n", encoding="utf-8")
    error = error_of(["run", "start", "report", "-m", MANIFEST, "--state", "r.json"], capsys)
    assert error == {
        "code": "run-target-exists",
        "message": f"Run start refuses to replace an existing path: {here / 'r.json'}",
        "diagnostics": [],
    }
    assert (here / "r.json").read_text(encoding="utf-8") == "mine\n"


# -- status -------------------------------------------------------------------------------


def test_status_evaluates_the_run(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = start(capsys, "--facts", '{"report":{"digest":"sha256:1f"}}')
    ok_json(["run", "record", "report/draft", "completed", "--state", state], capsys)
    doc = ok_json(["run", "status", "-m", MANIFEST, "--state", state], capsys)
    stored = json.loads((here / state).read_text(encoding="utf-8"))
    assert doc["run"] == {
        "id": stored["id"],
        "state": str(here / state),
        "updatedAt": stored["updatedAt"],
    }
    evaluated = ok_json(["evaluate", "report", "-m", MANIFEST, "--state", state], capsys)
    assert doc["evaluation"] == evaluated
    primary = evaluated["primaryRoute"]
    assert primary["node"] == "approve"
    text = lines(["run", "status", "-m", MANIFEST, "--state", state], capsys)
    assert text[:5] == [
        f"Run: {stored['id']}",
        "State: waiting-user",
        "Next: approve",
        f"Reason: {primary['reasonCode']}",
        f"Route: {primary['routeId']}",
    ]
    assert "Availability: requires-user" in text
    assert text[-1] == (
        f"Resolve it: agc route report {primary['routeId']} --revision {evaluated['revision']} "
        f"--state {here / state} -m {MANIFEST}"
    )


def test_status_of_another_entry_names_it(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train = str(ROOT / "examples" / "release-train" / "provider.yaml")
    args = ["run", "start", "verify", "--entry", "smoke", "-m", train, "--state", "v.json"]
    ok_json(args, capsys)
    doc = ok_json(["run", "status", "-m", train, "--state", "v.json"], capsys)["evaluation"]
    text = lines(["run", "status", "-m", train, "--state", "v.json"], capsys)
    assert text[-1] == (
        f"Resolve it: agc route verify {doc['primaryRoute']['routeId']} --revision "
        f"{doc['revision']} --entry smoke --state {here / 'v.json'} -m {train}"
    )
    assert ok_json(shlex.split(text[-1].split(": ", 1)[1])[1:], capsys)["node"] == "smoke-test"


def test_status_of_a_run_through_a_skill(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok_json(["run", "start", "--skill", SKILL, "--state", "r.json"], capsys)
    doc = ok_json(["run", "status", "--skill", SKILL, "--state", "r.json"], capsys)["evaluation"]
    text = lines(["run", "status", "--skill", SKILL, "--state", "r.json"], capsys)
    assert text[-1] == (  # the binding selects the Run's Graph: the route id alone
        f"Resolve it: agc route {doc['primaryRoute']['routeId']} --revision {doc['revision']} "
        f"--state {here / 'r.json'} --skill {SKILL}"
    )
    assert ok_json(shlex.split(text[-1].split(": ", 1)[1])[1:], capsys)["node"] == "draft"


def test_status_of_a_run_with_an_unknown_entry(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = start(capsys)
    doc = json.loads((here / state).read_text(encoding="utf-8"))
    doc["entry"] = "nope"  # a Run the reference started (it checks no entry)
    (here / state).write_text(json.dumps(doc), encoding="utf-8")
    evaluation = ok_json(["run", "status", "-m", MANIFEST, "--state", state], capsys)
    assert evaluation["evaluation"]["statusCode"] == "error"  # the reference's document
    code, out, err = run(["run", "status", "-m", MANIFEST, "--state", state], capsys)
    assert (code, out) == (1, "")
    assert err.splitlines() == ["ERROR entry-missing: Graph report has no entry nope"]


def test_status_of_a_finished_run(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    facts = {"report": {"digest": "d", "approved": True}, "publication": {"url": "u"}}
    state = start(capsys, "--facts", json.dumps(facts))
    text = lines(["run", "status", "-m", MANIFEST, "--state", state], capsys)
    assert text[1:] == ["State: complete", "Outcome: completed"]


def test_status_refuses_another_providers_run(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = start(capsys)
    doc = json.loads((here / state).read_text(encoding="utf-8"))
    doc["provider"] = "example.other"
    (here / state).write_text(json.dumps(doc), encoding="utf-8")
    error = error_of(["run", "status", "-m", MANIFEST, "--state", state], capsys)
    assert error["code"] == "run-provider-mismatch"
    assert error["message"] == f"Run {doc['id']} targets example.other, not example.weekly-report"
    assert error_of(["route", "report", "-m", MANIFEST, "--state", state], capsys) == error


def test_status_without_a_provider_names_the_runs_provider(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No -m, no ./provider.yaml: the Run names its Provider; no `agc init` hint, which
    would start an unrelated Provider here."""
    state = start(capsys)
    assert not (here / "provider.yaml").exists()
    code, out, err = run(["run", "status", "--state", state], capsys)
    assert code == 1
    assert out == ""
    assert "agc init" not in err
    # the hint's path is below the working directory: written relative to it (issue 27)
    command = f"agc run status --state {(here / state).relative_to(here)} -m MANIFEST"
    assert err.splitlines()[0] == (
        "provider.yaml: file-missing: Run "
        f"{json.loads((here / state).read_text('utf-8'))['id']} is of Provider "
        f"example.weekly-report and there is no ./provider.yaml here; add that Provider's "
        f"manifest: {command}"
    )
    words = shlex.split(command.replace("MANIFEST", MANIFEST))[1:]  # filled in, it runs
    code, out, _ = run(words, capsys)
    assert code == 0, out


# -- record, facts, authority -------------------------------------------------------------


def test_record(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = start(capsys)
    (here / "detail.yaml").write_text("words: 120\n", encoding="utf-8")
    args = ["run", "record", "report/draft", "partial", "--state", state, "--detail"]
    doc = ok_json([*args, "@detail.yaml"], capsys)
    assert doc["outcomes"]["report/draft"]["detail"] == {"words": 120}
    assert doc["events"][-1]["node"] == "report/draft"
    doc = ok_json([*args, "null"], capsys)
    assert doc["events"][-1]["detail"] is None
    # no -m and no ./provider.yaml: the key's form is checked, and the hint says what is missing
    assert lines(["run", "record", "report/draft", "completed", "--state", state], capsys) == [
        "Recorded report/draft: completed",
        "Evaluate the run again; recorded outcomes are not assumed to prove facts.",
        "Checked only that the key starts with report/: give -m or --skill to check it "
        "against Graph report's nodes.",
        f"Next: evaluate the run with agc run status --state {here / state}, adding "
        "-m MANIFEST or --skill SKILL.md for Provider example.weekly-report "
        "(there is no ./provider.yaml here)",
    ]
    args = ["run", "record", "report/draft", "completed", "-m", MANIFEST, "--state", state]
    assert lines(args, capsys) == [
        "Recorded report/draft: completed",
        "Evaluate the run again; recorded outcomes are not assumed to prove facts.",
        f"Next: agc run status --state {here / state} -m {MANIFEST}",
    ]
    args = ["run", "record", "report/draft", "completed", "--skill", SKILL, "--state", state]
    assert lines(args, capsys)[-1] == f"Next: agc run status --state {here / state} --skill {SKILL}"
    events = ok_json(["run", "events", "--state", state], capsys)["events"]
    assert [e["sequence"] for e in events] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["report/draft", "done"], "outcome-invalid"),
        (["draft", "completed"], "state-key-invalid"),
        (["draft", "completed", "-m", MANIFEST], "state-key-invalid"),
        (["report/drfat", "completed", "-m", MANIFEST], "state-key-invalid"),
        (["report/draft>x/y", "completed", "-m", MANIFEST], "state-key-invalid"),
        (["report/draft", "completed", "-m", "missing/provider.yaml"], "file-missing"),
        (["report/draft", "completed", "--detail", "{"], "json-invalid"),
    ],
)
def test_record_errors_leave_the_run_alone(
    here: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: str
) -> None:
    state = start(capsys)
    before = (here / state).read_bytes()
    error = error_of(["run", "record", *args, "--state", state], capsys)
    assert error["code"] == code
    if code == "outcome-invalid":
        assert error["message"].startswith("Unsupported outcome: done")
    assert (here / state).read_bytes() == before


def test_facts_and_authority(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = start(capsys, "--facts", '{"a":1,"b":{"c":2}}', "--authority", "x")
    run_id = json.loads((here / state).read_text(encoding="utf-8"))["id"]
    doc = ok_json(["run", "facts", "--state", state, "--set", '{"b":{"d":3}}'], capsys)
    assert doc["facts"] == {"a": 1, "b": {"d": 3}}
    assert doc["events"][-1]["type"] == "facts.updated"
    text = lines(["run", "facts", "--state", state, "--set", '{"z":0}', "--replace"], capsys)
    assert text == [f"Updated facts for run {run_id}"]
    assert json.loads((here / state).read_text(encoding="utf-8"))["facts"] == {"z": 0}
    error = error_of(["run", "facts", "--state", state, "--set", '"x"'], capsys)
    assert error["code"] == "json-object-required"
    assert lines(["run", "authority", "--state", state, "--set", "b.b", "a.a"], capsys) == [
        "Authorities: a.a, b.b"
    ]
    assert lines(["run", "authority", "--state", state], capsys) == ["Authorities: <none>"]


def test_record_checks_the_graphs_state_keys(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = start(capsys)
    args = ["run", "record", "report/drfat", "completed", "-m", MANIFEST, "--state", state]
    error = error_of(args, capsys)
    assert error["message"] == (
        "'report/drfat' is not a state key of Graph report in Provider example.weekly-report "
        "(did you mean report/draft?): record the route's afterAction.recordNode exactly"
    )
    code, out, err = run(args, capsys)
    assert (code, out) == (1, "")
    assert err.splitlines() == [f"ERROR state-key-invalid: {error['message']}"]
    # keys of called Graphs, under their call paths
    train = str(ROOT / "examples" / "release-train" / "provider.yaml")
    ok_json(["run", "start", "train", "-m", train, "--state", "t.json"], capsys)
    record = ["run", "record", "-m", train, "--state", "t.json"]
    for key in ("train/plan", "train/verify-candidate", "train/verify-candidate>verify/unit-tests",
                "train/verify-live>verify/smoke-test"):  # fmt: skip
        ok_json([*record, key, "completed"], capsys)
    for key in ("train/plan>verify/unit-tests", "train/verify-candidate>verify/nope",
                "train/verify-candidate>ship/tag", "train/verify-candidate>verify/"):  # fmt: skip
        assert error_of([*record, key, "completed"], capsys)["code"] == "state-key-invalid"
    other = str(ROOT / "examples" / "review-desk" / "provider.yaml")
    error = error_of(["run", "record", "report/draft", "completed", "-m", other, "--state", state],
                     capsys)  # fmt: skip
    assert error["code"] == "run-provider-mismatch"


def _copy_provider(example: str, into: Path) -> None:
    shutil.copytree(ROOT / "examples" / example, into, dirs_exist_ok=True)


def test_record_uses_a_provider_yaml_of_the_runs_provider(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_provider("weekly-report", here)  # ./provider.yaml is the Run's Provider
    ok_json(["run", "start", "report", "--state", "r.json"], capsys)
    error = error_of(["run", "record", "report/drfat", "completed", "--state", "r.json"], capsys)
    assert error["code"] == "state-key-invalid"
    assert lines(["run", "record", "report/draft", "completed", "--state", "r.json"], capsys) == [
        "Recorded report/draft: completed",
        "Evaluate the run again; recorded outcomes are not assumed to prove facts.",
        f"Next: agc run status --state {here / 'r.json'}",
    ]


@pytest.mark.parametrize(
    ("example", "why"),
    [
        ("review-desk", "./provider.yaml is Provider example.review-desk"),
        (None, "./provider.yaml does not load: parse-failed"),
    ],
)
def test_record_ignores_a_provider_yaml_of_another_provider(
    here: Path, capsys: pytest.CaptureFixture[str], example: str | None, why: str
) -> None:
    state = start(capsys)
    if example is None:
        (here / "provider.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    else:
        _copy_provider(example, here)
    before = (here / "provider.yaml").read_bytes()
    assert lines(["run", "record", "report/drfat", "completed", "--state", state], capsys)[2:] == [
        "Checked only that the key starts with report/: give -m or --skill to check it "
        "against Graph report's nodes.",
        f"Next: evaluate the run with agc run status --state {here / state}, adding "
        f"-m MANIFEST or --skill SKILL.md for Provider example.weekly-report ({why})",
    ]
    assert (here / "provider.yaml").read_bytes() == before


# -- checkpoint, resume, events -----------------------------------------------------------


def test_checkpoint_resume_and_events(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = start(capsys, "--authority", "report.publish")
    ok_json(["run", "record", "report/draft", "partial", "--state", state], capsys)
    doc = ok_json(["run", "checkpoint", "--state", state, "--to", "cp/c1.json"], capsys)
    assert doc == {"run": str(here / state), "checkpoint": str(here / "cp" / "c1.json")}
    assert lines(["run", "checkpoint", "--state", state, "--to", "c2.json"], capsys) == [
        f"Checkpoint: {here / 'c2.json'}"
    ]
    error = error_of(["run", "checkpoint", "--state", state, "--to", "c2.json"], capsys)
    assert error["code"] == "run-target-exists"
    resumed = ok_json(["run", "resume", "cp/c1.json", "--state", "r2.json"], capsys)
    assert resumed["authorities"] == []
    assert resumed["events"][-1]["detail"] == {"checkpoint": "c1.json"}
    assert lines(["run", "resume", "c2.json", "--state", "r3.json", "-m", MANIFEST], capsys) == [
        f"Resumed run {resumed['id']} at {here / 'r3.json'}",
        f"Next: agc run status --state {here / 'r3.json'} -m {MANIFEST}",
    ]
    assert lines(["run", "resume", "c2.json", "--state", "r4.json"], capsys) == [
        f"Resumed run {resumed['id']} at {here / 'r4.json'}",
        f"Next: evaluate the run with agc run status --state {here / 'r4.json'}, adding "
        "-m MANIFEST or --skill SKILL.md for Provider example.weekly-report "
        "(there is no ./provider.yaml here)",
    ]
    other = str(ROOT / "examples" / "review-desk" / "provider.yaml")
    error = error_of(["run", "resume", "c2.json", "--state", "r5.json", "-m", other], capsys)
    assert error["code"] == "run-provider-mismatch"
    assert not (here / "r5.json").exists()
    assert error_of(["run", "resume", "c2.json", "--state", state], capsys)["code"] == (
        "run-target-exists"
    )
    events = ok_json(["run", "events", "--state", "r2.json"], capsys)
    assert events["run"] == resumed["id"]
    assert events["events"] == resumed["events"]
    text = lines(["run", "events", "--state", "r2.json"], capsys)
    at = [e["at"] for e in resumed["events"]]
    assert text == [
        f"1 {at[0]} run.started",
        f"2 {at[1]} node.outcome-recorded report/draft partial",
        f"3 {at[2]} run.checkpointed",
        f"4 {at[3]} run.resumed",
    ]


def test_damaged_run_files(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = start(capsys)
    text = (here / state).read_text(encoding="utf-8")
    (here / state).write_text(text[:-40], encoding="utf-8")
    for args in (
        ["run", "events", "--state", state],
        ["run", "record", "report/draft", "completed", "--state", state],
        ["run", "status", "-m", MANIFEST, "--state", state],
        ["evaluate", "report", "-m", MANIFEST, "--state", state],
    ):
        error = error_of(args, capsys)
        assert error["code"] == "parse-failed"
        assert error["diagnostics"][0]["detail"]["line"] > 1
    (here / state).write_text(text.replace("run.v1", "run.v7"), encoding="utf-8")
    assert error_of(["run", "events", "--state", state], capsys)["code"] == (
        "run-version-unsupported"
    )
    assert error_of(["run", "events", "--state", "missing.json"], capsys)["code"] == (
        "file-read-failed"
    )


# -- usage --------------------------------------------------------------------------------


def test_help_lists_the_commands_in_workflow_order(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["run", "--help"], capsys)
    assert code == 0
    listed = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()  # not the epilog
    assert [m.group(1) for line in listed if (m := re.match(r"  (\S+)", line))] == [
        "start", "status", "record", "facts", "authority", "decide", "checkpoint", "resume",
        "events",
    ]  # fmt: skip


def test_usage(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["run"], capsys)
    assert (code, out) == (2, "")
    assert "checkpoint" in err
    assert "record" in err
    code, _, err = run(["run", "record", "report/draft", "--format", "json"], capsys)
    assert code == 2
    assert json.loads(err)["error"]["code"] == "usage-invalid"
    code, _, err = run(["run", "events"], capsys)
    assert code == 2
    assert "--state" in err
    code, _, err = run(["run", "events", "--state", "x.json", "--format", "xml"], capsys)
    assert code == 2
    assert "format-invalid" in err


# -- docs/runs.md's loop, as written ------------------------------------------------------


def _runs_block(language: str) -> str:
    text = (ROOT / "docs" / "runs.md").read_text(encoding="utf-8")
    section = text.split("## Keep a Run", 1)[1].split("\n## ", 1)[0]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


@pytest.mark.slow
def test_runs_page_shell_loop(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    agc = f'agc() {{ "{sys.executable}" -m agent_graph "$@"; }}\n'
    src = str(ROOT / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        ["bash", "-euc", agc + _runs_block("sh")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert "Next: draft" in out
    assert "Next: approve" in out
    assert "Availability: requires-user" in out
    assert any(line.startswith("Resolution: session-authority") for line in out)
    assert out.count("State: complete") == 1
    assert "Outcome: completed" in out
    resumed = json.loads((tmp_path / "week-48-next.json").read_text(encoding="utf-8"))
    assert resumed["authorities"] == []
    assert [e["type"] for e in resumed["events"]][-2:] == ["run.checkpointed", "run.resumed"]


EVIDENCE: dict[str, dict[str, Any]] = {
    "draft": {"report": {"digest": "sha256:1f"}},
    "approve": {"report": {"digest": "sha256:1f", "approved": True}},
    "publish": {"publication": {"url": "https://example.invalid/week-49"}},
}


def test_runs_page_python_loop(here: Path) -> None:
    (here / "examples").symlink_to(ROOT / "examples")
    acted: list[str] = []

    def act(route: dict[str, Any]) -> dict[str, Any]:
        acted.append(route["node"])
        return EVIDENCE[route["node"]]

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(_runs_block("python"), {"act": act})
    assert printed.getvalue() == "complete completed\n"
    assert acted == ["draft", "approve", "publish"]
    events = json.loads((here / "week-49.json").read_text(encoding="utf-8"))["events"]
    assert len(events) == 7


# -- the Node reference CLI ---------------------------------------------------------------

REF_CLI = os.environ.get("AGC_REFERENCE_CLI")
_needs_reference = pytest.mark.skipif(
    not (REF_CLI and shutil.which("node")), reason="reference CLI not configured"
)


def _reference(args: list[str], cwd: Path) -> tuple[int, str, str]:
    assert REF_CLI is not None
    done = subprocess.run(
        ["node", REF_CLI, *args], capture_output=True, text=True, check=False, cwd=cwd
    )
    return done.returncode, done.stdout, done.stderr


def _shape(doc: Any) -> Any:
    """A document with its ids and times blanked, for comparison."""
    if isinstance(doc, dict):
        return {
            k: "*" if k in ("id", "at", "createdAt", "updatedAt", "recordedAt") else _shape(v)
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [_shape(v) for v in doc]
    return doc


@pytest.mark.slow
@_needs_reference
@pytest.mark.reference
def test_same_runs_as_the_reference(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same commands in both toolchains give the same documents, lines and codes."""
    tmp_path = here
    script = [
        ["run", "start", "report", "-m", MANIFEST, "--state", "{d}/r.json", "--facts",
         '{"a":1}', "--authority", "b", "a"],
        ["run", "record", "report/draft", "partial", "--state", "{d}/r.json", "--detail",
         '{"x":[1,2]}'],
        ["run", "facts", "--state", "{d}/r.json", "--set", '{"b":2}'],
        ["run", "facts", "--state", "{d}/r.json", "--set", '{"c":3}', "--replace"],
        ["run", "authority", "--state", "{d}/r.json", "--set", "q"],
        ["run", "checkpoint", "--state", "{d}/r.json", "--to", "{d}/cp/c.json"],
        ["run", "resume", "{d}/cp/c.json", "--state", "{d}/r2.json"],
        ["run", "events", "--state", "{d}/r2.json"],
        ["run", "status", "-m", MANIFEST, "--state", "{d}/r2.json"],
        ["run", "start", "report", "-m", MANIFEST, "--state", "{d}/r.json"],
        ["run", "checkpoint", "--state", "{d}/r.json", "--to", "{d}/r2.json"],
        ["run", "resume", "{d}/cp/c.json", "--state", "{d}/r.json"],
        ["run", "record", "report/draft", "bogus", "--state", "{d}/r.json"],
        ["run", "facts", "--state", "{d}/r.json", "--set", "[1]"],
    ]  # fmt: skip
    (tmp_path / "ref").mkdir()
    (tmp_path / "ours").mkdir()
    for template in script:
        for fmt in ("json", "human"):
            if fmt == "human" and template[1] in ("start", "resume", "checkpoint"):
                continue  # would hit run-target-exists on the second pass
            ref_args = [a.replace("{d}", str(tmp_path / "ref")) for a in template]
            our_args = [a.replace("{d}", str(tmp_path / "ours")) for a in template]
            ref_code, ref_out, ref_err = _reference([*ref_args, "--format", fmt], tmp_path)
            code, out, err = run([*our_args, "--format", fmt], capsys)
            assert code == ref_code, (template, err, ref_err)
            if code != 0:
                if fmt == "json":
                    ours, theirs = json.loads(err)["error"], json.loads(ref_err)["error"]
                    assert ours["code"] == theirs["code"]
                continue
            if fmt == "json":
                ours_doc = json.loads(UUID.sub("<id>", out.replace(str(tmp_path / "ours"), "{d}")))
                ref_doc = json.loads(
                    UUID.sub("<id>", ref_out.replace(str(tmp_path / "ref"), "{d}"))
                )
                assert _shape(ours_doc) == _shape(ref_doc), template
            else:
                ref_lines = _blank(ref_out.replace(str(tmp_path / "ref"), "{d}"))
                our_lines = _blank(out.replace(str(tmp_path / "ours"), "{d}"))
                assert _compatible(ref_lines, our_lines), (template, ref_lines, our_lines)
    # each toolchain reads the other's files
    for name in ("r.json", "r2.json", "cp/c.json"):
        code, out, err = _reference(
            ["run", "events", "--state", str(tmp_path / "ours" / name), "--format", "json"],
            tmp_path,
        )
        assert code == 0, err
        theirs = ok_json(["run", "events", "--state", str(tmp_path / "ref" / name)], capsys)
        assert [e["type"] for e in theirs["events"]] == [
            e["type"] for e in json.loads(out)["events"]
        ]
    ref_run = str(tmp_path / "ref" / "r.json")  # and ours writes into a reference-made file
    ok_json(["run", "record", "report/draft", "completed", "--state", ref_run], capsys)


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def _blank(text: str) -> list[str]:
    return STAMP.sub("<at>", UUID.sub("<id>", text)).splitlines()


def _compatible(reference: list[str], ours: list[str]) -> bool:
    """Our human lines extend the reference's: each of its lines is a prefix of ours, in order."""
    it = iter(ours)
    return all(any(line.startswith(want) for line in it) for want in reference)
