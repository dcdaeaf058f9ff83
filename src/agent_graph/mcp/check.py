"""``agc mcp check``: the tool list and every schema, checked in process.

Each input and output schema must be a valid JSON Schema 2020-12 document with no
``$ref`` (clients resolve none), every object of an input schema must close itself
with ``additionalProperties: false``, and the whole listing must stay within
:data:`LIST_BUDGET`, which an agent pays for in context on every connection. With
the SDK installed, the listing also makes a round trip through its in-memory client in
both protocol eras and must come back as sent. Every Flow package under ``--flows`` must
check as ``agc flow check`` checks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Final

from ..errors import AgentGraphError
from .tools import Tool

LIST_BUDGET: Final = 16 * 1024


def _refs(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref":
                yield str(value)
            yield from _refs(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _refs(item)


def _open_objects(schema: Any, where: str = "") -> Iterator[str]:
    if isinstance(schema, dict):
        # a schema that lists properties must close itself; a bare {"type": "object"} is
        # deliberately any JSON object (graph_evaluate's hypothetical Facts)
        if "properties" in schema and schema.get("additionalProperties") is not False:
            yield where or "/"
        for key, value in schema.items():
            yield from _open_objects(value, f"{where}/{key}")


def schema_problems(tool: Tool) -> list[str]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    problems = []
    for label, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
        try:
            Draft202012Validator.check_schema(dict(schema))
        except SchemaError as error:
            problems.append(f"{tool.name} {label} schema: {error.message}")
        problems += [f"{tool.name} {label} schema has $ref {ref}" for ref in _refs(schema)]
    problems += [
        f"{tool.name} input schema leaves {where} open (additionalProperties)"
        for where in _open_objects(dict(tool.input_schema))
    ]
    return problems


def listing_bytes(tools: tuple[Tool, ...]) -> int:
    listed = [tool.listing() for tool in tools]
    return len(json.dumps({"tools": listed}, separators=(",", ":")).encode())


def check(options: Any, sdk: ModuleType | None) -> dict[str, Any]:
    from .host import Host

    problems: list[str] = []
    try:
        host = Host(options)
    except AgentGraphError as error:
        return {
            "tools": [],
            "listBytes": 0,
            "listBudget": LIST_BUDGET,
            "providers": [],
            "flows": [],
            "sdk": "not run",
            "problems": [f"{error.code}: {error.message}"],
        }
    tools = []
    for tool in host.tools:
        problems += schema_problems(tool)
        size = len(json.dumps(tool.listing(), separators=(",", ":")).encode())
        tools.append(
            {"name": tool.name, "title": tool.title, "readOnly": tool.read_only, "bytes": size}
        )
    total = listing_bytes(host.tools)
    if total > LIST_BUDGET:
        problems.append(f"the tool list is {total} bytes, over its {LIST_BUDGET} byte budget")
    providers = []
    for served in host.providers.served:
        if served.error is None:
            providers.append(f"Provider {served.id}: ok ({served.option} {served.label})")
        else:
            line = f"{served.option} {served.label}: {served.error.code}: {served.error.message}"
            providers.append(f"Provider {line}")
            problems.append(line)
    flows, flow_problems = _flows(host, options)
    problems += flow_problems
    status = "SDK not installed (pip install 'agent-graph[mcp]')"
    if sdk is not None:
        eras = sdk.round_trip(host)
        status = ", ".join(f"{era} ok" for era in eras)
        for era, names in eras.items():
            if names != [t.name for t in host.tools]:
                problems.append(f"{era}: the SDK listed {names}")
    return {
        "tools": tools,
        "listBytes": total,
        "listBudget": LIST_BUDGET,
        "providers": providers,
        "flows": flows,
        "sdk": status,
        "problems": problems,
    }


def _flows(host: Any, options: Any) -> tuple[list[str], list[str]]:
    """One line per served Flow package (as ``agc flow check`` sees it), and the problems:
    a package that does not check, a directory that cannot be read, Flows without --runs."""
    if not options.flows:
        return [], []
    if host.flows is None:
        return [], ["--flows needs --runs DIR: no Flow tools would be offered"]
    lines, problems = [], []
    for entry in host.flows.entries():
        if "id" not in entry:
            problem = f"Flows under {entry['root']}: {entry['error']}: {entry['message']}"
            lines.append(problem)
            problems.append(problem)
            continue
        item = host.flows.describe(entry)
        where = f"{entry['root']}/{item['path']}"
        if item["status"] != "valid":
            found = "; ".join(f"{d['code']}: {d['message']}" for d in item["diagnostics"])
            lines.append(f"Flow {item['id']}: invalid ({where})")
            problems.append(f"Flow {item['id']} ({where}): {found}")
            continue
        lines.append(
            f"Flow {item['id']}: ok, {len(item['commands'])} commands, consent "
            f"{item['consent']} ({item['fingerprint'][:19]}…, {where})"
        )
    return lines, problems
