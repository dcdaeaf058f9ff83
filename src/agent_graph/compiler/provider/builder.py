"""``agc build``: a Provider as the reference's bundle layout, plus its compiled IR.

Layout (reference §6.2): every reachable file at its relative path, ``provider.yaml``
(the parsed manifest written back as YAML), ``manifest.json`` (``agent-graph.bundle.v1``)
and, ignored by the Node toolchain because they are not listed, ``ir/<hex>.agir`` and
``ir/binding.json`` (see :mod:`agent_graph.bundles.manifest`).

The IR is compiled from the bundle the build has just written, through the same
verifying loader every user of the bundle goes through (parts A and B of §6.4), so
the binding is only ever written for a bundle that loads, and for exactly the bytes
it contains.

Differences from the reference, each on the side of not losing anything:

* the destination is replaced only if it is absent, empty or a previous bundle (the
  reference deletes whatever is there);
* the build happens in ``<dest>.tmp-<pid>-<ms>`` and is swapped in with two renames,
  so a failed build leaves the previous output as it was;
* the manifest text is checked for the source root too, and a reachable file that
  the bundle's own files would overwrite (``manifest.json``, ``provider.yaml``,
  ``ir/``) is refused instead of silently replaced;
* action schema references are recorded by their normalised path (§6.2 defect).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...bundles import (
    BINDING_PATH,
    BUNDLE_SCHEMA,
    CATALOGS,
    IR_DIRECTORY,
    MANIFEST_NAME,
    PROVIDER_MANIFEST,
    binding_document,
    ir_path,
    is_bundle,
    read_json,
)
from ...canonical import (
    _escape_lone_surrogates,
    digest_value,
    js_sorted,
    locale_sorted,
)
from ...documents import schema
from ...documents.files import digest_file
from ...errors import AgentGraphError
from .bundle_check import catalog_entries, dependency_index, reachable_paths, skill_directories
from .model import LoadedProvider

__all__ = ["BuildResult", "build_bundle", "provider_yaml"]


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What a build wrote: ``manifest`` is the ``agent-graph.bundle.v1`` document."""

    destination: Path
    manifest: dict[str, Any]
    ir_path: str
    ir_digest: str

    @property
    def digest(self) -> str:
        return str(self.manifest["digest"])


def _within(parent: str, child: str) -> bool:
    rel = os.path.relpath(child, parent)
    return rel == "." or not (rel == ".." or rel.startswith(("../", "..\\")) or os.path.isabs(rel))


def _check_destination(provider: LoadedProvider, destination: Path) -> None:
    """§6.1: never the Provider root, never over a reachable source file (symlinks too)."""
    root = str(provider.root)
    sources = [str(path) for path in provider.files]
    targets = {str(destination), os.path.realpath(destination)}
    real_sources = [os.path.realpath(path) for path in sources]
    for target in targets:
        if target in (root, os.path.realpath(root)) or any(
            _within(target, path) for path in (*sources, *real_sources)
        ):
            raise AgentGraphError(
                "build-output-overlaps-source",
                "Build output must not replace the provider root or any referenced source file",
            )
    if os.path.lexists(destination) and not _replaceable(destination):
        raise AgentGraphError(
            "build-output-exists",
            f"Build output {destination} exists and is not an Agent Graph bundle; "
            "remove it or choose another directory",
        )


def _replaceable(destination: Path) -> bool:
    """An empty directory or a previous bundle (its manifest.json names the bundle schema)."""
    if destination.is_symlink() or not destination.is_dir():
        return False
    try:
        if not any(destination.iterdir()):
            return True
        return is_bundle(read_json(destination / MANIFEST_NAME))
    except (OSError, ValueError, RecursionError):
        return False


def _check_layout(sources: list[str]) -> None:
    """A reachable file must not sit where the bundle's own files go."""
    for rel in sources:
        if rel in (MANIFEST_NAME, PROVIDER_MANIFEST) or rel.startswith(IR_DIRECTORY + "/"):
            raise AgentGraphError(
                "build-path-conflict",
                f"Referenced file {rel} would be overwritten by the bundle's own "
                f"{rel.split('/')[0]}; rename it",
            )


def _check_leaks(provider: LoadedProvider, sources: list[str], manifest_text: str) -> None:
    """§6.1: no reachable file may carry the source root (it would not exist elsewhere)."""
    needle = os.fsencode(str(provider.root))
    for rel in locale_sorted(sources):
        if needle in (provider.root / rel).read_bytes():
            raise AgentGraphError(
                "build-absolute-path-leak",
                f"Referenced file contains the source Provider absolute path: {rel}",
            )
    if needle in manifest_text.encode("utf-8", "surrogatepass"):
        raise AgentGraphError(
            "build-absolute-path-leak",
            f"Referenced file contains the source Provider absolute path: "
            f"{os.path.basename(provider.manifest_path)}",
        )


def _write_json(path: Path, value: Any) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))


def _manifest(provider: LoadedProvider, working: Path, sources: list[str]) -> dict[str, Any]:
    """``agent-graph.bundle.v1`` over the files now in ``working`` (key order of §6.2)."""
    digests: dict[str, str] = {}

    def digest(rel: str) -> str:
        found = digests.get(rel)
        if found is None:
            found = digests[rel] = digest_file(working / rel)
        return found

    catalogs = catalog_entries(provider)
    unsigned: dict[str, Any] = {
        "schema": BUNDLE_SCHEMA,
        "provider": {"id": provider.id, "version": provider.version},
        "providerManifest": PROVIDER_MANIFEST,
    }
    for name in CATALOGS:
        unsigned[name] = [
            {"id": ident, "path": path, "digest": digest(path)} for ident, path in catalogs[name]
        ]
    unsigned["files"] = [
        {"path": path, "digest": digest(path)} for path in js_sorted([PROVIDER_MANIFEST, *sources])
    ]
    unsigned["graphDependencies"] = dependency_index(provider)
    return {**unsigned, "digest": digest_value(unsigned)}


def _compile_bundle(working: Path, manifest: dict[str, Any]) -> tuple[bytes, str, list[str]]:
    """Load the written bundle the way its users will and lower it: (IR, digest, dirs)."""
    from ...ir import codec
    from .. import compile_manifest

    state = compile_manifest(working / MANIFEST_NAME)
    assert state.provider is not None
    assert state.data is not None
    loaded, data = state.provider, state.data
    return data, codec.digest_of(data), skill_directories(loaded)


def _swap(working: Path, destination: Path) -> None:
    """Put ``working`` at ``destination``; the previous output survives any failure."""
    aside = None
    if os.path.lexists(destination):
        aside = destination.with_name(f"{destination.name}.old-{os.getpid()}-{time.time_ns()}")
        os.rename(destination, aside)
    try:
        os.rename(working, destination)
    except BaseException:
        if aside is not None:
            os.rename(aside, destination)
        raise
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


def build_bundle(provider: LoadedProvider, output: str | os.PathLike[str]) -> BuildResult:
    """Write ``provider`` as a bundle at ``output`` (relative to the process directory)."""
    destination = Path(os.path.abspath(output))
    _check_destination(provider, destination)
    sources = reachable_paths(provider)
    _check_layout(sources)
    text = provider_yaml(provider.manifest)
    _check_leaks(provider, sources, text)
    stamp = f"{os.getpid()}-{int(time.time() * 1000)}"
    working = destination.with_name(f"{destination.name}.tmp-{stamp}")
    try:
        working.mkdir(parents=True)
        for rel in sources:
            target = working / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(provider.root / rel, target)
            shutil.copymode(provider.root / rel, target)
        (working / PROVIDER_MANIFEST).write_bytes(text.encode("utf-8", "surrogatepass"))
        manifest = _manifest(provider, working, sources)
        problem = schema.validate("bundle", manifest, path=MANIFEST_NAME)
        if problem is not None:  # pragma: no cover - the builder writes what the schema allows
            raise AgentGraphError(problem.code, problem.message, problem.diagnostics)
        if str(provider.root) in json.dumps(manifest, ensure_ascii=False):
            raise AgentGraphError(
                "build-absolute-path-leak",
                "Generated bundle contains the source provider absolute path",
            )
        _write_json(working / MANIFEST_NAME, manifest)
        data, ir_digest, directories = _compile_bundle(working, manifest)
        if os.fsencode(str(provider.root)) in data:  # pragma: no cover - lowering keeps it out
            raise AgentGraphError(
                "build-absolute-path-leak", "Compiled IR contains the source provider absolute path"
            )
        (working / IR_DIRECTORY).mkdir(exist_ok=True)
        (working / ir_path(ir_digest)).write_bytes(data)
        _write_json(
            working / BINDING_PATH, binding_document(manifest["digest"], ir_digest, directories)
        )
        _swap(working, destination)
    except OSError as exc:
        shutil.rmtree(working, ignore_errors=True)
        raise AgentGraphError(
            "build-write-failed", f"Cannot write the bundle at {destination}: {exc}"
        ) from None
    except BaseException:
        shutil.rmtree(working, ignore_errors=True)
        raise
    return BuildResult(destination, manifest, ir_path(ir_digest), ir_digest)


# -- provider.yaml: the reference's ``YAML.stringify(manifest, {lineWidth: 0})`` ------------
#
# A port of the `yaml` package's (2.x) string styling for what a manifest holds (maps,
# sequences, strings) with its defaults and no line folding: plain when the text reads
# back as the same string, else double quotes (single quotes when the text has double
# quotes only), literal block scalars for multi-line text. The written text is read
# back with our YAML 1.2 loader before it is used; should it ever differ, the
# manifest is written as JSON, which is YAML too.

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
        "build-manifest-unwritable",
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
