"""Resource locations (0.3.1 envelopes), read states and the host-action result contract.

A location tells a host where to read a Resource: a file location names an installed
file and its digest; a graph-action location asks the host to materialize a context
view for the selecting Route revision; a host-action location asks the host to run
its own handler on a fixed input. ``read_state`` is set on Route outputs only, so the
same classes also serve ``resource locate`` (no revision, no read state).

The host-action helpers check results by hand: the VM never imports jsonschema.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from .. import codes
from ..canonical import digest_value, is_digest, is_identifier
from ..errors import AgentGraphError, Diagnostic
from ..ir import records as r
from ..ir.decoders import corrupt
from .state import Receipt

FILE_LOCATION = "agent-graph.resource-location.file.v1"
GRAPH_ACTION_LOCATION = "agent-graph.resource-location.graph-action.v1"
HOST_ACTION_LOCATION = "agent-graph.resource-location.host-action.v1"
HOST_ACTION_RESULT = "agent-graph.host-action-result.v1"

READ_REQUIRED = "read-required"
CURRENT = "current"


_SEMVER = re.compile(
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?\Z"
)


@dataclass(frozen=True, slots=True)
class FileLocation:
    """An installed file: a static Resource's content, an Agent Skill or an Action schema."""

    id: str
    kind: str
    media_type: str
    digest: str
    file_path: str
    read_state: str | None = None

    schema = FILE_LOCATION
    dynamic = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": FILE_LOCATION,
            "id": self.id,
            "kind": self.kind,
            "mediaType": self.media_type,
            "digest": self.digest,
            "filePath": self.file_path,
        }
        if self.read_state is not None:
            out["readState"] = self.read_state
        return out


@dataclass(frozen=True, slots=True)
class GraphActionLocation:
    """A context view the host materializes (``resource materialize``) for ``revision``."""

    id: str
    kind: str
    media_type: str
    revision: str | None
    read_state: str | None = None

    schema = GRAPH_ACTION_LOCATION
    dynamic = True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": GRAPH_ACTION_LOCATION,
            "id": self.id,
            "kind": self.kind,
            "mediaType": self.media_type,
        }
        if self.revision is not None:
            out["revision"] = self.revision
        out["materialize"] = {"resourceId": self.id}
        if self.read_state is not None:
            out["readState"] = self.read_state
        return out


@dataclass(frozen=True, slots=True)
class HostActionLocation:
    """A Resource the host produces by running ``handler`` on ``input_value``."""

    id: str
    kind: str
    media_type: str
    revision: str | None
    handler: str
    input_schema: str
    input_value: Any
    output_schema: str
    read_state: str | None = None

    schema = HOST_ACTION_LOCATION
    dynamic = True

    @property
    def input_digest(self) -> str:
        return host_action_input_digest(self)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": HOST_ACTION_LOCATION,
            "id": self.id,
            "kind": self.kind,
            "mediaType": self.media_type,
        }
        if self.revision is not None:
            out["revision"] = self.revision
        out["materialize"] = {
            "handler": self.handler,
            # a copy: the value belongs to the immutable Program
            "input": {"schema": self.input_schema, "value": copy.deepcopy(self.input_value)},
            "output_schema": self.output_schema,
        }
        if self.read_state is not None:
            out["readState"] = self.read_state
        return out


Location = FileLocation | GraphActionLocation | HostActionLocation


# -- locating -----------------------------------------------------------------------------


def locate_file(root: Path, ref: r.FileRef) -> FileLocation:
    """The location of an Action's Skill or schema file; a Skill the compiler could not
    parse (no frontmatter) fails here, when a Route exposes it, as in the reference."""
    path = str(root / ref.path)
    if ref.error is not None:
        code, message = ref.error
        raise AgentGraphError(code, message.replace(r.FILE_TOKEN, path))
    return FileLocation(ref.id, ref.kind, ref.media_type, ref.digest, path)


def locate_resource(root: Path, resource: r.Resource, revision: str | None) -> Location:
    """The location of a loaded Resource; dynamic ones carry ``revision`` when given."""
    if resource.protocol == r.HOST_ACTION:
        host = resource.host
        if host is None:  # the decoder refuses this; a Program built by hand may not
            raise corrupt(f"resource {resource.id}: host-action resource without its host input")
        return HostActionLocation(
            resource.id,
            resource.kind,
            resource.media_type,
            revision,
            host.handler,
            host.input_schema,
            host.value,
            host.output_schema,
        )
    if resource.protocol in (r.GRAPH_ACTION, r.LEGACY_VIEW):
        return GraphActionLocation(resource.id, resource.kind, resource.media_type, revision)
    if resource.content is None or resource.digest is None:
        raise corrupt(f"resource {resource.id}: static resource without its content and digest")
    return FileLocation(
        resource.id,
        resource.kind,
        resource.media_type,
        resource.digest,
        str(root / resource.content),
    )


def is_current(location: Location, receipts: tuple[Receipt, ...]) -> bool:
    """A static location is current when a receipt has its id and exact digest; a dynamic
    one when a receipt has its id and its (selecting Route) revision."""
    if isinstance(location, FileLocation):
        return any(x.id == location.id and x.digest == location.digest for x in receipts)
    if location.revision is None:
        return False
    return any(x.id == location.id and x.revision == location.revision for x in receipts)


def with_read_state(location: Location, receipts: tuple[Receipt, ...]) -> Location:
    state = CURRENT if is_current(location, receipts) else READ_REQUIRED
    return dataclasses.replace(location, read_state=state)


# -- host-action results (docs/host-actions.md, steps 4-7) -----------------------------------------


def _invalid(message: str, pointer: str, code: str = codes.HOST_ACTION_RESULT_INVALID) -> NoReturn:
    diagnostic = Diagnostic(code, message, pointer=pointer, detail={"member": pointer})
    raise AgentGraphError(code, message, [diagnostic])


def _location_from_dict(value: Mapping[str, Any]) -> HostActionLocation:
    code = codes.HOST_ACTION_LOCATION_INVALID
    if value.get("schema") != HOST_ACTION_LOCATION:
        _invalid(f"Location must declare schema {HOST_ACTION_LOCATION}", "/schema", code)
    materialize = value.get("materialize")
    if not isinstance(materialize, Mapping):
        _invalid("Location has no materialize object", "/materialize", code)
    handler = materialize.get("handler")
    if not isinstance(handler, str):
        _invalid("Location has no handler", "/materialize/handler", code)
    request = materialize.get("input")
    if not isinstance(request, Mapping) or "value" not in request:
        _invalid("Location has no input value", "/materialize/input", code)
    if not isinstance(request.get("schema"), str):
        _invalid("Location has no input schema", "/materialize/input/schema", code)
    output_schema = materialize.get("output_schema")
    if not isinstance(output_schema, str):
        _invalid("Location has no output schema", "/materialize/output_schema", code)
    ident, revision = value.get("id"), value.get("revision")
    if not isinstance(ident, str):
        _invalid("Location has no id", "/id", code)
    if revision is not None and not isinstance(revision, str):
        _invalid("Location revision must be a digest", "/revision", code)
    return HostActionLocation(
        ident,
        str(value.get("kind", "")),
        str(value.get("mediaType", "")),
        revision,
        handler,
        request["schema"],
        request["value"],
        output_schema,
    )


def _host_location(location: HostActionLocation | Mapping[str, Any]) -> HostActionLocation:
    if isinstance(location, HostActionLocation):
        return location
    if isinstance(location, Mapping):
        return _location_from_dict(location)
    _invalid("Location must be a host-action location", "", codes.HOST_ACTION_LOCATION_INVALID)


def host_action_input_digest(location: HostActionLocation | Mapping[str, Any]) -> str:
    """The input digest of a host-action location: what a host echoes as ``input_digest``.

    ``location`` is a :class:`HostActionLocation` or its wire form, the
    ``agent-graph.resource-location.host-action.v1`` mapping a Route lists (``readState``
    and ``revision`` may be present or not). Returns ``sha256:<64 hex>``, the canonical
    digest of ``{"handler": …, "input": {"schema": …, "value": …}}`` as the location
    carries them: neither ``output_schema`` nor the revision count, so one input has one
    digest across Routes. Compute it on the location as routed, before binding any
    ``__runtime__`` placeholders. Raises ``host-action-location-invalid`` (an
    :class:`~agent_graph.errors.AgentGraphError`) when ``location`` is not a host-action
    location. See ``docs/host-actions.md``.
    """
    loc = _host_location(location)
    return digest_value(
        {"handler": loc.handler, "input": {"schema": loc.input_schema, "value": loc.input_value}}
    )


def _members(value: Any, pointer: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> None:
    if not isinstance(value, Mapping):
        _invalid(f"Host-action result {pointer or 'value'} must be an object", pointer)
    for key in value:
        if key not in allowed:
            _invalid(
                f"Host-action result has an unknown member {pointer}/{key}", f"{pointer}/{key}"
            )
    for key in required:
        if key not in value:
            _invalid(f"Host-action result lacks {pointer}/{key}", f"{pointer}/{key}")


def _digest_member(value: Any, pointer: str) -> None:
    if not is_digest(value):
        _invalid(f"Host-action result {pointer} must be a sha256 digest", pointer)


def validate_host_action_result(
    location: HostActionLocation | Mapping[str, Any], result: Any
) -> None:
    """Check a host's ``agent-graph.host-action-result.v1`` against the location it answers.

    ``location`` is as for :func:`host_action_input_digest`; ``result`` is the result
    mapping the host built (parsed JSON). Returns ``None`` when the result is valid:
    exactly the members ``schema``, ``handler``, ``input_digest``, ``output`` and
    ``receipt``; ``handler`` equal to the location's; ``input_digest`` equal to
    :func:`host_action_input_digest` of the location; ``output.schema`` equal to the
    location's ``output_schema`` with exactly one of ``inline`` (any JSON value) or
    ``resource`` (``{ref, digest}``: a non-empty opaque ref and a ``sha256:`` digest,
    neither dereferenced); ``receipt`` ``{adapter, adapter_version}`` with an id and a
    semantic version. A location ``revision``, when present, must be a digest.

    Raises :class:`~agent_graph.errors.AgentGraphError` with code
    ``host-action-result-invalid``, whose diagnostic's ``pointer`` (and
    ``detail["member"]``) names the failing member (``/input_digest``, ``/output/schema``
    …), or ``host-action-location-invalid`` for a malformed location. The output
    content itself is not checked against the output schema: that is the host's job.
    """
    loc = _host_location(location)
    if loc.revision is not None and not is_digest(loc.revision):
        _invalid("Location revision must be a sha256 digest", "/revision")
    _members(
        result,
        "",
        ("schema", "handler", "input_digest", "output", "receipt"),
        ("schema", "handler", "input_digest", "output", "receipt"),
    )
    if result["schema"] != HOST_ACTION_RESULT:
        _invalid(f"Host-action result must declare schema {HOST_ACTION_RESULT}", "/schema")
    handler = result["handler"]
    if not is_identifier(handler) or len(handler) > 160:
        _invalid("Host-action result handler must be an id", "/handler")
    if handler != loc.handler:
        _invalid(f"Host-action result handler {handler} is not {loc.handler}", "/handler")
    _digest_member(result["input_digest"], "/input_digest")
    expected = host_action_input_digest(loc)
    if result["input_digest"] != expected:
        _invalid(f"Host-action result input_digest is not {expected}", "/input_digest")
    output = result["output"]
    _members(output, "/output", ("schema", "inline", "resource"), ("schema",))
    if not isinstance(output["schema"], str) or not output["schema"]:
        _invalid("Host-action result output schema must be a non-empty string", "/output/schema")
    if output["schema"] != loc.output_schema:
        _invalid(
            f"Host-action result output schema {output['schema']} is not {loc.output_schema}",
            "/output/schema",
        )
    if ("inline" in output) == ("resource" in output):
        _invalid("Host-action result output needs exactly one of inline and resource", "/output")
    if "resource" in output:
        resource = output["resource"]
        _members(resource, "/output/resource", ("ref", "digest"), ("ref", "digest"))
        if not isinstance(resource["ref"], str) or not resource["ref"]:
            _invalid(
                "Host-action result resource ref must be a non-empty string", "/output/resource/ref"
            )
        _digest_member(resource["digest"], "/output/resource/digest")
    receipt = result["receipt"]
    _members(receipt, "/receipt", ("adapter", "adapter_version"), ("adapter", "adapter_version"))
    adapter = receipt["adapter"]
    if not is_identifier(adapter) or len(adapter) > 160:
        _invalid("Host-action result adapter must be an id", "/receipt/adapter")
    version = receipt["adapter_version"]
    if not isinstance(version, str) or not _SEMVER.match(version):
        _invalid(
            "Host-action result adapter_version must be a semantic version",
            "/receipt/adapter_version",
        )


def host_action_output_digest(result: Mapping[str, Any]) -> str:
    """The digest of a result's output, as read receipts carry it.

    ``result`` must already have passed :func:`validate_host_action_result` (this
    function does not check it). Returns ``output.resource.digest`` for a managed
    resource, else the canonical ``sha256:`` digest of ``output.inline``.
    """
    output = result["output"]
    if "resource" in output:
        return str(output["resource"]["digest"])
    return digest_value(output["inline"])


def host_action_read_receipt(
    location: HostActionLocation | Mapping[str, Any], result: Any
) -> dict[str, str]:
    """The read receipt that marks a host-action location ``current``.

    ``location`` must come from a Route (it needs its ``revision``); ``result`` is the
    host's result for it. Validates ``result`` as :func:`validate_host_action_result`
    does, then returns ``{"id": …, "revision": …, "digest": …}``: the location's id and
    revision and :func:`host_action_output_digest` of the result. Put it in the
    ``receipts`` list of an ``agent-graph.resource-read-receipts.v1`` set
    (``{"schema", "provider", "receipts"}``) and pass that set as the routing state's
    ``receipts`` (CLI: ``--resource-receipts``): Routes of the same revision then show
    the location with ``readState: current``. Raises ``host-action-result-invalid``
    for an invalid result or a location without a revision (pointer ``/revision``),
    ``host-action-location-invalid`` for a malformed location.
    """
    loc = _host_location(location)
    validate_host_action_result(loc, result)
    if loc.revision is None:
        _invalid("A read receipt needs a location with a revision (from a Route)", "/revision")
    return {"id": loc.id, "revision": loc.revision, "digest": host_action_output_digest(result)}
