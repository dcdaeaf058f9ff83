"""Materializer rules for dynamic resources (graph-action and host-action views).

Graph-action views (and 0.2 context views) need a read ``command`` or ``script``
Action. Host-action views need a read ``host`` Action with a handler and input and
output schemas, each schema carrying a versioned protocol identity (``$id`` such as
``acme.digest-request/v1``, equal to ``properties.protocol.const`` when that is
present), and the descriptor's ``input`` must satisfy the input schema, so no
Route can ever be returned for an input the host would refuse.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, cast

from ... import codes
from ...documents.paths import Origin, portable
from ...documents.sourcemap import join_pointer
from ...documents.sources import read_structured
from ...errors import AgentGraphError, Diagnostic
from .model import LoadedAction, LoadedResource

SCHEMA_IDENTITY = re.compile(r"^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?/v[1-9][0-9]*\Z")


def identity_problem(document: Any) -> str | None:
    """JSON pointer of what breaks a schema's versioned protocol identity; None when sound."""
    if not isinstance(document, dict) or "$id" not in document:
        return ""
    identity = document["$id"]
    if not isinstance(identity, str) or not SCHEMA_IDENTITY.match(identity):
        return "/$id"
    properties = document.get("properties")
    protocol = properties.get("protocol") if isinstance(properties, dict) else None
    if isinstance(protocol, dict) and "const" in protocol and protocol["const"] != identity:
        return "/properties/protocol/const"
    return None


def dynamic_resource_problems(
    root: Path, resource: LoadedResource, action: LoadedAction
) -> list[AgentGraphError]:
    origin = Origin(resource.rel, resource.doc.source, "/materializer")
    definition = action.definition
    problems: list[AgentGraphError] = []
    if definition["effect"] != "read":
        problems.append(
            origin.fail(
                codes.MATERIALIZER_EFFECT_INVALID,
                f"Resource materializer {action.id} must have effect: read",
            )
        )
    if resource.protocol != "host-action":
        if definition["runner"] not in ("command", "script"):
            problems.append(
                origin.fail(
                    codes.MATERIALIZER_RUNNER_INVALID,
                    f"Resource materializer {action.id} must use command or script runner",
                )
            )
        return problems
    if definition["runner"] != "host":
        problems.append(
            origin.fail(
                codes.MATERIALIZER_RUNNER_INVALID,
                f"Host-action resource materializer {action.id} must use the host runner",
            )
        )
        return problems
    missing = [name for name in ("inputSchema", "outputSchema") if name not in definition]
    if missing:
        problems.append(
            origin.fail(
                codes.MATERIALIZER_SCHEMA_MISSING,
                f"Host-action resource materializer {action.id} must declare "
                f"{' and '.join(missing)}",
            )
        )
        return problems
    schemas: dict[str, tuple[Any, Origin]] = {}
    for name in ("inputSchema", "outputSchema"):
        path = Path(os.path.normpath(root / definition[name]))
        rel = portable(root, path)
        try:
            doc = read_structured(path, display=rel)
        except AgentGraphError as exc:
            problems.append(exc)
            continue
        document = doc.value
        pointer = identity_problem(document)
        if pointer is not None:
            problems.append(
                Origin(rel, doc.source, pointer).fail(
                    codes.RESOURCE_SCHEMA_IDENTITY_INVALID,
                    f"Action {action.id} {name} {rel} must declare a versioned protocol "
                    "identity: $id like name/v1, equal to properties.protocol.const when present",
                )
            )
            continue
        schemas[name] = (document, Origin(rel, doc.source))
    if "inputSchema" in schemas:
        problems.extend(_input_problems(resource, *schemas["inputSchema"]))
    return problems


def _user_schema_validator(schema: dict[str, Any]) -> Any:
    """A validator for an author's schema with ECMAScript patterns and ajv's date-time."""
    from jsonschema import FormatChecker, validators
    from jsonschema.exceptions import SchemaError, ValidationError

    from ...documents.formats import ecma_search, is_date_time

    def pattern(validator: Any, regex: str, instance: Any, _schema: Any) -> Any:
        if validator.is_type(instance, "string") and not ecma_search(regex, instance):
            yield ValidationError(f"{instance!r} does not match {regex!r}")

    # an unknown $schema is refused as the reference's ajv refuses it (it knows no such
    # meta-schema), not validated under a guessed draft with a deprecation warning
    cls: Any
    if "$schema" not in schema:
        cls = validators.validator_for(schema)  # the latest draft
    else:
        cls = validators.validator_for(schema, default=cast(Any, None))
        if cls is None:
            dialect = schema["$schema"]
            raise SchemaError(f"{dialect!r} is not a JSON Schema dialect", path=["$schema"])
    cls.check_schema(schema)
    checker = FormatChecker()
    checker.checks("date-time")(is_date_time)
    extended = validators.extend(cls, {"pattern": pattern})  # type: ignore[no-untyped-call]
    return extended(schema, format_checker=checker)


def _input_problems(
    resource: LoadedResource, input_schema: dict[str, Any], schema_origin: Origin
) -> list[AgentGraphError]:
    from jsonschema.exceptions import SchemaError

    origin = Origin(resource.rel, resource.doc.source, "/input")
    try:
        validator = _user_schema_validator(input_schema)
    except SchemaError as exc:
        pointer = ""
        for token in exc.absolute_path:
            pointer = join_pointer(pointer, token)
        return [
            schema_origin.at(pointer).fail(
                codes.RESOURCE_SCHEMA_INVALID,
                f"Input schema of resource {resource.id} is not a valid JSON Schema: "
                f"{pointer or '/'} {exc.message}",
            )
        ]
    # document order, whatever mix of member names and indexes the paths hold
    errors = sorted(
        validator.iter_errors(resource.metadata["input"]),
        key=lambda e: [(isinstance(t, str), str(t) if isinstance(t, str) else t) for t in e.path],
    )
    if not errors:
        return []
    message = f"Resource {resource.id} input does not match its materializer input schema"
    diagnostics: list[Diagnostic] = []
    for error in errors:
        pointer = "/input"
        for token in error.absolute_path:
            pointer = join_pointer(pointer, token)
        diag = origin.at(pointer).diagnostic(
            codes.RESOURCE_INPUT_INVALID, f"{pointer} {error.message}"
        )
        diagnostics.append(diag)
    return [AgentGraphError(codes.RESOURCE_INPUT_INVALID, message, diagnostics)]
