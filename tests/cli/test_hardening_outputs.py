"""Outputs never replace what the user wrote (audit, issue 9: findings 1, 2 and 13).

* ``agc test --junit-xml FILE`` replaces FILE only when it is a previous report of
  ours: never a Provider file, a foreign file, a FIFO, a device or a directory, and
  the refusal comes before anything is written.
* ``agc build OUT`` replaces OUT only when it is absent, empty or a previous bundle
  that verifies and holds nothing else; what a killed build left beside OUT is swept
  when (and only when) it is certainly ours, and a build killed between its two
  renames never leaves OUT without the previous bundle.
* ``--format`` without a usable value is one line on stderr and exit 2.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from agent_graph.cli import main
from agent_graph.compiler import load_provider
from agent_graph.compiler.provider import builder
from agent_graph.compiler.provider.builder import build_bundle
from agent_graph.errors import AgentGraphError
from agent_graph.testing import junit_xml, run_tests
from agent_graph.testing.junit import REPORT_HEAD, REPORT_TAIL, is_report
from tree_support import write_tree

ROOT = Path(__file__).resolve().parents[2]
WEEKLY = ROOT / "examples" / "weekly-report"

#: A report exactly as ``agc test --junit-xml`` wrote it before reports were checked.
EARLIER_REPORT = (
    b"<?xml version='1.0' encoding='utf-8'?>\n"
    b'<testsuites name="agc test" tests="1" failures="0" errors="0" skipped="0" time="0.016">\n'
    b'  <testsuite name="example.weekly-report" tests="1" failures="0" errors="0" skipped="0"'
    b' time="0.016">\n'
    b'    <testcase name="a new week starts with the draft" classname="tests.01-fresh-week"'
    b' file="tests/01-fresh-week.yaml" line="2" time="0.016" />\n'
    b"  </testsuite>\n"
    b"</testsuites>\n"
)


def agc(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", ""])
    process.wait()
    return process.pid


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# -- agc test --junit-xml ----------------------------------------------------------------------


@pytest.fixture
def weekly(tmp_path: Path) -> Path:
    """A copy of the weekly-report example (its graph tests pass)."""
    root = tmp_path / "weekly"
    shutil.copytree(WEEKLY, root)
    return root


def junit(weekly: Path, target: Path | str, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    args = ["test", str(weekly / "tests"), "-m", str(weekly / "provider.yaml")]
    code, out, err = agc([*args, "--junit-xml", str(target), "--format", "json"], capsys)
    return code, json.loads(out if out else err)


def refused(weekly: Path, target: Path | str, capsys: pytest.CaptureFixture[str]) -> str:
    """The refusal message; nothing was printed on stdout and no temporary file is left."""
    args = ["test", str(weekly / "tests"), "-m", str(weekly / "provider.yaml")]
    code, out, err = agc([*args, "--junit-xml", str(target), "--format", "json"], capsys)
    assert (code, out) == (1, "")
    envelope = json.loads(err)
    assert envelope["schema"] == "agent-graph.error.v1"
    assert envelope["error"]["code"] == "junit-target-exists"
    parent = Path(os.path.abspath(target)).parent
    assert not [p for p in os.listdir(parent) if p.startswith(f".{Path(target).name}.")]
    return str(envelope["error"]["message"])


def test_the_provider_manifest_is_never_replaced(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = weekly / "provider.yaml"
    before = manifest.read_bytes()
    message = refused(weekly, manifest, capsys)
    assert "source file of the Provider" in message
    assert manifest.read_bytes() == before
    # the same Provider still loads: the manifest is YAML, not a JUnit report
    assert all(result.passed for result in run_tests(manifest, weekly / "tests"))


@pytest.mark.parametrize("via", ["symlink", "hardlink", "relative"])
def test_no_source_file_is_replaced_under_another_name(
    weekly: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    graph = weekly / "graphs" / "report.yaml"
    before = graph.read_bytes()
    if via == "symlink":
        target = weekly / "report.xml"
        target.symlink_to(graph)
    elif via == "hardlink":
        target = weekly / "report.xml"
        os.link(graph, target)
    else:
        monkeypatch.chdir(weekly / "tests")
        target = Path("..") / "graphs" / ".." / "graphs" / "report.yaml"
    assert "source file of the Provider" in refused(weekly, target, capsys)
    assert graph.read_bytes() == before
    if via == "symlink":
        assert (weekly / "report.xml").is_symlink()
    if via == "hardlink":
        assert os.stat(graph).st_nlink == 2


def test_a_test_case_file_is_never_replaced(
    weekly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = weekly / "tests" / "01-fresh-week.yaml"
    before = case.read_bytes()
    refused(weekly, case, capsys)
    assert case.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [
        b"precious notes\n",
        b"",
        REPORT_HEAD + b"tests='1'> but then something else entirely\n",  # not our ending
        b"<?xml version='1.0' encoding='utf-8'?>\n<testsuites name=\"pytest\">\n</testsuites>\n",
    ],
    ids=["text", "empty", "our-head-only", "another-tools-report"],
)
def test_a_file_that_is_not_our_report_is_left_alone(
    weekly: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    target = tmp_path / "report.xml"
    target.write_bytes(content)
    assert "not a JUnit report written by agc test" in refused(weekly, target, capsys)
    assert target.read_bytes() == content


def test_a_fifo_is_refused_without_being_opened(weekly: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "report.xml"
    os.mkfifo(fifo)
    args = ["test", str(weekly / "tests"), "-m", str(weekly / "provider.yaml")]
    done = subprocess.run(  # a blocking open would hang here: nobody writes to the FIFO
        [sys.executable, "-m", "agent_graph", *args, "--junit-xml", str(fifo), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert json.loads(done.stderr)["error"]["code"] == "junit-target-exists"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["report.xml", "weekly"]


def test_a_symlink_to_a_fifo_or_to_nothing_is_refused(
    weekly: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "to-pipe.xml").symlink_to(fifo)
    (tmp_path / "dangling.xml").symlink_to(tmp_path / "nowhere.xml")
    assert "not a regular file" in refused(weekly, tmp_path / "to-pipe.xml", capsys)
    assert "symbolic link to nothing" in refused(weekly, tmp_path / "dangling.xml", capsys)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert (tmp_path / "to-pipe.xml").is_symlink()
    assert (tmp_path / "dangling.xml").is_symlink()
    assert not (tmp_path / "nowhere.xml").exists()


def test_a_device_node_is_never_replaced(
    weekly: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    device = tmp_path / "full"
    try:  # the same device as /dev/full, made here so the real one is never at stake
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except (PermissionError, AttributeError, OSError):
        pytest.skip("creating a device node needs privileges")
    assert "not a regular file" in refused(weekly, device, capsys)
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["full", "weekly"]


@pytest.mark.parametrize("earlier", [True, False], ids=["todays-report", "just-written"])
def test_a_previous_report_of_ours_is_replaced(
    weekly: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], earlier: bool
) -> None:
    target = tmp_path / "reports" / "graph.xml"
    if earlier:
        target.parent.mkdir()
        target.write_bytes(EARLIER_REPORT)
    else:
        assert junit(weekly, target, capsys)[0] == 0
    code, document = junit(weekly, target, capsys)
    assert (code, document["total"]) == (0, 9)
    root = ET.parse(target).getroot()
    assert (root.get("name"), root.get("tests")) == ("agc test", "9")
    assert os.listdir(target.parent) == ["graph.xml"]


def test_what_we_write_is_recognised_as_ours(weekly: Path) -> None:
    data = junit_xml(run_tests(weekly / "provider.yaml", weekly / "tests"), suite="x")
    assert is_report(data[: len(REPORT_HEAD)], data[-len(REPORT_TAIL) :])
    assert is_report(EARLIER_REPORT[: len(REPORT_HEAD)], EARLIER_REPORT[-len(REPORT_TAIL) :])


def test_a_symlink_to_our_report_is_written_through_and_kept(
    weekly: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "run-1.xml"
    real.write_bytes(EARLIER_REPORT)
    link = tmp_path / "latest.xml"
    link.symlink_to(real)
    assert junit(weekly, link, capsys)[0] == 0
    assert link.is_symlink()
    assert ET.parse(real).getroot().get("tests") == "9"


def test_a_failed_write_leaves_the_previous_report_whole(
    weekly: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = tmp_path / "graph.xml"
    target.write_bytes(EARLIER_REPORT)

    def full(*_: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    code, document = junit(weekly, target, capsys)
    assert (code, document["error"]["code"]) == (1, "file-write-failed")
    assert target.read_bytes() == EARLIER_REPORT
    assert sorted(os.listdir(tmp_path)) == ["graph.xml", "weekly"]


# -- agc build OUT -------------------------------------------------------------------------------


def small(root: Path, **extra: str) -> Path:
    """A two-node Provider with a Skill directory."""
    files = {
        "provider.yaml": "schema: agent-graph.provider.v1\nid: small\nversion: 1.0.0\n"
        "graphs: [graphs/main.yaml]\n",
        "graphs/main.yaml": "schema: agent-graph.graph.v1\nid: main\n"
        "entrypoints: {default: write}\nnodes:\n"
        "  - {id: write, kind: action, reasonCode: route.write, action: actions/write.yaml}\n"
        "  - {id: end, kind: terminal, terminalOutcome: completed}\n"
        "edges:\n  - {from: write, to: end}\n",
        "actions/write.yaml": "schema: agent-graph.action.v1\nid: write\nrunner: agent\n"
        "effect: write\nskill: skills/writer/SKILL.md\n",
        "skills/writer/SKILL.md": "---\nname: writer\ndescription: Writes.\n---\nWrite.\n",
        **extra,
    }
    write_tree(root, files)
    return root / "provider.yaml"


def build(manifest: Path, out: Path) -> None:
    build_bundle(load_provider(manifest), out)


def build_error(manifest: Path, out: Path) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as caught:
        build(manifest, out)
    return caught.value


def test_a_manifest_that_merely_names_the_schema_is_no_bundle(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "mine"
    write_tree(out, {"manifest.json": '{"schema":"agent-graph.bundle.v1"}', "thesis.tex": "x\n"})
    before = tree(out)
    error = build_error(manifest, out)
    assert error.code == "build-output-exists"
    assert "does not verify" in error.message
    assert tree(out) == before
    assert sorted(os.listdir(tmp_path)) == ["mine", "src"]


def test_a_file_added_to_a_previous_bundle_stops_the_rebuild(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "dist" / "provider"
    build(manifest, out)
    (out / "graphs" / "notes.md").write_text("mine\n", encoding="utf-8")
    (out / "zz-later.txt").write_text("mine too\n", encoding="utf-8")
    before = tree(out)
    error = build_error(manifest, out)
    assert error.code == "build-output-exists"
    assert f"Build output {out} holds graphs/notes.md, which is not part" in error.message
    assert tree(out) == before
    assert os.listdir(out.parent) == ["provider"]


@pytest.mark.parametrize("kind", ["empty-directory", "symlink", "fifo"])
def test_anything_a_build_does_not_write_stops_the_rebuild(tmp_path: Path, kind: str) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "out"
    build(manifest, out)
    odd = out / "skills" / "odd"
    if kind == "empty-directory":
        odd.mkdir()
    elif kind == "symlink":
        odd.symlink_to(tmp_path / "src")
    else:
        os.mkfifo(odd)
    error = build_error(manifest, out)
    assert error.code == "build-output-exists"
    assert "holds skills/odd," in error.message
    assert os.path.lexists(odd)


def test_an_edited_file_of_a_previous_bundle_stops_the_rebuild(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "out"
    build(manifest, out)
    (out / "skills" / "writer" / "SKILL.md").write_text("my edit\n", encoding="utf-8")
    error = build_error(manifest, out)
    assert error.code == "build-output-exists"
    assert "bundle-file-digest-mismatch" in error.message
    assert (out / "skills" / "writer" / "SKILL.md").read_text(encoding="utf-8") == "my edit\n"


def test_a_damaged_ir_of_a_previous_bundle_stops_the_rebuild(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "out"
    build(manifest, out)
    [ir] = (out / "ir").glob("*.agir")
    ir.write_bytes(b"not the IR\n")
    assert build_error(manifest, out).code == "build-output-exists"
    assert ir.read_bytes() == b"not the IR\n"


def test_a_previous_bundle_without_ir_is_replaced(tmp_path: Path) -> None:
    # as the Node toolchain builds them: manifest-listed files only
    manifest = small(tmp_path / "src")
    out = tmp_path / "out"
    build(manifest, out)
    for path in sorted((out / "ir").iterdir()):
        path.unlink()
    (out / "ir").rmdir()
    build(manifest, out)
    assert len(list((out / "ir").glob("*.agir"))) == 1
    assert sorted(os.listdir(tmp_path)) == ["out", "src"]


KILLED_BUILD = textwrap.dedent(
    """
    import os, shutil, signal, sys
    from agent_graph.compiler import load_provider
    from agent_graph.compiler.provider.builder import build_bundle

    when, manifest, out = sys.argv[1:]
    def die():
        os.kill(os.getpid(), signal.SIGKILL)
    copies, renames = [], []
    real_copy, real_rename = shutil.copyfile, os.rename
    def copyfile(src, dst, **kw):
        copies.append(src)
        if when == "copying" and len(copies) == 2:
            die()
        return real_copy(src, dst, **kw)
    def rename(src, dst):
        real_rename(src, dst)
        renames.append(src)
        if (when, len(renames)) in (("between-renames", 1), ("after-renames", 2)):
            die()
    shutil.copyfile, os.rename = copyfile, rename
    build_bundle(load_provider(manifest), out)
    """
)


def killed_build(when: str, manifest: Path, out: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_BUILD, when, str(manifest), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


def siblings(out: Path) -> list[str]:
    return sorted(p.name.split("-")[0] for p in out.parent.iterdir())


@pytest.mark.parametrize("when", ["copying", "between-renames", "after-renames"])
def test_what_a_killed_build_left_is_swept_by_the_next(tmp_path: Path, when: str) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "dist" / "provider"
    build(manifest, out)
    killed_build(when, manifest, out)
    left = {"copying": ["provider", "provider.tmp"], "after-renames": ["provider", "provider.old"]}
    assert siblings(out) == left.get(when, ["provider.old", "provider.tmp"])
    build(manifest, out)
    assert os.listdir(out.parent) == ["provider"]
    assert (out / "manifest.json").is_file()


def test_a_build_killed_between_its_renames_never_loses_the_previous_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "dist" / "provider"
    build(manifest, out)
    before = tree(out)
    killed_build("between-renames", manifest, out)
    assert not out.exists()
    [aside] = out.parent.glob("provider.old-*")
    assert tree(aside) == before  # still whole, only aside

    def broken(*_: Any) -> Any:
        raise AgentGraphError("boom", "compilation failed halfway")

    monkeypatch.setattr(builder, "_compile_bundle", broken)
    with pytest.raises(AgentGraphError, match="halfway"):
        build(manifest, out)
    assert tree(out) == before  # put back, then left as it was by the failed build
    assert os.listdir(out.parent) == ["provider"]


def test_only_what_is_certainly_ours_is_swept(tmp_path: Path) -> None:
    manifest = small(tmp_path / "src")
    out = tmp_path / "dist" / "provider"
    build(manifest, out)
    dead, alive = dead_pid(), os.getppid()

    def bundle_copy(name: str) -> Path:
        shutil.copytree(out, out.parent / name)
        return out.parent / name

    kept = [
        bundle_copy(f"provider.old-{alive}-1"),  # its process may still be building
        bundle_copy(f"provider.old-{dead}-x1"),  # not our naming
        bundle_copy(f"provider.bak-{dead}-1"),
        bundle_copy(f"other.old-{dead}-1"),
    ]
    with_extra = bundle_copy(f"provider.old-{dead}-2")
    (with_extra / "mine.txt").write_text("mine\n", encoding="utf-8")
    edited = bundle_copy(f"provider.old-{dead}-3")
    (edited / "graphs" / "main.yaml").write_text("edited\n", encoding="utf-8")
    fake = out.parent / f"provider.tmp-{dead}-4"
    write_tree(fake, {"manifest.json": '{"schema":"agent-graph.bundle.v1"}', "x.txt": "x\n"})
    journal_plus = out.parent / f"provider.tmp-{dead}-5"
    write_tree(journal_plus, {".agc-build-journal": "agc build working directory v1\n", "y": ""})
    kept += [with_extra, edited, fake, journal_plus]
    swept = [bundle_copy(f"provider.old-{dead}-6"), out.parent / f"provider.tmp-{dead}-7"]
    (swept[1]).mkdir()
    before = {path: tree(path) for path in kept}
    build(manifest, out)
    assert {path: tree(path) for path in kept} == before
    assert not any(path.exists() for path in swept)


# -- --format without a usable value ---------------------------------------------------------------

MANIFEST = str(WEEKLY / "provider.yaml")


def one_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = agc(args, capsys)
    assert (code, out) == (2, "")
    assert err.endswith("\n"), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.rstrip("\n")


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "-m", MANIFEST, "--format"],
        ["--format"],
        ["-m", MANIFEST, "validate", "--format"],
        ["validate", "--format", "-m", MANIFEST],  # click would take -m as the value
        ["test", "--format", "--junit-xml", "r.xml"],
    ],
)
def test_format_without_a_value_is_one_usage_line(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line(args, capsys)
    assert line == "ERROR usage-invalid: Option '--format' requires a value: human or json"


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["validate", "-m", MANIFEST, "--format="], "(empty)"),
        (["validate", "-m", MANIFEST, "--format", ""], "(empty)"),
        (["--format=", "validate", "-m", MANIFEST], "(empty)"),
        (["validate", "-m", MANIFEST, "--format", "xml"], "xml"),
        (["--format", "xml"], "xml"),
        (["--format", "JSON", "validate", "-m", MANIFEST], "JSON"),
    ],
)
def test_an_empty_or_unknown_format_is_one_line(
    args: list[str], shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line(args, capsys)
    assert (
        line == f"ERROR format-invalid: Unsupported format: {shown}; --format takes human or json"
    )


def test_a_missing_format_value_after_json_is_an_envelope(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for args in (
        ["--format", "json", "validate", "--format"],
        ["validate", "--format=json", "--format"],
        ["validate", "--format", "json", "--format", "-m", MANIFEST],
    ):
        code, out, err = agc(args, capsys)
        assert (code, out) == (2, "")
        envelope = json.loads(err)
        assert envelope["error"]["code"] == "usage-invalid"
        assert envelope["error"]["message"] == ("Option '--format' requires a value: human or json")


def test_the_last_format_given_is_the_one_errors_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope.yaml")
    code, out, err = agc(
        ["--format", "json", "validate", "-m", missing, "--format", "human"], capsys
    )
    assert (code, out) == (1, "")
    assert err == (
        f"nope.yaml: file-missing: provider manifest does not exist: {missing}\n"
        "1 error(s), 0 warning(s)\n"
    )
    code, out, err = agc(
        ["--format", "human", "validate", "-m", missing, "--format", "json"], capsys
    )
    assert (code, out) == (1, "")
    assert json.loads(err)["error"]["code"] == "file-missing"
