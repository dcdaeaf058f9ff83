"""Turning python-jsonschema errors into reference-style findings.

For each validator error: the keyword (``schema.<keyword>``), the instance path, an
ajv-like message and ``params``; a ``oneOf`` over node kinds or action runners is
explained by the branch its discriminator (``kind``/``runner``) selects, not as a bare
"not valid under any of the given schemas".

Three findings are worded for people rather than as ajv words them: an unknown member
(``additionalProperties``/``unevaluatedProperties``) is named with the closest allowed
name ("unknown member `satisfiedby`; did you mean `satisfiedBy`?"), a string that is not
one of an ``enum``'s values ends with the closest one ('; did you mean "action"?'), and a value that
does not match a ``pattern`` is described by the ``description`` of the schema holding
the pattern; the pattern itself stays in ``params``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_graph.documents.formats import ecma_search
from agent_graph.documents.sourcemap import escape_token

_Where = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    keyword: str
    path: _Where
    schema_path: _Where
    params: dict[str, Any]
    text: str


def json_pointer(path: Iterable[str | int]) -> str:
    return "".join(f"/{escape_token(token)}" for token in path)


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _json_key(value: Any) -> str:
    """Equal for equal JSON values: 1 and 1.0 alike, true and 1 not."""

    def norm(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True, default=repr)


def _first_duplicate(items: Sequence[Any]) -> tuple[int, int] | None:
    """ajv's report of the first duplicate pair, scanning from the end: ``(i, j)``, i < j."""
    seen: dict[str, int] = {}
    for i in range(len(items) - 1, -1, -1):
        key = _json_key(items[i])
        if key in seen:
            return i, seen[key]
        seen[key] = i
    return None


_LIMITS = {
    "minLength": ("must NOT have fewer than {} characters", None),
    "maxLength": ("must NOT have more than {} characters", None),
    "minItems": ("must NOT have fewer than {} items", None),
    "maxItems": ("must NOT have more than {} items", None),
    "minProperties": ("must NOT have fewer than {} properties", None),
    "maxProperties": ("must NOT have more than {} properties", None),
    "minimum": ("must be >= {}", ">="),
    "maximum": ("must be <= {}", "<="),
    "exclusiveMinimum": ("must be > {}", ">"),
    "exclusiveMaximum": ("must be < {}", "<"),
}


def _branch_index(error: Any) -> int | None:
    rel = error.relative_schema_path
    return rel[0] if rel and isinstance(rel[0], int) else None


def _discriminators(branches: Sequence[Any]) -> set[str]:
    """Members every branch pins with ``const``/``enum`` (``kind``, ``runner`` …)."""
    keys: set[str] | None = None
    for branch in branches:
        props = branch.get("properties") if isinstance(branch, Mapping) else None
        if not isinstance(props, Mapping):
            return set()
        pinned = {
            k for k, s in props.items() if isinstance(s, Mapping) and ("const" in s or "enum" in s)
        }
        keys = pinned if keys is None else keys & pinned
    return keys or set()


def _rules_out(child: Any, keys: set[str]) -> bool:
    rel = list(child.relative_path)
    if child.validator == "type":
        return not rel
    return child.validator in ("const", "enum") and len(rel) == 1 and rel[0] in keys


def _selected_branch(error: Any) -> list[Any] | None:
    """The errors of the one ``oneOf`` branch the instance evidently meant, if any.

    A branch is ruled out when the instance has the wrong JSON type for it, or
    when a discriminator member (pinned by every branch) has another value.
    """
    branches = error.validator_value
    if not isinstance(branches, list) or not error.context:
        return None
    keys = _discriminators(branches)
    by_branch: dict[int, list[Any]] = {i: [] for i in range(len(branches))}
    for child in error.context:
        index = _branch_index(child)
        if index in by_branch:
            by_branch[index].append(child)
    ruled_out = {
        index
        for index, errors in by_branch.items()
        if any(_rules_out(child, keys) for child in errors)
    }
    candidates = [i for i in by_branch if i not in ruled_out]
    if len(candidates) == 1 and by_branch[candidates[0]]:
        return by_branch[candidates[0]]
    return None


def _bad_discriminator(error: Any) -> bool:
    """True when a discriminator member has a value its own ``enum``/``const`` rejects.

    That check reports the bad value itself (``kind: acton``); a bare oneOf on
    the object would only repeat it.
    """
    instance = error.instance
    if not isinstance(instance, Mapping) or not isinstance(error.schema, Mapping):
        return False
    own = error.schema.get("properties", {})
    for key in _discriminators(error.validator_value):
        checked = own.get(key)
        if key not in instance or not isinstance(checked, Mapping):
            continue
        value = _json_key(instance[key])
        allowed = checked.get("enum", [checked["const"]] if "const" in checked else None)
        if isinstance(allowed, list) and all(_json_key(v) != value for v in allowed):
            return True
    return False


def _one_of_text(error: Any) -> tuple[str, dict[str, Any]]:
    branches = error.validator_value
    failing = {_branch_index(c) for c in error.context}
    passing = [i for i in range(len(branches)) if i not in failing] if error.context else []
    text = "must match exactly one schema in oneOf"
    simple = [b.get("required") for b in branches if isinstance(b, Mapping)]
    if len(simple) == len(branches) and all(
        isinstance(r, list) and len(r) == 1 and len(b) == 1
        for r, b in zip(simple, branches, strict=True)
    ):
        names = ", ".join(f"'{r[0]}'" for r in simple if isinstance(r, list))
        text = f"must have exactly one of the properties {names}"
    if not error.context:
        text += " (more than one matches)"
    return text, {"passingSchemas": passing or None}


def _describe(error: Any, note: str) -> tuple[str, dict[str, Any], str]:
    """``(keyword, params, text)`` of a single-keyword error, in ajv's wording."""
    keyword = error.validator
    value = error.validator_value
    instance = error.instance
    if keyword == "type":
        shown = ",".join(value) if isinstance(value, list) else value
        return "type", {"type": value}, f"must be {shown}"
    if keyword == "enum":
        shown = (
            ", ".join(json_text(v) for v in value) if isinstance(value, list) else json_text(value)
        )
        text = f"must be equal to one of the allowed values: {shown}"
        return "enum", {"allowedValues": value}, text + _closest_value(instance, value)
    if keyword == "const":
        return "const", {"allowedValue": value}, f"must be equal to constant {json_text(value)}"
    if keyword == "pattern":
        return "pattern", {"pattern": value}, _pattern_text(error.schema, value, "must")
    if keyword == "format":
        return "format", {"format": value}, f'must match format "{value}"'
    if keyword in _LIMITS:
        template, comparison = _LIMITS[keyword]
        params: dict[str, Any] = {"limit": value}
        if comparison is not None:
            params["comparison"] = comparison
        return keyword, params, template.format(json_text(value))
    if keyword == "uniqueItems":
        pair = _first_duplicate(instance) if isinstance(instance, list) else None
        if pair is None:
            return keyword, {}, "must NOT have duplicate items"
        text = f"must NOT have duplicate items (items ## {pair[1]} and {pair[0]} are identical)"
        return keyword, {"i": pair[0], "j": pair[1]}, text
    if keyword == "not":
        if value == {}:
            return keyword, {}, f"is not allowed {note or 'here'}"
        if isinstance(value, Mapping) and set(value) == {"pattern"}:
            pattern = value["pattern"]
            return keyword, {"pattern": pattern}, _pattern_text(error.schema, pattern, "must NOT")
        return keyword, {}, "must NOT be valid"
    if keyword == "anyOf":
        return keyword, {}, "must match a schema in anyOf"
    if keyword is None or keyword == "false":
        return "false", {}, "is not allowed (boolean schema false)"
    return str(keyword), {}, str(error.message)


def _pattern_text(schema: Any, pattern: Any, verb: str) -> str:
    """The rule a patterned string breaks, in the words of its schema's ``description``."""
    described = schema.get("description") if isinstance(schema, Mapping) else None
    if isinstance(described, str) and described.strip():
        text = described.strip()
        return f"does not have the required form. {text}{'' if text.endswith('.') else '.'}"
    return f'{verb} match pattern "{pattern}"'


def allowed_members(schema: Any) -> list[str]:
    """Member names a schema declares (``properties``, also in its in-place applicators)."""
    names: dict[str, None] = {}
    pending = [schema]
    while pending:
        node = pending.pop(0)
        if not isinstance(node, Mapping):
            continue
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            names.update(dict.fromkeys(str(k) for k in properties))
        for word in ("allOf", "anyOf", "oneOf"):
            branches = node.get(word)
            if isinstance(branches, list):
                pending.extend(branches)
        pending.extend(node.get(word) for word in ("then", "else") if word in node)
    return list(names)


def closest_member(name: str, allowed: Sequence[str]) -> str | None:
    """The allowed name ``name`` most likely misspells, if one is close enough."""
    folded = {candidate.casefold(): candidate for candidate in allowed}
    if name.casefold() in folded and folded[name.casefold()] != name:
        return folded[name.casefold()]
    close = difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=0.75)
    return folded[close[0]] if close and folded[close[0]] != name else None


def unknown_member_text(name: str, allowed: Sequence[str]) -> str:
    """``unknown member `x`; did you mean `y`?`` (the suggestion only when one is close)."""
    text = f"unknown member {_code(name)}"
    suggestion = closest_member(name, allowed)
    return f"{text}; did you mean {_code(suggestion)}?" if suggestion is not None else text


def _closest_value(instance: Any, allowed: Any) -> str:
    """``; did you mean "x"?`` for a string close to one allowed string, else ``""``."""
    if not isinstance(instance, str) or not isinstance(allowed, list):
        return ""
    suggestion = closest_member(instance, [v for v in allowed if isinstance(v, str)])
    return f"; did you mean {json_text(suggestion)}?" if suggestion is not None else ""


def _code(name: str) -> str:
    """A member name between backticks; JSON-quoted when it has odd characters."""
    if name and all(c.isprintable() and c not in "`" for c in name) and name.strip() == name:
        return f"`{name}`"
    return f"`{json_text(name)}`"


def _member_findings(
    keyword: str, error: Any, path: _Where, schema_path: _Where, names: Iterable[str]
) -> Iterator[Finding]:
    allowed = allowed_members(error.schema)
    param = "additionalProperty" if keyword == "additionalProperties" else "unevaluatedProperty"
    for name in names:
        text = "has an " + unknown_member_text(name, allowed)
        yield Finding(keyword, (*path, name), schema_path, {param: name}, text)


#: Keywords whose findings are about a member's key (placed at the key, not its value).
MEMBER_KEYWORDS = frozenset({"additionalProperties", "unevaluatedProperties"})


def _is_property_name_error(schema_path: _Where) -> bool:
    # jsonschema reports a bad key with the key as instance and the object's path.
    for i in range(len(schema_path) - 1, -1, -1):
        if schema_path[i] == "propertyNames" and (i == 0 or schema_path[i - 1] != "properties"):
            return True
    return False


def findings(error: Any, note: str = "") -> Iterator[Finding]:
    """Reference-style findings for one python-jsonschema error (recursing into oneOf)."""
    keyword = error.validator
    path: _Where = tuple(error.absolute_path)
    schema_path: _Where = tuple(error.absolute_schema_path)
    instance = error.instance
    value = error.validator_value

    if keyword == "oneOf":
        selected = _selected_branch(error)
        if selected is not None:
            branch_note = _branch_note(error)
            for child in selected:
                yield from findings(child, branch_note)
            return
        if _bad_discriminator(error):
            return  # e.g. `kind: acton`: the member's own enum error says it all
        text, params = _one_of_text(error)
        yield Finding("oneOf", path, schema_path, params, text)
        return
    if _is_property_name_error(schema_path):
        # Point at the member whose key is wrong.
        _, _, text = _describe(error, note)
        yield Finding(
            "propertyNames",
            (*path, str(instance)),
            schema_path,
            {"propertyName": instance},
            f"property name {json_text(instance)} {text}",
        )
        return
    if keyword == "required" and isinstance(value, list) and isinstance(instance, Mapping):
        for name in value:
            if name not in instance:
                text = f"must have required property '{name}'"
                yield Finding(
                    "required",
                    path,
                    schema_path,
                    {"missingProperty": name},
                    f"{text} {note}" if note else text,
                )
        return
    if keyword == "additionalProperties" and value is False and isinstance(instance, Mapping):
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        known = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extra = [
            name
            for name in instance
            if name not in known and not any(ecma_search(p, name) for p in patterns)
        ]
        yield from _member_findings(keyword, error, path, schema_path, extra)
        return
    if keyword == "unevaluatedProperties" and value is False and isinstance(instance, Mapping):
        # python-jsonschema names the unevaluated members only in its message (as reprs)
        extra = [name for name in instance if repr(name) in str(error.message)]
        if extra:
            yield from _member_findings(keyword, error, path, schema_path, extra)
            return
    keyword, params, text = _describe(error, note)
    yield Finding(keyword, path, schema_path, params, text)


def _branch_note(error: Any) -> str:
    """'when kind is action' for the branch a discriminator selected."""
    instance = error.instance
    keys = sorted(_discriminators(error.validator_value))
    if not keys or not isinstance(instance, Mapping):
        return ""
    parts = [f"{key} is {json_text(instance[key])}" for key in keys if key in instance]
    return f"when {' and '.join(parts)}" if parts else ""


def document_order(value: Any, path: _Where) -> tuple[int, ...]:
    """Sort key placing a path where its value appears in the document."""
    key: list[int] = []
    node = value
    for token in path:
        if isinstance(node, dict):
            position = next((i for i, k in enumerate(node) if k == token), len(node))
            key.append(position)
            node = node.get(token) if isinstance(token, str) else None
        elif isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node):
            key.append(token)
            node = node[token]
        else:
            key.append(0)
            node = None
    return tuple(key)
