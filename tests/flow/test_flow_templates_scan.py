"""The JSON-template lexer and reader of action blocks, against plain references.

:func:`templates.lex` jumps from one significant character to the next with regular
expressions; :func:`reference_lex` below walks every character, as the lexer once did,
and both must find the same placeholders, member names (with their offsets and depths),
repeated names and stand-in text. :func:`templates._loads` reads through ``json.loads``
when that gives :func:`parse_json`'s value, and must give exactly that value (types,
negative zero, the JS number model) or raise its error, message and position included.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_graph.compiler.flow import templates
from agent_graph.documents.json_text import JsonError, parse_json

_WS = " \t\r\n"


def _significant(text: str, index: int, step: int) -> str:
    while 0 <= index < len(text) and text[index] in _WS:
        index += step
    return text[index] if 0 <= index < len(text) else ""


def reference_lex(text: str) -> templates.Lexed:
    """Character by character: the lexer's rules without its shortcuts."""
    out = templates.Lexed()
    pieces: list[str] = []
    frames: list[set[str] | None] = []
    index = last = counter = 0
    end = len(text)
    while index < end:
        char = text[index]
        if char == '"':
            close = index + 1
            while close < end and text[close] != '"':
                close += 2 if text[close] == "\\" else 1
            raw = text[index + 1 : min(close, end)]
            for inner in templates.PLACEHOLDER.finditer(raw):
                out.placeholders.append(
                    templates.Placeholder(inner.group(1), index + 1 + inner.start(), True, False)
                )
            after = close + 1
            if frames and frames[-1] is not None and _significant(text, after, 1) == ":":
                value_at = text.index(":", after) + 1
                while value_at < end and text[value_at] in _WS:
                    value_at += 1
                key = templates.Key(templates._decode_key(raw), index, len(frames), value_at)
                if key.name in frames[-1]:
                    out.duplicates.append(key)
                frames[-1].add(key.name)
                out.keys.append(key)
                if key.depth == 1:
                    out.top.setdefault(key.name, key)
            index = after
            continue
        if char == "{":
            match = templates.PLACEHOLDER.match(text, index)
            if match is not None:
                ref = match.group(1)
                standalone = _significant(text, index - 1, -1) in ("", ":", ",", "[") and (
                    _significant(text, match.end(), 1) in ("", ",", "}", "]")
                )
                out.placeholders.append(templates.Placeholder(ref, index, False, standalone))
                width = match.end() - index
                if ref is None:
                    stand_in = "null".ljust(width)
                else:
                    counter += 1
                    stand_in = '"\\u0000' + str(counter).rjust(width - 8, "0") + '"'
                    out.stand_ins["\0" + str(counter).rjust(width - 8, "0")] = ref
                pieces += [text[last:index], stand_in]
                last = index = match.end()
                continue
            frames.append(set())
        elif char == "[":
            frames.append(None)
        elif char in "}]" and frames:
            frames.pop()
        index += 1
    pieces.append(text[last:])
    out.text = "".join(pieces)
    return out


PIECES = [
    "{", "}", "[", "]", '"', ":", ",", " ", "\n", "\\", '\\"', "{outcome}", "{a.outcome}",
    '"{outcome}"', '"x {b.outcome} y"', '"stdin"', '"command"', '"args"', '"k"', "1", "-0",
    "null", "true", '"\\u00e9"', "\t", "\r", "x", "é",
]  # fmt: skip


def template_of(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 24)))


COMMAND = '{"command": "node", "args": ["-e", "0"], "stdin": {"in": "{outcome}", "a": {x.outcome}}}'


@pytest.mark.parametrize(
    "text",
    [
        COMMAND,
        '{"a": 1, "a": 2, "b": {"a": 3, "a": 4}}',
        '{"k\\u0041": [1, {"x": "y\\"z"}], "s": "{outcome}"}',
        '{"open": "no end',
        '{"slash": "ends \\',
        "",
        "[{outcome}, {a.outcome}]",
    ],
)
def test_lex_finds_what_the_character_walk_finds(text: str) -> None:
    assert templates.lex(text) == reference_lex(text)


def test_lex_on_random_templates() -> None:
    rng = random.Random(29)
    for _ in range(5000):
        text = template_of(rng)
        assert templates.lex(text) == reference_lex(text), text


def _same(a: Any, b: Any) -> bool:
    """Equal, with the same types and the same sign of zero all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _outcome(reader: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", reader(text)
    except JsonError as error:
        return "error", (error.message, error.line, error.column)


JSON_TEXTS = [
    "0", "-0", "-0.0", "1.0", "1e3", "1E400", "-1e-400", "9007199254740993", "1" * 45,
    "12345678901234567890123456789012345678901", '{"a": 1, "a": 2}', '{"b": 1, "a": {}, "b": 3}',
    "NaN", "[Infinity]", '{"x": -Infinity}', '"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"',
    '"\ud800"', "[" * 199 + "]" * 199, "[" * 201 + "]" * 201, '{"a": [' * 120 + "]}" * 120,
    " [1, 2] ", "\ufeff{}", "{} x", '{"a" 1}', "[1,]", '{"a":1,}', '"\x01"', "01", "-", "",
    '"\\x"', "[1 2]", "tru", '{"a": "\\u0000"}',
]  # fmt: skip


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_loads_reads_as_parse_json_reads(text: str) -> None:
    fast = _outcome(templates._loads, text)
    slow = _outcome(lambda t: parse_json(t)[0], text)
    assert fast[0] == slow[0]
    assert _same(fast[1], slow[1]) if fast[0] == "value" else fast == slow


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([None, 1, 2]))
def test_loads_on_generated_json(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=indent == 2)
    fast = _outcome(templates._loads, text)
    slow = _outcome(lambda t: parse_json(t)[0], text)
    assert fast[0] == slow[0]
    assert _same(fast[1], slow[1]) if fast[0] == "value" else fast == slow


def _through_the_lexer(text: str) -> tuple[Any, tuple[str, int | None, int | None] | None, Any]:
    """What :func:`templates.parse` gave before its C-decoder path: lex, then read."""
    lexed = templates.lex(text)
    try:
        return templates._loads(lexed.text), None, lexed
    except JsonError as error:
        return None, (error.message, error.line, error.column), lexed


def reference_slots(value: Any, stand_ins: dict[str, str]) -> list[templates.Slot]:
    """Every value visited, in document order: the slot walk without its shortcuts."""
    found: list[templates.Slot] = []
    todo: list[tuple[tuple[str, ...], Any]] = [((), value)]
    while todo:
        path, current = todo.pop()
        if isinstance(current, str):
            ref = stand_ins.get(current)
            if ref is not None:
                found.append(templates.Slot(path, ref, ()))
            elif templates.OUTCOME in current:
                found.append(templates.Slot(path, None, tuple(current.split(templates.OUTCOME))))
        elif isinstance(current, dict):
            todo.extend(((*path, k), v) for k, v in reversed(current.items()))
        elif isinstance(current, list):
            todo.extend(((*path, str(i)), v) for i, v in reversed(list(enumerate(current))))
    return found


def _parses_as_the_lexer_reads(text: str) -> None:
    parsed = templates.parse(text)
    value, error, lexed = _through_the_lexer(text)
    expected = reference_slots(value, lexed.stand_ins)
    assert templates.slots(parsed.value, parsed.stand_ins, text) == expected
    assert templates.slots(parsed.value, parsed.stand_ins) == expected
    found = parsed.error
    assert (found.message, found.line, found.column) == error if found else error is None
    assert _same(parsed.value, value)
    assert parsed.lexed == lexed
    assert parsed.stand_ins == lexed.stand_ins
    if parsed.names is not None:  # what the readers take from names instead of the lexer
        assert isinstance(value, dict)
        assert parsed.names == tuple(k.name for k in lexed.keys if k.depth == 1)
        assert not lexed.duplicates
        for p in lexed.placeholders:  # no finding: {outcome} in strings, refs whole values
            assert p.in_string if p.ref is None else (p.standalone and not p.in_string)
        assert parsed.refs == tuple((p.ref, p.offset) for p in lexed.placeholders if p.ref)


@pytest.mark.parametrize(
    "text",
    [
        *JSON_TEXTS,
        COMMAND,
        '{"command": "node", "args": ["-e", "0"], "stdin": {"in": "{outcome}"}}',
        '{"command": "node", "stdin": {"a": {a.outcome}}}',
        '{"command": "x", "stdin": "{b.outcome}"}',
        '{"a": {"b": 1, "b": 2}}',
        '{"k\\u0041": 1, "kA": 2}',
        '{"\\ud800": 1}',
        '{"a": 1} ',
        "[1, 2]",
        '"{outcome}"',
        '{"a": NaN}',
        '{"stdin": "\\u007boutcome}", "k": ["\\u007Boutcome\\u007d"]}',
        '{"command": "n", "stdin": {"a": {a.outcome}, "b": [{b.outcome}, "{c.outcome}"]}}',
        '{"command": "n", "stdin": {"a": {a.outcome} , "b": {b.outcome}}, "x": {c.outcome}}',
        '{"command": "n", "stdin": {{a.outcome}: 1}}',
        '{"command": "n", "stdin": "x {a.outcome}"}',
        '{"command": "n", "stdin": ["\\"{a.outcome}"]}',
        '{"command": "n", "stdin": {"a": {a.outcome}}, "stdin": 1}',
        '{"command": "{outcome}", "stdin": {"a": {a.outcome}, "o": {outcome}}}',
        '{"stdin": {a.outcome}}',
        "{a.outcome}",
    ],
)
def test_parse_gives_what_the_lexer_path_gives(text: str) -> None:
    _parses_as_the_lexer_reads(text)


def test_parse_on_random_templates_gives_what_the_lexer_path_gives() -> None:
    rng = random.Random(31)
    for _ in range(3000):
        _parses_as_the_lexer_reads(template_of(rng))


BRANCH = "<a branch's whole result>"
template_strings = st.sampled_from(
    ["{outcome}", "a {outcome} b", "{x.outcome}", "é", "\\", "\x00\x7f", "{outcome", BRANCH]
)
template_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | template_strings,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["command", "args", "stdin", "k", "\u00e9"]), inner)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(template_values, st.sampled_from([None, 1, 2]), st.booleans())
def test_parse_on_generated_objects_gives_what_the_lexer_path_gives(
    value: Any, indent: int | None, repeat: bool
) -> None:
    text = json.dumps({"command": "node", "stdin": value}, indent=indent, ensure_ascii=indent == 2)
    text = text.replace(json.dumps(BRANCH), "{a.outcome}")  # a whole value, where one stood
    if repeat:  # the same name twice in the outer object
        text = text[:-1].rstrip() + ', "command": 1}'
    _parses_as_the_lexer_reads(text)


def _read(text: str, through_lexer: bool) -> tuple[Any, ...]:
    """Everything reading a command block gives: the action's fields and the findings."""
    from agent_graph.compiler.flow import actions
    from agent_graph.compiler.flow.findings import Findings
    from agent_graph.compiler.flow.markdown import Fence
    from agent_graph.compiler.flow.resources import PackageFiles

    fence = Fence(3, 1, actions.COMMAND, 4, text, 4, True)
    findings = Findings("FLOW.md", "x")
    quick = templates._names
    if through_lexer:  # neither shortcut of parse: every block through the lexer
        templates._names = lambda text: None
    try:
        action = actions.read_action(fence, PackageFiles("no-such-package"), findings, True)
    finally:
        templates._names = quick
    return (
        action.command, action.args, action.has_stdin, repr(action.stdin), action.slots,
        action.branch_uses, action.valid, findings.items,
    )  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        '{"command": "node", "stdin": {"a": {a9.outcome}, "b": {b9.outcome}}}',
        '{"command": "n", "stdin": {"a": [1, {a.outcome}]}, "x": {b.outcome}}',
        '{"command": "n", "args": ["{outcome}"], "stdin": {"k": {a.outcome}, "t": "{outcome}"}}',
        '{"command": "n", "stdin": {{a.outcome}: 1}}',
        '{"command": "n", "stdin": "x {a.outcome}"}',
        '{"command": "n", "stdin": {"a": {a.outcome}}, "stdin": 1}',
        '{"command": "n", "extra": {a.outcome}}',
        '{"command": "n", "args": [{a.outcome}]}',
    ],
)
def test_a_command_block_reads_as_through_the_lexer(text: str) -> None:
    assert _read(text, through_lexer=False) == _read(text, through_lexer=True)


@settings(max_examples=200, deadline=None)
@given(template_values, st.sampled_from([None, 1]))
def test_generated_command_blocks_read_as_through_the_lexer(value: Any, indent: int | None) -> None:
    text = json.dumps({"command": "node", "stdin": value, "args": ["-e"]}, indent=indent)
    text = text.replace(json.dumps(BRANCH), "{a.outcome}")
    assert _read(text, through_lexer=False) == _read(text, through_lexer=True)


@pytest.mark.parametrize(
    ("stdin", "warned"),
    [
        ('{"a": "run scripts/x.mjs"}', 1),
        ('["scripts\\/x.mjs", "--f=scripts/y"]', 2),
        ('{"a": "\\u0073cripts/x.mjs"}', 1),
        ('{"a": "scripts"}', 0),
        ('{"a": "{outcome}"}', 0),
    ],
)
def test_stdin_text_naming_a_script_is_warned_at_stdin(stdin: str, warned: int) -> None:
    text = '{"command": "node",\n "stdin": ' + stdin + "}"
    *_, findings = _read(text, through_lexer=False)
    found = [d for d in findings if "names a package script, but stdin" in d.message]
    assert len(found) == warned
    assert all((d.line, d.column) == (5, 2) for d in found)  # the stdin member's quote
