"""The action reader's one-search screens stand for the checks they let it skip.

``actions._NOTABLE`` decides whether a command or argument is looked at further (absolute
path, a script, a path under scripts/); it must hold exactly when one of those three
checks does, or a warning would be lost (or a string looked at for nothing). An Agent
prompt with no ``](`` skips the link scan; with and without a link its pieces are the
same ones the full reading gives.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph.compiler.flow import actions
from agent_graph.compiler.flow.findings import Findings
from agent_graph.compiler.flow.markdown import Fence
from agent_graph.compiler.flow.resources import PackageFiles

_PARTS = ["scripts/", "scripts", "/", "~", "C:\\", "c:/", "./", "=", ":", ",", " ", "\t", "a",
          "x.mjs", "-", "{outcome}", "\n"]  # fmt: skip


def _screened(text: str) -> bool:
    return bool(
        text.startswith("scripts/")
        or actions._ABSOLUTE.match(text)
        or actions._LOOKS_LIKE_SCRIPT.search(text)
    )


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PARTS), max_size=6).map("".join) | st.text(max_size=12))
def test_notable_is_the_three_checks(text: str) -> None:
    assert bool(actions._NOTABLE.search(text)) == _screened(text)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PARTS), max_size=5).map("".join), max_size=4))
def test_the_joined_args_screen_finds_every_notable_argument(args: list[str]) -> None:
    if any(_screened(arg) for arg in args):
        assert actions._NOTABLE_LINES.search("\n".join(args))


def test_the_joined_args_screen_on_fixed_lists(tmp_path: Path) -> None:
    for args in (["-e", "scripts/a.mjs"], ["x", "--c=scripts/b"], ["/abs"], ["a", "~/x"]):
        assert actions._NOTABLE_LINES.search("\n".join(args)), args
    assert not actions._NOTABLE_LINES.search("\n".join(["-e", "0", "node"]))
    # a line start inside an argument may pass the screen; each is then read on its own
    block = '{"command": "n", "args": ["a\\n/b", "c"]}'
    assert actions._NOTABLE_LINES.search("a\n/b\nc")
    findings = Findings("FLOW.md", "x")
    fence = Fence(3, 1, actions.COMMAND, 4, block, 4, True)
    action = actions.read_action(fence, PackageFiles(str(tmp_path)), findings, True)
    assert (action.valid, findings.items) == (True, [])
    assert action.arg_texts == ("a\n/b", "c")


def test_notable_on_fixed_strings() -> None:
    for text in ["node", "scripts/a.mjs", "--x=scripts/a.mjs", "./scripts/run.sh", "/bin/sh",
                 "~/x", "C:\\x", "scripts", "myscripts/x", "a scripts/ b", "-e"]:  # fmt: skip
        assert bool(actions._NOTABLE.search(text)) == _screened(text), text


def _pieces(body: str, tmp_path: Path) -> list[tuple[str, str, str]]:
    fence = Fence(3, 1, actions.AGENT_NEW, 4, body, 4, True)
    action = actions.read_action(fence, PackageFiles(str(tmp_path)), Findings("FLOW.md", "x"), True)
    return [(piece.kind, piece.text, piece.fragment) for piece in action.prompt]


def test_prompt_pieces_with_and_without_links(tmp_path: Path) -> None:
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "a.md").write_text("a", encoding="utf-8")
    assert _pieces("Do {outcome} then {outcome}.", tmp_path) == [
        ("text", "Do ", ""), ("outcome", "", ""), ("text", " then ", ""), ("outcome", "", ""),
        ("text", ".", ""),
    ]  # fmt: skip
    assert _pieces("Read [a](references/a.md#top) and {outcome}", tmp_path) == [
        ("text", "Read [a](", ""), ("resource", "references/a.md", "#top"),
        ("text", ") and ", ""), ("outcome", "", ""),
    ]  # fmt: skip
    # a placeholder inside a link target stays text of the target
    assert _pieces("[x](references/{outcome}.md) {outcome}", tmp_path)[-1] == ("outcome", "", "")


def _read(marker: str, body: str, root: Path) -> actions.Action:
    fence = Fence(3, 1, marker, 4, body, 4, True)
    return actions.read_action(fence, PackageFiles(str(root)), Findings("FLOW.md", "x"), True)


def test_what_lowering_asks_of_a_checked_block(tmp_path: Path) -> None:
    """Checking keeps texts; the command, args, stdin slots and prompt pieces are made
    from them when asked, the same ones whichever way the block was read."""
    from agent_graph.compiler.flow.templates import Slot

    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "a.mjs").write_text("", encoding="utf-8")
    body = (
        '{"command": "run {outcome}", "args": ["scripts/a.mjs", "-x{outcome}y", "/abs", '
        '"scripts/none.mjs"], "stdin": {"in": "{outcome}", "n": [1, "a{outcome}"]}}'
    )
    action = _read(actions.COMMAND, body, tmp_path)
    assert action.command == ("run ", "")
    assert action.args == [
        actions.Arg(("scripts/a.mjs",), "scripts/a.mjs"),
        actions.Arg(("-x", "y"), None),
        actions.Arg(("/abs",), None),
        actions.Arg(("scripts/none.mjs",), None),  # a missing script: refused, not mapped
    ]
    assert not action.valid
    assert action.slots == [Slot(("in",), None, ("", "")), Slot(("n", "1"), None, ("a", ""))]
    assert action.prompt == []
    # with a branch reference the slots are found while checking, branch ones included
    join = _read(
        actions.COMMAND, '{"command": "j", "stdin": {"a": {a.outcome}, "t": "{outcome}"}}', tmp_path
    )
    assert join.slots == [Slot(("a",), "a", ()), Slot(("t",), None, ("", ""))]
    assert join.args == []
    assert join.command == ("j",)
    # a block that is no JSON keeps nothing to lower
    broken = _read(actions.COMMAND, '{"command": ', tmp_path)
    assert (broken.command, broken.args, broken.slots, broken.valid) == ((), [], [], False)
    # an Agent prompt's pieces; a {ref.outcome} in it is a branch use, and stays text
    agent = _read(actions.AGENT_NEW, "Do {outcome} for {a.outcome}", tmp_path)
    assert [(p.kind, p.text) for p in agent.prompt] == [
        ("text", "Do "), ("outcome", ""), ("text", " for {a.outcome}"),
    ]  # fmt: skip
    assert [u.ref for u in agent.branch_uses] == ["a"]
    assert (agent.command, agent.args, agent.slots) == ((), [], [])


def test_resolve_is_realpath_below_a_real_root(tmp_path: Path) -> None:
    """``resources._resolve`` looks only below the (real) package root; it must give what
    ``os.path.realpath`` and a regular-file check give, links and missing parts included."""
    import os

    from agent_graph.compiler.flow import resources

    root = tmp_path / "pkg"
    (root / "scripts" / "deep").mkdir(parents=True)
    (root / "scripts" / "a.mjs").write_text("", encoding="utf-8")
    (root / "scripts" / "deep" / "b.mjs").write_text("", encoding="utf-8")
    (tmp_path / "outside.mjs").write_text("", encoding="utf-8")
    (root / "scripts" / "link.mjs").symlink_to(root / "scripts" / "a.mjs")
    (root / "scripts" / "out.mjs").symlink_to(tmp_path / "outside.mjs")
    (root / "scripts" / "dirlink").symlink_to(root / "scripts" / "deep", target_is_directory=True)
    (root / "scripts" / "dangling.mjs").symlink_to(root / "scripts" / "none.mjs")
    (root / "scripts" / "loop.mjs").symlink_to(root / "scripts" / "loop.mjs")
    real_root = os.path.realpath(root)
    for path in ["scripts/a.mjs", "scripts/deep/b.mjs", "scripts/link.mjs", "scripts/out.mjs",
                 "scripts/dirlink/b.mjs", "scripts/dangling.mjs", "scripts/none.mjs",
                 "scripts/no/such/x.mjs", "scripts/a.mjs/x.mjs", "scripts/deep",
                 "scripts/dirlink", "scripts/loop.mjs"]:  # fmt: skip
        segments = path.split("/")
        expected = os.path.realpath(os.path.join(real_root, *segments))
        assert resources._resolve(real_root, segments) == (expected, os.path.isfile(expected)), path
