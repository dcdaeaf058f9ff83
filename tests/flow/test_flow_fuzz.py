"""Fuzz: mutated FLOW.md texts give only catalogued diagnostics, never an exception.

The seeds are the valid base packages of ``tests/flow_corpus/00-valid-*`` (the root's
FLOW.md is mutated; siblings, scripts and references stay as they are). Mutations:
delete, duplicate or swap lines, insert random characters or the format's keywords,
truncate. ``compile()`` agrees with ``check()``: it raises with the first error exactly
when there is one.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
