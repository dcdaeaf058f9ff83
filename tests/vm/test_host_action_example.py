"""The example host (examples/host_action_host.py) and the helper behaviour docs/host-actions.md
documents, seen from a host that holds route JSON."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agent_graph
from agent_graph import vm
from agent_graph.errors import AgentGraphError
from agent_graph.vm import (
    host_action_input_digest,
    host_action_output_digest,
    host_action_read_receipt,
    validate_host_action_result,
)
from cli_support import ok_json

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "examples" / "host_action_host.py"
PROVIDER = ROOT / "examples" / "context-views" / "provider.yaml"
DIGEST_ID = "acme.team-digest"


def _run_host(out: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(HOST), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    return done.stdout.splitlines()


def test_example_host_ends_with_the_resource_current(tmp_path: Path) -> None:
    lines = _run_host(tmp_path)
    assert lines[0].startswith("route route:")
    assert f"host-action resource {DIGEST_ID}: read-required" in lines
    assert any(x.startswith("  ran acme.build-team-digest/v1") for x in lines)
    assert lines[-1] == f"routed again: {DIGEST_ID} is current"
    receipt_set = json.loads((tmp_path / "receipts.json").read_text(encoding="utf-8"))
    assert receipt_set["schema"] == "agent-graph.resource-read-receipts.v1"
    assert receipt_set["provider"] == "example.context-views"
    [receipt] = receipt_set["receipts"]
    assert receipt["id"] == DIGEST_ID
    [persisted] = [p for p in tmp_path.glob("*.json") if p.name != "receipts.json"]
    result = json.loads(persisted.read_text(encoding="utf-8"))
    assert receipt["digest"] == host_action_output_digest(result)
    assert persisted.stem == result["input_digest"].removeprefix("sha256:")

    # a second run finds the result by its input digest instead of running the handler
    again = _run_host(tmp_path)
    assert any(x.startswith("  reused the persisted result") for x in again)
    assert not any(x.startswith("  ran ") for x in again)
    assert again[-1] == lines[-1]


def test_the_cli_takes_the_example_receipts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run_host(tmp_path)
    manifest = ["-m", str(PROVIDER)]
    evaluation = ok_json(["evaluate", "status", *manifest], capsys)
    route_args = [
        "route",
        "status",
        evaluation["primaryRoute"]["routeId"],
        "--revision",
        evaluation["revision"],
        *manifest,
    ]
    before = ok_json(route_args, capsys)
    after = ok_json([*route_args, "--resource-receipts", f"@{tmp_path / 'receipts.json'}"], capsys)

    def state(doc: dict[str, Any]) -> str:
        states = {x["id"]: str(x["readState"]) for x in doc["resources"]["required"]}
        return states[DIGEST_ID]

    assert (state(before), state(after)) == ("read-required", "current")


# -- the helpers, as a host calls them ------------------------------------------------------------


@pytest.fixture(scope="module")
def routed() -> tuple[agent_graph.Program, dict[str, Any], dict[str, Any]]:
    program = agent_graph.compile_provider(PROVIDER)
    evaluation = program.evaluate("status", "default", {})
    assert evaluation.primary is not None
    route = program.route(
        "status", "default", evaluation.primary.route_id, {}, revision=evaluation.revision
    ).to_dict()
    location = next(x for x in route["resources"]["required"] if x["id"] == DIGEST_ID)
    return program, route, location


def _result(location: dict[str, Any], **changes: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "schema": "agent-graph.host-action-result.v1",
        "handler": location["materialize"]["handler"],
        "input_digest": host_action_input_digest(location),
        "output": {
            "schema": location["materialize"]["output_schema"],
            "inline": {"protocol": "acme.team-digest/v1", "team": "platform", "items": []},
        },
        "receipt": {"adapter": "example-host", "adapter_version": "1.0.0"},
    }
    result.update(changes)
    return result


def _invalid(location: Any, result: Any) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as caught:
        validate_host_action_result(location, result)
    return caught.value


def test_helpers_are_public_at_the_vm_and_the_root() -> None:
    for name in (
        "host_action_input_digest",
        "host_action_output_digest",
        "host_action_read_receipt",
        "validate_host_action_result",
    ):
        assert name in vm.__all__
        assert name in agent_graph.__all__
        assert getattr(agent_graph, name) is getattr(vm, name)
        assert (getattr(vm, name).__doc__ or "").strip()


def test_input_digest_covers_handler_and_input_only(
    routed: tuple[agent_graph.Program, dict[str, Any], dict[str, Any]],
) -> None:
    _, _, location = routed
    digest = host_action_input_digest(location)
    assert digest.startswith("sha256:")
    assert len(digest) == 71
    moved = copy.deepcopy(location)
    moved["revision"] = "sha256:" + "1" * 64
    moved["materialize"]["output_schema"] = "acme.other/v1"
    del moved["readState"]
    assert host_action_input_digest(moved) == digest
    bound = copy.deepcopy(location)
    bound["materialize"]["input"]["value"]["team"] = "platform"
    assert host_action_input_digest(bound) != digest


def test_a_wrong_input_digest_is_refused(
    routed: tuple[agent_graph.Program, dict[str, Any], dict[str, Any]],
) -> None:
    _, _, location = routed
    validate_host_action_result(location, _result(location))
    # e.g. the digest of the runtime-bound input, not of the routed location
    bound = copy.deepcopy(location)
    bound["materialize"]["input"]["value"]["team"] = "platform"
    error = _invalid(location, _result(location, input_digest=host_action_input_digest(bound)))
    assert error.code == "host-action-result-invalid"
    assert error.diagnostics[0].pointer == "/input_digest"
    assert error.diagnostics[0].detail == {"member": "/input_digest"}


@pytest.mark.parametrize(
    ("changes", "pointer"),
    [
        ({"schema": "agent-graph.host-action-result.v2"}, "/schema"),
        ({"handler": "acme.other/v1"}, "/handler"),
        ({"extra": 1}, "/extra"),
        ({"output": {"schema": "acme.team-digest/v1"}}, "/output"),
        ({"output": {"schema": "acme.other/v1", "inline": {}}}, "/output/schema"),
        (
            {"output": {"schema": "acme.team-digest/v1", "resource": {"ref": "", "digest": "x"}}},
            "/output/resource/ref",
        ),
        (
            {"receipt": {"adapter": "example-host", "adapter_version": "1"}},
            "/receipt/adapter_version",
        ),
    ],
)
def test_an_invalid_result_names_the_member(
    routed: tuple[agent_graph.Program, dict[str, Any], dict[str, Any]],
    changes: dict[str, Any],
    pointer: str,
) -> None:
    _, _, location = routed
    error = _invalid(location, _result(location, **changes))
    assert error.code == "host-action-result-invalid"
    assert error.diagnostics[0].pointer == pointer


def test_a_malformed_location_is_its_own_error(
    routed: tuple[agent_graph.Program, dict[str, Any], dict[str, Any]],
) -> None:
    _, _, location = routed
    file_location = {"schema": "agent-graph.resource-location.file.v1", "id": DIGEST_ID}
    for call in (
        lambda: host_action_input_digest(file_location),
        lambda: validate_host_action_result(file_location, _result(location)),
        lambda: host_action_read_receipt(file_location, _result(location)),
    ):
        with pytest.raises(AgentGraphError) as caught:
            call()
        assert caught.value.code == "host-action-location-invalid"


def test_the_read_receipt_round_trip(
    routed: tuple[agent_graph.Program, dict[str, Any], dict[str, Any]],
) -> None:
    program, route, location = routed
    managed = _result(
        location,
        output={
            "schema": "acme.team-digest/v1",
            "resource": {"ref": "host-resource://example/digest", "digest": "sha256:" + "e" * 64},
        },
    )
    for result in (_result(location), managed):
        receipt = host_action_read_receipt(location, result)
        assert receipt == {
            "id": DIGEST_ID,
            "revision": route["revision"],
            "digest": host_action_output_digest(result),
        }
        receipts = {
            "schema": "agent-graph.resource-read-receipts.v1",
            "provider": route["provider"],
            "receipts": [receipt],
        }
        again = program.route(
            "status",
            "default",
            route["routeId"],
            {"receipts": receipts},
            revision=route["revision"],
        ).to_dict()
        states = {x["id"]: x["readState"] for x in again["resources"]["required"]}
        assert states[DIGEST_ID] == "current"
        assert states["acme.workspace-status"] == "read-required"
    assert host_action_output_digest(managed) == "sha256:" + "e" * 64

    # a receipt needs a routed location (with a revision), and a valid result
    located = {k: v for k, v in location.items() if k not in ("revision", "readState")}
    with pytest.raises(AgentGraphError) as caught:
        host_action_read_receipt(located, _result(location))
    assert caught.value.code == "host-action-result-invalid"
    assert caught.value.diagnostics[0].pointer == "/revision"
    with pytest.raises(AgentGraphError) as caught:
        host_action_read_receipt(location, _result(location, handler="acme.other/v1"))
    assert caught.value.code == "host-action-result-invalid"
