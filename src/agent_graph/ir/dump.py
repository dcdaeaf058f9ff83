"""A stable, readable rendering of the IR, for people and for golden tests.

:func:`dump` prints one line per record, with names where the IR stores indexes
(node ids for edge ends, action and resource ids for references), so a diff of two
dumps reads as a diff of meaning. Nested records sit on indented lines under their
owner. Optional members that are absent are left out; strings are printed bare when
they are plain identifiers and as JSON strings otherwise, so a line never becomes
ambiguous. :func:`to_json` is the same content as JSON values.

How it is built, and why: one walk (:meth:`Renderer._show`) reads each record through
its wire markers (:mod:`.schema`) and produces a neutral tree in which every index is
already the name of what it points at, every code its enumeration name, every bit set
its list of names. The text and JSON forms are two small serializers of that tree, so
they cannot disagree about what a field means, and a field added to a record appears
in both with no edit here: in JSON under its camelCase name at its field position, in
text as `` name=value`` at the end of its record's line (or, for a nested record, on
lines of its own).

What the markers cannot say is how today's dump looks, which predates them: member
order and labels in the text line, which strings print verbatim, JSON member names.
That is :data:`_VIEWS`, one :class:`View` per record, holding only presentation. The
rendering depends only on the records, never on the encoding, so it is stable across
codec changes that keep the meaning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import flow_records as fr
from . import records as r
from .schema import NONE, Field, Table, describe

_BARE = re.compile(r"^[A-Za-z0-9_.:/@+-]+\Z")


def _q(text: str) -> str:
    return text if _BARE.match(text) else json.dumps(text, ensure_ascii=False)


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True, slots=True)
class _Shown:
    """One record as the walk saw it: ``values`` per shown field, indexes already names."""

    cls: type | None  # None for a (name, target) pair of a named_indexes field
    values: dict[str, Any]


@dataclass(frozen=True)
class View:
    """How one record departs from the generic rendering.

    ``text``: the text template. Literal text is copied; ``{field}`` is the field's
    value (strings quoted when not bare; ``{field!}`` verbatim); ``[...]`` is left out
    when a value inside is absent (None), an empty list or the integer 0. A leading
    indent is the line's indent. Fields the template does not mention follow as
    `` name=value`` (left out like a ``[...]``), and nested records it does not mention
    go on lines of their own (an absent list of them prints ``<field> none``). The
    template of ``Record.field``, for a named_indexes field, prints one line per pair
    (``{0}`` its name, ``{1}`` its target).
    ``hide``: fields left out of both forms. ``via``: an index into a table of records
    without ids is shown as that record's ``via`` field (an edge as one of its ends).
    ``text_as``/``json_as``: a present value's rendering, replacing the generic one
    (None: left out). ``lead``: JSON members put first, in this order; the rest follow
    in field order. ``keys``: JSON member names where not the camelCase field name (a
    dotted name nests). ``nulls``: JSON members kept as null when absent. ``custom``:
    a record rendered by hand (text, JSON), for a syntax no template states.
    """

    text: str = ""
    hide: tuple[str, ...] = ()
    via: Mapping[str, str] = field(default_factory=dict)
    text_as: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    json_as: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    lead: tuple[str, ...] = ()
    keys: Mapping[str, str] = field(default_factory=dict)
    nulls: tuple[str, ...] = ()
    custom: tuple[Callable[[_Shown], str], Callable[[_Shown], Any]] | None = None


@dataclass(frozen=True, slots=True)
class _Slot:
    field: str
    verbatim: bool


_Part = str | _Slot | list[str | _Slot]
_TOKEN = re.compile(r"\[([^\[\]]*)\]|\{(\w+)(!?)\}|([^\[\]{}]+)")


def _parse(template: str) -> list[_Part]:
    parts: list[_Part] = []
    end = 0
    for match in _TOKEN.finditer(template):
        if match.start() != end:
            raise ValueError(f"cannot read the template {template!r} at {end}")
        end = match.end()
        group, name, bang, literal = match.groups()
        if group is not None:  # the pattern keeps groups from nesting
            parts.append([p for p in _parse(group) if not isinstance(p, list)])
        elif name is not None:
            parts.append(_Slot(name, bool(bang)))
        else:
            parts.append(literal)
    if end != len(template):
        raise ValueError(f"cannot read the template {template!r} at {end}")
    return parts


def _slots(parts: Sequence[_Part]) -> set[str]:
    found: set[str] = set()
    for part in parts:
        if isinstance(part, _Slot):
            found.add(part.field)
        elif isinstance(part, list):
            found |= {p.field for p in part if isinstance(p, _Slot)}
    return found


def _indent_of(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" "))]


def _absent(value: Any) -> bool:
    return value is None or value == [] or (type(value) is int and value == 0)


class Renderer:
    """The text and JSON renderings of records, given their :class:`View` table."""

    def __init__(self, records: Sequence[type], views: Mapping[str, View]) -> None:
        self.fields = {cls.__name__: {f.name: f for f in describe(cls)} for cls in records}
        self.views = views
        self.templates: dict[str, list[_Part]] = {}
        for name, view in views.items():
            record, _, pairs = name.partition(".")
            known = self.fields.get(record)
            if known is None or (pairs and known[pairs].wire.kind != "named_indexes"):
                raise ValueError(f"the view {name!r} names no record (or pair list)")
            names = {"0", "1"} if pairs else set(known)
            self.templates[name] = parts = _parse(view.text)
            members = [*_slots(parts), *view.hide, *view.via, *view.text_as, *view.json_as]
            members += [*view.lead, *view.keys, *view.nulls]
            if not set(members) <= names or _slots(parts) & set(view.hide):
                raise ValueError(f"the view of {name} names fields it does not show")

    # -- the walk ---------------------------------------------------------------------------

    def _show(self, value: Any, scope: Mapping[str, Sequence[Any]]) -> _Shown:
        cls = type(value)
        fields = describe(cls)
        view = self.views.get(cls.__name__, _PLAIN)
        tables = {
            f"{cls.__name__}.{f.name}": getattr(value, f.name) or ()
            for f in fields
            if f.wire.kind == "records"
        }
        if tables:
            scope = {**scope, **tables}
        values = {
            f.name: self._neutral(f, getattr(value, f.name), scope, view.via.get(f.name))
            for f in fields
            if f.name not in view.hide
        }
        return _Shown(cls, values)

    def _neutral(self, f: Field, value: Any, scope: Mapping[str, Any], via: str | None) -> Any:
        """``value`` with indexes as names, codes and bits as names, records as trees."""
        if value is None:
            return None
        wire = f.wire
        kind, table, names = wire.kind, wire.table, wire.names or ()
        if kind == "index":
            assert table is not None
            return None if wire.none and value == NONE else self._label(table, value, scope, via)
        if kind == "indexes":
            assert table is not None
            return [self._label(table, i, scope, via) for i in value]
        if kind == "named_indexes":
            assert table is not None
            return [(name, self._label(table, i, scope, via)) for name, i in value]
        if kind == "code":
            return names[value]
        if kind == "bits":
            return [name for i, name in enumerate(names) if value >> i & 1]
        if kind == "record":
            return self._show(value, scope)
        if kind == "records":
            return [self._show(item, scope) for item in value]
        return list(value) if kind in ("texts", "pair") else value

    def _label(self, table: Table, index: int, scope: Mapping[str, Any], via: str | None) -> str:
        target = scope[str(table)][index]
        if via is not None:
            end = next(f for f in describe(type(target)) if f.name == via)
            assert end.wire.table is not None
            return self._label(end.wire.table, getattr(target, via), scope, None)
        # Provider records are named by ``id``, Flow nodes and forks by their Mermaid ``ref``
        ident = getattr(target, "id", None) or getattr(target, "ref", None)
        return ident if isinstance(ident, str) else str(index)

    # -- text -------------------------------------------------------------------------------

    def text(self, value: Any) -> str:
        lines: list[str] = []
        self._lines(self._show(value, {}), "", lines)
        return "\n".join(lines) + "\n"

    def _lines(self, shown: _Shown, indent: str, out: list[str]) -> None:
        assert shown.cls is not None
        name = shown.cls.__name__
        view = self.views.get(name, _PLAIN)
        parts = self.templates.get(name) or [indent + name.lower()]
        mentioned = _slots(parts)
        line = self._fill(parts, shown, view) + self._rest(shown, view, mentioned, inline=False)
        out.append(line)
        for f in self.fields[name].values():
            if f.name in mentioned or f.name in view.hide:
                continue
            value = shown.values[f.name]
            pairs = self.templates.get(f"{name}.{f.name}")
            if f.record is not None:
                here = self._indent(f.record.__name__, _indent_of(line) + "  ")
                if value is None and f.wire.kind == "records":
                    out.append(f"{here}{f.name} none")
                elif value is not None:
                    for item in value if f.wire.kind == "records" else [value]:
                        self._lines(item, here, out)
            elif pairs is not None:
                shape = self.views[f"{name}.{f.name}"]
                out += [self._fill(pairs, _Shown(None, {"0": a, "1": b}), shape) for a, b in value]

    def _indent(self, name: str, default: str) -> str:
        """The indent of record ``name``'s lines: its template's, else ``default``."""
        parts = self.templates.get(name)
        return _indent_of(parts[0]) if parts and isinstance(parts[0], str) else default

    def _inline(self, shown: _Shown) -> str:
        assert shown.cls is not None
        name = shown.cls.__name__
        view = self.views.get(name, _PLAIN)
        if view.custom is not None:
            return view.custom[0](shown)
        parts = self.templates.get(name)
        if parts is None:
            return "(" + self._rest(shown, view, set(), inline=True).lstrip(" ") + ")"
        return self._fill(parts, shown, view) + self._rest(shown, view, _slots(parts), inline=True)

    def _rest(self, shown: _Shown, view: View, mentioned: set[str], *, inline: bool) -> str:
        """`` name=value`` for the fields a template leaves out, but for those a line
        puts on lines of their own (nested records, pair lists with a template)."""
        assert shown.cls is not None
        name = shown.cls.__name__
        rest: list[_Part] = []
        for f in self.fields[name].values():
            if f.name in mentioned or f.name in view.hide:
                continue
            if inline or (f.record is None and f"{name}.{f.name}" not in self.templates):
                rest.append([f" {_camel(f.name)}=", _Slot(f.name, False)])
        return self._fill(rest, shown, view)

    def _fill(self, parts: Sequence[_Part], shown: _Shown, view: View) -> str:
        out: list[str] = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, _Slot):
                out.append(self._format(*self._slot(part, shown, view), part.verbatim))
            else:
                group: list[str] = []
                for item in part:
                    if isinstance(item, str):
                        group.append(item)
                        continue
                    value, literal = self._slot(item, shown, view)
                    if not literal and _absent(value):
                        break
                    group.append(self._format(value, literal, item.verbatim))
                else:
                    out.extend(group)
        return "".join(out)

    def _slot(self, slot: _Slot, shown: _Shown, view: View) -> tuple[Any, bool]:
        """The value a slot shows, and whether it is a JSON value (printed as JSON)."""
        value = shown.values[slot.field]
        convert = view.text_as.get(slot.field)
        if convert is not None:
            return (None if value is None else convert(value)), False
        if shown.cls is None:
            return value, False
        return value, self.fields[shown.cls.__name__][slot.field].wire.kind == "json"

    def _format(self, value: Any, literal: bool, verbatim: bool) -> str:
        if literal:
            return _value(value)
        if isinstance(value, _Shown):
            return self._inline(value)
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, str):
            return value if verbatim else _q(value)
        if isinstance(value, tuple):  # a (name, target) pair shown inline
            return " -> ".join(self._format(item, False, verbatim) for item in value)
        if isinstance(value, list):
            return "[" + ", ".join(self._format(item, False, verbatim) for item in value) + "]"
        return "none" if value is None else _value(value)

    # -- JSON -------------------------------------------------------------------------------

    def json(self, value: Any) -> Any:
        return self._json(self._show(value, {}))

    def _json(self, shown: _Shown) -> Any:
        assert shown.cls is not None
        name = shown.cls.__name__
        view = self.views.get(name, _PLAIN)
        if view.custom is not None:
            return view.custom[1](shown)
        fields = self.fields[name]
        out: dict[str, Any] = {}
        for member in dict.fromkeys([*view.lead, *fields]):
            if member in view.hide:
                continue
            f, value = fields[member], shown.values[member]
            convert = view.json_as.get(member)
            if value is not None and convert is not None:
                value = convert(value)
            elif value is not None or f.wire.kind == "json":
                value = self._json_value(f, value)
            if value is None and f.wire.kind != "json" and member not in view.nulls:
                continue
            outer, _, inner = view.keys.get(member, _camel(member)).partition(".")
            if inner:
                out.setdefault(outer, {})[inner] = value
            else:
                out[outer] = value
        return out

    def _json_value(self, f: Field, value: Any) -> Any:
        if f.wire.kind == "record":
            return self._json(value)
        if f.wire.kind == "records":
            return [self._json(item) for item in value]
        if f.wire.kind == "named_indexes":
            return dict(value)
        return value


_PLAIN = View()


# -- the Program's presentation -----------------------------------------------------------


def _check_text(check: _Shown) -> str:
    """A fact check as authored: ``path exists``, ``path absent``, ``path == value``."""
    path, kind = _q(".".join(check.values["path"])), check.values["kind"]
    return f"{path} == {_value(check.values['value'])}" if kind == "equals" else f"{path} {kind}"


def _check_json(check: _Shown) -> dict[str, Any]:
    out: dict[str, Any] = {"path": check.values["path"]}
    if check.values["kind"] == "equals":
        out["equals"] = check.values["value"]
    else:
        out["exists"] = check.values["kind"] == "exists"
    return out


_VIEWS: dict[str, View] = {
    "ProviderIR": View(
        "program {provider_id} {provider_version} providerDigest={provider_digest!}",
        keys={f"provider_{k}": f"provider.{k}" for k in ("id", "version", "digest")},
        nulls=("catalog",),
    ),
    "Graph": View(
        "graph {id} path={path} digest={digest!}[ calls={dependencies}]",
        hide=("repeat_edges",),
        lead=("id", "path", "digest", "entrypoints", "dependencies"),
    ),
    "Graph.entrypoints": View("  entry {0} -> {1}"),
    "Node": View(
        "  node {id} {kind}[ action={action!}][ graph={subgraph!}][ entry={entry}]"
        "[ outcome={terminal_outcome!}][ reason={reason_code!}][ priority={priority}]"
        "[ join={join_any}][ requires={requires}][ satisfiedBy={satisfied_by}][ {resources}]"
        "[ in={incoming}][ out={outgoing}][ repeat={repeats}][ label={description}]",
        via={"incoming": "source", "outgoing": "target", "repeats": "target"},
        text_as={"join_any": lambda any_: "any" if any_ else None},
        json_as={"join_any": lambda any_: "any" if any_ else "all"},
        keys={"requires": "requiresFacts", "join_any": "join", "subgraph": "graph"},
    ),
    "Gate": View(
        "    gate {id}[ authority={authority!}][ delegatable={delegatable}]"
        "[ inspection={inspection!}][ resolution={resolution!}][ prompt={prompt}]",
        hide=("fields",),
    ),
    "Delegated": View(
        "    delegated[ inspection={skip_inspection}][ resolution={resolution!}][ {resources}]",
        text_as={"skip_inspection": lambda skip: "skip" if skip else None},
    ),
    "ResourceLists": View("required={required!} recommended={recommended!}"),
    "FactCheck": View(custom=(_check_text, _check_json)),
    "Edge": View(
        "  edge {source} -> {target} {kind} on={mask}",
        keys={"source": "from", "target": "to", "mask": "outcomes"},
    ),
    "FileRef": View(
        "{id}({kind!} {media_type} {path} {digest!}[ error={error!}])",
        text_as={"error": lambda error: error[0]},
        json_as={"error": lambda error: {"code": error[0], "message": error[1]}},
    ),
    "Action": View(
        "action {id}[ runner={runner!}][ effect={effect!}][ cwd={cwd!}][ command={command}]"
        "[ runtime={runtime!}][ entry={entry}][ args={args}][ handler={handler}]"
        "[ skill={skill}][ inputSchema={input_schema}][ outputSchema={output_schema}]",
        lead=("id", "runner", "effect", "cwd", "command", "runtime"),
        json_as={"args": lambda args: args or None},
    ),
    "HostInput": View(
        "  host handler={handler} input={input_schema} output={output_schema} value={value}"
    ),
    "Resource": View(
        "resource {id}[ protocol={protocol}][ kind={kind!}][ media={media_type}][ path={path}]"
        "[ content={content}][ digest={digest!}][ materializer={materializer!}]",
        lead=("id", "protocol"),
    ),
    "CatalogEntry": View(
        "code {code}[ kind={kind!}][ severity={severity!}][ document={document!}]"
        "[ summary={summary}]",
        hide=("raw",),
    ),
}

_PROGRAM = Renderer(r.PROGRAM_RECORDS, _VIEWS)


def dump(program: r.ProviderIR) -> str:
    """The text rendering: one line per record, names instead of indexes, ``\\n``-terminated."""
    return _PROGRAM.text(program)


def to_json(program: r.ProviderIR) -> dict[str, Any]:
    """The same rendering as JSON values (names instead of indexes)."""
    out: dict[str, Any] = _PROGRAM.json(program)
    return out


#: Flow IR has no dump that predates the markers, so every record renders generically.
_FLOW = Renderer(fr.FLOW_RECORDS, {})


def dump_flow(program: fr.FlowIR) -> str:
    """A Flow program's text rendering (nodes and forks named by their Mermaid refs)."""
    return _FLOW.text(program)


def flow_to_json(program: fr.FlowIR) -> dict[str, Any]:
    """The same rendering of a Flow program as JSON values."""
    out: dict[str, Any] = _FLOW.json(program)
    return out
