"""The Flow format's example packages (D.1–D.3) check valid; its one-rule variants (D.4) fail.

The numbers are explained in docs/flows.md, "Rule numbers". The packages are carried in
``tests/flow_spec_fixtures/appendix-d/`` exactly as the format's specification gives
them, since they are the examples a validator must accept; each test writes them into a
temporary ``.flows/`` folder and edits only that copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_graph.errors import Diagnostic

FIXTURES = Path(__file__).parents[1] / "flow_spec_fixtures" / "appendix-d"


def appendix_d_files() -> dict[str, str]:
    """``{pkg/rel/path: content}`` for every file of the example packages."""
    return {
        path.relative_to(FIXTURES).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(FIXTURES.rglob("*"))
        if path.is_file()
    }


def write(root: Path, files: dict[str, str]) -> Path:
    flows = root / ".flows"
    for rel, content in files.items():
        target = flows / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return flows


def check(path: Path) -> list[Diagnostic]:
    from agent_graph.flow import check as flow_check

    return flow_check(path)


def show(diagnostics: list[Diagnostic]) -> str:
    return "\n".join(f"{d.location()}: {d.severity} {d.code}: {d.message}" for d in diagnostics)


@pytest.fixture
def files() -> dict[str, str]:
    return appendix_d_files()


PACKAGES = ["version-report", "fix-and-verify", "release", "release-check"]


def test_the_appendix_d_fixtures_are_whole(files: dict[str, str]) -> None:
    """Exactly the files the examples lay out: the copies are the specification's, not ours
    to extend, so a file added or lost is caught here."""
    assert sorted(files) == [
        "fix-and-verify/FLOW.md",
        "fix-and-verify/references/done-criteria.md",
        "fix-and-verify/scripts/run-tests.mjs",
        "release-check/FLOW.md",
        "release-check/references/release-checklist.md",
        "release-check/scripts/verify-version.mjs",
        "release/FLOW.md",
        "release/scripts/merge-checks.mjs",
        "release/scripts/run-unit-tests.mjs",
        "version-report/FLOW.md",
        "version-report/scripts/format-report.mjs",
        "version-report/scripts/read-version.mjs",
    ]
    assert sorted({rel.split("/")[0] for rel in files}) == sorted(PACKAGES)
    assert all(files[f"{p}/FLOW.md"].startswith("---\n") for p in PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_an_appendix_d_package_checks_valid(
    package: str, files: dict[str, str], tmp_path: Path
) -> None:
    flows = write(tmp_path, files)
    diagnostics = check(flows / package)
    assert diagnostics == [], show(diagnostics)
    assert check(flows / package / "FLOW.md") == []


@dataclass(frozen=True)
class Variant:
    name: str
    file: str  # the FLOW.md edited
    edits: tuple[tuple[str, str], ...]
    root: str  # the package checked
    codes: tuple[str, ...]  # codes the table lists; with one, it is the first error


REVIEW_OLD = "  review -->|blocked| finish\n"
REVIEW_NEW = "  review -->|blocked| escalate[Escalate to the release flow]\n  escalate --> finish\n"
ESCALATE = '\n## Escalate to the release flow\n\n```执行Flow\n{ "flow": "release" }\n```\n'
FAILED_DESC = (
    "### 已失败\n\nThe child Run failed. Content: status, runId, flowId, result and error.\n"
)

VARIANTS = [
    Variant(
        "V1-command-result",
        "version-report/FLOW.md",
        (
            ("report -->|已执行| finish((结束))", "report -->|printed| finish((结束))"),
            (
                "### 已执行\n\nThe report was written to stdout.",
                "### printed\n\nThe report was written to stdout.",
            ),
        ),
        "version-report",
        ("flow-command-result-invalid",),
    ),
    Variant(
        "V2-outcome-outside-string",
        "version-report/FLOW.md",
        (('"stdin": { "task": "{outcome}" }', '"stdin": { "task": {outcome} }'),),
        "version-report",
        ("flow-outcome-outside-string",),
    ),
    Variant(
        "V3-retry-into-fork",
        "release/FLOW.md",
        (("gate -->|fix| prepare", "gate -->|fix| checks"),),
        "release",
        ("flow-fork-in-degree",),
    ),
    Variant(
        "V4-join-ref-missing",
        "release/FLOW.md",
        (('"unit": {unit.outcome},\n    "lint": {lint.outcome}', '"unit": {unit.outcome}'),),
        "release",
        ("flow-join-ref-missing",),
    ),
    Variant(
        "V5-reference-cycle",
        "release-check/FLOW.md",
        (
            (REVIEW_OLD, REVIEW_NEW),
            (
                "At least one item fails. Content: the failing items. The child Run still"
                " completes.\n",
                "At least one item fails. Content: the failing items. The child Run still"
                " completes.\n" + ESCALATE,
            ),
        ),
        "release",
        ("flow-ref-cycle",),
    ),
    Variant(
        "dot-segment",
        "release-check/FLOW.md",
        (('"scripts/verify-version.mjs"', '"scripts/../scripts/verify-version.mjs"'),),
        "release-check",
        ("resource-path-dot-segment",),
    ),
    Variant(
        "reference-not-md",
        "release-check/FLOW.md",
        (("(references/release-checklist.md)", "(references/release-checklist.txt)"),),
        "release-check",
        ("resource-reference-not-md",),
    ),
    Variant(
        "orphan-heading",
        "release-check/FLOW.md",
        (
            (
                "The child Run still completes.\n",
                "The child Run still completes.\n\n## Notes for maintainers\n\nKeep it short.\n",
            ),
        ),
        "release-check",
        ("flow-heading-orphan",),
    ),
    Variant(
        "ref-edges",
        "release/FLOW.md",
        (
            ("  checklist -->|已失败| triage[Triage the failed checklist]\n", ""),
            ("  triage -->|retry| prepare\n  triage -->|abort| finish\n", ""),
            ("\n" + FAILED_DESC, ""),
            (
                "\n## Triage the failed checklist\n\n```复用Agent\nThe release checklist Run"
                " failed. Decide what to do:\n{outcome}\n```\n\n### retry\n\nThe failure is"
                " fixable. Content: what to change before trying again.\n\n### abort\n\n"
                "Stop the release. Content: the reason.\n",
                "",
            ),
        ),
        "release",
        ("flow-ref-edges-invalid",),
    ),
    Variant(
        "ref-extra-field",
        "release/FLOW.md",
        (
            (
                '  "flow": "release-check",\n',
                '  "flow": "release-check",\n  "cwd": "packages/app",\n',
            ),
        ),
        "release",
        ("flow-ref-extra-field",),
    ),
    Variant(
        "branch-not-command",
        "release/FLOW.md",
        (
            (
                '```执行自定义命令\n{\n  "command": "npx",\n  "args": ["--no-install", "eslint",'
                ' "."]\n}\n```',
                "```复用Agent\nLint the project in the working directory.\n```",
            ),
        ),
        "release",
        ("flow-branch-not-command",),
    ),
    Variant(
        "branch-ref-not-standalone",
        "release/FLOW.md",
        (('"unit": {unit.outcome}', '"unit": "see {unit.outcome}"'),),
        "release",
        ("flow-branch-ref-not-standalone", "flow-join-ref-missing"),
    ),
    Variant(
        "branch-ref-misplaced",
        "release/FLOW.md",
        (
            (
                '"stdin": { "release": "{outcome}" }',
                '"stdin": { "release": "{outcome}", "lint": {lint.outcome} }',
            ),
        ),
        "release",
        ("flow-branch-ref-misplaced",),
    ),
    Variant(
        "child-reuse-first",
        "release-check/FLOW.md",
        (("```新建Agent\nGo through", "```复用Agent\nGo through"),),
        "release",
        ("flow-child-reuse-first",),
    ),
]


def apply(files: dict[str, str], variant: Variant) -> dict[str, str]:
    out = dict(files)
    text = out[variant.file]
    for old, new in variant.edits:
        assert text.count(old) == 1, f"{variant.name}: {old!r} is not in the example's text once"
        text = text.replace(old, new)
    out[variant.file] = text
    return out


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_a_d4_variant_fails_with_its_code(
    variant: Variant, files: dict[str, str], tmp_path: Path
) -> None:
    flows = write(tmp_path, apply(files, variant))
    diagnostics = check(flows / variant.root)
    errors = [d for d in diagnostics if d.severity == "error"]
    found = [d.code for d in errors]
    for code in variant.codes:
        assert code in found, show(diagnostics)
    if len(variant.codes) == 1:
        assert found[0] == variant.codes[0], show(diagnostics)


def test_a_root_whose_first_agent_reuses_is_valid(files: dict[str, str], tmp_path: Path) -> None:
    """D.4, last row: release-check with review as 复用Agent is valid run directly."""
    variant = next(v for v in VARIANTS if v.name == "child-reuse-first")
    flows = write(tmp_path, apply(files, variant))
    diagnostics = check(flows / "release-check")
    assert [d for d in diagnostics if d.severity == "error"] == [], show(diagnostics)


def test_v5_reports_the_cycle_in_the_package_that_closes_it(
    files: dict[str, str], tmp_path: Path
) -> None:
    variant = next(v for v in VARIANTS if v.name == "V5-reference-cycle")
    flows = write(tmp_path, apply(files, variant))
    cycle = [d for d in check(flows / "release") if d.code == "flow-ref-cycle"]
    text = (flows / "release-check" / "FLOW.md").read_text(encoding="utf-8").split("\n")
    line = next(i for i, t in enumerate(text, 1) if t == '{ "flow": "release" }')
    assert [(d.path, d.line, d.column, d.detail.get("flow")) for d in cycle] == [
        ("release-check/FLOW.md", line, 11, "release-check")
    ]
