"""Per-record decoders generated from the codec's layout table.

A generic field interpreter spends most of a cold load dispatching on field codes;
straight-line functions, one per record type, check the same things (shape, every
type, every string index) several times faster. They are generated once, on first
use, from :data:`codec.LAYOUT`, so the layout stays the single description.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, NoReturn

from ..errors import AgentGraphError
from . import records as r

Decoder = Callable[[Any, list[str], int], Any]


def _bad(message: str) -> NoReturn:
    raise AgentGraphError("ir-corrupt", f"Compiled IR is damaged: {message}")


def _string(value: Any, strings: list[str], count: int, where: str) -> str:
    if type(value) is not int or not 0 <= value < count:
        _bad(f"{where}: string index out of range")
    return strings[value]


def _field(code: str, src: str, where: str) -> tuple[list[str], str]:
    """Statements checking ``src`` and the expression of the decoded value."""
    optional = code.endswith("?") or "?:" in code or code == "E"
    guard = f"{src} is None" if optional else None
    lines: list[str] = []
    if code in ("s", "s?"):
        expr = f"_string({src}, S, n, {where!r})"
    elif code == "i":
        lines.append(f"if type({src}) is not int: _bad({where + ': expected an integer'!r})")
        expr = src
    elif code in ("b", "b?"):
        lines.append(
            f"if {src} is not None and type({src}) is not bool: "
            f"_bad({where + ': expected a boolean'!r})"
            if optional
            else f"if type({src}) is not bool: _bad({where + ': expected a boolean'!r})"
        )
        return lines, src
    elif code == "j":
        return lines, f"_freeze({src})"
    elif code == "I":
        lines.append(
            f"if type({src}) is not list or any(type(e) is not int for e in {src}): "
            f"_bad({where + ': expected a list of integers'!r})"
        )
        expr = f"tuple({src})"
    elif code == "S":
        lines.append(f"if type({src}) is not list: _bad({where + ': expected a list'!r})")
        expr = f"tuple([_string(e, S, n, {where!r}) for e in {src}])"
    elif code == "P":
        lines.append(
            f"if type({src}) is not list or any(type(p) is not list or len(p) != 2 "
            f"or type(p[1]) is not int for p in {src}): _bad({where + ': expected pairs'!r})"
        )
        expr = f"tuple([(_string(p[0], S, n, {where!r}), p[1]) for p in {src}])"
    elif code == "E":
        lines.append(
            f"if {src} is not None and (type({src}) is not list or len({src}) != 2): "
            f"_bad({where + ': expected a pair'!r})"
        )
        expr = f"(_string({src}[0], S, n, {where!r}), _string({src}[1], S, n, {where!r}))"
    else:
        kind, name = code.split(":", 1)
        if kind.startswith("L"):
            lines.append(f"if {src} is not None and type({src}) is not list: "
                         f"_bad({where + ': expected a list'!r})")  # fmt: skip
            expr = f"tuple([dec_{name}(e, S, n) for e in {src}])"
        else:
            expr = f"dec_{name}({src}, S, n)"
    if guard is None:
        lines.append(f"if {src} is None: _bad({where + ': missing value'!r})")
        return lines, expr
    return lines, f"(None if {guard} else {expr})"


def build(layout: dict[type, tuple[str, ...]]) -> dict[type, Decoder]:
    namespace: dict[str, Any] = {
        "_bad": _bad,
        "_string": _string,
        "_freeze": r.freeze_json,
        **{cls.__name__: cls for cls in layout},
    }
    source: list[str] = []
    for cls, codes in layout.items():
        name = cls.__name__
        names = [f.name for f in fields(cls)]
        args = [f"v{i}" for i in range(len(codes))]
        body = [
            f"def dec_{name}(v, S, n):",
            f"    if type(v) is not list or len(v) != {len(codes)}: "
            f"_bad('malformed {name} record')",
            f"    {', '.join(args)}{',' if len(args) == 1 else ''} = v",
        ]
        values = []
        for i, (code, field_name) in enumerate(zip(codes, names, strict=True)):
            lines, expr = _field(code, args[i], f"{name}.{field_name}")
            body += [f"    {line}" for line in lines]
            values.append(expr)
        body.append(f"    return {name}({', '.join(values)})")
        source.append("\n".join(body))
    exec(compile("\n\n".join(source), "<agent_graph.ir.decoders>", "exec"), namespace)
    return {cls: namespace[f"dec_{cls.__name__}"] for cls in layout}
