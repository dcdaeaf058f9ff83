"""Lowering: a checked :class:`LoadedProvider` becomes an :class:`ir.Program`.

Everything a Route needs from files (content digests, Skill names, schema
identities) is read here, once, so evaluation and routing never open a source file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...canonical import js_sorted
from ...collector import collector_paused
from ...documents.files import digest_file
from ...documents.paths import portable
from ...documents.sources import read_markdown, read_structured
from ...errors import AgentGraphError
from ...ir import records as r
from .hostaction import identity_problem
from .model import LoadedAction, LoadedProvider, LoadedResource

_PROTOCOL = {
    "file": r.FILE,
    "markdown": r.MARKDOWN,
    "graph-action": r.GRAPH_ACTION,
    "host-action": r.HOST_ACTION,
}


def _checks(value: list[dict[str, Any]] | None) -> tuple[r.FactCheck, ...] | None:
    if value is None:
        return None
    out = []
    for check in value:
        path = tuple(check["path"].split("."))
        if "exists" in check:
            out.append(r.FactCheck(path, r.EXISTS if check["exists"] else r.ABSENT, None))
        else:
            out.append(r.FactCheck(path, r.EQUALS, check["equals"]))
    return tuple(out)


def _mask(outcomes: list[str] | None) -> int:
    mask = 0
    for outcome in outcomes or ["completed"]:
        mask |= r.OUTCOME_BIT[outcome]
    return mask


class _Lowering:
    def __init__(self, provider: LoadedProvider) -> None:
        self.provider = provider
        self.root = provider.root
        self.action_index = {path: i for i, path in enumerate(provider.actions)}
        self.resource_index = {path: i for i, path in enumerate(provider.resources)}
        # first in load order, as the reference's find(); the loader keeps ids unique
        self.resource_ids: dict[str, int] = {}
        for i, resource in enumerate(provider.resources.values()):
            self.resource_ids.setdefault(resource.id, i)
        self.graph_index = {gid: i for i, gid in enumerate(provider.graphs)}
        self.digests: dict[Path, str] = {}
        self.paths: dict[str, Path] = {}
        # memo tables: a large graph names the same few actions and resources per node
        self.action_refs: dict[str, int] = {}
        self.resource_refs: dict[str, int] = {}
        self.lists: dict[tuple[tuple[str, ...], tuple[str, ...]], r.ResourceLists] = {}

    def digest(self, path: Path) -> str:
        found = self.digests.get(path)
        if found is None:
            found = self.digests[path] = digest_file(path)
        return found

    def path_of(self, reference: str) -> Path:
        found = self.paths.get(reference)
        if found is None:
            found = self.paths[reference] = Path(os.path.normpath(self.root / reference))
        return found

    def action_ref(self, reference: str | None) -> int:
        if reference is None:
            return r.NONE
        found = self.action_refs.get(reference)
        if found is None:
            found = self.action_refs[reference] = self.action_index[self.path_of(reference)]
        return found

    def resource_ref(self, reference: str) -> int:
        """The resource a node's reference names, as the reference's ``locateResource``
        (``src/router.ts``) finds it for a Route: the loaded resource whose id is exactly
        the reference, else the one loaded from its contained path. So an id spelled like
        another resource's path wins over that path; the loader still loaded the file at
        the path (its digest counts in the graph revision) even when no Route shows it."""
        found = self.resource_refs.get(reference)
        if found is None:
            found = self.resource_ids.get(reference)
            if found is None:
                found = self.resource_index[self.path_of(reference)]
            self.resource_refs[reference] = found
        return found

    def resource_lists(self, value: dict[str, Any] | None) -> r.ResourceLists | None:
        """A node's resource lists; equal lists share one (immutable) record."""
        if value is None:
            return None
        key = (tuple(value.get("required", ())), tuple(value.get("recommended", ())))
        found = self.lists.get(key)
        if found is None:
            ref = self.resource_ref
            found = self.lists[key] = r.ResourceLists(
                tuple([ref(x) for x in key[0]]), tuple([ref(x) for x in key[1]])
            )
        return found

    # -- actions ------------------------------------------------------------------------

    def file_ref(self, ident: str, kind: str, media: str, path: Path) -> r.FileRef:
        return r.FileRef(ident, kind, media, portable(self.root, path), self.digest(path), None)

    def skill_ref(self, reference: str) -> r.FileRef:
        path = self.path_of(reference)
        rel = portable(self.root, path)
        try:
            meta = read_markdown(path, display=rel).value
        except AgentGraphError as exc:
            message = exc.message.replace(str(path), r.FILE_TOKEN)
            return r.FileRef(
                "skill.agent-skill",
                "skill",
                "text/markdown",
                rel,
                self.digest(path),
                (exc.code, message),
            )
        name = meta.get("name")
        ident = f"skill.{name}" if isinstance(name, str) else "skill.agent-skill"
        return self.file_ref(ident, "skill", "text/markdown", path)

    def action(self, action: LoadedAction) -> r.Action:
        d = action.definition
        schemas = [
            self.file_ref(
                f"schema.{action.id}.{side}",
                "schema",
                "application/schema+json",
                self.path_of(d[name]),
            )
            if name in d
            else None
            for side, name in (("input", "inputSchema"), ("output", "outputSchema"))
        ]
        return r.Action(
            id=action.id,
            runner=d["runner"],
            effect=d["effect"],
            cwd=d.get("cwd", "workspace"),
            command=d.get("command"),
            entry=portable(self.root, self.path_of(d["entry"])) if "entry" in d else None,
            runtime=d.get("runtime"),
            args=tuple(d.get("args", ())),
            handler=d.get("handler"),
            skill=self.skill_ref(d["skill"]) if "skill" in d else None,
            input_schema=schemas[0],
            output_schema=schemas[1],
        )

    # -- resources ----------------------------------------------------------------------

    def resource(self, resource: LoadedResource) -> r.Resource:
        meta = resource.metadata
        if resource.protocol == "legacy":
            protocol = r.LEGACY_VIEW if resource.dynamic else r.LEGACY_FILE
        else:
            protocol = _PROTOCOL[resource.protocol]
        materializer = r.NONE
        host = None
        if resource.dynamic:
            materializer = self.action_ref(meta["materializer"])
        if resource.protocol == "host-action":
            action = self.provider.actions[self.path_of(meta["materializer"])].definition
            ids = [self.schema_identity(action[name]) for name in ("inputSchema", "outputSchema")]
            host = r.HostInput(action["handler"], ids[0], ids[1], r.freeze_json(meta["input"]))
        static = not resource.dynamic
        return r.Resource(
            id=resource.id,
            kind=resource.kind,
            media_type=resource.media_type,
            protocol=protocol,
            path=resource.rel,
            content=portable(self.root, resource.content_path) if static else None,
            digest=self.digest(resource.content_path) if static else None,
            materializer=materializer,
            host=host,
        )

    def schema_identity(self, reference: str) -> str:
        path = self.path_of(reference)
        document = read_structured(path, display=portable(self.root, path)).value
        assert identity_problem(document) is None  # checked by the loader
        return str(document["$id"])

    # -- graphs -------------------------------------------------------------------------

    def graph(self, gid: str) -> r.Graph:
        loaded = self.provider.graphs[gid]
        d = loaded.definition
        node_index = {node["id"]: i for i, node in enumerate(d["nodes"])}
        edges = []
        incoming: list[list[int]] = [[] for _ in d["nodes"]]
        outgoing: list[list[int]] = [[] for _ in d["nodes"]]
        repeats: list[list[int]] = [[] for _ in d["nodes"]]
        repeat_edges = []
        for i, edge in enumerate(d["edges"]):
            kind = r.EDGE_KINDS.index(edge.get("kind", "flow"))
            source, target = node_index[edge["from"]], node_index[edge["to"]]
            edges.append(r.Edge(source, target, kind, _mask(edge.get("outcomes"))))
            if kind == r.REPEAT:
                repeats[source].append(i)
                repeat_edges.append(i)
            else:
                incoming[target].append(i)
                outgoing[source].append(i)
        nodes = [
            self.node(n, incoming[i], outgoing[i], repeats[i]) for i, n in enumerate(d["nodes"])
        ]
        return r.Graph(
            id=gid,
            path=loaded.rel,
            digest=self.provider.graph_digests[gid],
            entrypoints=tuple((name, node_index[node]) for name, node in d["entrypoints"].items()),
            nodes=tuple(nodes),
            edges=tuple(edges),
            repeat_edges=tuple(repeat_edges),
            dependencies=tuple(js_sorted(self.provider.graph_dependencies.get(gid, []))),
        )

    def node(
        self, n: dict[str, Any], incoming: list[int], outgoing: list[int], repeats: list[int]
    ) -> r.Node:
        kind = r.NODE_KINDS.index(n["kind"])
        gate = None
        if kind == r.GATE:
            g, delegated = n["gate"], n.get("delegated")
            gate = r.Gate(
                id=g["id"],
                prompt=g["prompt"],
                authority=g.get("authority"),
                delegatable=g.get("delegatable"),
                inspection=self.action_ref(n.get("inspectionAction")),
                resolution=self.action_ref(n.get("resolutionAction")),
                delegated=None
                if delegated is None
                else r.Delegated(
                    skip_inspection=delegated.get("inspection") == "skip",
                    resolution=self.action_ref(delegated.get("resolutionAction")),
                    resources=self.resource_lists(delegated.get("resources")),
                ),
                fields=tuple(g),
            )
        return r.Node(
            id=n["id"],
            kind=kind,
            description=n.get("description"),
            reason_code=n.get("reasonCode"),
            priority=n.get("priority", 0),
            join_any=n.get("join", "all") == "any",
            requires=_checks(n.get("requiresFacts")),
            satisfied_by=_checks(n.get("satisfiedBy")),
            terminal_outcome=n.get("terminalOutcome"),
            action=self.action_ref(n.get("action")),
            gate=gate,
            subgraph=self.graph_index[n["graph"]] if kind == r.SUBGRAPH else r.NONE,
            entry=n.get("entry"),
            resources=self.resource_lists(n.get("resources") or {})
            if kind in (r.ACTION, r.GATE)
            else None,
            incoming=tuple(incoming),
            outgoing=tuple(outgoing),
            repeats=tuple(repeats),
        )

    def catalog(self) -> tuple[r.CatalogEntry, ...] | None:
        catalog = self.provider.catalog
        if catalog is None:
            return None
        out = []
        for entry in catalog.doc.value["codes"]:
            # by path only, never by id: the reference's loader keeps the resource it
            # loaded from the entry's `document` path and `locateCode` shows that one
            document = catalog.documents.get(entry["code"])
            out.append(
                r.CatalogEntry(
                    code=entry["code"],
                    kind=entry["kind"],
                    summary=entry["summary"],
                    severity=entry.get("severity"),
                    document=self.resource_index[document.path] if document else r.NONE,
                    raw=r.freeze_json(entry),
                )
            )
        return tuple(out)


def lower(provider: LoadedProvider) -> r.ProviderIR:
    """Build the IR of a loaded, valid Provider."""
    with collector_paused():  # hundreds of thousands of immutable records, no cycles
        return _lower(provider)


def _lower(provider: LoadedProvider) -> r.ProviderIR:
    lowering = _Lowering(provider)
    return r.ProviderIR(
        provider_id=provider.id,
        provider_version=provider.version,
        provider_digest=provider.digest,
        graphs=tuple(lowering.graph(gid) for gid in provider.graphs),
        actions=tuple(lowering.action(a) for a in provider.actions.values()),
        resources=tuple(lowering.resource(res) for res in provider.resources.values()),
        catalog=lowering.catalog(),
    )
