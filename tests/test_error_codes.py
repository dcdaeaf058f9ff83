"""One catalogue of error codes: every code the source uses is catalogued and documented.

The source tree is scanned with :mod:`ast` on every run (no file list, no text grep),
so a code added anywhere under ``src/agent_graph`` (a new package, a moved file, a new
helper) fails here until it has an entry in :mod:`agent_graph.error_codes` and a row in
its section of ``docs/error-codes.md``; a catalogue entry no source uses fails as stale.

A *code position* is:

* the code argument of a *code taker*, positional or keyword: every function, method or
  class constructor defined in the source with a parameter named ``code`` (so
  ``AgentGraphError``, ``ExecError``, ``ProblemSink.error``, ``Origin.fail`` …), every
  dataclass or record with a ``code`` field (``Diagnostic``, ``Problem``), subclasses of those
  classes, and every function whose parameter flows into a code position
  (``def corrupt(reason, message): raise AgentGraphError(reason, message)``);
  the default value of a code parameter;
* a ``code=`` keyword of any call, and the ``"code"`` of a dict literal that also has a
  ``"message"`` (a diagnostic or error object);
* the other side of a comparison with ``x.code``, ``x["code"]``, ``x.get("code")`` or a
  code parameter, and the value assigned to ``x.code`` / ``x["code"]``.

Calls are matched by name, seen through ``import … as …``; a method call is matched by
its receiver's class when that is known (``self``, an annotated parameter, a constructor
or a function with an annotated return), else by every method of that name. Where such
methods disagree (``sink.error(code, …)`` vs a parser's ``self.error(message)``) and the
receiver is unknown, only strings shaped like a code count.

The expression in a code position is followed back to its string literals through
conditional expressions, ``or``, local and module variables, names imported from other
modules (``from .codes import TIMEOUT``), class attributes, code tables (tuples and
dicts the source indexes, unpacks or loops over), the return values of functions
defined in the source, and ``*`` unpacking (``report(*problem, …)``). An f-string is
enumerated when its parts are (``f"{kind.lower()}-id-duplicate"`` with ``kind`` passed
as "Action" and "Resource"); otherwise its parts are placeholders, and it is one family
entry (``f"schema.{finding.keyword}"`` is ``schema.<keyword>``).

:data:`NOT_ERROR_CODES` names the few ``code`` parameters that mean something else.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections import defaultdict
from collections.abc import Iterator, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any, get_args

import pytest

import agent_graph
from agent_graph import error_codes
from agent_graph.ir.records import OUTCOMES
from agent_graph.vm import kinds

SRC = Path(agent_graph.__file__).resolve().parent
DOC = Path(__file__).resolve().parents[1] / "docs" / "error-codes.md"

#: Functions and classes whose ``code`` parameter or field is not an error code: the IR's
#: field layout codes (``"s"``, ``"i"``, ``"b?"`` …). A test checks that each still exists
#: and that its ``code`` never reaches a code position.
NOT_ERROR_CODES: dict[str, str] = {
    "_field_expression": "IR field layout code (ir wire encoders)",
    "_field": "IR field layout code (ir decoders)",
    "Field": "IR field layout code (ir schema)",
}

#: How every catalogued code is spelt: kebab-case words, ``.``-separated families,
#: ``<placeholder>`` for the generated part of a family.
CODE_SHAPE = re.compile(r"^[a-z][a-z0-9]*(?:[-.](?:[a-z0-9]+|<[a-z_]+>))*$")

Function = ast.FunctionDef | ast.AsyncFunctionDef
Slot = tuple[int | None, str | None]  # (positional index at the call site, keyword name)
Scope = Function | ast.Lambda | ast.Module

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope``'s body, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _NESTED):
            stack.extend(ast.iter_child_nodes(node))


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_dataclass(cls: ast.ClassDef) -> bool:
    for decorator in cls.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if _callee(target) in ("dataclass", "record"):  # record: agent_graph.frozen
            return True
    return False


def _parameter_defaults(fn: Function | ast.Lambda) -> dict[str, ast.expr]:
    """Parameter name -> its default value, for the parameters that have one."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    with_default = positional[len(positional) - len(args.defaults) :]
    out = {a.arg: d for a, d in zip(with_default, args.defaults, strict=True)}
    out.update(
        (a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    )
    return out


def _placeholder(expr: ast.expr) -> str:
    """How an f-string part that cannot be enumerated is written: ``<keyword>``."""
    while True:
        if isinstance(expr, ast.Call):
            expr = expr.func.value if isinstance(expr.func, ast.Attribute) else expr.func
        elif isinstance(expr, ast.Attribute):
            return f"<{expr.attr}>"
        elif isinstance(expr, ast.Name):
            return f"<{expr.id}>"
        else:
            return "<value>"


#: str methods an f-string part may apply to an enumerable value (``{kind.lower()}``)
_STR_METHODS = {"lower", "upper", "casefold", "title", "capitalize", "strip"}


_Binds = defaultdict[str, list[tuple[ast.expr, int | None, bool]]]


class _ScopeIndex:
    """What one scope's own statements bind: imports, function definitions, and names
    bound to (expression, element for unpacking, is-a-loop-item)."""

    def __init__(self) -> None:
        self.imports: dict[str, tuple[ast.ImportFrom, str]] = {}
        self.defs: defaultdict[str, list[Function]] = defaultdict(list)
        self.binds: _Binds = defaultdict(list)


class CodeScanner:
    """Finds every error code in a set of Python sources (``{display name: text}``)."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self.modules: dict[str, ast.Module] = {
            name: ast.parse(text, filename=name) for name, text in sources.items()
        }
        self.parents: dict[ast.AST, ast.AST] = {}
        self.module_of: dict[ast.AST, str] = {}
        self.functions: dict[str, list[Function]] = defaultdict(list)
        self.classes: dict[str, list[ast.ClassDef]] = defaultdict(list)
        self.calls: dict[str, list[ast.Call]] = defaultdict(list)
        #: dotted module name -> its tree, and each tree's dotted package
        self.by_dotted: dict[str, ast.Module] = {}
        self.package_of: dict[ast.Module, str] = {}
        for name, tree in self.modules.items():
            parts = name.removesuffix(".py").split("/")  # agent_graph/vm/state.py
            package = parts[:-1]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            self.by_dotted[".".join(parts)] = tree
            self.package_of[tree] = ".".join(package)
        self._visiting: set[tuple[int, str]] = set()
        self._own_cache: dict[ast.AST, list[ast.AST]] = {}
        self._index_cache: dict[ast.AST, _ScopeIndex] = {}
        self._scope_cache: dict[ast.AST, Scope] = {}
        for name, tree in self.modules.items():
            for node in ast.walk(tree):
                self.module_of[node] = name
                for child in ast.iter_child_nodes(node):
                    self.parents[child] = node
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    self.functions[node.name].append(node)
                elif isinstance(node, ast.Call) and _callee(node.func):
                    self.calls[_callee(node.func) or ""].append(node)
                elif isinstance(node, ast.ClassDef):
                    self.classes[node.name].append(node)
        #: the code slots of each function, and of each class's constructor (by class name)
        self.slots: dict[Function, set[Slot]] = defaultdict(set)
        self.class_slots: dict[str, set[Slot]] = defaultdict(set)
        #: the names of each function's code parameters
        self.code_params: dict[Function, set[str]] = defaultdict(set)
        #: functions that take a code only because a parameter flows into a code position
        self.flow_takers: set[str] = set()
        self._find_takers()
        self.found: dict[str, list[str]] = self._scan()

    @property
    def takers(self) -> set[str]:
        """The names of every code-taking function, method and class."""
        return {self._taker_name(fn) for fn, s in self.slots.items() if s} | {
            name for name, s in self.class_slots.items() if s
        }

    # -- code takers ---------------------------------------------------------------------

    def _register(self, fn: Function, param: str) -> bool:
        """Make ``fn``'s parameter ``param`` a code slot; True when that is new."""
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        names = [a.arg for a in positional]
        parent = self.parents.get(fn)
        is_method = isinstance(parent, ast.ClassDef)
        static = any(_callee(d) == "staticmethod" for d in fn.decorator_list)
        skip = 1 if is_method and not static and positional else 0
        index = names.index(param) - skip if param in names else None
        keyword = None if param in {a.arg for a in args.posonlyargs} else param
        slot: Slot = (index, keyword)
        new = param not in self.code_params[fn] or slot not in self.slots[fn]
        self.code_params[fn].add(param)
        self.slots[fn].add(slot)
        if fn.name == "__init__" and isinstance(parent, ast.ClassDef):
            self.class_slots[parent.name].add(slot)
        return new

    def _taker_name(self, fn: Function) -> str:
        """What ``fn`` is called by: its name, or its class's for a constructor."""
        parent = self.parents.get(fn)
        if fn.name == "__init__" and isinstance(parent, ast.ClassDef):
            return parent.name
        return fn.name

    def _find_takers(self) -> None:
        for fns in self.functions.values():
            for fn in fns:
                if self._taker_name(fn) in NOT_ERROR_CODES:
                    continue
                if "code" in {a.arg for a in self._params(fn)}:
                    self._register(fn, "code")
        for name, classes in self.classes.items():
            for cls in classes:
                if not _is_dataclass(cls) or name in NOT_ERROR_CODES:
                    continue
                fields = [
                    s.target.id
                    for s in cls.body
                    if isinstance(s, ast.AnnAssign)
                    and isinstance(s.target, ast.Name)
                    and "ClassVar" not in ast.unparse(s.annotation)
                ]
                if "code" in fields:
                    self.class_slots[name].add((fields.index("code"), "code"))
        changed = True
        while changed:
            changed = False
            for name, classes in self.classes.items():  # subclasses without their own __init__
                for cls in classes:
                    if name in NOT_ERROR_CODES or any(
                        isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in cls.body
                    ):
                        continue
                    for base in cls.bases:
                        inherited = self.class_slots.get(_callee(base) or "", set())
                        if not inherited <= self.class_slots[name]:
                            self.class_slots[name] |= inherited
                            changed = True
            for fns in self.functions.values():  # parameters that flow into codes
                for fn in fns:
                    name = self._taker_name(fn)
                    if name in NOT_ERROR_CODES:
                        continue
                    params = {a.arg for a in self._params(fn)} - self.code_params[fn]
                    for expr, _, certain in list(self._positions(fn)):
                        for leaf in self._leaves(expr):
                            if (
                                certain
                                and isinstance(leaf, ast.Name)
                                and leaf.id in params
                                and self._register(fn, leaf.id)
                            ):
                                self.flow_takers.add(name)
                                changed = True

    @staticmethod
    def _params(fn: Function | ast.Lambda) -> list[ast.arg]:
        args = fn.args
        return [*args.posonlyargs, *args.args, *args.kwonlyargs]

    @staticmethod
    def _leaves(expr: ast.expr) -> Iterator[ast.expr]:
        """``expr`` through conditional expressions and ``or``/``and``."""
        if isinstance(expr, ast.IfExp):
            yield from CodeScanner._leaves(expr.body)
            yield from CodeScanner._leaves(expr.orelse)
        elif isinstance(expr, ast.BoolOp):
            for value in expr.values:
                yield from CodeScanner._leaves(value)
        else:
            yield expr

    # -- which function a call calls (by name, with a little type inference) -------------

    def _own(self, scope: ast.AST) -> list[ast.AST]:
        """:func:`_own_nodes`, computed once per scope."""
        nodes = self._own_cache.get(scope)
        if nodes is None:
            nodes = self._own_cache[scope] = list(_own_nodes(scope))
        return nodes

    def _scope(self, node: ast.AST) -> Scope:
        scope = self._scope_cache.get(node)
        if scope is None:
            current = self.parents.get(node)
            while current is not None and not isinstance(current, _SCOPES):
                current = self.parents.get(current)
            assert isinstance(current, _SCOPES)
            scope = self._scope_cache[node] = current
        return scope

    def _class_of(self, node: ast.AST) -> ast.ClassDef | None:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, ast.ClassDef):
            current = self.parents.get(current)
        return current

    def _method(self, class_names: set[str], name: str) -> list[Function]:
        """``name`` as defined in these classes or (by name) their bases."""
        out: list[Function] = []
        todo, seen = list(class_names), set()
        while todo:
            cls_name = todo.pop()
            if cls_name in seen:
                continue
            seen.add(cls_name)
            for cls in self.classes.get(cls_name, []):
                own = [
                    s
                    for s in cls.body
                    if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == name
                ]
                out.extend(own)
                if not own:
                    todo.extend(_callee(b) or "" for b in cls.bases)
        return out

    def _annotated_classes(self, annotation: ast.expr | None) -> set[str]:
        if annotation is None:
            return set()
        text = ast.unparse(annotation)
        return {word for word in re.findall(r"[A-Za-z_]\w*", text) if word in self.classes}

    def _receiver(self, expr: ast.expr, depth: int = 0) -> set[str] | None:
        """The source classes ``expr`` may be an instance of, or None when unknown."""
        if depth > 8:
            return None
        if isinstance(expr, ast.Name):
            scope: Scope = self._scope(expr)
            while True:
                if not isinstance(scope, ast.Module | ast.Lambda):
                    params = self._params(scope)
                    for position, arg in enumerate(params):
                        if arg.arg != expr.id:
                            continue
                        if position == 0 and arg.arg in {"self", "cls"}:
                            cls = self._class_of(scope)
                            return {cls.name} if cls is not None else None
                        return self._annotated_classes(arg.annotation) or None
                if self._binds(expr.id, scope) or isinstance(scope, ast.Module):
                    break
                scope = self._scope(scope)
            out: set[str] = set()
            for value, index, loop in self._bindings(expr.id, scope):
                classes = None if index is not None or loop else self._receiver(value, depth + 1)
                if classes is None:
                    return None
                out |= classes
            return out or None
        if isinstance(expr, ast.Call):
            name = self._original_name(expr.func) if isinstance(expr.func, ast.Name) else None
            if name in self.classes:
                return {name}
            fns = self._callees(expr)
            if fns is None:
                return None
            out = set()
            for fn in fns:
                classes = self._annotated_classes(fn.returns)
                if not classes:
                    return None
                out |= classes
            return out or None
        return None

    def _index(self, scope: Scope) -> _ScopeIndex:
        """What ``scope``'s own statements bind, computed once per scope."""
        index = self._index_cache.get(scope)
        if index is not None:
            return index
        index = self._index_cache[scope] = _ScopeIndex()
        for node in self._own(scope):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    index.imports.setdefault(alias.asname or alias.name, (node, alias.name))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                index.defs[node.name].append(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._unpack(target, node.value, False, index.binds)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._unpack(node.target, node.value, False, index.binds)
            elif isinstance(node, ast.NamedExpr):
                index.binds[node.target.id].append((node.value, None, False))
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                self._unpack(node.target, node.iter, True, index.binds)
        return index

    def _import_target(self, name: ast.Name) -> tuple[ast.Module, str] | None:
        """(module, original name) when ``name`` is imported from a scanned module."""
        scope: Scope | None = self._scope(name)
        while scope is not None:
            hit = self._index(scope).imports.get(name.id)
            if hit is not None:
                node, original = hit
                module = self.by_dotted.get(self._imported_module(node, scope))
                return (module, original) if module is not None else None
            scope = None if isinstance(scope, ast.Module) else self._scope(scope)
        return None

    def _original_name(self, name: ast.Name) -> str:
        """``name`` seen through ``import … as …`` (``file_error as _fail`` -> file_error)."""
        target = self._import_target(name)
        return target[1] if target is not None else name.id

    def _local_defs(self, name: ast.Name) -> list[Function] | None:
        """The functions ``name`` is defined as in its scope chain or module, if any."""
        scope: Scope | None = self._scope(name)
        while scope is not None:
            own = self._index(scope).defs.get(name.id)
            if own:
                return own
            scope = None if isinstance(scope, ast.Module) else self._scope(scope)
        target = self._import_target(name)
        if target is not None:
            module, original = target
            return [
                n
                for n in module.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == original
            ] or None
        return None

    def _callees(self, call: ast.Call) -> list[Function] | None:
        """The source functions ``call`` may call; None when that is ambiguous."""
        func = call.func
        if isinstance(func, ast.Name):
            local = self._local_defs(func)
            if local is not None:
                return local
            candidates = self.functions.get(self._original_name(func), [])
        elif isinstance(func, ast.Attribute):
            owner = self._receiver(func.value)
            if owner is not None:
                return self._method(owner, func.attr)
            candidates = self.functions.get(func.attr, [])
        else:
            return []
        distinct = {frozenset(self.slots.get(fn, ())) for fn in candidates}
        return candidates if len(distinct) <= 1 else None

    def _call_slots(self, call: ast.Call) -> tuple[set[Slot], bool]:
        """The code slots of what ``call`` calls, and whether that is certain."""
        func = call.func
        name = self._original_name(func) if isinstance(func, ast.Name) else _callee(func)
        if name is None:
            return set(), True
        if isinstance(func, ast.Attribute) and name == "__init__":
            owner = func.value
            if isinstance(owner, ast.Call) and _callee(owner.func) == "super":
                cls = self._class_of(call)
                bases = cls.bases if cls is not None else []
                return {s for b in bases for s in self.class_slots.get(_callee(b) or "", ())}, True
            # Base.__init__(self, code, …): one more positional argument
            slots = self.class_slots.get(_callee(owner) or "", set())
            return {(None if i is None else i + 1, k) for i, k in slots}, True
        if isinstance(func, ast.Name) and name in self.classes:
            return set(self.class_slots.get(name, ())), True
        callees = self._callees(call)
        if callees is not None:
            return {s for fn in callees for s in self.slots.get(fn, ())}, True
        candidates = self.functions.get(name, [])
        return {s for fn in candidates for s in self.slots.get(fn, ())}, False

    # -- code positions ------------------------------------------------------------------

    def _is_code_accessor(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Attribute):
            return expr.attr == "code"
        if isinstance(expr, ast.Subscript):
            return isinstance(expr.slice, ast.Constant) and expr.slice.value == "code"
        if isinstance(expr, ast.Call):
            return (
                _callee(expr.func) == "get"
                and isinstance(expr.func, ast.Attribute)
                and bool(expr.args)
                and isinstance(expr.args[0], ast.Constant)
                and expr.args[0].value == "code"
            )
        if isinstance(expr, ast.Name):
            scope = self._scope(expr)
            while not isinstance(scope, ast.Module):
                if isinstance(scope, ast.Lambda):
                    scope = self._scope(scope)
                    continue
                if expr.id in self.code_params.get(scope, ()):
                    return True
                if expr.id in {a.arg for a in self._params(scope)}:
                    return False
                scope = self._scope(scope)
        return False

    def _call_positions(self, call: ast.Call) -> Iterator[tuple[ast.expr, int | None, bool]]:
        slots, certain = self._call_slots(call)
        for index, keyword in sorted(slots, key=str):
            if index is not None:
                for position, arg in enumerate(call.args):
                    if isinstance(arg, ast.Starred):
                        if index >= position:
                            yield arg.value, index - position, certain
                        break
                    if position == index:
                        yield arg, None, certain
                        break
            for kw in call.keywords:
                if keyword is not None and kw.arg == keyword and kw.arg != "code":
                    yield kw.value, None, certain
        if (_callee(call.func) or "") not in NOT_ERROR_CODES:
            for kw in call.keywords:
                if kw.arg == "code":
                    yield kw.value, None, True

    def _positions(self, root: ast.AST) -> Iterator[tuple[ast.expr, int | None, bool]]:
        """(expression, element index for ``*`` unpacking, certain) of every code position.

        Not certain: a method call whose receiver's class is unknown, where methods of that
        name differ (``sink.error(code, …)`` vs a parser's ``self.error(message, …)``); only
        literals shaped like a code count there."""
        for node in ast.walk(root):
            if isinstance(node, ast.Call):
                yield from self._call_positions(node)
            elif isinstance(node, ast.Dict):  # a diagnostic or error object
                keys = {
                    k.value: v
                    for k, v in zip(node.keys, node.values, strict=True)
                    if k and isinstance(k, ast.Constant)
                }
                if "code" in keys and "message" in keys:
                    yield keys["code"], None, True
            elif isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                if any(self._is_code_accessor(o) for o in operands):
                    for operand in operands:
                        if not self._is_code_accessor(operand):
                            yield operand, None, True
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(
                    isinstance(t, ast.Attribute | ast.Subscript) and self._is_code_accessor(t)
                    for t in targets
                ):
                    yield node.value, None, True

    def _defaults(self) -> Iterator[ast.expr]:
        """The default values of code parameters."""
        for fn, params in self.code_params.items():
            defaults = _parameter_defaults(fn)
            yield from (defaults[param] for param in sorted(params) if param in defaults)

    # -- following expressions back to literals ------------------------------------------

    def _imported_module(self, node: ast.ImportFrom, scope: Scope) -> str:
        if not node.level:
            return node.module or ""
        module = scope
        while not isinstance(module, ast.Module):
            module = self._scope(module)
        package = self.package_of.get(module, "").split(".")
        base = package[: len(package) - node.level + 1]
        return ".".join([*base, node.module] if node.module else base)

    def _module_alias(self, name: ast.Name) -> ast.Module | None:
        """The scanned module ``name`` stands for (``from . import codes``), if any."""
        scope = self._binding_scope(name)
        for node in self._own(scope):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name.id:
                        dotted = f"{self._imported_module(node, scope)}.{alias.name}"
                        if dotted in self.by_dotted:
                            return self.by_dotted[dotted]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname == name.id and alias.name in self.by_dotted:
                        return self.by_dotted[alias.name]
        return None

    def _bindings(self, name: str, scope: Scope) -> Iterator[tuple[ast.expr, int | None, bool]]:
        """What ``name`` is bound to in ``scope``: (expression, element, is-a-loop-item)."""
        key = (id(scope), name)
        if key in self._visiting:  # re-exports that import each other
            return
        self._visiting.add(key)
        try:
            yield from self._own_bindings(name, scope)
        finally:
            self._visiting.discard(key)

    def _own_bindings(self, name: str, scope: Scope) -> Iterator[tuple[ast.expr, int | None, bool]]:
        index = self._index(scope)
        hit = index.imports.get(name)
        if hit is not None:  # a name imported from a scanned module
            node, original = hit
            module = self.by_dotted.get(self._imported_module(node, scope))
            if module is not None:
                yield from self._bindings(original, module)
        yield from index.binds.get(name, ())
        if not isinstance(scope, ast.Module):
            default = _parameter_defaults(scope).get(name)
            if default is not None:
                yield default, None, False

    @staticmethod
    def _unpack(target: ast.expr, value: ast.expr, loop: bool, binds: _Binds) -> None:
        if isinstance(target, ast.Name):
            binds[target.id].append((value, None, loop))
        elif isinstance(target, ast.Tuple | ast.List):
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    binds[element.id].append((value, index, loop))

    def _binds(self, name: str, scope: Scope) -> bool:
        if not isinstance(scope, ast.Module) and name in {a.arg for a in self._params(scope)}:
            return True
        index = self._index(scope)
        return name in index.binds or name in index.imports

    def _binding_scope(self, name: ast.Name) -> Scope:
        scope: Scope = self._scope(name)
        while not self._binds(name.id, scope) and not isinstance(scope, ast.Module):
            scope = self._scope(scope)
        return scope

    def _resolve(
        self, expr: ast.expr, element: int | None, seen: set[tuple[int, int | None]]
    ) -> Iterator[tuple[str, ast.AST]]:
        """The string literals ``expr`` (or its ``element``-th item) can evaluate to."""
        key = (id(expr), element)
        if key in seen:
            return
        seen.add(key)
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, str) and element is None:
                yield expr.value, expr
        elif isinstance(expr, ast.JoinedStr):
            if element is None:
                for text in self._fstring(expr):
                    yield text, expr
        elif isinstance(expr, ast.IfExp | ast.BoolOp):
            for leaf in self._leaves(expr):
                yield from self._resolve(leaf, element, seen)
        elif isinstance(expr, ast.Tuple | ast.List | ast.Set):
            elements = expr.elts
            if element is None:
                for item in elements:
                    yield from self._resolve(item, None, seen)
            elif element < len(elements) and not any(
                isinstance(e, ast.Starred) for e in elements[: element + 1]
            ):
                yield from self._resolve(elements[element], None, seen)
        elif isinstance(expr, ast.Starred):
            yield from self._resolve(expr.value, element, seen)
        elif isinstance(expr, ast.Name):
            for value, index, loop in self._bindings(expr.id, self._binding_scope(expr)):
                if loop:  # an item of a code table: one element of each of its entries
                    for item in self._items(value, set()):
                        yield from self._resolve(item, index, seen)
                else:
                    yield from self._resolve(value, element if index is None else index, seen)
        elif isinstance(expr, ast.Attribute):  # module.CODE, Class.CODE, self.CODE
            owner = expr.value
            if isinstance(owner, ast.Name):
                module = self._module_alias(owner)
                if module is not None:
                    for value, index, _ in self._bindings(expr.attr, module):
                        yield from self._resolve(value, element if index is None else index, seen)
                classes = self._receiver(owner) or (
                    {owner.id} if owner.id in self.classes else set()
                )
                for cls_name in sorted(classes):
                    for cls in self.classes[cls_name]:
                        for node in cls.body:
                            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value:
                                targets = (
                                    node.targets if isinstance(node, ast.Assign) else [node.target]
                                )
                                if any(
                                    isinstance(t, ast.Name) and t.id == expr.attr for t in targets
                                ):
                                    yield from self._resolve(node.value, element, seen)
        elif isinstance(expr, ast.Subscript):  # TABLE[key]
            for item in self._items(expr.value, set(), values=True):
                yield from self._resolve(item, element, seen)
        elif isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr == "get":  # TABLE.get(key, …)
                for item in self._items(func.value, set(), values=True):
                    yield from self._resolve(item, element, seen)
                for default in expr.args[1:]:
                    yield from self._resolve(default, element, seen)
                return
            callees = self._callees(expr)  # what a source function returns
            if callees is None:
                callees = self.functions.get(_callee(func) or "", [])
            for fn in callees:
                for statement in self._own(fn):
                    if isinstance(statement, ast.Return) and statement.value is not None:
                        yield from self._resolve(statement.value, element, seen)

    def _fstring(self, node: ast.JoinedStr) -> list[str]:
        """Every value of an f-string whose parts can be enumerated (``f"{kind.lower()}-x"``
        with ``kind`` "Action" or "Resource" at every call site); a part that cannot be is
        a named placeholder (``f"schema.{finding.keyword}"`` is ``schema.<keyword>``)."""
        options: list[list[str]] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                options.append([str(part.value)])
                continue
            assert isinstance(part, ast.FormattedValue)
            plain = part.format_spec is None and part.conversion == -1
            values = self._strings(part.value, 0) if plain else None
            options.append(sorted(values) if values else [_placeholder(part.value)])
        out = [""]
        for choices in options:
            out = [head + choice for head in out for choice in choices]
            if len(out) > 64:  # not a small closed set: name the parts instead
                return ["".join(c[0] if len(c) == 1 else "<value>" for c in options)]
        return out

    def _strings(self, expr: ast.expr, depth: int) -> set[str] | None:
        """All the strings ``expr`` can be, or None when they cannot be enumerated."""
        if depth > 6:
            return None
        if isinstance(expr, ast.Constant):
            return {expr.value} if isinstance(expr.value, str) else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            if expr.func.attr in _STR_METHODS and not expr.args and not expr.keywords:
                values = self._strings(expr.func.value, depth + 1)
                if values is None:
                    return None
                return {getattr(v, expr.func.attr)() for v in values}
            return None
        if not isinstance(expr, ast.Name):
            return None
        scope = self._binding_scope(expr)
        if isinstance(scope, ast.Lambda | ast.Module) or expr.id not in {
            a.arg for a in self._params(scope)
        }:
            found = {text for text, _ in self._resolve(expr, None, set())}
            return found or None
        # a parameter: the values its callers pass
        fn = scope
        positional = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        skip = 1 if isinstance(self.parents.get(fn), ast.ClassDef) and positional else 0
        index = positional.index(expr.id) - skip if expr.id in positional else None
        out: set[str] = set()
        calls = [c for c in self.calls.get(fn.name, []) if fn in (self._callees(c) or [fn])]
        for call in calls:
            args = [kw.value for kw in call.keywords if kw.arg == expr.id] or (
                [call.args[index]]
                if index is not None
                and index < len(call.args)
                and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1])
                else []
            )
            if not args:
                return None
            values = self._strings(args[0], depth + 1)
            if values is None:
                return None
            out |= values
        return out or None

    def _items(self, expr: ast.expr, seen: set[int], *, values: bool = False) -> Iterator[ast.expr]:
        """The entries of a literal collection, following names to their literal: a dict's
        keys (its values with ``values``; ``(key, value)`` pairs from ``.items()``)."""
        if id(expr) in seen:
            return
        seen.add(id(expr))
        if isinstance(expr, ast.Tuple | ast.List | ast.Set):
            yield from expr.elts
        elif isinstance(expr, ast.Dict):
            if values:
                yield from expr.values
            else:
                yield from (key for key in expr.keys if key is not None)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            method, table = expr.func.attr, expr.func.value
            if method in {"values", "keys"}:
                yield from self._items(table, seen, values=method == "values")
            elif method == "items":
                for entry in self._dicts(table, set()):
                    for key, value in zip(entry.keys, entry.values, strict=True):
                        if key is not None:
                            yield ast.Tuple(elts=[key, value], ctx=ast.Load())
        elif isinstance(expr, ast.Name):
            for value, index, loop in self._bindings(expr.id, self._binding_scope(expr)):
                if index is None and not loop:
                    yield from self._items(value, seen, values=values)

    def _dicts(self, expr: ast.expr, seen: set[int]) -> Iterator[ast.Dict]:
        """The dict literals a name (or expression) stands for."""
        if id(expr) in seen:
            return
        seen.add(id(expr))
        if isinstance(expr, ast.Dict):
            yield expr
        elif isinstance(expr, ast.Name):
            for value, index, loop in self._bindings(expr.id, self._binding_scope(expr)):
                if index is None and not loop:
                    yield from self._dicts(value, seen)

    # -- the scan ------------------------------------------------------------------------

    def _scan(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = defaultdict(list)
        positions = [p for tree in self.modules.values() for p in self._positions(tree)]
        positions += [(default, None, True) for default in self._defaults()]
        for expr, element, certain in positions:
            for code, node in self._resolve(expr, element, set()):
                if not certain and not CODE_SHAPE.match(code):
                    continue
                line = getattr(node, "lineno", getattr(expr, "lineno", 0))
                where = f"{self.module_of.get(node, self.module_of.get(expr, '?'))}:{line}"
                if where not in found[code]:
                    found[code].append(where)
        return dict(found)


def source_files() -> dict[str, str]:
    """Every module under ``src/agent_graph`` (``agent_graph/…/x.py`` -> its text), read
    afresh on each run."""
    return {
        path.relative_to(SRC.parent).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(SRC.rglob("*.py"))
    }


@pytest.fixture(scope="module")
def scanner() -> CodeScanner:
    return CodeScanner(source_files())


def _documented(code: str, doc: str) -> bool:
    return f"`{code}`" in doc


def _listing(codes: Mapping[str, list[str]]) -> str:
    return "\n".join(f"  {code}  ({', '.join(where)})" for code, where in sorted(codes.items()))


# -- the catalogue against the source and the docs -------------------------------------------


def test_every_code_in_the_source_is_catalogued(scanner: CodeScanner) -> None:
    missing = {c: w for c, w in scanner.found.items() if c not in error_codes.CODES}
    assert not missing, (
        "codes used in src/agent_graph but missing from agent_graph.error_codes:\n"
        + _listing(missing)
    )


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


def test_every_catalogued_code_is_documented() -> None:
    doc = DOC.read_text(encoding="utf-8")
    undocumented = [code for code in error_codes.CODES if not _documented(code, doc)]
    assert not undocumented, f"catalogued codes missing from {DOC.name}: {undocumented}"


def test_every_catalogued_code_is_documented_in_its_section() -> None:
    sections = _sections(DOC.read_text(encoding="utf-8"))
    unknown = [area for area in error_codes.AREAS if area not in sections]
    assert not unknown, f"catalogue areas that are not headings of {DOC.name}: {unknown}"
    misplaced = [
        f"{code} (under {area!r})"
        for area, entries in error_codes.AREAS.items()
        for code in entries
        if not _documented(code, sections[area])
    ]
    assert not misplaced, f"codes not documented in their section: {misplaced}"


def test_the_catalogue_has_no_stale_entries(scanner: CodeScanner) -> None:
    stale = [code for code in error_codes.CODES if code not in scanner.found]
    assert not stale, f"catalogued codes no source in src/agent_graph uses: {stale}"


def test_catalogue_entries_are_well_formed() -> None:
    seen: dict[str, str] = {}
    for area, entries in error_codes.AREAS.items():
        assert entries, f"empty area {area}"
        for code, meaning in entries.items():
            assert CODE_SHAPE.match(code), code
            assert code not in seen, f"{code} listed under {seen.get(code)} and {area}"
            seen[code] = area
            assert meaning.strip(), code
            assert "\n" not in meaning, code
    assert seen.keys() == error_codes.CODES.keys()
    assert dict(error_codes.CODES) == {
        code: meaning for entries in error_codes.AREAS.values() for code, meaning in entries.items()
    }


def test_excluded_code_parameters_are_not_error_codes(scanner: CodeScanner) -> None:
    """The IR's ``code`` parameters exist and never reach an error: keep the list honest."""
    for name, why in NOT_ERROR_CODES.items():
        defined = name in scanner.functions or name in scanner.classes
        assert defined, f"{name} ({why}) no longer exists: drop it"
        assert name not in scanner.flow_takers, f"{name}'s code parameter reaches an error"
        assert name not in scanner.takers
    letters = {c for c in scanner.found if not CODE_SHAPE.match(c)}
    assert not letters, f"not error codes, yet found in code positions: {letters}"


# -- the scanner itself, on synthetic sources -----------------------------------------------

SYNTHETIC = textwrap.dedent(
    '''
    from agent_graph.errors import AgentGraphError, Diagnostic, ProblemSink
    from agent_graph.errors import AgentGraphError as Failure

    from .codes import IMPORTED

    TABLE = {"a": "brand-new-table", "b": "brand-new-table-2"}
    PAIRS = (("brand-new-loop", "x"),)


    class NewError(AgentGraphError):
        """A subclass without its own __init__."""


    class Parser:
        def error(self, message: str) -> ValueError:
            return ValueError(message)

        def parse(self) -> None:
            raise self.error("a message, not a code")


    def corrupt(reason: str, message: str) -> AgentGraphError:
        return AgentGraphError(reason, message)


    def fail_with(message: str, code: str = "brand-new-default") -> AgentGraphError:
        return AgentGraphError(code, message)


    def pick() -> tuple[str, str]:
        return "brand-new-returned", "message"


    def claim(kind: str) -> AgentGraphError:
        return AgentGraphError(f"{kind.lower()}-brand-new", "x")


    def check(sink: ProblemSink, flag: bool, kind: str) -> None:
        raise AgentGraphError("brand-new-code", "x")
        sink.error("brand-new-sink", "x")
        Diagnostic(code="brand-new-keyword", message="x")
        code = "brand-new-variable" if flag else "brand-new-else"
        AgentGraphError(code, "x")
        corrupt("brand-new-helper", "x")
        NewError("brand-new-subclass", "x")
        Failure("brand-new-aliased", "x")
        AgentGraphError(IMPORTED, "x")
        AgentGraphError(TABLE[kind], "x")
        for name, _ in PAIRS:
            sink.error(name, "x")
        sink.error(*pick())
        claim("Alpha")
        claim("Beta")
        AgentGraphError(f"brand-new.{kind}", "x")
        diagnostics = [{"code": "brand-new-dict", "message": "x"}]
        if diagnostics[0]["code"] == "brand-new-compared":
            pass
    '''
)

SYNTHETIC_CODES = {
    "brand-new-code",
    "brand-new-sink",
    "brand-new-keyword",
    "brand-new-variable",
    "brand-new-else",
    "brand-new-helper",
    "brand-new-default",
    "brand-new-subclass",
    "brand-new-aliased",
    "brand-new-imported",
    "brand-new-table",
    "brand-new-table-2",
    "brand-new-loop",
    "brand-new-returned",
    "alpha-brand-new",
    "beta-brand-new",
    "brand-new.<kind>",
    "brand-new-dict",
    "brand-new-compared",
}

_NEW = "agent_graph/brand_new"


def test_the_scanner_finds_a_new_agent_graph_error_anywhere_in_src() -> None:
    """``AgentGraphError("brand-new-code", "x")`` in a new module of the real tree is found,
    with its place, and is missing from the catalogue (so the catalogue test fails)."""
    sources = source_files()
    sources[f"{_NEW}/module.py"] = textwrap.dedent(
        """
        from agent_graph.errors import AgentGraphError

        def check() -> None:
            raise AgentGraphError("brand-new-code", "x")
        """
    )
    found = CodeScanner(sources).found
    assert found["brand-new-code"] == [f"{_NEW}/module.py:5"]
    assert "brand-new-code" not in error_codes.CODES


def test_the_scanner_finds_every_way_of_writing_a_code() -> None:
    sources = source_files()
    sources[f"{_NEW}/__init__.py"] = ""
    sources[f"{_NEW}/codes.py"] = 'IMPORTED = "brand-new-imported"\n'
    sources[f"{_NEW}/module.py"] = SYNTHETIC
    found = CodeScanner(sources).found
    assert found.keys() >= SYNTHETIC_CODES, SYNTHETIC_CODES - found.keys()
    uncatalogued = {code for code in found if code not in error_codes.CODES}
    assert uncatalogued >= SYNTHETIC_CODES
    assert not {c for c in found if " " in c}, "a message was taken for a code"
    assert found["brand-new-imported"] == [f"{_NEW}/codes.py:1"]


def test_the_scanner_ignores_strings_that_are_not_codes() -> None:
    source = textwrap.dedent(
        """
        from agent_graph.errors import AgentGraphError

        def _field_expression(code: str, value: object) -> object:
            return value if code in ("s", "s?") else None

        def run(message: str) -> None:
            _field_expression("i", 1)
            print("not-a-code")
            raise AgentGraphError("only-this", message + "not-this-either")
        """
    )
    errors = (SRC / "errors.py").read_text(encoding="utf-8")
    found = CodeScanner({"errors.py": errors, "module.py": source}).found
    assert set(found) == {"only-this"}


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
