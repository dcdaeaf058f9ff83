"""Editor validation: the schemas and the file-type mapping yaml-language-server reads.

Editors that use yaml-language-server (VS Code's YAML extension, Neovim's ``yamlls`` …)
validate and complete a YAML file against the JSON Schema that ``yaml.schemas`` maps to
its path; JetBrains IDEs take the same schema files in a mapping of their own. A
Provider's file types are told apart by where they live (the layout ``agc init``
writes), except the three resource descriptors, which share ``resources/``: for those
:data:`DISPATCH_NAME` is an editor-only schema that applies the packaged schema the
file's ``schema`` identity names.

The mapping's schema paths are relative to the workspace folder and its globs are
yaml-language-server's (``*`` matches across ``/``, matched against the end of the
file's path), so nothing in it is a path of this machine. See ``docs/editors.md``.
"""

from __future__ import annotations

import json
from typing import Any, Final

#: Where ``agc init --editor vscode`` puts the schemas, relative to the Provider root.
SCHEMA_DIR: Final = ".agent-graph/schemas"
#: The VS Code workspace settings file it writes.
VSCODE_SETTINGS: Final = ".vscode/settings.json"
#: The editor-only schema for ``resources/`` (not a protocol schema: ``agc schema list``
#: does not name it).
DISPATCH_NAME: Final = "resource-descriptor"

#: Resource descriptor identity -> the packaged schema that describes it.
DESCRIPTORS: Final = {
    "agent-graph.resource.file.v1": "resource.file",
    "agent-graph.resource.graph-action.v1": "resource.graph-action",
    "agent-graph.resource.host-action.v1": "resource.host-action",
}

#: Schema name -> the paths (yaml-language-server globs) of the files it describes.
FILE_TYPES: Final[dict[str, tuple[str, ...]]] = {
    "provider": ("/provider.yaml", "/provider.yml"),
    "graph": ("/graphs/*.yaml", "/graphs/*.yml"),
    "action": ("/actions/*.yaml", "/actions/*.yml"),
    DISPATCH_NAME: ("/resources/*.yaml", "/resources/*.yml"),
    "code-catalog": ("/codes.yaml", "/codes.yml"),
    "test-case": ("/tests/*.yaml", "/tests/*.yml"),
}


def schema_file(name: str) -> str:
    return f"{name}.schema.json"


def _json_bytes(value: Any) -> bytes:
    """Two-space JSON and a final newline, as ``agc schema extract`` writes schemas."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def dispatch_schema() -> dict[str, Any]:
    """A schema that applies the descriptor schema a resource file's ``schema`` names.

    The references are relative file names with no ``$id`` here, so an editor resolves
    them beside this file, in the folder the packaged schemas were extracted to.
    """
    identities = list(DESCRIPTORS)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Agent Graph resource descriptor (file, graph-action or host-action)",
        "description": "Editor aid written by agc: applies the descriptor schema that the "
        "file's schema identity names.",
        "type": "object",
        "required": ["schema"],
        "properties": {"schema": {"enum": identities}},
        "allOf": [
            {
                "if": {"properties": {"schema": {"const": identity}}, "required": ["schema"]},
                "then": {"$ref": schema_file(name)},
            }
            for identity, name in DESCRIPTORS.items()
        ],
    }


def packaged_schema_bytes(name: str) -> bytes:
    from ..documents.schema import schema_document

    return _json_bytes(schema_document(name))


def editor_schema_names() -> list[str]:
    """The packaged schemas the mapping uses (directly or through the dispatch schema)."""
    direct = [name for name in FILE_TYPES if name != DISPATCH_NAME]
    return sorted({*direct, *DESCRIPTORS.values()})


def schema_files(names: list[str]) -> dict[str, bytes]:
    """``{file name: bytes}`` for ``names`` plus the dispatch schema."""
    out = {schema_file(name): packaged_schema_bytes(name) for name in names}
    out[schema_file(DISPATCH_NAME)] = _json_bytes(dispatch_schema())
    return out


def yaml_schemas(schema_dir: str = SCHEMA_DIR) -> dict[str, list[str]]:
    """The ``yaml.schemas`` setting: workspace-relative schema path -> globs."""
    return {
        f"./{schema_dir}/{schema_file(name)}": list(globs) for name, globs in FILE_TYPES.items()
    }


def vscode_files() -> dict[str, bytes]:
    """What ``agc init --editor vscode`` adds, relative to the Provider root."""
    files = {
        f"{SCHEMA_DIR}/{name}": data for name, data in schema_files(editor_schema_names()).items()
    }
    files[VSCODE_SETTINGS] = _json_bytes({"yaml.schemas": yaml_schemas()})
    return files
