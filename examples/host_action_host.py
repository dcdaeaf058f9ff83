"""An example host for a host-action Resource, end to end (see docs/host-actions.md).

Run it from the repository root: ``python examples/host_action_host.py [--out DIR]``.

It routes the ``status`` graph of the context-views example, whose first step requires
``acme.team-digest``: an ``agent-graph.resource.host-action.v1`` Resource that the host
produces itself through the handler ``acme.build-team-digest/v1``. The host

1. routes and finds the host-action location (handler, input, output schema);
2. computes the location's input digest and looks for a result it already persisted;
3. binds the ``__runtime__`` placeholders, checks the bound request against its input
   schema and runs its handler, then checks the output against its output schema;
4. builds an ``agent-graph.host-action-result.v1``, validates it against the location
   and persists it, named by the input digest;
5. issues a read receipt and writes an ``agent-graph.resource-read-receipts.v1`` set;
6. routes again with that set as ``receipts`` and sees ``readState: current``.

``effect: read`` on the materializer is a declared contract: Agent Graph never runs the
handler, and nothing sandboxes it. Keeping it read-only is this host's job.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jsonschema

import agent_graph
from agent_graph.vm import (
    host_action_input_digest,
    host_action_output_digest,
    host_action_read_receipt,
    validate_host_action_result,
)

EXAMPLE = Path(__file__).resolve().parent / "context-views"
PROVIDER = EXAMPLE / "provider.yaml"
HOST_ACTION_LOCATION = "agent-graph.resource-location.host-action.v1"
RECEIPTS_SCHEMA = "agent-graph.resource-read-receipts.v1"
ADAPTER = {"adapter": "example-host", "adapter_version": "1.0.0"}

# What this host knows at run time: the values it binds to ``__runtime__`` placeholders.
RUNTIME = {"team": "platform", "since": "2026-11-24"}


def build_team_digest(request: Mapping[str, Any]) -> dict[str, Any]:
    """The handler ``acme.build-team-digest/v1``. Read-only: it only looks things up (a
    real host would ask its issue tracker here)."""
    return {
        "protocol": "acme.team-digest/v1",
        "team": request["team"],
        "items": [
            {
                "title": "Cache route revisions",
                "url": "https://example.invalid/pr/41",
                "state": "merged",
            },
            {
                "title": "Flaky digest test",
                "url": "https://example.invalid/issues/7",
                "state": "closed",
            },
        ],
    }


# The host's handler table: handler id -> (function, input schema file, output schema file).
Handler = tuple[Callable[[Mapping[str, Any]], dict[str, Any]], Path, Path]
HANDLERS: dict[str, Handler] = {
    "acme.build-team-digest/v1": (
        build_team_digest,
        EXAMPLE / "schemas" / "team-digest-request.schema.json",
        EXAMPLE / "schemas" / "team-digest.schema.json",
    ),
}


def check_against(schema_file: Path, identity: str, value: Any) -> None:
    """The host's own content check: the schema file must carry ``identity`` as ``$id``."""
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    if schema.get("$id") != identity:
        raise SystemExit(f"{schema_file.name} is not {identity}")
    jsonschema.Draft202012Validator(schema).validate(value)


def bind_runtime(value: Any) -> Any:
    """The request the handler sees: ``__runtime__`` strings replaced by host values."""
    if isinstance(value, Mapping):
        return {
            k: RUNTIME.get(k, v) if v == "__runtime__" else bind_runtime(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [bind_runtime(x) for x in value]
    return value


def materialize(location: Mapping[str, Any], store: Path) -> dict[str, Any]:
    """Produce (or reuse) the validated host-action result for ``location``."""
    materialize = location["materialize"]
    input_digest = host_action_input_digest(location)
    print(f"  input digest: {input_digest}")
    persisted = store / f"{input_digest.removeprefix('sha256:')}.json"
    if persisted.exists():
        result: dict[str, Any] = json.loads(persisted.read_text(encoding="utf-8"))
        validate_host_action_result(location, result)
        print(f"  reused the persisted result {persisted.name}")
        return result
    handler, input_schema, output_schema = HANDLERS[materialize["handler"]]
    request = bind_runtime(materialize["input"]["value"])
    check_against(input_schema, materialize["input"]["schema"], request)
    output = handler(request)
    check_against(output_schema, materialize["output_schema"], output)
    print(
        f"  ran {materialize['handler']} for team {request['team']}: {len(output['items'])} items"
    )
    result = {
        "schema": "agent-graph.host-action-result.v1",
        "handler": materialize["handler"],
        "input_digest": input_digest,
        "output": {"schema": materialize["output_schema"], "inline": output},
        "receipt": dict(ADAPTER),
    }
    validate_host_action_result(location, result)  # raises host-action-result-invalid
    persisted.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"  validated and persisted the result as {persisted.name}")
    return result


def read_states(route: Mapping[str, Any]) -> dict[str, str]:
    return {x["id"]: x["readState"] for x in route["resources"]["required"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--out", type=Path, help="where results and receipts go (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    store: Path = args.out or Path(tempfile.mkdtemp(prefix="host-action-host-"))
    store.mkdir(parents=True, exist_ok=True)

    program = agent_graph.compile_provider(PROVIDER)
    state: dict[str, Any] = {"facts": {}, "outcomes": {}}
    evaluation = program.evaluate("status", "default", state)
    step = evaluation.primary
    assert step is not None, "the status graph should have an actionable first step"
    route = program.route(
        "status", "default", step.route_id, state, revision=evaluation.revision
    ).to_dict()
    print(f"route {route['routeId']} at {route['revision']}: node {route['node']}")
    hosted = [x for x in route["resources"]["required"] if x["schema"] == HOST_ACTION_LOCATION]
    for location in hosted:
        m = location["materialize"]
        print(f"host-action resource {location['id']}: {location['readState']}")
        print(
            f"  handler {m['handler']}, input {m['input']['schema']}, output {m['output_schema']}"
        )

    receipts = []
    for location in hosted:
        result = materialize(location, store)
        receipt = host_action_read_receipt(location, result)
        assert receipt["digest"] == host_action_output_digest(result)
        print(f"  read receipt: {json.dumps(receipt, sort_keys=True)}")
        receipts.append(receipt)
    receipt_set = {"schema": RECEIPTS_SCHEMA, "provider": route["provider"], "receipts": receipts}
    receipts_file = store / "receipts.json"
    receipts_file.write_text(json.dumps(receipt_set, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {receipts_file}")
    print(
        f"  CLI: agc route status {route['routeId']} --revision {route['revision']}"
        f" -m {PROVIDER} --resource-receipts @{receipts_file}"
    )

    again = program.route(
        "status",
        "default",
        step.route_id,
        {**state, "receipts": receipt_set},
        revision=evaluation.revision,
    ).to_dict()
    states = read_states(again)
    for location in hosted:
        print(f"routed again: {location['id']} is {states[location['id']]}")
    if not hosted or any(states[x["id"]] != "current" for x in hosted):
        raise SystemExit("the host-action resource did not become current")


if __name__ == "__main__":
    main()
