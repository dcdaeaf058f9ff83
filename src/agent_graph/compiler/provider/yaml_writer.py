"""``provider.yaml`` as the reference writes it: ``YAML.stringify(manifest, {lineWidth: 0})``.

A port of the `yaml` package's (2.x) string styling for what a manifest holds (maps,
sequences, strings) with its defaults and no line folding: plain when the text reads
back as the same string, else double quotes (single quotes when the text has double
quotes only), literal block scalars for multi-line text. The written text is read
back with our YAML 1.2 loader before it is used; should it ever differ, the
manifest is written as JSON, which is YAML too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ... import codes
from ...canonical import (
    _escape_lone_surrogates,
)
from ...errors import AgentGraphError

_STEP = "  "
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_PLAIN_BAD = re.compile(
    r"^[\n\t ,\[\]{}#&*!|>'\"%@`]|^[?-]\Z|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]\Z"
)
_DOC_MARKER = re.compile("(?:^|(?<=[\n\r\u2028\u2029]))(?:%|---|\\.\\.\\.)")
_NOT_STRING = re.compile(  # the core schema's scalars that would not read back as strings
    r"(?:~|[Nn]ull|NULL)?|[Tt]rue|TRUE|[Ff]alse|FALSE|0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN"
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)"
)
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\ufeff]")
_BLOCK_END = re.compile(r"(?:^|(?<!\n))\n+(?!\n|\Z)")
_ESCAPES = {"0000": "\\0", "0007": "\\a", "000b": "\\v", "001b": "\\e", "0085": "\\N"}
_ESCAPES |= {"00a0": "\\_", "2028": "\\L", "2029": "\\P"}


def _js_json_string(value: str) -> str:
    from _json import encode_basestring  # JSON.stringify's escapes, non-ASCII raw

    text: str = encode_basestring(value)
    return _escape_lone_surrogates(text) if _CONTROL.search(text) else text


def _double_quoted(value: str, indent: str, key: bool) -> str:
    text = _js_json_string(value)
    pad = indent or ("  " if _DOC_MARKER.search(value) else "")
    out: list[str] = []
    start = 0
    i = 0

    def at(k: int) -> str:
        return text[k] if k < len(text) else ""

    while i < len(text):
        ch = text[i]
        if ch == " " and at(i + 1) == "\\" and at(i + 2) == "n":
            out.append(text[start:i] + "\\ ")  # a space before a line break is kept
            i += 1
            start = i
            ch = "\\"
        if ch == "\\":
            follower = at(i + 1)
            if follower == "u":
                out.append(text[start:i])
                code = text[i + 2 : i + 6]
                if code in _ESCAPES:
                    out.append(_ESCAPES[code])
                elif code.startswith("00"):
                    out.append("\\x" + code[2:])
                else:
                    out.append(text[i : i + 6])
                i += 5
                start = i + 1
            elif follower == "n":
                if key or at(i + 2) == '"' or len(text) < 40:
                    i += 1
                else:  # a line break becomes a folded empty line
                    out.append(text[start:i] + "\n\n")
                    while at(i + 2) == "\\" and at(i + 3) == "n" and at(i + 4) != '"':
                        out.append("\n")
                        i += 2
                    out.append(pad)
                    if at(i + 2) == " ":
                        out.append("\\")
                    i += 1
                    start = i + 1
            else:
                i += 1
        i += 1
    return "".join(out) + text[start:] if start else text


def _single_quoted(value: str, indent: str, key: bool) -> str:
    if (key and "\n" in value) or re.search(r"[ \t]\n|\n[ \t]", value):
        return _double_quoted(value, indent, key)
    pad = indent or ("  " if _DOC_MARKER.search(value) else "")
    body = re.sub(r"\n+", lambda m: m.group(0) + "\n" + pad, value.replace("'", "''"))
    return f"'{body}'"


def _quoted(value: str, indent: str, key: bool) -> str:
    if '"' in value and "'" not in value:
        return _single_quoted(value, indent, key)
    return _double_quoted(value, indent, key)


def _literal(value: str, indent: str, force_indent: bool = False) -> str:
    if re.search(r"\n[\t ]+\Z", value):
        return _quoted(value, indent, False)
    pad = indent or ("  " if force_indent or _DOC_MARKER.search(value) else "")
    if not value:
        return "|\n"
    end_start = len(value)
    while end_start > 0 and value[end_start - 1] in "\n\t ":
        end_start -= 1
    end = value[end_start:]
    newline = end.find("\n")
    chomp = "-" if newline == -1 else "+" if value == end or newline != len(end) - 1 else ""
    if end:
        value = value[: -len(end)]
        end = end.removesuffix("\n")
        end = _BLOCK_END.sub(lambda m: m.group(0) + pad, end)
    leading_space = False
    last_newline = -1
    for index, ch in enumerate(value):
        if ch == " ":
            leading_space = True
        elif ch == "\n":
            last_newline = index
        else:
            break
    start = value[: last_newline + 1]
    if start:
        value = value[len(start) :]
        start = re.sub(r"\n+", lambda m: m.group(0) + pad, start)
    header = ("2" if pad else "1") * leading_space + chomp
    value = re.sub(r"\n+", lambda m: m.group(0) + pad, value)
    return f"|{header}\n{pad}{start}{value}{end}"


def _string(value: str, indent: str, key: bool) -> str:
    if _CONTROL.search(value):
        return _double_quoted(value, indent, key)
    if key and "\n" in value:
        return _quoted(value, indent, key)
    if _PLAIN_BAD.search(value):
        return _quoted(value, indent, key) if key or "\n" not in value else _literal(value, indent)
    if not key and "\n" in value:
        return _literal(value, indent)
    if _DOC_MARKER.search(value):
        if indent == "":
            return _literal(value, indent, force_indent=True)
        if key and indent == _STEP:
            return _quoted(value, indent, key)
    if _NOT_STRING.fullmatch(value):
        return _quoted(value, indent, key)
    return value


def _node(value: Any, indent: str) -> str:
    if isinstance(value, str):
        return _string(value, indent, False)
    if isinstance(value, dict):
        if not value:
            return "{}"
        return f"\n{indent}".join(_pair(k, v, indent + _STEP) for k, v in value.items())
    if isinstance(value, list):
        if not value:
            return "[]"
        return f"\n{indent}".join("- " + _node(item, indent + _STEP) for item in value)
    raise TypeError(f"no YAML style for {type(value).__name__}")


def _pair(key: Any, value: Any, inner: str) -> str:
    if not isinstance(key, str) or len(key) > 1024:
        raise TypeError("only short string keys are written")
    head = _string(key, inner, True) + ":"
    text = _node(value, inner)
    if isinstance(value, (dict, list)):
        return head + (f"\n{inner}" if value else " ") + text
    return head + ("" if text == "" or text[0] == "\n" else " ") + text


def _same(left: Any, right: Any) -> bool:
    """Equal with types (``True`` is not ``1``), as JSON values."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)


def provider_yaml(manifest: dict[str, Any]) -> str:
    """The manifest as the reference writes ``provider.yaml`` (checked to read back equal)."""
    from ...documents.yaml12 import parse_yaml

    for render in (_reference_style, _json_style):
        try:
            text = render(manifest)
            if _same(parse_yaml(text)[0], manifest):
                return text
        except (TypeError, ValueError):
            continue
    raise AgentGraphError(  # only text YAML cannot hold, such as a lone surrogate
        codes.BUILD_MANIFEST_UNWRITABLE,
        "The Provider manifest holds text that YAML cannot represent; provider.yaml would "
        "not read back unchanged",
    )


def _reference_style(manifest: dict[str, Any]) -> str:
    return _node(manifest, "") + "\n"


def _json_style(manifest: dict[str, Any]) -> str:
    # the reference's styling writes some control and line-separator characters raw, which
    # YAML reads differently; JSON (a YAML subset) with those escaped reads back exactly
    text = json.dumps(manifest, indent=2, ensure_ascii=False)
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"
