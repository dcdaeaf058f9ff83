"""Flow packages under hostile or odd input: a coded diagnostic or a valid result, in
bounded time, never a traceback or a RecursionError (issue 13, "Bad input").

The slow shapes (20 MB, 10,000 nodes, 500-deep reference chains) also run through a
fresh ``agc`` under a deadline, so a regression fails instead of hanging the suite.
Base packages come from ``tests/flow_corpus/00-valid-*``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_graph.errors import AgentGraphError, Diagnostic
from cli_support import error_of, run
from tree_support import write_tree

CORPUS = Path(__file__).parents[1] / "flow_corpus"
BASE_A = CORPUS / "00-valid-agent-command"
BASE_P = CORPUS / "00-valid-parallel"
BASE_R = CORPUS / "00-valid-reference"
DEADLINE = 60  # seconds, for a child agc

FRONT = "---\nname: {name}\ndescription: Generated for the hardening tests ({name}).\n---\n\n"


def corpus_case(short: str) -> Path:
    """The corpus case ``NN-<short>``."""
    (found,) = CORPUS.glob(f"[0-9][0-9]-{short}")
    return found


def check(path: Path | str, *, lenient: bool = False) -> list[Diagnostic]:
    from agent_graph.flow import check as flow_check

    return flow_check(path, lenient=lenient)


def errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error"]


def codes(diagnostics: list[Diagnostic]) -> set[str]:
    return {d.code for d in errors(diagnostics)}


def assert_coded(diagnostics: list[Diagnostic]) -> None:
    from agent_graph.error_codes import CODES

    assert all(isinstance(d, Diagnostic) for d in diagnostics)
    assert [d.code for d in diagnostics if d.code not in CODES] == []


def agc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "agent_graph", *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        cwd=cwd,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "RecursionError" not in done.stdout + done.stderr
    return done


def cli_error(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 1, done.stdout
    envelope: dict[str, Any] = json.loads(done.stderr)
    assert envelope["schema"] == "agent-graph.error.v1"
    error: dict[str, Any] = envelope["error"]
    return error


def cli_valid(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    assert document["state"] == "valid"
    return document


def copy_base(base: Path, tmp_path: Path) -> Path:
    """The packages of a base case under ``tmp_path/.flows``; returns that folder."""
    flows = tmp_path / ".flows"
    for child in base.iterdir():
        if child.is_dir():
            shutil.copytree(child, flows / child.name)
    return flows


def command_node_section(name: str) -> str:
    return (
        f"## {name}\n\n```执行自定义命令\n"
        '{ "command": "node", "args": ["--version"] }\n```\n\n### 已执行\n\nIt ran.\n\n'
    )


def caller_package(name: str, targets: list[str]) -> str:
    """A package that runs each of ``targets`` in turn (plain edges), then finishes."""
    lines = ["```mermaid", "flowchart TD"]
    refs = [f"call{i}" for i in range(len(targets))] or ["work"]
    lines.append(f"  start((开始)) --> {refs[0]}[Step {refs[0]}]")
    for here, there in itertools.pairwise(refs):
        lines.append(f"  {here} --> {there}[Step {there}]")
    last = refs[-1]
    lines.append(f"  {last} {'-->|已执行|' if not targets else '-->'} finish((结束))")
    lines.append("```\n")
    body = FRONT.format(name=name) + "\n".join(lines) + "\n"
    if not targets:
        return body + command_node_section("Step work")
    for ref, target in zip(refs, targets, strict=True):
        body += f'## Step {ref}\n\n```执行Flow\n{{ "flow": "{target}" }}\n```\n\n'
    return body


# ------------------------------------------------------------------ bytes and encodings


def test_binary_flow_md_is_a_coded_error(tmp_path: Path) -> None:
    package = tmp_path / "main"
    package.mkdir()
    noise = random.Random(13).randbytes(4096)
    (package / "FLOW.md").write_bytes(b"\x00\xff" + noise + b"\x00")
    diagnostics = check(package)
    assert_coded(diagnostics)
    assert errors(diagnostics)[0].code == "flow-encoding-invalid"
    error = cli_error(agc("flow", "check", str(package), "--format", "json"))
    assert error["code"] == "flow-encoding-invalid"


def test_nul_characters_in_utf8_text_are_a_coded_result(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    flow_md = flows / "main" / "FLOW.md"
    text = flow_md.read_text(encoding="utf-8")
    flow_md.write_text(text.replace("## Draft the note", "## Draft\x00 the note"), "utf-8")
    diagnostics = check(flows / "main")
    assert_coded(diagnostics)
    assert errors(diagnostics)


def test_not_utf8_points_at_the_first_bad_byte(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    flow_md = flows / "main" / "FLOW.md"
    text = flow_md.read_text(encoding="utf-8")
    assert text.splitlines()[2].startswith("description: Drafts")
    data = text.replace("description: Drafts", "description: Caf\x00 drafts").encode("utf-8")
    flow_md.write_bytes(data.replace(b"\x00", b"\xe9"))  # Latin-1 e-acute: not UTF-8
    diagnostics = check(flows / "main")
    assert_coded(diagnostics)
    assert [(d.code, d.path, d.line, d.column) for d in errors(diagnostics)] == [
        ("flow-encoding-invalid", "main/FLOW.md", 3, 17)
    ]


def test_a_bom_is_ignored(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    flow_md = flows / "main" / "FLOW.md"
    flow_md.write_bytes(b"\xef\xbb\xbf" + flow_md.read_bytes())
    assert check(flows / "main") == []


def test_a_bom_does_not_shift_columns(tmp_path: Path) -> None:
    package = tmp_path / "main"
    shutil.copytree(corpus_case("frontmatter-missing") / "main", package)
    flow_md = package / "FLOW.md"
    flow_md.write_bytes(b"\xef\xbb\xbf" + flow_md.read_bytes())
    found = [(d.code, d.line, d.column) for d in errors(check(package))]
    assert found == [("flow-frontmatter-missing", 1, 1)]


@pytest.mark.parametrize("base", [BASE_A, BASE_P, BASE_R], ids=lambda p: p.name)
def test_crlf_line_endings_keep_a_valid_package_valid(base: Path, tmp_path: Path) -> None:
    flows = copy_base(base, tmp_path)
    for flow_md in flows.glob("*/FLOW.md"):
        flow_md.write_bytes(flow_md.read_bytes().replace(b"\n", b"\r\n"))
    assert check(flows / "main") == []


@pytest.mark.parametrize(
    "case", ["outcome-outside-string", "edge-target-missing", "frontmatter-extra-key"]
)
def test_crlf_line_endings_keep_positions(case: str, tmp_path: Path) -> None:
    package = tmp_path / "main"
    shutil.copytree(corpus_case(case) / "main", package)
    before = [(d.code, d.line, d.column) for d in check(package)]
    for flow_md in [package / "FLOW.md"]:
        flow_md.write_bytes(flow_md.read_bytes().replace(b"\n", b"\r\n"))
    assert [(d.code, d.line, d.column) for d in check(package)] == before
    assert before


# ------------------------------------------------------------------ size
@pytest.mark.slow
def test_a_20_mb_flow_md_checks_in_bounded_time(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    flow_md = flows / "main" / "FLOW.md"
    text = flow_md.read_text(encoding="utf-8")
    filler = "This maintainer paragraph is padding and never reaches a prompt.\n" * 320_000
    assert len(filler) > 20_000_000
    marker = "# Note check\n"
    flow_md.write_text(text.replace(marker, marker + "\n" + filler), encoding="utf-8")
    done = agc("flow", "check", str(flows / "main"), "--format", "json")
    document = cli_valid(done)
    assert document["flow"] == "main"


def test_a_flow_md_over_32_mib_is_refused(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    flow_md = flows / "main" / "FLOW.md"
    with flow_md.open("ab") as handle:
        handle.write(b"padding line\n" * (33 * 1024 * 1024 // 13 + 1))
    assert flow_md.stat().st_size > 32 * 1024 * 1024
    diagnostics = check(flows / "main")
    assert_coded(diagnostics)
    assert errors(diagnostics)[0].code == "file-too-large"
    error = cli_error(agc("flow", "check", str(flows / "main"), "--format", "json"))
    assert error["code"] == "file-too-large"


@pytest.mark.slow
def test_10000_nodes_check_in_bounded_time(tmp_path: Path) -> None:
    count = 10_000
    lines = ["```mermaid", "flowchart TD", "  start((开始)) --> n0[Step 0]"]
    lines += [f"  n{i} -->|已执行| n{i + 1}[Step {i + 1}]" for i in range(count - 1)]
    lines += [f"  n{count - 1} -->|已执行| finish((结束))", "```", ""]
    sections = "".join(command_node_section(f"Step {i}") for i in range(count))
    text = FRONT.format(name="Ten thousand") + "\n".join(lines) + "\n" + sections
    write_tree(tmp_path, {"big/FLOW.md": text})
    document = cli_valid(agc("flow", "check", str(tmp_path / "big"), "--format", "json"))
    assert document["nodes"] >= count
    assert document["diagnostics"] == []


@pytest.mark.slow
def test_10000_nodes_with_one_error_at_the_end(tmp_path: Path) -> None:
    count = 10_000
    lines = ["```mermaid", "flowchart TD", "  start((开始)) --> n0[Step 0]"]
    lines += [f"  n{i} -->|已执行| n{i + 1}[Step {i + 1}]" for i in range(count - 1)]
    lines += [f"  n{count - 1} -->|done| finish((结束))", "```", ""]
    sections = "".join(command_node_section(f"Step {i}") for i in range(count))
    text = FRONT.format(name="Ten thousand") + "\n".join(lines) + "\n" + sections
    write_tree(tmp_path, {"big/FLOW.md": text})
    error = cli_error(agc("flow", "check", str(tmp_path / "big"), "--format", "json"))
    assert error["code"] == "flow-command-result-invalid"


# ------------------------------------------------------------------ markdown structure


def test_an_unterminated_fence_in_an_action_area(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    flow_md = flows / "main" / "FLOW.md"
    lines = flow_md.read_text(encoding="utf-8").split("\n")
    # drop the fence that closes the command block: the block now runs to the end
    close = max(i for i, line in enumerate(lines) if line == "```")
    opening = max(i for i, line in enumerate(lines[:close]) if line.startswith("```执行自定义命令"))
    del lines[close]
    flow_md.write_text("\n".join(lines), encoding="utf-8")
    diagnostics = check(flows / "main")
    assert_coded(diagnostics)
    hits = [d for d in errors(diagnostics) if d.code == "flow-fence-unterminated"]
    assert [(d.path, d.line, d.column) for d in hits] == [("main/FLOW.md", opening + 1, 1)]


def test_a_fence_inside_a_four_backtick_block_is_content(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    flow_md = flows / "main" / "FLOW.md"
    text = flow_md.read_text(encoding="utf-8")
    old = "```新建Agent\nFollow"
    new = "````新建Agent\nAn example block:\n```\n## not a heading\n```\nFollow"
    text = text.replace(old, new).replace("{outcome}\n```\n\n### ok", "{outcome}\n````\n\n### ok")
    flow_md.write_text(text, encoding="utf-8")
    assert check(flows / "main") == []


# ------------------------------------------------------------------ symlinks and resources


def test_a_symlinked_references_folder_escaping_the_package(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    outside = tmp_path / "elsewhere"
    shutil.move(flows / "main" / "references", outside)
    (flows / "main" / "references").symlink_to(outside, target_is_directory=True)
    diagnostics = check(flows / "main")
    assert codes(diagnostics) == {"resource-outside-package"}
    error = cli_error(agc("flow", "check", str(flows / "main"), "--format", "json"))
    assert error["code"] == "resource-outside-package"


def test_a_symlinked_reference_file_escaping_the_package(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    guide = flows / "main" / "references" / "guide.md"
    outside = tmp_path / "guide.md"
    shutil.move(guide, outside)
    guide.symlink_to(outside)
    assert codes(check(flows / "main")) == {"resource-outside-package"}


def test_a_symlink_inside_the_package_is_fine(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    refs = flows / "main" / "references"
    shutil.move(refs / "guide.md", refs / "real-guide.md")
    (refs / "guide.md").symlink_to("real-guide.md")
    assert check(flows / "main") == []


def test_a_dangling_symlink_is_a_missing_resource(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    guide = flows / "main" / "references" / "guide.md"
    guide.unlink()
    guide.symlink_to("nowhere.md")
    diagnostics = check(flows / "main")
    assert_coded(diagnostics)
    assert codes(diagnostics) <= {"resource-missing", "resource-outside-package"}
    assert codes(diagnostics)


def test_a_resource_that_is_a_directory_is_missing(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    guide = flows / "main" / "references" / "guide.md"
    guide.unlink()
    guide.mkdir()
    assert codes(check(flows / "main")) == {"resource-missing"}


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads unreadable files"
)
def test_an_unreadable_flow_md_is_file_read_failed(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    flow_md = flows / "main" / "FLOW.md"
    flow_md.chmod(0)
    try:
        assert errors(check(flows / "main"))[0].code == "file-read-failed"
    finally:
        flow_md.chmod(0o644)


# ------------------------------------------------------------------ the reference closure


def chain(tmp_path: Path, depth: int, *, close_cycle: bool = False) -> Path:
    flows = tmp_path / ".flows"
    files: dict[str, str] = {}
    for i in range(depth):
        name = f"p{i:03d}"
        last = ["p000"] if close_cycle else []
        targets = [f"p{i + 1:03d}"] if i + 1 < depth else last
        files[f"{name}/FLOW.md"] = caller_package(name, targets)
    write_tree(flows, files)
    return flows


def test_a_500_deep_reference_chain_is_valid(tmp_path: Path) -> None:
    flows = chain(tmp_path, 500)
    assert check(flows / "p000") == []
    from agent_graph.flow import compile as flow_compile

    assert len(flow_compile(flows / "p000").flows) == 500
    document = cli_valid(agc("flow", "check", str(flows / "p000"), "--format", "json"))
    assert document["children"] == ["p001"]


def test_a_500_deep_chain_closing_a_cycle(tmp_path: Path) -> None:
    flows = chain(tmp_path, 500, close_cycle=True)
    diagnostics = check(flows / "p000")
    assert_coded(diagnostics)
    assert codes(diagnostics) == {"flow-ref-cycle"}
    cycle = next(d for d in diagnostics if d.code == "flow-ref-cycle")
    text = (flows / "p499" / "FLOW.md").read_text(encoding="utf-8").split("\n")
    line = next(i for i, t in enumerate(text, 1) if '"flow": "p000"' in t)
    column = text[line - 1].index('"p000"') + 1
    assert (cycle.path, cycle.line, cycle.column) == ("p499/FLOW.md", line, column)
    assert cycle.detail["flow"] == "p499"
    error = cli_error(agc("flow", "check", str(flows / "p000"), "--format", "json"))
    assert error["code"] == "flow-ref-cycle"


def diamond(tmp_path: Path, *, d_text: str | None = None) -> Path:
    flows = tmp_path / ".flows"
    write_tree(
        flows,
        {
            "a/FLOW.md": caller_package("a", ["b", "c"]),
            "b/FLOW.md": caller_package("b", ["d"]),
            "c/FLOW.md": caller_package("c", ["d"]),
            "d/FLOW.md": d_text or caller_package("d", []),
        },
    )
    return flows


def test_a_diamond_loads_the_shared_child_once(tmp_path: Path) -> None:
    from agent_graph.flow import compile as flow_compile

    flows = diamond(tmp_path)
    assert check(flows / "a") == []
    program = flow_compile(flows / "a")
    assert sorted(flow.id for flow in program.flows) == ["a", "b", "c", "d"]
    assert program.root.id == "a"
    document = cli_valid(agc("flow", "check", str(flows / "a"), "--format", "json"))
    assert document["children"] == ["b", "c"]


def test_a_diamond_reports_the_shared_childs_warning_once(tmp_path: Path) -> None:
    d_text = caller_package("d", []).replace("---\n\n", "---\n\n### Aside\n\nA note.\n\n", 1)
    flows = diamond(tmp_path, d_text=d_text)
    diagnostics = check(flows / "a")
    assert errors(diagnostics) == []
    assert [(d.code, d.path, d.detail.get("flow")) for d in diagnostics] == [
        ("flow-heading-ignored", "d/FLOW.md", "d")
    ]


def test_a_self_reference_is_a_cycle(tmp_path: Path) -> None:
    flows = tmp_path / ".flows"
    write_tree(flows, {"me/FLOW.md": caller_package("me", ["me"])})
    diagnostics = check(flows / "me")
    assert codes(diagnostics) == {"flow-ref-cycle"}
    assert [d.path for d in errors(diagnostics)] == ["me/FLOW.md"]


def test_a_childs_errors_are_reported_in_the_child(tmp_path: Path) -> None:
    flows = copy_base(BASE_R, tmp_path)
    helper = flows / "helper" / "FLOW.md"
    helper.write_text(helper.read_text("utf-8") + "\n## Notes\n\nStray.\n", encoding="utf-8")
    diagnostics = check(flows / "main")
    assert_coded(diagnostics)
    orphan = [d for d in diagnostics if d.code == "flow-heading-orphan"]
    assert len(orphan) == 1
    assert orphan[0].path == "helper/FLOW.md"
    assert orphan[0].detail["flow"] == "helper"
    assert orphan[0].message.startswith("helper")
    lines = helper.read_text("utf-8").split("\n")
    assert orphan[0].line == lines.index("## Notes") + 1
    # the root may point at its reference too, but nothing else
    assert codes(diagnostics) - {"flow-heading-orphan"} <= {"flow-ref-target-missing"}


def test_a_sibling_folder_without_flow_md_is_a_missing_target(tmp_path: Path) -> None:
    flows = copy_base(BASE_R, tmp_path)
    (flows / "helper" / "FLOW.md").unlink()
    (flows / "helper" / "notes.md").write_text("not a package\n", encoding="utf-8")
    assert codes(check(flows / "main")) == {"flow-ref-target-missing"}


# ------------------------------------------------------------------ entries


def test_an_entry_named_release_md_is_invalid(tmp_path: Path) -> None:
    flows = copy_base(BASE_A, tmp_path)
    release = flows / "main" / "release.md"
    shutil.copy(flows / "main" / "FLOW.md", release)
    diagnostics = check(release)
    assert [(d.code, d.path, d.line) for d in diagnostics] == [
        ("flow-entry-invalid", str(release), None)
    ]
    error = cli_error(agc("flow", "check", str(release), "--format", "json"))
    assert error["code"] == "flow-entry-invalid"


def test_a_lowercase_flow_md_is_an_invalid_entry(tmp_path: Path) -> None:
    write_tree(tmp_path, {"main/flow.md": "---\nname: x\ndescription: y\n---\n"})
    assert codes(check(tmp_path / "main" / "flow.md")) == {"flow-entry-invalid"}


def test_a_directory_without_flow_md(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {"main/README.md": "nothing to run\n"})
    diagnostics = check(tmp_path / "main")
    assert [(d.code, d.path, d.line) for d in diagnostics] == [
        ("flow-entry-missing", str(tmp_path / "main"), None)
    ]
    assert error_of(["flow", "check", str(tmp_path / "main")], capsys)["code"] == (
        "flow-entry-missing"
    )


def test_a_flow_md_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "main" / "FLOW.md").mkdir(parents=True)
    assert codes(check(tmp_path / "main")) == {"flow-entry-missing"}


def test_a_path_that_does_not_exist(tmp_path: Path) -> None:
    diagnostics = check(tmp_path / "absent")
    assert_coded(diagnostics)
    assert codes(diagnostics) <= {"flow-entry-missing", "flow-entry-invalid"}
    assert codes(diagnostics)


CORPUS_CASES = sorted(
    p
    for p in CORPUS.iterdir()
    if (p / "main" / "FLOW.md").is_file() and "symlinks" not in (p / "expected.yaml").read_text()
)


@pytest.mark.parametrize("case", CORPUS_CASES, ids=[c.name for c in CORPUS_CASES])
def test_the_package_and_its_flow_md_give_identical_results(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "w"
    shutil.copytree(case, work)
    monkeypatch.chdir(work)
    lenient = "lenient: true" in (case / "expected.yaml").read_text()
    by_dir = [d.to_dict() for d in check("main", lenient=lenient)]
    by_file = [d.to_dict() for d in check("main/FLOW.md", lenient=lenient)]
    assert by_dir == by_file
    assert [d.to_dict() for d in check(work / "main", lenient=lenient)] == by_dir


def test_entry_spellings_of_one_package_give_one_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry is read on strings; each way of writing it finds the same package, and
    ``link/../FLOW.md`` goes up from where the link points, as the file system does."""
    from agent_graph.compiler.flow.package import entry_root

    flows = copy_base(BASE_A, tmp_path)
    main = flows / "main"
    (flows / "deep" / "inner").mkdir(parents=True)
    (main / "hop").symlink_to(flows / "deep" / "inner", target_is_directory=True)
    monkeypatch.chdir(main)
    real = main.resolve()
    for spelling in (
        "",
        ".",
        "./",
        "FLOW.md",
        "./FLOW.md",
        str(main),
        f"{main}/",
        f"{main}//FLOW.md",
    ):
        assert entry_root(spelling) == str(real), spelling
    # hop/.. is deep (the link's parent), which holds no FLOW.md: not main
    with pytest.raises(AgentGraphError) as raised:
        entry_root("hop/../FLOW.md")
    assert raised.value.code == "flow-entry-missing"


def test_cli_never_shows_a_traceback_for_bad_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file.txt").write_text("x\n", encoding="utf-8")
    for entry in (tmp_path / "absent", tmp_path / "file.txt", tmp_path):
        code, out, err = run(["flow", "check", str(entry)], capsys)
        assert code == 1
        assert "Traceback" not in out + err


def test_compile_raises_on_a_bad_entry(tmp_path: Path) -> None:
    from agent_graph.flow import compile as flow_compile

    with pytest.raises(AgentGraphError) as raised:
        flow_compile(tmp_path / "nothing-here")
    assert raised.value.code in ("flow-entry-missing", "flow-entry-invalid")
