"""Validation against the packaged ``agent-graph.*.v1`` JSON Schemas.

Two engines decide together:

* ``jsonschema-rs`` (Rust) answers "is it valid?" first. A 100,000-node Graph
  takes a fraction of a second there, against tens of seconds in pure Python.
* Python ``jsonschema`` explains a failure: its errors carry the schema context
  needed for reference-style diagnostics (``schema.<keyword>``, instance pointer,
  ``schemaPath``/``params``). For large documents only the array items the Rust
  engine flagged are re-validated, so a single bad node does not cost a full pass.

Both engines use ECMAScript pattern semantics and the ajv-formats ``date-time``
check (:mod:`agent_graph.documents.formats`), so they agree on acceptance; the test
suite proves it on a corpus. Where the Rust engine cannot take a value (NaN,
infinities) or is missing, Python decides alone.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_graph import codes
from agent_graph.documents.formats import ecma_search, is_date_time
from agent_graph.documents.schema_findings import (
    MEMBER_KEYWORDS,
    Finding,
    document_order,
    findings,
    json_pointer,
    json_text,
)
from agent_graph.documents.sourcemap import SourceMap, positioned
from agent_graph.documents.sources import TextSourceMap
from agent_graph.errors import AgentGraphError, Diagnostic, Problem

SCHEMA_BASE_URI = "https://agent-graph.dev/schemas/"

# One name per packaged file; kept as words so the list reads as a table.
SCHEMA_NAMES: tuple[str, ...] = tuple(
    sorted(
        """
        action bundle code-catalog code-location error evaluation explain flow-run graph
        host-action-result
        inspect materialization mcp-config provider resource resource-location.file
        resource-location.graph-action resource-location.host-action resource-read-receipts
        reach resource.file resource.graph-action resource.host-action route run skill-binding
        test-case
        """.split()  # noqa: SIM905
    )
)

# Lists at least this long are pruned to their flagged items before the Python pass.
PRUNE_MIN_ITEMS = 256
# Flagged items explained per pruned list; the rest are counted, not explained.
MAX_EXPLAINED_ITEMS = 100
# Leading items always kept so that array keywords such as minItems still hold.
_KEEP_HEAD = 2

_Where = tuple[str | int, ...]


def schema_root() -> Path:
    """Directory holding the packaged ``*.schema.json`` files."""
    import agent_graph.schemas as package

    return Path(package.__file__).resolve().parent


def _check_name(name: str) -> None:
    if name not in SCHEMA_NAMES:
        raise AgentGraphError(codes.SCHEMA_TYPE_UNKNOWN, f"Unknown schema type: {name}")


def schema_path(name: str) -> Path:
    """Path of the packaged schema file for ``name`` (``schema-type-unknown`` otherwise)."""
    _check_name(name)
    return schema_root() / f"{name}.schema.json"


@functools.cache
def _document(name: str) -> dict[str, Any]:
    _check_name(name)
    path = schema_path(name)
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AgentGraphError(
            codes.SCHEMA_COMPILE_FAILED, f"Cannot compile schema type: {name} ({exc})"
        ) from exc
    if not isinstance(loaded, dict):
        raise AgentGraphError(codes.SCHEMA_COMPILE_FAILED, f"Cannot compile schema type: {name}")
    return loaded


def schema_document(name: str) -> dict[str, Any]:
    """A private copy of the schema document for ``name``."""
    return copy.deepcopy(_document(name))


def schema_id(name: str) -> str:
    return f"{SCHEMA_BASE_URI}{name}.schema.json"


# --------------------------------------------------------------------------- engines


@functools.cache
def _python_validator(name: str) -> Any:
    from jsonschema import Draft202012Validator, FormatChecker, validators
    from jsonschema.exceptions import ValidationError
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    def pattern(validator: Any, regex: str, instance: Any, _schema: Any) -> Iterator[Any]:
        # Python's `$` accepts a trailing newline; JSON Schema patterns are ECMAScript.
        if validator.is_type(instance, "string") and not ecma_search(regex, instance):
            yield ValidationError(f"{instance!r} does not match {regex!r}")

    checker = FormatChecker(formats=())
    checker.checks("date-time")(is_date_time)
    # The stubs leave `extend` untyped; it returns a Draft 2020-12 validator class.
    cls = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {"pattern": pattern}
    )
    # jsonschema picks the validator class of a referenced document from its
    # `$schema`, which would swap in the stock class (Python `$`) behind every
    # cross-file `$ref`. Registered without `$schema`, they keep ours.
    bare = {n: {k: v for k, v in _document(n).items() if k != "$schema"} for n in SCHEMA_NAMES}
    registry: Any = Registry().with_resources(
        (schema_id(n), Resource.from_contents(bare[n], default_specification=DRAFT202012))
        for n in SCHEMA_NAMES
    )
    return cls(bare[name], registry=registry, format_checker=checker)


@functools.cache
def _rust_registry() -> Any:
    import jsonschema_rs

    return jsonschema_rs.Registry([(schema_id(n), _document(n)) for n in SCHEMA_NAMES])


@functools.cache
def _rust_validator(name: str) -> Any | None:
    try:
        import jsonschema_rs
    except ImportError:  # the fast path is optional; Python decides alone
        return None
    try:
        return jsonschema_rs.Draft202012Validator(
            _document(name),
            formats={"date-time": is_date_time},
            validate_formats=True,
            registry=_rust_registry(),
        )
    except Exception:  # a build failure only costs speed
        return None


def _rust_verdict(name: str, value: Any) -> bool | None:
    """True/False from the Rust engine, None when it is unavailable or refuses the value."""
    validator = _rust_validator(name)
    if validator is None:
        return None
    try:
        return bool(validator.is_valid(value))
    except Exception:
        return None


def _rust_flagged(name: str, value: Any) -> tuple[set[_Where], set[_Where]] | None:
    """Instance paths the Rust engine reports (with every prefix), and the exact ones."""
    validator = _rust_validator(name)
    if validator is None:
        return None
    prefixes: set[_Where] = set()
    exact: set[_Where] = set()
    try:
        pending = list(validator.iter_errors(value))
        while pending:
            err = pending.pop()
            where = tuple(err.instance_path)
            exact.add(where)
            for end in range(len(where) + 1):
                prefixes.add(where[:end])
            kind = err.kind
            for branch in getattr(kind, "context", None) or ():
                pending.extend(branch)
            nested = getattr(kind, "error", None)
            if nested is not None and hasattr(nested, "instance_path"):
                pending.append(nested)
    except Exception:
        return None
    return prefixes, exact


# --------------------------------------------------------------------------- pruning


@dataclass(slots=True)
class _Pruned:
    value: Any
    index_maps: dict[int, list[int]]  # id(pruned list) -> original indices
    hidden: list[tuple[_Where, int]]  # (list path, flagged items not explained)


def _prune(value: Any, prefixes: set[_Where], exact: set[_Where]) -> _Pruned:
    """Copy ``value`` with every long list cut to a few leading items plus its flagged ones.

    Items the Rust engine did not flag are valid, so dropping them loses no
    finding. A list that is itself the target of an error (uniqueItems, minItems,
    type …) is kept whole, so array keywords still see the original items.
    """
    maps: dict[int, list[int]] = {}
    hidden: list[tuple[_Where, int]] = []

    def walk(node: Any, here: _Where) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, (*here, k)) for k, v in node.items()}
        if not isinstance(node, list):
            return node
        if len(node) < PRUNE_MIN_ITEMS or here in exact:
            return [walk(v, (*here, i)) for i, v in enumerate(node)]
        flagged = (
            [i for i in range(len(node)) if (*here, i) in prefixes] if here in prefixes else []
        )
        explained = flagged[:MAX_EXPLAINED_ITEMS]
        if len(flagged) > len(explained):
            hidden.append((here, len(flagged) - len(explained)))
        keep = sorted(set(range(_KEEP_HEAD)) | set(explained))
        pruned = [walk(node[i], (*here, i)) for i in keep]
        maps[id(pruned)] = keep
        return pruned

    return _Pruned(walk(value, ()), maps, hidden)


def _original_path(pruned: _Pruned, path: Sequence[str | int]) -> _Where:
    out: list[str | int] = []
    node = pruned.value
    for token in path:
        if isinstance(node, list) and isinstance(token, int):
            mapping = pruned.index_maps.get(id(node))
            out.append(mapping[token] if mapping is not None else token)
            node = node[token]
        elif isinstance(node, dict) and token in node:
            out.append(token)
            node = node[token]
        else:
            out.append(token)
    return tuple(out)


# --------------------------------------------------------------------------- diagnostics


def _member_value(value: Any, path: _Where) -> Any:
    node = value
    for token in path:
        if isinstance(node, dict) and isinstance(token, str):
            node = node.get(token)
        elif isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node):
            node = node[token]
        else:
            return None
    return node


def _quote_hint(member: Any, source: SourceMap | None, diagnostic: Diagnostic) -> str:
    """``; quote it …`` when a string is expected and YAML read a number or a boolean
    (``version: 1.0``), with the value as written; YAML sources only (JSON documents
    are mostly written by programs, and a JSON author knows a number from a string)."""
    if not isinstance(source, TextSourceMap) or source.is_json:
        return ""
    if isinstance(member, bool):
        what = "a boolean"
    elif isinstance(member, int | float):
        what = "a number"
    else:
        return ""
    written = json.dumps(member)
    if diagnostic.line is not None and diagnostic.column:
        written = source.scalar_text((diagnostic.line, diagnostic.column)) or written
    return f'; {written} is read as {what}: write it in quotes, "{written}", to keep it text'


def key_position(source: SourceMap, value: Any, path: _Where) -> tuple[int, int] | None:
    """Where the key of the member at ``path`` is written, for findings about the key.

    The loaders place values, not keys: a :class:`TextSourceMap` finds the key in its
    text. Without the text, a scalar value (written on its key's line in practice)
    stands for its key, and a collection value (usually on the lines below the key)
    for nothing: the member's object is shown instead.
    """
    parent, name = json_pointer(path[:-1]), path[-1]
    if isinstance(source, TextSourceMap) and isinstance(name, str):
        found = source.key_position(parent, name)
        if found is not None:
            return found
    member = _member_value(value, path)
    if not isinstance(member, dict | list):
        hit = source.positions.get(json_pointer(path))
        if hit is not None:
            return hit
    return source.locate(parent)


def _diagnostics(
    findings: Iterable[Finding], *, path: str, source: SourceMap | None, value: Any
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: set[tuple[str, _Where, _Where, str]] = set()
    for finding in findings:
        key = (finding.keyword, finding.path, finding.schema_path, json_text(finding.params))
        if key in seen:
            continue
        seen.add(key)
        pointer = json_pointer(finding.path)
        subject = pointer
        if finding.keyword in MEMBER_KEYWORDS and finding.path:
            subject = json_pointer(finding.path[:-1])  # "/nodes/0 has an unknown member …"
        diagnostic = positioned(
            codes.schema_finding(finding.keyword),
            f"{subject or '/'} {finding.text}",
            path=path,
            source=source,
            pointer=pointer,
            detail={
                "schemaPath": "#" + json_pointer(finding.schema_path),
                "params": finding.params,
            },
        )
        # A member's key, and an object missing a required member by the key that holds
        # it (``gate:``, not the gate's first member)
        keyed = finding.keyword in MEMBER_KEYWORDS or (
            finding.keyword == "required" and finding.path and isinstance(finding.path[-1], str)
        )
        if keyed and finding.path and source is not None:
            at = key_position(source, value, finding.path)
            if at is not None:
                diagnostic = dataclasses.replace(diagnostic, line=at[0], column=at[1])
        if finding.keyword == "type" and finding.params.get("type") == "string":
            hint = _quote_hint(_member_value(value, finding.path), source, diagnostic)
            if hint:
                diagnostic = dataclasses.replace(diagnostic, message=diagnostic.message + hint)
        out.append(diagnostic)
    return out


def _python_findings(name: str, value: Any) -> list[Finding]:
    validator = _python_validator(name)
    errors = list(validator.iter_errors(value))
    found = [f for err in errors for f in findings(err)]
    if errors and not found:  # never let report shaping turn a failure into a pass
        found = [
            Finding(str(e.validator), tuple(e.absolute_path), (), {}, e.message) for e in errors
        ]
    # jsonschema visits some members in set order; report in document order instead.
    found.sort(key=lambda f: document_order(value, f.path))
    return found


def _pruned_findings(name: str, value: Any) -> tuple[list[Finding], list[tuple[_Where, int]]]:
    """Python findings for ``value``, validating only what the Rust engine flagged."""
    flagged = _rust_flagged(name, value)
    if flagged is None or not _has_long_list(value):
        return _python_findings(name, value), []
    pruned = _prune(value, *flagged)
    found = _python_findings(name, pruned.value)
    if not found:  # pruning must never hide a failure: explain the whole document
        return _python_findings(name, value), []
    remapped = [
        Finding(f.keyword, _original_path(pruned, f.path), f.schema_path, f.params, f.text)
        for f in found
    ]
    return remapped, pruned.hidden


def _has_long_list(value: Any) -> bool:
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            if len(node) >= PRUNE_MIN_ITEMS:
                return True
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
    return False


def validate(
    name: str, value: Any, *, path: str, source: SourceMap | None = None
) -> Problem | None:
    """Check ``value`` against ``<name>.schema.json``; ``None`` when it conforms.

    Otherwise a ``schema-invalid`` :class:`Problem` ("<path> does not match
    <name>.schema.json") with one diagnostic per finding: code ``schema.<keyword>``,
    the instance pointer, line/column from ``source`` when given, and
    ``detail = {schemaPath, params}``.
    """
    _check_name(name)
    verdict = _rust_verdict(name, value)
    if verdict is True:
        return None
    try:
        if verdict is False:
            findings, hidden = _pruned_findings(name, value)
        else:
            findings, hidden = _python_findings(name, value), []
    except RecursionError:
        diagnostic = Diagnostic(
            codes.SCHEMA_DEPTH, "/ nests too deeply to validate", "error", path, pointer=""
        )
        return Problem(
            codes.SCHEMA_INVALID, f"{path} does not match {name}.schema.json", [diagnostic]
        )
    if not findings:
        return None
    diagnostics = _diagnostics(findings, path=path, source=source, value=value)
    for where, count in hidden:
        pointer = json_pointer(where)
        diagnostics.append(
            positioned(
                codes.SCHEMA_TRUNCATED,
                f"{pointer or '/'} has {count} more invalid items that are not listed",
                path=path,
                source=source,
                pointer=pointer,
                detail={"hidden": count},
            )
        )
    return Problem(codes.SCHEMA_INVALID, f"{path} does not match {name}.schema.json", diagnostics)
