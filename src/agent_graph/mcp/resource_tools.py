"""``resource_read`` and the MCP resources of Runs and views (:mod:`.run_resources`)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import codes
from ..errors import AgentGraphError
from ..runs import Run
from .resources import static_files
from .run_tools import RunTools
from .serve_options import Client
from .tools import HANDLE_PATTERN

if TYPE_CHECKING:
    from ..materialize import Materialized
    from ..vm import Program, RoutingState


class ResourceTools(RunTools):
    """What the server serves to read: route resources, Run documents, views."""

    def _resource_read(self, args: Mapping[str, Any], client: Client) -> dict[str, Any]:
        from ..documents.files import read_bytes
        from ..materialize.locate import find_resource

        _, run = self._load(args["run"])
        _, program = self._served(run)
        wanted = args["id"]
        location = next((s for s in static_files(program) if s[0] == wanted), None)
        revision: str | None = None
        digest: str | None
        if location is None:
            resource = find_resource(program, wanted)  # resource-missing when it is none
            state = self._state(run, program, args["run"], client)
            done, revision = self._materialized(program, run, resource.id, state)
            rid, media, digest = done.id, done.media_type, done.digest
            text = done.read().decode("utf-8", "replace")  # checked against its receipt
        else:
            rid, media, rel, digest = location
            target = Path(rel) if os.path.isabs(rel) else program.root / rel
            text = read_bytes(target, rel).decode("utf-8", "replace")
        self.reads.served(program.provider_id, rid, digest, revision)
        info = {"id": rid, "mediaType": media, "digest": digest}
        if revision is not None:
            info["revision"] = revision
        say = "Follow this resource for the step it belongs to, then report with run_record."
        return {"next": {"say": say, "waitsFor": "agent"}, "resource": info, "text": text}

    def _materialized(
        self, program: Program, run: Run, rid: str, state: RoutingState, at: str | None = None
    ) -> tuple[Materialized, str]:
        """The view ``rid`` materialized for the Run's current revision, and that revision
        (``at``: only for that one, else ``route-revision-stale``)."""
        import tempfile

        from ..materialize import materialize

        if self._cache is None:
            self._cache = tempfile.mkdtemp(prefix="agc-mcp-views-")
        revision = program.evaluate(run.graph, run.entry, state).revision
        if at is not None and at != revision:
            raise AgentGraphError(
                codes.ROUTE_REVISION_STALE,
                f"The Run moved on (revision {revision}); the view of {at} is not served: "
                "take the new route's view",
            )
        done = materialize(
            program,
            rid,
            cache=self._cache,
            revision=revision,
            workspace=run.workspace or self.roots[0],
        )
        return done, revision

    # -- resources -------------------------------------------------------------------------

    def run_handles(self) -> list[str]:
        """The handles of the Graph Runs this server can read."""
        if self.options.runs is None:
            return sorted(self._memory_handles)
        directory = Path(self.options.runs) / "graph"
        found = directory.iterdir() if directory.is_dir() else iter(())
        return sorted(
            name.removesuffix(".json")
            for name in (p.name for p in found)
            if name.endswith(".json") and re.fullmatch(HANDLE_PATTERN, name.removesuffix(".json"))
        )

    def read_resource(self, uri: str, client: Client) -> tuple[str, str]:
        """``(text, media type)`` of any resource this server lists or links."""
        from . import run_resources as rr
        from .resources import read_with_origin

        if self.flows is not None:
            found = self.flows.read(uri)
            if found is not None:
                return found
        parsed = rr.parse(uri)
        if parsed is None:
            text, media, origin = read_with_origin(self.providers, uri)
            if origin is not None:
                self.reads.served(*origin, None)
            return text, media
        handle, rest = parsed
        _, run = self._load(handle)
        _, program = self._served(run)
        state = self._state(run, program, handle, client)
        if rest[0] != "views":
            return rr.document(rest[0], run, program, state), rr.MEMBERS[rest[0]]
        return self._view_text(program, run, state, rest[2], rest[1])

    def _view_text(
        self, program: Program, run: Run, state: RoutingState, rid: str, revision: str
    ) -> tuple[str, str]:
        from ..ir import records as r
        from ..materialize.locate import find_resource

        resource = find_resource(program, rid)
        if resource.protocol not in (r.GRAPH_ACTION, r.LEGACY_VIEW):
            raise AgentGraphError(
                codes.RESOURCE_MISSING, f"Resource {rid} is not a context view this server serves"
            )
        done, at = self._materialized(program, run, rid, state, revision)
        text = done.read().decode("utf-8", "replace")  # checked against its receipt
        self.reads.served(program.provider_id, done.id, done.digest, at)
        return text, done.media_type
