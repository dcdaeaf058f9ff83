"""The error codes: one catalogue of constants, its meanings, the docs and the source agree.

Every code is a constant of :mod:`agent_graph.codes` and the source spells it through the
constant (``codes.FILE_MISSING``), so a misspelt code is a NameError and a mypy error,
not a new code. What is left to check here:

* the constants, :data:`agent_graph.error_codes.AREAS` (their meanings) and the sections
  of ``docs/error-codes.md`` list the same codes, each in its section;
* every constant is used somewhere in ``src/agent_graph`` (no stale entries);
* each code string is written once, in ``codes.py``: no other module of the source holds
  it as a literal (which would be a second, unchecked spelling);
* no code position in the source holds a bare code-shaped literal, which is how a new
  code would get in without a constant (:func:`bare_codes`, itself tested on planted
  sources below).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any, get_args

import pytest

import agent_graph
from agent_graph import codes, error_codes
from agent_graph.ir.records import OUTCOMES
from agent_graph.vm import kinds

SRC = Path(agent_graph.__file__).resolve().parent
DOC = Path(__file__).resolve().parents[2] / "docs" / "error-codes.md"
#: The catalogue and its table of meanings: the only modules that may hold code strings.
CATALOGUE = {"agent_graph/codes.py", "agent_graph/error_codes.py"}

#: How every catalogued code is spelt: kebab-case words, ``.``-separated families,
#: ``<placeholder>`` for the generated part of a family.
CODE_SHAPE = re.compile(r"^[a-z][a-z0-9]*(?:[-.](?:[a-z0-9]+|<[a-z_]+>))*$")
#: A literal that looks like a code: two or more words joined by ``-`` or ``.``. Messages
#: have spaces, and single words (the IR's layout codes ``s``, ``i?``) are not codes.
LOOKS_LIKE_A_CODE = re.compile(r"^[a-z][a-z0-9]*(?:[-.][a-z0-9]+)+$")
#: Families: a constant naming the family, and the catalogue function that makes its codes.
FAMILIES = {"SCHEMA_FINDING": "schema_finding"}


def constants() -> dict[str, str]:
    """Constant name -> code, as :mod:`agent_graph.codes` defines them."""
    return {
        name: value
        for name, value in vars(codes).items()
        if name.isupper() and isinstance(value, str)
    }


def source_files() -> dict[str, str]:
    """Every module under ``src/agent_graph`` (``agent_graph/…/x.py`` -> its text)."""
    return {
        path.relative_to(SRC.parent).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(SRC.rglob("*.py"))
    }


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    return source_files()


# -- the catalogue, its meanings and the docs -----------------------------------------------


def test_the_catalogue_is_plain_constants_each_code_defined_once() -> None:
    """codes.py is cheap to import (it is on ``agc evaluate``'s cold start): a docstring,
    imports, ``NAME: Final = "code"`` and the family functions, nothing else; ``Final``
    from typing for the type checker only (``TYPE_CHECKING = False`` and an
    ``if TYPE_CHECKING:`` of imports alone), so importing it loads no typing."""
    tree = ast.parse((SRC / "codes.py").read_text(encoding="utf-8"))
    names: dict[str, int] = {}
    values: dict[str, str] = {}
    for node in tree.body[1:]:
        if isinstance(node, ast.ImportFrom | ast.Import):
            continue
        if ast.unparse(node) == "TYPE_CHECKING = False":
            continue
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            assert not node.orelse, f"codes.py:{node.lineno}: imports for the type checker only"
            for inner in node.body:
                assert isinstance(inner, ast.ImportFrom | ast.Import), f"codes.py:{inner.lineno}"
            continue
        if isinstance(node, ast.FunctionDef) and node.name in FAMILIES.values():
            continue
        assert isinstance(node, ast.AnnAssign), f"codes.py:{node.lineno}: not a constant"
        assert isinstance(node.target, ast.Name), f"codes.py:{node.lineno}"
        assert ast.unparse(node.annotation) == "Final", f"codes.py:{node.lineno}"
        assert isinstance(node.value, ast.Constant), f"codes.py:{node.lineno}"
        assert isinstance(node.value.value, str), f"codes.py:{node.lineno}"
        name, value = node.target.id, node.value.value
        assert name not in names, f"{name} defined at lines {names[name]} and {node.lineno}"
        assert value not in values, f"{value!r} is both {values[value]} and {name}"
        names[name] = node.lineno
        values[value] = name
    assert values.keys() == set(constants().values())
    probe = "import sys; before = set(sys.modules); import agent_graph.codes; "
    probe += "print(sorted({'typing', 'typing_extensions'} & (set(sys.modules) - before)))"
    loaded = subprocess.run(  # -S: only what codes loads counts, not what a site imported
        [sys.executable, "-S", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(SRC.parent)},
    )
    assert loaded.stdout.strip() == "[]"


def test_catalogue_entries_are_well_formed() -> None:
    for name, code in constants().items():
        assert CODE_SHAPE.match(code), code
        if name not in FAMILIES:  # grep finds the constant from the code and back
            assert name == code.upper().replace("-", "_").replace(".", "_"), (name, code)
    seen: dict[str, str] = {}
    for area, entries in error_codes.AREAS.items():
        assert entries, f"empty area {area}"
        for code, meaning in entries.items():
            assert code not in seen, f"{code} listed under {seen[code]} and {area}"
            seen[code] = area
            assert meaning.strip(), code
            assert "\n" not in meaning, code
    assert dict(error_codes.CODES) == {
        code: meaning for entries in error_codes.AREAS.values() for code, meaning in entries.items()
    }


def test_every_constant_has_a_meaning_and_every_meaning_a_constant() -> None:
    defined = set(constants().values())
    described = set(error_codes.CODES)
    assert sorted(defined - described) == [], "constants of agent_graph.codes with no meaning"
    assert sorted(described - defined) == [], "meanings in agent_graph.error_codes, no constant"


def test_families_make_codes_of_their_family() -> None:
    for constant, function in FAMILIES.items():
        family = constants()[constant]
        head, _, tail = re.split(r"(<[a-z_]+>)", family, maxsplit=1)
        made = getattr(codes, function)("required")
        assert made.startswith(head), (family, made)
        assert made.endswith(tail), (family, made)
        assert CODE_SHAPE.match(made), made


def _sections(doc: str) -> dict[str, str]:
    """``## heading`` -> the text under it."""
    sections: dict[str, str] = {}
    heading = ""
    for line in doc.splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
            sections[heading] = ""
        elif heading:
            sections[heading] += line + "\n"
    return sections


def test_every_code_is_documented_in_its_section() -> None:
    sections = _sections(DOC.read_text(encoding="utf-8"))
    unknown = [area for area in error_codes.AREAS if area not in sections]
    assert not unknown, f"catalogue areas that are not headings of {DOC.name}: {unknown}"
    misplaced = [
        f"{code} (under {area!r})"
        for area, entries in error_codes.AREAS.items()
        for code in entries
        if f"`{code}`" not in sections[area]
    ]
    assert not misplaced, f"codes not documented in their section of {DOC.name}: {misplaced}"


def test_every_documented_code_is_catalogued() -> None:
    """The codes of each table row (its first cell: `a` or `a` / `b`) are all constants."""
    documented = {
        code
        for line in DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `")
        for code in re.findall(r"`([^`]+)`", line.split("|")[1])
    }
    assert documented, f"no table rows found in {DOC.name}"
    assert sorted(documented - set(constants().values())) == []


# -- the catalogue against the source ----------------------------------------------------


def _catalogue_uses(tree: ast.Module) -> Iterator[str]:
    """The names of agent_graph.codes a module uses: ``codes.NAME`` (the module's style)
    and names imported from it."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "codes"
        ):
            yield node.attr
        elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("codes"):
            yield from (alias.name for alias in node.names)


def test_every_constant_is_used_in_the_source(sources: dict[str, str]) -> None:
    used = {
        name
        for rel, text in sources.items()
        if rel not in CATALOGUE
        for name in _catalogue_uses(ast.parse(text))
    }
    used |= {constant for constant, function in FAMILIES.items() if function in used}
    stale = sorted(set(constants()) - used)
    assert not stale, f"constants of agent_graph.codes no module of the source uses: {stale}"


def _not_codes(tree: ast.Module) -> set[ast.AST]:
    """The literals of ``tree`` that are not codes even when spelt like one: docstrings,
    and the event types of a Flow Run record (``record.event("agent-bound", …)`` and the
    members of ``flow.runtime.state.EventType``: events have names of their own,
    docs/flow-runs.md, one of them the same as a code's)."""
    out: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "EventType":
            out.update(s.value for s in node.body if isinstance(s, ast.Assign))
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            out.add(body[0].value)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "event"
            and node.args
        ):
            out.add(node.args[0])
    return out


def code_literals(sources: Mapping[str, str]) -> list[str]:
    """``path:line: literal`` of every string literal outside the catalogue whose value is
    a catalogued code (but for :func:`_not_codes`)."""
    catalogued = set(constants().values())
    found = []
    for rel, text in sources.items():
        if rel in CATALOGUE:
            continue
        tree = ast.parse(text)
        skip = _not_codes(tree)
        found += [
            f"{rel}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in catalogued and node not in skip
        ]
    return found


def test_each_code_string_is_written_once(sources: dict[str, str]) -> None:
    """A code written out anywhere but codes.py (a table, a set of codes, a variable) is
    a second spelling that nothing checks: it goes through the constant instead."""
    found = code_literals(sources)
    assert not found, "codes written as literals, not as agent_graph.codes constants:\n" + (
        "\n".join(found)
    )


SECOND_SPELLING = '''
LEGACY = frozenset({"file-missing"})


def f(record: Record) -> None:
    """file-missing"""
    record.event("file-missing")
'''


def test_a_second_spelling_is_found() -> None:
    assert code_literals({"agent_graph/planted.py": SECOND_SPELLING}) == [
        "agent_graph/planted.py:2: 'file-missing'"
    ]


# -- no bare code in a code position ---------------------------------------------------------

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _is_record(cls: ast.ClassDef) -> bool:
    """A dataclass or an :func:`agent_graph.frozen.record`: its fields are its parameters."""
    for decorator in cls.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("dataclass", "record"):
            return True
    return False


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _params(fn: Function) -> list[str]:
    """``fn``'s positional parameters as a caller counts them (without ``self``/``cls``)."""
    names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    return names[1:] if names and names[0] in ("self", "cls") else names


def code_takers(trees: Iterator[ast.Module] | list[ast.Module]) -> dict[str, set[int]]:
    """Callee name -> the positions of its code arguments: every function, method or class
    (its ``__init__``, or its fields for a record) with a parameter named ``code``, their
    subclasses, and functions that pass a parameter of theirs on as a code."""
    takers: dict[str, set[int]] = {}
    functions: list[tuple[str, Function]] = []
    bases: dict[str, list[str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
                fields = [
                    s.target.id
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                ]
                if _is_record(node) and "code" in fields:
                    takers.setdefault(node.name, set()).add(fields.index("code"))
                functions.extend(
                    (node.name, item)
                    for item in node.body
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__"
                )
            elif (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name != "__init__"
            ):
                functions.append((node.name, node))
    code_params: dict[int, set[str]] = {id(fn): {"code"} for _, fn in functions}
    changed = True
    while changed:
        changed = False
        for name, fn in functions:
            params = _params(fn)
            for param in code_params[id(fn)]:
                if param in params and params.index(param) not in takers.get(name, set()):
                    takers.setdefault(name, set()).add(params.index(param))
                    changed = True
            for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
                for arg in _code_arguments(call, takers):
                    fresh = isinstance(arg, ast.Name) and arg.id not in code_params[id(fn)]
                    if fresh and isinstance(arg, ast.Name) and arg.id in params:
                        code_params[id(fn)].add(arg.id)
                        changed = True
        for cls, parents in bases.items():  # subclasses that keep their parent's __init__
            for parent in parents:
                inherited = takers.get(parent, set()) - takers.get(cls, set())
                if inherited and not any(n == cls for n, _ in functions):
                    takers.setdefault(cls, set()).update(inherited)
                    changed = True
    return takers


def _code_arguments(call: ast.Call, takers: Mapping[str, set[int]]) -> Iterator[ast.expr]:
    for index in takers.get(_callee(call) or "", ()):
        head = call.args[: index + 1]
        if len(head) == index + 1 and not any(isinstance(a, ast.Starred) for a in head):
            yield call.args[index]
    for keyword in call.keywords:
        if keyword.arg == "code":
            yield keyword.value


def _is_code_accessor(expr: ast.expr) -> bool:
    """``x.code``, ``x["code"]``, ``x.get("code")``."""
    if isinstance(expr, ast.Attribute):
        return expr.attr == "code"
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.slice, ast.Constant) and expr.slice.value == "code"
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "get"
        and bool(expr.args)
        and isinstance(expr.args[0], ast.Constant)
        and expr.args[0].value == "code"
    )


def _code_positions(tree: ast.Module, takers: Mapping[str, set[int]]) -> Iterator[ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield from _code_arguments(node, takers)
        elif isinstance(node, ast.Dict):  # a diagnostic or an error object
            keys = {
                k.value: v
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)
            }
            if "code" in keys and "message" in keys:
                yield keys["code"]
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_code_accessor(o) for o in operands):
                yield from (o for o in operands if not _is_code_accessor(o))
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_is_code_accessor(t) for t in targets):
                yield node.value
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):  # code: str = "…"
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = [
                *zip(
                    positional[len(positional) - len(args.defaults) :], args.defaults, strict=True
                ),
                *zip(args.kwonlyargs, args.kw_defaults, strict=True),
            ]
            yield from (d for a, d in pairs if a.arg == "code" and d is not None)


def _leaves(expr: ast.expr) -> Iterator[ast.expr]:
    """``expr`` through conditional expressions, ``or`` and literal tuples, lists, sets."""
    if isinstance(expr, ast.IfExp):
        yield from _leaves(expr.body)
        yield from _leaves(expr.orelse)
    elif isinstance(expr, ast.BoolOp):
        for value in expr.values:
            yield from _leaves(value)
    elif isinstance(expr, ast.Tuple | ast.List | ast.Set):
        for item in expr.elts:
            yield from _leaves(item)
    else:
        yield expr


def _is_bare(expr: ast.expr) -> bool:
    """A code-shaped string literal, or an f-string whose text parts are shaped like pieces
    of a code (``f"{kind}-id-duplicate"``; a message has spaces)."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str) and bool(LOOKS_LIKE_A_CODE.match(expr.value))
    if isinstance(expr, ast.JoinedStr):
        text = [str(p.value) for p in expr.values if isinstance(p, ast.Constant)]
        return bool(text) and all(re.fullmatch(r"[a-z0-9.-]*", t) for t in text)
    return False


def bare_codes(sources: Mapping[str, str]) -> list[str]:
    """``path:line: literal`` of every bare code in a code position of ``sources``:

    * the code argument of a code taker (:func:`code_takers`: ``AgentGraphError``,
      ``Diagnostic``, ``ProblemSink.error``, ``Origin.fail`` … matched by name), and a
      ``code=`` keyword of any call;
    * the ``"code"`` of a dict literal that also has a ``"message"``;
    * the other side of a comparison with ``x.code``, ``x["code"]`` or ``x.get("code")``,
      and a value assigned to one;
    * the default of a parameter named ``code``;

    seen through conditional expressions, ``or`` and literal tuples or sets."""
    trees = {
        rel: ast.parse(text, filename=rel) for rel, text in sources.items() if rel not in CATALOGUE
    }
    takers = code_takers(list(trees.values()))
    return sorted(
        {
            f"{rel}:{leaf.lineno}: {ast.unparse(leaf)}"
            for rel, tree in trees.items()
            for position in _code_positions(tree, takers)
            for leaf in _leaves(position)
            if _is_bare(leaf)
        }
    )


def test_no_code_position_in_the_source_holds_a_bare_literal(sources: dict[str, str]) -> None:
    found = bare_codes(sources)
    assert not found, (
        "codes written as literals: add a constant to agent_graph.codes (and its meaning and"
        " docs row) and use it:\n" + "\n".join(found)
    )


PLANTED = textwrap.dedent(
    '''
    from agent_graph.errors import AgentGraphError, Diagnostic, ProblemSink
    from agent_graph import codes


    class NewError(AgentGraphError):
        """A subclass without its own __init__."""


    class Parser:
        def error(self, message: str) -> ValueError:
            return ValueError(message)


    def corrupt(reason: str, message: str) -> AgentGraphError:
        return AgentGraphError(reason, message)


    def fail_with(message: str, code: str = "planted-default") -> AgentGraphError:
        return AgentGraphError(code, message)


    def check(sink: ProblemSink, parser: Parser, flag: bool, kind: str, exc: Exception) -> None:
        raise AgentGraphError("planted-error", "x")
        sink.error("planted-sink", "x")
        Diagnostic(code="planted-keyword", message="x")
        AgentGraphError("planted-then" if flag else codes.FILE_MISSING, "x")
        corrupt("planted-helper", "x")
        NewError("planted-subclass", "x")
        AgentGraphError(f"{kind}-planted-family", "x")
        diagnostics = [{"code": "planted-dict", "message": "x"}]
        if exc.code in ("planted-compared", codes.FILE_MISSING):
            pass
        exc.code = "planted-assigned"
        # not codes: a message, a parser's error, the catalogue's constants
        raise AgentGraphError(codes.FILE_MISSING, "file-missing is not the code here")
        parser.error(f"line {kind}: expected a value")
        sink.error(codes.FILE_MISSING, "x")
    '''
)
PLANTED_CODES = {
    *(
        repr(f"planted-{kind}")
        for kind in (
            "default",
            "error",
            "sink",
            "keyword",
            "then",
            "helper",
            "subclass",
            "dict",
            "compared",
            "assigned",
        )
    ),
    "f'{kind}-planted-family'",
}


def _literals(found: list[str]) -> set[str]:
    return {line.split(": ", 1)[1] for line in found}


def test_the_check_finds_each_kind_of_bare_code(sources: dict[str, str]) -> None:
    """Planted in a new module of the real tree, every way of writing a bare code is
    found, with its place, and nothing else is."""
    found = bare_codes({**sources, "agent_graph/planted.py": PLANTED})
    assert all(line.startswith("agent_graph/planted.py:") for line in found), found
    assert _literals(found) == PLANTED_CODES
    assert "agent_graph/planted.py:24: 'planted-error'" in found


def test_the_check_needs_no_more_than_the_planted_module() -> None:
    """The code takers come from the sources given: AgentGraphError's own ``code``."""
    errors = (SRC / "errors.py").read_text(encoding="utf-8")
    found = bare_codes({"agent_graph/errors.py": errors, "agent_graph/planted.py": PLANTED})
    assert _literals(found) == PLANTED_CODES


# -- the VM's closed string sets (agent_graph.vm.kinds) --------------------------------------


def _enums(schema: Any, member: str) -> list[list[Any]]:
    """Every ``enum`` declared for a property or definition named ``member``."""
    out: list[list[Any]] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == member and isinstance(value, dict) and "enum" in value:
                out.append(value["enum"])
            out.extend(_enums(value, member))
    elif isinstance(schema, list):
        for value in schema:
            out.extend(_enums(value, member))
    return out


def test_vm_kinds_match_the_ir_and_the_schemas() -> None:
    assert get_args(kinds.Outcome) == OUTCOMES
    schemas = files("agent_graph.schemas")
    evaluation = json.loads((schemas / "evaluation.schema.json").read_text(encoding="utf-8"))
    route = json.loads((schemas / "route.schema.json").read_text(encoding="utf-8"))
    for alias, member in (
        (kinds.Outcome, "outcome"),
        (kinds.StatusCode, "statusCode"),
        (kinds.Availability, "availability"),
    ):
        assert _enums(evaluation, member) == [list(get_args(alias))], member
    for alias, member in (
        (kinds.StatusCode, "statusCode"),
        (kinds.Availability, "availability"),
        (kinds.GateResolution, "resolution"),
    ):
        assert _enums(route, member) == [list(get_args(alias))], member
    assert all(kinds.is_outcome(o) for o in OUTCOMES)
    assert not kinds.is_outcome("compelted")
    assert not kinds.is_outcome(None)
