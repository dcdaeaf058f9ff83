"""Fuzz: mutated FLOW.md texts give only catalogued diagnostics, never an exception.

Two sets. The slow, generated one (hypothesis): the valid base packages of
``tests/flow_corpus/00-valid-*`` (the root's FLOW.md is mutated; siblings, scripts and
references stay as they are) under random line edits, inserted characters or the
format's keywords, and truncation. The fast, deterministic one (below, run on every
push): over 25 named mutation kinds, from bit flips to 10k nodes, self-referencing
children and symlinks out of the package, on every example Flow, Appendix D fixture and
valid corpus case, and on the child Flow of three of them. In both, ``compile()``
agrees with ``check()``: it raises with the first error exactly when there is one.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_graph import codes
from agent_graph.error_codes import CODES
from agent_graph.errors import AgentGraphError, Diagnostic

CORPUS = Path(__file__).parents[1] / "flow_corpus"
SEEDS = sorted(p for p in CORPUS.glob("00-valid-*") if (p / "main" / "FLOW.md").is_file())
SEED_TEXTS = [(p, (p / "main" / "FLOW.md").read_text(encoding="utf-8")) for p in SEEDS]

KEYWORDS = [
    "---", "name:", "description:", "```", "````", "~~~", "```mermaid", "flowchart TD",
    "flowchart LR", "start((开始))", "finish((结束))", "{{并行}}", "-->", "-->|已执行|",
    "-->|已完成|", "-->|已失败|", "|", "[", "]", "((", "))", "%%", "## ", "### ", "新建Agent",
    "复用Agent", "执行自定义命令", "执行Flow", "{outcome}", "{unit.outcome}", "{x.outcome}",
    "{", "}", '"', "\\", '"flow": "main"', '"flow": "helper"', '"command": ""', '"args": [1]',
    '"stdin": NaN', "[x](references/guide.md)", "(references/../x.md)", '"scripts/x.js"',
    "references/", "scripts/", "/abs/path", "~/x", "C:\\x", "\ufeff", "\r", "\x00", "\t", "#",
]  # fmt: skip

line_edit = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 10_000)),
    st.tuples(st.just("duplicate"), st.integers(0, 10_000)),
    st.tuples(st.just("swap"), st.integers(0, 10_000), st.integers(0, 10_000)),
    st.tuples(st.just("insert"), st.integers(0, 100_000), st.text(max_size=12)),
    st.tuples(st.just("keyword"), st.integers(0, 100_000), st.sampled_from(KEYWORDS)),
    st.tuples(st.just("keyword-line"), st.integers(0, 10_000), st.sampled_from(KEYWORDS)),
    st.tuples(st.just("truncate"), st.integers(0, 100_000)),
)


def mutate(text: str, edits: list[tuple[object, ...]]) -> str:
    for edit in edits:
        kind = edit[0]
        lines = text.split("\n")
        if kind == "delete" and lines:
            del lines[int(str(edit[1])) % len(lines)]
        elif kind == "duplicate" and lines:
            i = int(str(edit[1])) % len(lines)
            lines.insert(i, lines[i])
        elif kind == "swap" and lines:
            i, j = int(str(edit[1])) % len(lines), int(str(edit[2])) % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "keyword-line":
            lines.insert(int(str(edit[1])) % (len(lines) + 1), str(edit[2]))
        elif kind in ("insert", "keyword"):
            at = int(str(edit[1])) % (len(text) + 1)
            text = text[:at] + str(edit[2]) + text[at:]
            continue
        elif kind == "truncate":
            text = text[: int(str(edit[1])) % (len(text) + 1)]
            continue
        text = "\n".join(lines)
    return text


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    seed=st.integers(0, len(SEED_TEXTS) - 1),
    edits=st.lists(line_edit, min_size=1, max_size=6),
    lenient=st.booleans(),
)
@pytest.mark.slow
def test_mutated_flow_md_gives_only_coded_diagnostics(
    seed: int, edits: list[tuple[object, ...]], lenient: bool
) -> None:
    from agent_graph.flow import check, compile

    case, text = SEED_TEXTS[seed]
    mutated = mutate(text, edits)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "flows"
        shutil.copytree(case, root)
        (root / "main" / "FLOW.md").write_text(mutated, encoding="utf-8", newline="")
        diagnostics = check(root / "main", lenient=lenient)
        errors = [d for d in diagnostics if d.severity == "error"]
        if errors:
            with pytest.raises(AgentGraphError) as raised:
                compile(root / "main", lenient=lenient)
            assert raised.value.code == errors[0].code
        else:
            compile(root / "main", lenient=lenient)
    assert isinstance(diagnostics, list)
    for d in diagnostics:
        assert isinstance(d, Diagnostic)
        assert d.code in CODES, (d.code, d.message)
        assert d.severity in ("error", "warning")
        assert d.message
        if d.line is not None:
            assert d.line >= 1
            assert d.column is None or d.column >= 1


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=2_000))
def test_arbitrary_bytes_give_only_coded_diagnostics(data: bytes) -> None:
    from agent_graph.flow import check

    with tempfile.TemporaryDirectory() as tmp:
        package = Path(tmp) / "main"
        package.mkdir()
        (package / "FLOW.md").write_bytes(data)
        diagnostics = check(package)
    assert all(isinstance(d, Diagnostic) and d.code in CODES for d in diagnostics)
    assert any(d.severity == "error" for d in diagnostics)


# -- the fast, deterministic set (issue 26 item 8): 25 mutation kinds on every seed -----------
#
# Runs in CI on every push: each kind is applied, with its own fixed seed, to the FLOW.md
# of every example Flow, every Appendix D fixture and every valid corpus case (siblings,
# scripts and references copied with it), and the result goes through ``check()`` and
# ``compile()``; a sample goes through the ``agc flow check`` command too. The costly kinds
# (10k nodes, megabyte lines) run on one seed, the rest on all.

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Seed:
    """A package to mutate: the directory copied (the package and its siblings) and the
    package's path inside it."""

    name: str
    base: Path
    entry: str


def fuzz_seeds() -> list[Seed]:
    found = [
        Seed(f"example-{p.name}", p.parent, p.name)
        for p in sorted((ROOT / "examples" / "flows").iterdir())
        if (p / "FLOW.md").is_file()
    ]
    fixtures = ROOT / "tests" / "flow_spec_fixtures" / "appendix-d"
    found += [
        Seed(f"appendix-d-{p.name}", fixtures, p.name)
        for p in sorted(fixtures.iterdir())
        if (p / "FLOW.md").is_file()
    ]
    found += [Seed(p.name, p, "main") for p in SEEDS]
    return found  # fmt: skip


FUZZ_SEEDS = fuzz_seeds()
#: Changes the package in place; returns the package's new path when it moved it.
Mutation = Callable[[Path, random.Random], Path | None]
MUTATIONS: dict[str, Mutation] = {}
#: Kinds too costly to run on every seed: the first seed only, and ``check()`` only (the
#: Mermaid parser takes about 0.3 ms a node; compiling 10k nodes would double that).
COSTLY = {"ten-thousand-nodes", "huge-lines", "many-edges"}


def mutation(name: str) -> Callable[[Mutation], Mutation]:
    def register(function: Mutation) -> Mutation:
        MUTATIONS[name] = function
        return function

    return register


def flow_md(pkg: Path) -> Path:
    return pkg / "FLOW.md"


def edit_text(pkg: Path, change: Callable[[str], str]) -> None:
    path = flow_md(pkg)
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8", newline="")


def edit_bytes(pkg: Path, change: Callable[[bytes], bytes]) -> None:
    path = flow_md(pkg)
    path.write_bytes(change(path.read_bytes()))


def into_actions(text: str, links: str, script: str) -> str:
    """``links`` at the start of the first Agent prompt and ``script`` as the first
    argument of the first command, where the checker resolves them (prose elsewhere is
    only notes); appended as a section of its own when the seed has neither."""
    for marker in ("```新建Agent\n", "```复用Agent\n"):
        if marker in text:
            text = text.replace(marker, marker + links + "\n", 1)
            break
    else:
        text += "\n" + links + "\n"
    return text.replace('"args": [', f'"args": ["{script}", ', 1)


def at_random_line(text: str, rng: random.Random, line: str) -> str:
    lines = text.split("\n")
    lines.insert(rng.randrange(len(lines) + 1), line)
    return "\n".join(lines)


@mutation("bit-flips")
def _bit_flips(pkg: Path, rng: random.Random) -> None:
    def flip(data: bytes) -> bytes:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        return bytes(out)

    edit_bytes(pkg, flip)


@mutation("byte-truncation")
def _byte_truncation(pkg: Path, rng: random.Random) -> None:
    edit_bytes(pkg, lambda data: data[: rng.randrange(len(data))])  # may split a character


@mutation("line-edits")
def _line_edits(pkg: Path, rng: random.Random) -> None:
    edits: list[tuple[object, ...]] = []
    for _ in range(6):
        kind = rng.choice(["delete", "duplicate", "swap", "keyword", "keyword-line"])
        edits.append((kind, rng.randrange(10_000), rng.randrange(10_000)) if kind == "swap"
                     else (kind, rng.randrange(100_000), rng.choice(KEYWORDS)) if "keyword" in kind
                     else (kind, rng.randrange(10_000)))  # fmt: skip
    edit_text(pkg, lambda text: mutate(text, edits))


@mutation("shuffled-sections")
def _shuffled_sections(pkg: Path, rng: random.Random) -> None:
    def shuffle(text: str) -> str:
        head, *sections = text.split("\n## ")
        rng.shuffle(sections)
        return "\n## ".join([head, *sections])

    edit_text(pkg, shuffle)


@mutation("huge-lines")
def _huge_lines(pkg: Path, rng: random.Random) -> None:
    def grow(text: str) -> str:
        text = at_random_line(text, rng, "x" * (1 << 20))
        text = text.replace("flowchart TD\n", "flowchart TD\n  " + "a-->" * 50_000 + "b\n", 1)
        return text.replace("## ", "## " + "長" * 100_000 + " ", 1)

    edit_text(pkg, grow)


@mutation("deep-json")
def _deep_json(pkg: Path, rng: random.Random) -> None:
    depth = rng.choice([201, 985, 5000, 50_000])
    deep = "[" * depth + "]" * depth

    def nest(text: str) -> str:
        if "```执行自定义命令\n{" in text:  # inside the seed's own command block
            return text.replace(
                "```执行自定义命令\n{", '```执行自定义命令\n{"stdin": ' + deep + ",", 1
            )
        graph = text.replace("flowchart TD\n", "flowchart TD\n  deep[Deep]\n", 1)
        block = '```执行自定义命令\n{"command": "true", "stdin": ' + deep + "}\n```\n"
        return graph + "\n## Deep\n\n" + block + "\n### 已执行\n\nDone.\n"

    edit_text(pkg, nest)


@mutation("deep-brackets")
def _deep_brackets(pkg: Path, rng: random.Random) -> None:
    opener = rng.choice(["[", "(", "{", "{{", "[[", "(("])
    deep = "n" + opener * 20_000 + "label"
    edit_text(pkg, lambda text: text.replace("flowchart TD\n", f"flowchart TD\n  {deep}\n", 1))


@mutation("odd-unicode")
def _odd_unicode(pkg: Path, rng: random.Random) -> None:
    odd = ["\u202e", "\u200b", "\u200d", "\ufeff", "\u0301" * 50, "\U0001f600", "\u2028",
           "\u2029", "\x85", "\uff3b", "\uff08", "\u3000", "\ufffd", "\u00a0",
           "\x1b[31m"]  # fmt: skip

    def sprinkle(text: str) -> str:
        for _ in range(20):
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(odd) + text[at:]
        return text

    edit_text(pkg, sprinkle)


@mutation("crlf")
def _crlf(pkg: Path, rng: random.Random) -> None:
    edit_bytes(pkg, lambda data: data.replace(b"\n", b"\r\n"))


@mutation("lone-cr")
def _lone_cr(pkg: Path, rng: random.Random) -> None:
    edit_bytes(pkg, lambda data: data.replace(b"\n", b"\r"))


@mutation("mixed-line-endings")
def _mixed_endings(pkg: Path, rng: random.Random) -> None:
    def mix(text: str) -> str:
        return "".join(line + rng.choice(["\n", "\r\n", "\r", "\v", "\f"])
                       for line in text.split("\n"))  # fmt: skip

    edit_text(pkg, mix)


@mutation("bom")
def _bom(pkg: Path, rng: random.Random) -> None:
    bom = b"\xef\xbb\xbf"
    edit_bytes(
        pkg,
        lambda data: rng.choice(
            [bom + data, bom + bom + data, data.replace(b"\n", b"\n" + bom, 3)]
        ),
    )


@mutation("nul-bytes")
def _nul(pkg: Path, rng: random.Random) -> None:
    def insert(data: bytes) -> bytes:
        at = rng.randrange(len(data) + 1)
        return data[:at] + b"\x00" * rng.randint(1, 3) + data[at:]

    edit_bytes(pkg, insert)


@mutation("invalid-utf8")
def _invalid_utf8(pkg: Path, rng: random.Random) -> None:
    bad = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe4\xb8"]

    def insert(data: bytes) -> bytes:
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice(bad) + data[at:]

    edit_bytes(pkg, insert)


@mutation("ten-thousand-nodes")
def _ten_thousand_nodes(pkg: Path, rng: random.Random) -> None:
    count = 10_000
    graph = ["flowchart TD", "  start((开始)) --> n0[Step 0]"]
    graph += [f"  n{i} -->|已执行| n{i + 1}[Step {i + 1}]" for i in range(count - 1)]
    graph.append(f"  n{count - 1} -->|已执行| finish((结束))")
    block = '```执行自定义命令\n{"command": "true"}\n```\n\n### 已执行\n\nDone.\n'
    sections = [f"## Step {i}\n\n{block}" for i in range(count)]
    head = "---\nname: Many\ndescription: Ten thousand steps.\n---\n\n"
    flow_md(pkg).write_text(head + "```mermaid\n" + "\n".join(graph) + "\n```\n\n"
                            + "\n".join(sections), encoding="utf-8")  # fmt: skip


@mutation("many-edges")
def _many_edges(pkg: Path, rng: random.Random) -> None:
    extra = "".join(f"  start((开始)) -->|r{i}| finish((结束))\n" for i in range(2_000))
    edit_text(pkg, lambda text: text.replace("flowchart TD\n", "flowchart TD\n" + extra, 1))


CHILD_CALL = '```执行Flow\n{{"flow": "{target}", "task": "{{outcome}}"}}\n```\n'


def call_graph(pkg: Path, target: str) -> None:
    flow_md(pkg).write_text(
        "---\nname: Loop\ndescription: Runs a child Flow.\n---\n\n```mermaid\nflowchart TD\n"
        "  start((开始)) --> c[Call]\n  c --> finish((结束))\n"
        "```\n\n## Call\n\n" + CHILD_CALL.format(target=target),
        encoding="utf-8",
    )


@mutation("self-referencing-child")
def _self_child(pkg: Path, rng: random.Random) -> None:
    call_graph(pkg, pkg.name)


@mutation("child-cycle")
def _child_cycle(pkg: Path, rng: random.Random) -> None:
    other = pkg.parent / "fuzz-other"
    other.mkdir()
    call_graph(other, pkg.name)
    call_graph(pkg, "fuzz-other")


@mutation("bad-child-targets")
def _bad_child_targets(pkg: Path, rng: random.Random) -> None:
    target = rng.choice(["x" * 300, "../" + pkg.name, "a/b", "", "\u00e9" * 200, "con", "-x"])
    call_graph(pkg, target)


@mutation("symlinks-out")
def _symlinks_out(pkg: Path, rng: random.Random) -> None:
    outside = pkg.parent.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text("# secret\n", encoding="utf-8")
    (outside / "tool.mjs").write_text("export {};\n", encoding="utf-8")
    for top in ("references", "scripts"):
        (pkg / top).mkdir(exist_ok=True)
    (pkg / "references" / "escape.md").symlink_to(outside / "secret.md")
    (pkg / "scripts" / "escape.mjs").symlink_to(outside / "tool.mjs")
    (pkg / "references" / "loop.md").symlink_to(pkg / "references" / "loop.md")
    (pkg / "references" / "dir-out").symlink_to(outside, target_is_directory=True)
    links = ("See [out](references/escape.md), [loop](references/loop.md) "
             "and [dir](references/dir-out/secret.md).")  # fmt: skip
    script = rng.choice(["scripts/escape.mjs", "scripts/../../outside/tool.mjs"])
    edit_text(pkg, lambda text: into_actions(text, links, script))


@mutation("symlinked-entry")
def _symlinked_entry(pkg: Path, rng: random.Random) -> None:
    outside = pkg.parent.parent / "outside-flow.md"
    outside.write_bytes(flow_md(pkg).read_bytes())
    flow_md(pkg).unlink()
    flow_md(pkg).symlink_to(outside if rng.random() < 0.5 else pkg / "missing.md")


@mutation("special-files")
def _special_files(pkg: Path, rng: random.Random) -> None:
    for top in ("references", "scripts"):
        (pkg / top).mkdir(exist_ok=True)
    os.mkfifo(pkg / "scripts" / "pipe.mjs")
    os.mkfifo(pkg / "references" / "pipe.md")
    (pkg / "references" / "dir.md").mkdir()
    links = "[p](references/pipe.md) [d](references/dir.md)"
    edit_text(pkg, lambda text: into_actions(text, links, "scripts/pipe.mjs"))


@mutation("frontmatter")
def _frontmatter(pkg: Path, rng: random.Random) -> None:
    bodies = [
        "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nname: *c\ndescription: d\n",
        "name: [" * 5000 + "\n", "name: !!python/object:os.system x\ndescription: d\n",
        "name: x\nname: y\ndescription: d\n", "? [a]\n: b\n", "name: |\n  \x07\n", "",
    ]  # fmt: skip

    def replace(text: str) -> str:
        rest = text.split("---", 2)[-1]
        return "---\n" + rng.choice(bodies) + "---" + rest

    edit_text(pkg, replace)


@mutation("fences")
def _fences(pkg: Path, rng: random.Random) -> None:
    def change(text: str) -> str:
        choice = rng.randrange(4)
        if choice == 0:
            return text.replace("```", "````", 1)  # the mermaid fence closes no more
        if choice == 1:
            return text.rsplit("```", 1)[0]  # the last block never closes
        if choice == 2:
            return text.replace("```", "~~~")
        return text + "\n" + "```\n" * 999 + "````mermaid\nflowchart TD\n"

    edit_text(pkg, change)


@mutation("long-identifiers")
def _long_identifiers(pkg: Path, rng: random.Random) -> None:
    ref = "n" + "x" * 100_000
    edit_text(
        pkg,
        lambda text: text.replace(
            "start((开始)) --> ", f"start((开始)) --> {ref}[Long]\n  {ref} -->|r| ", 1
        ),
    )


@mutation("whitespace")
def _whitespace(pkg: Path, rng: random.Random) -> None:
    def change(text: str) -> str:
        text = text.replace("  ", "\t") if rng.random() < 0.5 else text.replace("\n", " \t\n")
        return rng.choice(["", " ", "\n\n\n", "\t"]) + text

    edit_text(pkg, change)


@mutation("empty-and-blank")
def _empty(pkg: Path, rng: random.Random) -> None:
    flow_md(pkg).write_bytes(
        rng.choice([b"", b" ", b"\n" * 10_000, b"---\n---\n", b"\xef\xbb\xbf"])
    )


@mutation("non-utf8-names")
def _non_utf8_names(pkg: Path, rng: random.Random) -> Path | None:
    """Names the file system allows but UTF-8 records cannot hold (bytes decoded as lone
    surrogates): a resource file, a directory, or the package directory itself."""
    odd = os.fsdecode(rng.choice([b"\xff", b"x\xe4\xb8", b"\xed\xa0\x80"]))
    choice = rng.randrange(3)
    if choice == 0:
        (pkg / "references").mkdir(exist_ok=True)
        (pkg / "references" / f"{odd}.md").write_text("# odd\n", encoding="utf-8")
        return None
    if choice == 1:
        (pkg / "scripts" / odd).mkdir(parents=True)
        (pkg / "scripts" / odd / "x.mjs").write_text("export {};\n", encoding="utf-8")
        return None
    moved = pkg.with_name(pkg.name + odd)
    pkg.rename(moved)
    return moved


@mutation("odd-resource-paths")
def _odd_resource_paths(pkg: Path, rng: random.Random) -> None:
    """Resource paths the file system refuses: a NUL from a JSON escape, a name over
    255 bytes, a path over PATH_MAX, a file used as a directory."""
    script = rng.choice(
        [
            "scripts/a\\u0000.mjs",
            "scripts/" + "a" * 5000 + ".mjs",
            "scripts/" + ("a" * 200 + "/") * 30 + "x.mjs",
            "scripts/FLOW.md/x.mjs",
        ]
    )
    link = rng.choice(["references/" + "é" * 300 + ".md", "references/" + "b/" * 3000 + "c.md",
                       "references/a%00b.md", "references/guide.md/x.md"])  # fmt: skip
    edit_text(pkg, lambda text: into_actions(text, f"[odd]({link})", script))


def test_there_are_at_least_twenty_five_mutation_kinds_and_seeds_of_each_source() -> None:
    assert len(MUTATIONS) >= 25
    names = [seed.name for seed in FUZZ_SEEDS]
    assert any(n.startswith("example-") for n in names)
    assert any(n.startswith("appendix-d-") for n in names)
    assert any(n.startswith("00-valid-") for n in names)


def check_mutated(seed: Seed, kind: str, where: Path) -> list[Diagnostic]:
    """``check()`` and (for a cheap kind) ``compile()`` of ``seed`` mutated by ``kind``
    (copied to ``where``); compile raises exactly when check found an error."""
    from agent_graph.flow import check, compile

    base = where / "flows"
    shutil.copytree(seed.base, base, symlinks=True)
    pkg = base / seed.entry
    pkg = MUTATIONS[kind](pkg, random.Random(f"{kind}/{seed.name}")) or pkg
    diagnostics = check(pkg)
    errors = [d for d in diagnostics if d.severity == "error"]
    if kind in COSTLY:
        return diagnostics
    if errors:
        with pytest.raises(AgentGraphError) as raised:
            compile(pkg)
        assert raised.value.code == errors[0].code
    else:
        compile(pkg)
    return diagnostics


def assert_coded_and_placed(diagnostics: list[Diagnostic], context: str) -> None:
    for d in diagnostics:
        assert isinstance(d, Diagnostic), context
        assert d.code in CODES, (context, d.code, d.message)
        assert d.code != codes.UNEXPECTED_ERROR, (context, d.message)
        assert d.severity in ("error", "warning"), context
        assert d.message, context
        assert d.path, (context, d.code)  # the file; a line and column within it, if any
        assert (d.line is None) == (d.column is None) or d.column is None, (context, d.code)
        if d.line is not None:
            assert d.line >= 1, (context, d.code)
            assert d.column is None or d.column >= 1, (context, d.code)


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_each_mutation_kind_gives_only_coded_placed_diagnostics(kind: str, tmp_path: Path) -> None:
    seeds = FUZZ_SEEDS[:1] if kind in COSTLY else FUZZ_SEEDS
    for i, seed in enumerate(seeds):
        diagnostics = check_mutated(seed, kind, tmp_path / str(i))
        assert_coded_and_placed(diagnostics, f"{kind} on {seed.name}")


CLI_SAMPLE = ["bit-flips", "special-files", "symlinks-out", "deep-json"]


@pytest.mark.parametrize("kind", CLI_SAMPLE)
def test_the_check_command_reports_mutations_as_coded_json(kind: str, tmp_path: Path) -> None:
    seed = FUZZ_SEEDS[0]
    base = tmp_path / "flows"
    shutil.copytree(seed.base, base, symlinks=True)
    pkg = base / seed.entry
    pkg = MUTATIONS[kind](pkg, random.Random(f"{kind}/{seed.name}")) or pkg
    done = subprocess.run(
        [sys.executable, "-m", "agent_graph", "flow", "check", str(pkg), "--format", "json"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode in (0, 1), (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    # a valid package's report is on stdout, a refusal's error document on stderr
    document = json.loads(done.stdout if done.returncode == 0 else done.stderr)
    found = document.get("error", {}).get("diagnostics", []) or document.get("diagnostics", [])
    if done.returncode == 1:
        assert document["error"]["code"] in CODES
        assert document["error"]["code"] != codes.UNEXPECTED_ERROR
        assert found
    for d in found:
        assert d["code"] in CODES
        assert d["code"] != codes.UNEXPECTED_ERROR
        assert d["path"]
        if "line" in d.get("detail", {}):
            assert d["detail"]["line"] >= 1


#: (seed, child package) pairs: the mutation is applied to the child a Flow runs.
CHILDREN = [("example-ship-release", "preflight"), ("appendix-d-release", "release-check"),
            ("00-valid-reference", "helper")]  # fmt: skip


@pytest.mark.parametrize("kind", sorted(set(MUTATIONS) - COSTLY))
def test_a_mutated_child_flow_gives_only_coded_placed_diagnostics(
    kind: str, tmp_path: Path
) -> None:
    from agent_graph.flow import check

    seeds = {seed.name: seed for seed in FUZZ_SEEDS}
    for i, (name, child) in enumerate(CHILDREN):
        seed = seeds[name]
        base = tmp_path / str(i) / "flows"
        shutil.copytree(seed.base, base, symlinks=True)
        MUTATIONS[kind](base / child, random.Random(f"{kind}/{name}/{child}"))
        assert_coded_and_placed(check(base / seed.entry), f"{kind} on {name}'s {child}")
