"""The action block of each node section, read and checked on its own (A.29–A.43,
A.56–A.62, A.1–A.7).

What a block can be checked for without the graph is checked here: the JSON of command
and ``执行Flow`` blocks, where placeholders stand, resource paths. Whether a
``{ref.outcome}`` is allowed (only in a join's ``stdin``) needs the graph, so every
branch reference is kept, with its position, for :mod:`.structure`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import namedtuple
from collections.abc import Callable
from functools import partial

from ... import codes
from ...frozen import field, record, slotted
from ...ir import flow_kinds as ir
from . import templates
from .findings import Findings
from .markdown import Fence
from .resources import PackageFiles

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, NamedTuple

AGENT_NEW, AGENT_REUSE, COMMAND, FLOW = "新建Agent", "复用Agent", "执行自定义命令", "执行Flow"
COMMAND_KEYS: Final = ("command", "args", "stdin")
_COMMAND_KEYS: Final = frozenset(COMMAND_KEYS)
FLOW_ID: Final = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
#: An id names a directory: file systems hold names of at most 255 bytes (ids are ASCII).
MAX_FLOW_ID: Final = 255

# [text](target "title"): a CommonMark inline link (or image), target bare or in <…>.
_LINK: Final = re.compile(
    r"!?\[(?:[^\]\\\n]|\\.)*\]\([ \t]*(<[^<>\n]*>|[^\s()<>]*)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
)
_ABSOLUTE: Final = re.compile(r"^(?:/|~|[A-Za-z]:[\\/])")
# any path under scripts/, not only .mjs: `--config=scripts/x.json` or `./scripts/run.sh`
# is as unmapped as `--x=scripts/a.mjs` (it resolves against the business cwd)
_LOOKS_LIKE_SCRIPT: Final = re.compile(r"(?:^|[=:,\s]|\./)scripts/[^\s/]")
#: A command or argument any of the three says something about (absolute, a script, a path
#: under scripts/), in one search: nearly every one is none of them (a 1,000-node Flow's
#: 1,800 strings: three calls each cost 0.25 us, this one 0.09).
_NOTABLE: Final = re.compile(r"^(?:/|~|[A-Za-z]:[\\/]|scripts/)|(?:^|[=:,\s]|\./)scripts/[^\s/]")
#: :data:`_NOTABLE` over a command's arguments joined by newlines: it finds one wherever
#: it would find one in an argument (each starts a line), and may find one where it would
#: not (a line start inside an argument), when each is then looked at. One search for the
#: arguments of a block instead of a call and a search each (a 1,000-node Flow's 600
#: command blocks: 4.3 -> 3.75 ms).
_NOTABLE_LINES: Final = re.compile(_NOTABLE.pattern, re.MULTILINE)
_NEWLINE: Final = re.compile("\n")


@record
class BranchUse:
    """A ``{ref.outcome}`` in a block: ``in_stdin`` (of a command), ``standalone``."""

    ref: str
    line: int
    column: int
    in_stdin: bool
    standalone: bool


@record
class Piece:
    """A part of an Agent prompt: text, ``{outcome}``, or a mapped resource link target
    (``text`` = package-relative path, ``fragment`` with its ``#``)."""

    kind: str  # "text" | "outcome" | "resource"
    text: str
    fragment: str = ""


#: Pieces are immutable: every {outcome} of every prompt is this one.
_OUTCOME_PIECE: Final = Piece("outcome", "")


@record
class Arg:
    parts: tuple[str, ...]
    script: str | None  # package-relative path of a mapped scripts/… argument


@slotted
class Action:
    """A checked action block. ``kind`` is the marker; which members are set depends on it.

    Checking keeps what it read (the command and argument texts, the resource links);
    ``prompt``, ``command``, ``args`` and ``slots`` are made from them when lowering asks,
    since ``agc flow check`` stops before lowering (a 1,000-node Flow's check: 21.2 ->
    19.0 ms; its 600 command blocks 5.5 -> 4.3 ms, its 400 prompts 0.80 -> 0.30 ms; a
    compile, which asks for all of them, 33.4 ms either way).
    """

    kind: str
    fence: Fence
    links: tuple[tuple[int, int, Piece], ...] = ()  # a prompt's mapped resource links
    command_text: str | None = None  # the command when it is one
    arg_texts: tuple[str, ...] = ()  # the args when they are an array of strings
    scripts: tuple[int, ...] = ()  # the indexes of the args mapped as package scripts
    has_stdin: bool = False
    stdin: Any = None
    stdin_slots: list[templates.Slot] | None = None  # when a branch slot needed them found
    flow: str | None = None
    flow_at: tuple[int, int] = (1, 1)
    has_task: bool = False
    task: Any = None
    task_slots: list[templates.Slot] = field(default_factory=list)
    branch_uses: list[BranchUse] = field(default_factory=list)
    valid: bool = True

    @property
    def prompt(self) -> list[Piece]:
        """An Agent prompt's pieces: text, each ``{outcome}``, each mapped resource link."""
        if self.kind != AGENT_NEW and self.kind != AGENT_REUSE:
            return []
        return _pieces(self.fence.body, self.links)

    @property
    def command(self) -> tuple[str, ...]:
        """The command's text around each ``{outcome}`` (empty when it is none)."""
        text = self.command_text
        return tuple(text.split(templates.OUTCOME)) if text is not None else ()

    @property
    def args(self) -> list[Arg]:
        outcome, scripts = templates.OUTCOME, self.scripts
        return [
            Arg(tuple(arg.split(outcome)), arg if index in scripts else None)
            for index, arg in enumerate(self.arg_texts)
        ]

    @property
    def slots(self) -> list[templates.Slot]:
        """stdin's slots (``{outcome}`` strings, branch results), in document order."""
        if self.stdin_slots is not None:
            return self.stdin_slots
        if not self.has_stdin:
            return []
        # no {ref.outcome} stands in the block: stdin's only slots are {outcome} strings
        return templates.slots(self.stdin, {}, self.fence.body)


class _Block:
    """Positions inside a fence's content, as file line and column (its line starts found
    on the first question: most blocks are never asked)."""

    def __init__(self, fence: Fence) -> None:
        self.fence = fence
        self.starts: list[int] | None = None

    def at(self, offset: int) -> tuple[int, int]:
        starts = self.starts
        if starts is None:
            starts = self.starts = [0] + [m.end() for m in _NEWLINE.finditer(self.fence.body)]
        row = bisect_right(starts, offset) - 1
        return self.fence.body_line + row, offset - starts[row] + self.fence.column


def read_action(fence: Fence, files: PackageFiles, findings: Findings, strict: bool) -> Action:
    """Check one action block (its marker is already known to be valid)."""
    action = Action(fence.info, fence)
    block = _Block(fence)
    row = READERS.get(fence.info)
    if row is None:  # the structure checks refuse other markers before this is called
        raise ValueError(f"no reader for the action block marker {fence.info!r}")
    row.read(action, block, files, findings, strict)
    return action


# -- Agent prompts -----------------------------------------------------------------------


def _agent(action: Action, block: _Block, files: PackageFiles, findings: Findings) -> None:
    text = action.fence.body
    links: list[tuple[int, int, Piece]] = []
    # a link needs "](": most prompts hold none
    for match in _LINK.finditer(text) if "](" in text else ():
        raw = match.group(1)
        start = match.start(1)
        target = raw[1:-1] if raw.startswith("<") else raw
        target_at = start + (1 if raw.startswith("<") else 0)
        if _ABSOLUTE.match(target):
            findings.warning(
                codes.FLOW_ABSOLUTE_PATH,
                f"link target {target!r} is a machine-specific absolute path",
                *block.at(target_at),
            )
        if not target.startswith("references/"):
            continue
        path, hashmark, fragment = target.partition("#")
        if files.reference(path, partial(block.at, target_at), findings):
            links.append((start, match.end(1), Piece("resource", path, hashmark + fragment)))
    if links:
        action.links = tuple(links)
    if ".outcome}" in text:  # a {ref.outcome}: misplaced in a prompt, said by the graph checks
        for match in templates.PLACEHOLDER.finditer(text):
            if match.group(1) is not None:
                line, column = block.at(match.start())
                action.branch_uses.append(BranchUse(match.group(1), line, column, False, False))


def _pieces(text: str, links: tuple[tuple[int, int, Piece], ...]) -> list[Piece]:
    """A prompt cut at its ``{outcome}`` placeholders and its mapped links, in order."""
    cuts = [
        (match.start(), match.end(), _OUTCOME_PIECE)
        for match in templates.PLACEHOLDER.finditer(text)
        if match.group(1) is None
    ]
    if links:
        cuts = sorted([*links, *cuts], key=_first)
    pieces: list[Piece] = []
    last = 0
    for start, end, piece in cuts:
        if start < last:
            continue  # a placeholder inside a link target stays text of the target
        if start > last:
            pieces.append(Piece("text", text[last:start]))
        pieces.append(piece)
        last = end
    if last < len(text):
        pieces.append(Piece("text", text[last:]))
    return pieces


def _first(cut: tuple[int, int, Piece]) -> int:
    return cut[0]


# -- JSON blocks -------------------------------------------------------------------------


def _json_object(
    action: Action, block: _Block, findings: Findings, code: str, what: str
) -> templates.Parsed | None:
    """Lex and parse; report placeholder misuse and JSON errors. None when unusable."""
    parsed = templates.parse(action.fence.body)
    if parsed.names is not None:
        return parsed  # an object as written, no name repeated: nothing here to report
    lexed = parsed.lexed
    for found in lexed.placeholders:
        line, column = block.at(found.offset)
        if found.ref is None and not found.in_string:
            findings.error(
                codes.FLOW_OUTCOME_OUTSIDE_STRING,
                f"{{outcome}} in a {what} block must be inside a JSON string, "
                'as in "task": "{outcome}"',
                line,
                column,
            )
        elif found.ref is not None and (found.in_string or not found.standalone):
            where = "inside a JSON string" if found.in_string else "joined to other text"
            findings.error(
                codes.FLOW_BRANCH_REF_NOT_STANDALONE,
                f"{{{found.ref}.outcome}} is {where}; it must be a whole JSON value, "
                f'as in "{found.ref}": {{{found.ref}.outcome}}',
                line,
                column,
            )
    standalone_ok = all(p.standalone or p.in_string for p in lexed.placeholders)
    if parsed.error is not None:
        if not standalone_ok:
            return None  # the misplaced placeholder is the reason; said above
        error = parsed.error
        offset = _offset(action.fence.body, error.line or 1, error.column or 1)
        line, column = block.at(offset)
        member = _member_at(lexed.keys, offset)
        stdin = _top_key(lexed, "stdin")
        stdin_constant = member == "stdin" and stdin is not None and _only_constants(lexed.text)
        if code == codes.FLOW_COMMAND_JSON_INVALID and stdin is not None and stdin_constant:
            # JSON but for a NaN / Infinity in stdin (A.41, C.27): said at the stdin member
            findings.error(
                codes.FLOW_COMMAND_STDIN_INVALID,
                f"stdin is not valid JSON: {error.message} (NaN and Infinity are not JSON)",
                *block.at(stdin.offset),
            )
            return None
        findings.error(code, f"the {what} block is not JSON: {error.message}", line, column)
        return None
    if not isinstance(parsed.value, dict):
        line, column = block.at(_first_significant(action.fence.body))
        findings.error(code, f"the {what} block must be a JSON object", line, column)
        return None
    stdin_key = _top_key(lexed, "stdin")
    for duplicate in lexed.duplicates:
        line, column = block.at(duplicate.offset)
        inside_stdin = duplicate.depth > 1 and _member_at(lexed.keys, duplicate.offset) == "stdin"
        if inside_stdin and stdin_key is not None and code == codes.FLOW_COMMAND_JSON_INVALID:
            findings.error(
                codes.FLOW_COMMAND_STDIN_INVALID,
                f"stdin is not valid JSON: member {duplicate.name!r} appears twice in one object",
                line,
                column,
            )
            continue
        findings.error(code, f"member {duplicate.name!r} appears twice in one object", line, column)
    if lexed.duplicates:
        return None
    return parsed


def _only_constants(text: str) -> bool:
    """True when ``text`` is JSON except for NaN / Infinity constants."""
    import json

    seen: list[str] = []

    def constant(name: str) -> None:
        seen.append(name)

    try:
        json.loads(text, parse_constant=constant)
    except (ValueError, RecursionError):
        # nested past the interpreter's stack: the lexer has said so already (deeper than
        # its limit), so it is no NaN-only problem
        return False
    return bool(seen)


def _offset(text: str, line: int, column: int) -> int:
    start = 0
    for _ in range(line - 1):
        found = text.find("\n", start)
        if found == -1:
            break
        start = found + 1
    return start + column - 1


def _first_significant(text: str) -> int:
    stripped = len(text) - len(text.lstrip())
    return min(stripped, max(len(text) - 1, 0))


def _member_at(keys: list[templates.Key], offset: int) -> str | None:
    """The top-level member whose text holds ``offset`` (None before the first)."""
    found = None
    for key in keys:
        if key.depth == 1 and key.offset <= offset:
            found = key.name
    return found


def _top_key(lexed: templates.Lexed, name: str) -> templates.Key | None:
    return lexed.top.get(name)


def _branch_uses(action: Action, block: _Block, lexed: templates.Lexed) -> None:
    for found in lexed.placeholders:
        if found.ref is None:
            continue
        line, column = block.at(found.offset)
        in_stdin = _member_at(lexed.keys, found.offset) == "stdin"
        standalone = found.standalone and not found.in_string
        action.branch_uses.append(BranchUse(found.ref, line, column, in_stdin, standalone))


def _command(
    action: Action, block: _Block, files: PackageFiles, findings: Findings, strict: bool
) -> None:
    parsed = _json_object(action, block, findings, codes.FLOW_COMMAND_JSON_INVALID, "command")
    if parsed is None:
        action.valid = False
        _branch_uses(action, block, templates.lex(action.fence.body))
        return
    value: dict[str, Any] = parsed.value
    if parsed.names is None:  # else each {ref.outcome} is a whole value (below)
        _branch_uses(action, block, parsed.lexed)

    if strict and (parsed.names is None or not _COMMAND_KEYS.issuperset(parsed.names)):
        for key in parsed.lexed.keys:
            if key.depth == 1 and key.name not in COMMAND_KEYS:
                line, column = block.at(key.offset)
                findings.error(
                    codes.FLOW_COMMAND_UNKNOWN_FIELD,
                    f"command member {key.name!r} is not part of the format (command, args, "
                    "stdin); it would be ignored (agc flow check --lenient ignores it)",
                    line,
                    column,
                )
                action.valid = False
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        shown = "missing" if "command" not in value else "empty or not a string"
        findings.error(
            codes.FLOW_COMMAND_MISSING,
            f"the command block's command is {shown}; it names the program to run",
            *_member_place(parsed, block, "command"),
        )
        action.valid = False
    else:
        if _NOTABLE.search(command):
            _notable_command(command, block, parsed, findings)
        action.command_text = command
    if "args" in value:
        args = value["args"]
        joined = _joined(args)
        if joined is None:
            findings.error(
                codes.FLOW_COMMAND_ARGS_INVALID,
                "args must be an array of strings",
                *_member_place(parsed, block, "args"),
            )
            action.valid = False
        elif args:
            action.arg_texts = tuple(args)
            if _NOTABLE_LINES.search(joined):
                _args(action, block, parsed, args, files, findings)
    action.has_stdin = "stdin" in value
    text = action.fence.body
    # read whole with no {ref.outcome}: no stand-ins (the property costs 0.5 us a block)
    stand_ins = {} if parsed.names is not None and not parsed.refs else parsed.stand_ins
    if not stand_ins:
        # no {ref.outcome} stands anywhere, so no branch slot does: stdin's only slots
        # are its {outcome} strings, which Action.slots finds when lowering asks
        action.stdin = value.get("stdin")
    else:
        found = templates.slots(value, stand_ins, text)
        if parsed.names is not None and parsed.refs:
            # whole values, in document order as their slots are: the member a slot's path
            # starts with is the one the lexer finds the reference in
            branches = [s for s in found if s.branch is not None]
            for (ref, offset), slot in zip(parsed.refs, branches, strict=True):
                line, column = block.at(offset)
                in_stdin = slot.path[:1] == ("stdin",)
                action.branch_uses.append(BranchUse(ref, line, column, in_stdin, True))
        templates.blank_slots(value, found)
        action.stdin = value.get("stdin")
        action.stdin_slots = [
            templates.Slot(s.path[1:], s.branch, s.parts) for s in found if s.path[:1] == ("stdin",)
        ]
    # a string names a script only if the text does, literally or through \u escapes
    if action.has_stdin and ("scripts" in text or "\\u" in text):
        _stdin_strings(action.stdin, partial(_member_place, parsed, block, "stdin"), findings)


def _member_place(parsed: templates.Parsed, block: _Block, name: str) -> tuple[int, int]:
    """Where the block's top-level member ``name`` stands (the fence's place without one)."""
    key = _top_key(parsed.lexed, name)
    fence = block.fence
    return block.at(key.offset) if key is not None else (fence.line, fence.column)


def _notable_command(
    command: str, block: _Block, parsed: templates.Parsed, findings: Findings
) -> None:
    at = block.at(_top_key(parsed.lexed, "command").value_offset)  # type: ignore[union-attr]
    if _ABSOLUTE.match(command):
        findings.warning(
            codes.FLOW_ABSOLUTE_PATH,
            f"command {command!r} is a machine-specific absolute path",
            *at,
        )
    if _LOOKS_LIKE_SCRIPT.search(command) or command.startswith("scripts/"):
        findings.warning(
            codes.RESOURCE_PATH_NOT_MAPPED,
            f"command {command!r} looks like a package script but only standalone "
            'args are mapped: use "command": "node", "args": ["scripts/…"]',
            *at,
        )


def _args(
    action: Action,
    block: _Block,
    parsed: templates.Parsed,
    args: list[str],
    files: PackageFiles,
    findings: Findings,
) -> None:
    quotes: list[int] = []
    scripts: list[int] = []
    notable = _NOTABLE.search

    def place(index: int) -> tuple[int, int]:
        """Where argument ``index`` stands: found on the first finding, since the args
        member's place is the lexer's to find (a good script argument needs none)."""
        if not quotes:
            key = _top_key(parsed.lexed, "args")
            # Each argument's opening quote, in order: the strings after the args member.
            body = action.fence.body
            quotes.extend(_string_offsets(body, key.value_offset if key else 0, len(args)))
        return block.at(quotes[index]) if index < len(quotes) else block.at(0)

    for index, arg in enumerate(args):
        if not notable(arg):
            continue  # nothing to say about it, so no need to know where it stands
        if _ABSOLUTE.match(arg):
            findings.warning(
                codes.FLOW_ABSOLUTE_PATH,
                f"argument {arg!r} is a machine-specific absolute path",
                *place(index),
            )
        if arg.startswith("scripts/"):
            if files.script(arg, partial(place, index), findings):
                scripts.append(index)
            else:
                action.valid = False
        elif _LOOKS_LIKE_SCRIPT.search(arg):
            findings.warning(
                codes.RESOURCE_PATH_NOT_MAPPED,
                f"argument {arg!r} names a path under scripts/ but is not mapped: only an "
                "argument that is exactly scripts/….mjs is resolved in the package",
                *place(index),
            )
    if scripts:
        action.scripts = tuple(scripts)


def _joined(args: Any) -> str | None:
    """``args`` joined by newlines when it is an array of strings, else None (the join
    refuses anything else, and does the type check at C speed)."""
    if not isinstance(args, list):
        return None
    try:
        return "\n".join(args)
    except TypeError:
        return None


def _string_offsets(text: str, start: int, count: int) -> list[int]:
    """Offsets of the opening quotes of the next ``count`` strings from ``start``."""
    found: list[int] = []
    index = start
    while len(found) < count and index < len(text):
        if text[index] == '"':
            found.append(index)
            index += 1
            while index < len(text) and text[index] != '"':
                index += 2 if text[index] == "\\" else 1
        index += 1
    return found


def _stdin_strings(value: Any, at: Callable[[], tuple[int, int]], findings: Findings) -> None:
    todo = [value]
    while todo:
        current = todo.pop()
        if isinstance(current, str) and _LOOKS_LIKE_SCRIPT.search(current):
            findings.warning(
                codes.RESOURCE_PATH_NOT_MAPPED,
                f"stdin text {current!r} names a package script, but stdin is passed "
                "unchanged (it resolves against the business cwd)",
                *at(),
            )
        elif isinstance(current, dict):
            todo.extend(current.values())
        elif isinstance(current, list):
            todo.extend(current)


def _flow_call(action: Action, block: _Block, findings: Findings) -> None:
    parsed = _json_object(action, block, findings, codes.FLOW_REF_JSON_INVALID, "执行Flow")
    if parsed is None:
        action.valid = False
        return
    value: dict[str, Any] = parsed.value
    lexed = parsed.lexed
    _branch_uses(action, block, lexed)
    for key in lexed.keys:
        if key.depth == 1 and key.name not in ("flow", "task"):
            line, column = block.at(key.offset)
            findings.error(
                codes.FLOW_REF_EXTRA_FIELD,
                f"执行Flow member {key.name!r} is not allowed: only flow and task",
                line,
                column,
            )
            action.valid = False
    target = value.get("flow")
    flow_key = _top_key(lexed, "flow")
    if not isinstance(target, str) or not FLOW_ID.match(target):
        where = block.at(flow_key.offset) if flow_key else (action.fence.line, action.fence.column)
        shown = "missing" if flow_key is None else f"{target!r}"
        findings.error(
            codes.FLOW_REF_ID_INVALID,
            f"执行Flow flow is {shown}; it names a sibling package: a letter, then letters, "
            "digits, - or _",
            *where,
        )
        action.valid = False
    elif len(target) > MAX_FLOW_ID:
        assert flow_key is not None
        findings.error(
            codes.FLOW_REF_ID_INVALID,
            f"执行Flow flow {target[:40]!r}… is {len(target)} characters; it names a sibling "
            f"package directory, and a directory name holds at most {MAX_FLOW_ID}",
            *block.at(flow_key.value_offset),
        )
        action.valid = False
    else:
        action.flow = target
        action.flow_at = block.at(flow_key.value_offset) if flow_key else (action.fence.line, 1)
    action.has_task = "task" in value
    found = templates.slots(value, lexed.stand_ins, action.fence.body)
    action.task = value.get("task")
    action.task_slots = [
        templates.Slot(s.path[1:], s.branch, s.parts)
        for s in found
        if s.path[:1] == ("task",) and s.branch is None
    ]


Reader = Callable[[Action, _Block, PackageFiles, Findings, bool], None]


if TYPE_CHECKING:

    class Marker(NamedTuple):
        """What an action block marker means: its node kind in the IR, and how it is read."""

        kind: int  # an index into ir.flow_kinds.ACTION_KINDS
        read: Reader

else:  # the same named tuple without typing
    Marker = namedtuple("Marker", ["kind", "read"], module=__name__)


#: The one table of action block markers: a new node kind is a row here, its name in
#: ``ir.flow_kinds.ACTION_KINDS``, and its performer in the runtime's ``PERFORMERS``
#: (lowering and the structure checks follow this table).
READERS: dict[str, Marker] = {
    AGENT_NEW: Marker(
        ir.AGENT_NEW,
        lambda action, block, files, findings, _: _agent(action, block, files, findings),
    ),
    AGENT_REUSE: Marker(
        ir.AGENT_REUSE,
        lambda action, block, files, findings, _: _agent(action, block, files, findings),
    ),
    COMMAND: Marker(ir.COMMAND, _command),
    FLOW: Marker(
        ir.CALL, lambda action, block, _, findings, __: _flow_call(action, block, findings)
    ),
}

#: The markers an action block may carry, in the order messages list them.
MARKERS: Final = tuple(READERS)
