"""The Provider loader's state and checks; the passes that drive them are in ``passes.py``.

The reference stops at the first thrown error. We run the same checks in the same
order but record each failure and carry on with whatever is still checkable, so
one run reports everything; the first recorded problem is the one the reference
would have thrown, which makes it the envelope's ``error.code``.

"Still checkable" reaches into files that failed their own schema where that is
sound: a schema-invalid graph keeps its schema-valid nodes and edges (see
``graph_checks.salvage``), and a schema-invalid node still has the files it names
loaded, when the member naming them is itself valid. Everything found that way is
recorded after the schema problem that made it partial, so it never changes which
problem comes first. Checks the reference does not make (Skill frontmatter) run in
their own pass after all of its checks, for the same reason.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

from ... import codes
from ...documents import schema
from ...documents.paths import Origin, portable, resolve_contained
from ...documents.sourcemap import Document
from ...documents.sources import read_structured
from ...errors import AgentGraphError, Problem, ProblemSink
from . import graph_checks
from .actions import action_files, load_action, skill_problem
from .hostaction import dynamic_resource_problems
from .model import LoadedAction, LoadedCatalog, LoadedGraph, LoadedResource
from .resources import hinted, load_resource, locate

#: The references a node may hold to Action files, in the order nodes are checked:
#: (member path, label of the files the Action brings).
_ACTION_MEMBERS = (
    ("action", "action referenced file"),
    ("inspectionAction", "gate inspection action referenced file"),
    ("delegated/resolutionAction", "delegated gate resolution action referenced file"),
    ("resolutionAction", "gate resolution action referenced file"),
)
_RESOURCE_MEMBERS = tuple(
    f"{group}/{field}"
    for group in ("resources", "delegated/resources")
    for field in ("required", "recommended")
)

T = TypeVar("T")

#: The code of a second definition of one id, by kind (the ``kind`` of :meth:`unique`).
_ID_DUPLICATE: Final = {
    "Action": codes.ACTION_ID_DUPLICATE,
    "Resource": codes.RESOURCE_ID_DUPLICATE,
}


def near_code(code: str, catalogued: list[str]) -> str | None:
    """The catalog code most like ``code`` (did-you-mean), or ``None``.

    Codes are compared after the dotted segments they share (``route.report.``), so
    a common prefix does not make ``route.main.work`` look like ``route.main.other``,
    while ``route.report.drafting`` still finds ``route.report.draft``.
    """
    best: tuple[float, str] | None = None
    for candidate in catalogued:
        ours, theirs = code.split("."), candidate.split(".")
        shared = 0
        while shared < min(len(ours), len(theirs)) - 1 and ours[shared] == theirs[shared]:
            shared += 1
        a, b = ".".join(ours[shared:]), ".".join(theirs[shared:])
        if difflib.get_close_matches(a, [b], n=1):
            score = difflib.SequenceMatcher(None, a, b).ratio()
            if best is None or score > best[0]:
                best = (score, candidate)
    return None if best is None else best[1]


class ProviderLoader:
    """What the checks have found so far: definitions by path, ids, reachable files."""

    def __init__(self, manifest_path: Path, sink: ProblemSink) -> None:
        self.manifest_path = manifest_path
        self.root = manifest_path.parent
        self.sink = sink
        self.graphs: dict[str, LoadedGraph] = {}
        self.actions: dict[Path, LoadedAction] = {}
        self.resources: dict[Path, LoadedResource] = {}
        self.catalog: LoadedCatalog | None = None
        self.files: dict[Path, None] = {manifest_path: None}
        self.graph_files: dict[str, dict[Path, None]] = {}
        self.dependencies: dict[str, list[str]] = {}
        self.action_ids: dict[str, Path] = {}
        self.resource_ids: dict[str, Path] = {}
        self.failed_paths: set[Path] = set()
        self.action_file_memo: dict[Path, list[Path] | None] = {}
        self.resolved: dict[str, Path] = {}
        # schema-invalid graphs: what of each is still checked, by graph id
        self.partial: dict[str, graph_checks.Salvage] = {}
        # ids of schema-invalid graphs that could not be checked at all: a subgraph
        # node naming one is not reported as naming a missing graph
        self.unchecked_graphs: set[str] = set()

    # -- plumbing -------------------------------------------------------------------

    def attempt(self, step: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """Run one check; a failure becomes a recorded problem and ``None``."""
        try:
            return step(*args, **kwargs)
        except AgentGraphError as exc:
            self.sink.add(Problem(exc.code, exc.message, exc.diagnostics))
            return None

    def resolve(self, reference: str, label: str, origin: Origin) -> Path:
        """``resolve_contained`` memoised: generated graphs repeat the same few references."""
        hit = self.resolved.get(reference)
        if hit is None:
            hit = self.resolved[reference] = resolve_contained(self.root, reference, label, origin)
        return hit

    def rel(self, path: Path) -> str:
        return portable(self.root, path)

    # -- actions --------------------------------------------------------------------

    def unique(
        self, kind: str, path: Path, loaded: LoadedAction | LoadedResource, ids: dict[str, Path]
    ) -> bool:
        """Claim ``loaded.id`` for ``loaded``; a second file with the same id fails both ways."""
        existing = ids.get(loaded.id)
        if existing is not None and existing != loaded.path:
            self.sink.add_error(
                Origin(loaded.rel, loaded.doc.source, "/id").fail(
                    _ID_DUPLICATE[kind],
                    f"{kind} id {loaded.id} is declared by both {existing} and {loaded.path}",
                )
            )
            self.failed_paths.add(path)
            return False
        ids[loaded.id] = loaded.path
        return True

    def known_action(self, reference: str, direct: dict[Path, None] | None) -> bool:
        """:meth:`include_action` for a reference already loaded without a problem (most
        references of a large graph repeat a few), without building the origin a
        problem would need; False: include it the full way."""
        path = self.resolved.get(reference)
        if path is None or path in self.failed_paths or path not in self.actions:
            return False
        if path not in self.action_file_memo:
            return False
        self.claim_action_files(path, direct)
        return True

    def claim_action_files(self, path: Path, direct: dict[Path, None] | None) -> None:
        """The files an included action's definition reaches (memoised per action)."""
        for file in self.action_file_memo[path] or ():
            self.files[file] = None
            if direct is not None:
                direct[file] = None

    def known_resource(self, reference: str) -> LoadedResource | None:
        """:meth:`include_resource` for a reference already loaded (see known_action)."""
        path = self.resolved.get(reference)
        if path is None or path in self.failed_paths:
            return None
        return self.resources.get(path)

    def include_action(
        self, reference: str, origin: Origin, direct: dict[Path, None] | None, label: str
    ) -> LoadedAction | None:
        path = self.attempt(self.resolve, reference, "action reference", origin)
        if path is None or path in self.failed_paths:
            return None
        action = self.actions.get(path)
        if action is None:
            action = self.attempt(load_action, self.root, reference, origin)
            if action is None:
                self.failed_paths.add(path)
                return None
            if not self.unique("Action", path, action, self.action_ids):
                return None
            self.actions[path] = action
        if path not in self.action_file_memo:
            problems: list[AgentGraphError] = []
            files = self.attempt(action_files, self.root, action, label, problems)
            for problem in problems:
                self.sink.add_error(problem)
            self.action_file_memo[path] = None if problems else files
        self.claim_action_files(path, direct)
        return action

    # -- resources ------------------------------------------------------------------

    def include_resource(self, reference: str, origin: Origin) -> LoadedResource | None:
        path = self.attempt(self.resolve, reference, "resource reference", origin)
        if path is None or path in self.failed_paths:
            return None
        resource = self.resources.get(path)
        if resource is not None:
            return resource
        resource = self.attempt(load_resource, self.root, reference, origin, self.sink.warnings)
        if resource is None:
            self.failed_paths.add(path)
            return None
        if not self.unique("Resource", path, resource, self.resource_ids):
            return None
        self.resources[path] = resource
        self.files[resource.path] = None
        self.files[resource.content_path] = None
        return resource

    def read_definition(
        self, reference: str, what: str, origin: Origin, schema_name: str
    ) -> tuple[Path, str, Document, Problem | None] | None:
        """A contained definition file, read and schema-checked; its schema problem (if
        any) is returned, not recorded; other problems are recorded (then ``None``)."""
        labels = (f"{what} reference", what)
        path = self.attempt(locate, self.root, reference, labels, origin)
        if path is None:
            return None
        rel = self.rel(path)
        doc = self.attempt(read_structured, path, display=rel)
        if doc is None:
            return None
        problem = schema.validate(schema_name, doc.value, path=rel, source=doc.source)
        return path, rel, doc, problem

    def read_checked(
        self, reference: str, what: str, origin: Origin, schema_name: str
    ) -> tuple[Path, str, Document] | None:
        """A contained definition file, read and schema-checked; problems are recorded."""
        found = self.read_definition(reference, what, origin, schema_name)
        if found is None:
            return None
        path, rel, doc, problem = found
        if problem is not None:
            self.sink.add(problem)
            return None
        return path, rel, doc

    # -- the passes -----------------------------------------------------------------

    def load_catalog(self, manifest: dict[str, Any], here: Origin) -> None:
        reference = manifest.get("catalogs", {}).get("codes")
        if not isinstance(reference, str):
            return
        found = self.read_checked(
            reference, "code catalog", here.at("/catalogs/codes"), "code-catalog"
        )
        if found is None:
            return
        path, rel, doc = found
        catalog = LoadedCatalog(path, rel, doc)
        at = Origin(rel, doc.source)
        for index, entry in enumerate(doc.value["codes"]):
            code = entry["code"]
            if code in catalog.entries:
                self.sink.add_error(
                    at.at(f"/codes/{index}/code").fail(
                        codes.CODE_CATALOG_CODE_DUPLICATE,
                        f"Code catalog contains duplicate code: {code}",
                    )
                )
                continue
            catalog.entries[code] = entry
        self.catalog = catalog
        self.files[path] = None
        for index, entry in enumerate(doc.value["codes"]):
            if "document" not in entry:
                continue
            resource = self.include_resource(entry["document"], at.at(f"/codes/{index}/document"))
            if resource is None:
                continue
            if resource.dynamic:
                self.sink.add_error(
                    at.at(f"/codes/{index}/document").fail(
                        codes.CODE_DOCUMENT_DYNAMIC,
                        f"Code {entry['code']} must reference a static document resource",
                    )
                )
                continue
            catalog.documents[entry["code"]] = resource

    def load_graphs(self, manifest: dict[str, Any], here: Origin) -> None:
        # a schema-invalid manifest is still mined for whatever graphs it names
        graphs = manifest.get("graphs")
        for index, reference in enumerate(graphs if isinstance(graphs, list) else []):
            if not isinstance(reference, str):
                continue
            found = self.read_definition(reference, "graph", here.at(f"/graphs/{index}"), "graph")
            if found is None:
                continue
            path, rel, doc, problem = found
            partial = None
            if problem is not None:
                self.sink.add(problem)
                partial = graph_checks.salvage(doc.value, problem.diagnostics)
                if partial is None:
                    value = doc.value
                    if isinstance(value, dict) and isinstance(value.get("id"), str):
                        self.unchecked_graphs.add(value["id"])
                    continue
            graph_checks.check_graph(doc, rel, self.sink, partial)
            graph_id = doc.value["id"]
            if graph_id in self.graphs:
                self.sink.add_error(
                    Origin(rel, doc.source, "/id").fail(
                        codes.GRAPH_ID_DUPLICATE,
                        f"Provider {manifest.get('id')} contains duplicate graph id: {graph_id}",
                    )
                )
                continue
            self.graphs[graph_id] = LoadedGraph(graph_id, path, rel, doc)
            self.graph_files[graph_id] = {path: None}
            self.files[path] = None
            if partial is not None:
                self.partial[graph_id] = partial

    def valid_nodes(self, graph: LoadedGraph) -> list[tuple[int, dict[str, Any]]]:
        """The graph's schema-valid nodes with their indices (all of them, usually)."""
        nodes: list[dict[str, Any]] = graph.definition["nodes"]
        partial = self.partial.get(graph.id)
        if partial is None:
            return list(enumerate(nodes))
        return [(i, node) for i, node in enumerate(nodes) if i not in partial.nodes]

    def check_nodes(self) -> None:
        for graph_id, graph in self.graphs.items():
            direct = self.graph_files[graph_id]
            children: list[str] = []
            at = Origin(graph.rel, graph.doc.source)
            partial = self.partial.get(graph_id)
            for index, node in enumerate(graph.definition["nodes"]):
                where = at.at(f"/nodes/{index}")
                if partial is not None and index in partial.nodes:
                    self.check_invalid_node(index, node, where, direct, partial)
                else:
                    self.check_node(graph_id, node, where, direct, children)
            self.dependencies[graph_id] = children

    def check_invalid_node(
        self,
        index: int,
        node: Any,
        at: Origin,
        direct: dict[Path, None],
        partial: graph_checks.Salvage,
    ) -> None:
        """A schema-invalid node: load the files its schema-valid members name.

        Its own rules (gate policies, effects, its subgraph) are not checked: the node
        is not what its schema says a node is. The files it names are, so a typo in
        one member does not hide a missing or invalid Action.
        """
        if not isinstance(node, dict):
            return
        base = at.pointer

        def member(name: str) -> Any:
            value: Any = node
            for part in name.split("/"):
                value = value.get(part) if isinstance(value, dict) else None
            return value if partial.clean(index, name) else None

        for name, label in _ACTION_MEMBERS:
            reference = member(name)
            if isinstance(reference, str):
                self.include_action(reference, at.at(f"{base}/{name}"), direct, label)
        for name in _RESOURCE_MEMBERS:
            references = member(name)
            for i, reference in enumerate(references if isinstance(references, list) else []):
                if isinstance(reference, str):
                    resource = self.include_resource(reference, at.at(f"{base}/{name}/{i}"))
                    if resource is not None:
                        direct[resource.path] = None
                        direct[resource.content_path] = None

    def check_node(
        self,
        graph_id: str,
        node: dict[str, Any],
        at: Origin,
        direct: dict[Path, None],
        children: list[str],
    ) -> None:
        kind = node["kind"]
        base = at.pointer
        if kind == "subgraph":
            child_id = node["graph"]
            child = self.graphs.get(child_id)
            if child is None and child_id in self.unchecked_graphs:
                return  # its file failed its schema: reported there, not as missing
            if child is None:
                self.sink.add_error(
                    at.at(f"{base}/graph").fail(
                        codes.SUBGRAPH_MISSING,
                        f"Graph {graph_id} references missing subgraph {child_id}",
                    )
                )
            elif node["entry"] not in child.definition["entrypoints"]:
                self.sink.add_error(
                    at.at(f"{base}/entry").fail(
                        codes.SUBGRAPH_ENTRY_MISSING,
                        f"Graph {graph_id} references missing entry {child_id}#{node['entry']}",
                    )
                )
            elif child_id not in children:
                children.append(child_id)
            return
        if kind == "action" and not self.known_action(node["action"], direct):
            self.include_action(
                node["action"], at.at(f"{base}/action"), direct, "action referenced file"
            )
        if kind == "gate":
            self.check_gate(graph_id, node, at, direct)
        if kind in ("action", "gate"):
            self.include_node_resources(node, at, direct)

    def check_gate(
        self, graph_id: str, node: dict[str, Any], at: Origin, direct: dict[Path, None]
    ) -> None:
        base, name = at.pointer, f"{graph_id}/{node['id']}"
        if "inspectionAction" in node:
            inspection = self.include_action(
                node["inspectionAction"],
                at.at(f"{base}/inspectionAction"),
                direct,
                "gate inspection action referenced file",
            )
            if inspection is not None and inspection.definition["effect"] != "read":
                self.sink.add_error(
                    at.at(f"{base}/inspectionAction").fail(
                        codes.GATE_INSPECTION_EFFECT_INVALID,
                        f"Gate {name} inspection Action {inspection.id} must use effect: read",
                    )
                )
        delegated = node.get("delegated")
        if delegated is not None:
            gate = node["gate"]
            if gate.get("delegatable") is not True or "authority" not in gate:
                self.sink.add_error(
                    at.at(f"{base}/delegated").fail(
                        codes.GATE_DELEGATED_POLICY_INVALID,
                        f"Gate {name} declares delegated execution without a delegatable authority",
                    )
                )
            if delegated.get("inspection") == "skip" and "inspectionAction" not in node:
                self.sink.add_error(
                    at.at(f"{base}/delegated/inspection").fail(
                        codes.GATE_DELEGATED_INSPECTION_MISSING,
                        f"Gate {name} skips delegated inspection but has no inspection Action",
                    )
                )
            if "resolutionAction" in delegated:
                self.check_resolution(
                    delegated["resolutionAction"],
                    at.at(f"{base}/delegated/resolutionAction"),
                    direct,
                    "delegated gate resolution action referenced file",
                    f"Gate {name} delegated resolution",
                )
        if "resolutionAction" in node:
            self.check_resolution(
                node["resolutionAction"],
                at.at(f"{base}/resolutionAction"),
                direct,
                "gate resolution action referenced file",
                f"Gate {name} resolution",
            )

    def check_resolution(
        self, reference: str, origin: Origin, direct: dict[Path, None], label: str, what: str
    ) -> None:
        action = self.include_action(reference, origin, direct, label)
        if action is not None and action.definition["effect"] == "read":
            self.sink.add_error(
                origin.fail(
                    codes.GATE_RESOLUTION_EFFECT_INVALID,
                    f"{what} Action {action.id} must use effect: write or external",
                )
            )

    def include_node_resources(
        self, node: dict[str, Any], at: Origin, direct: dict[Path, None]
    ) -> None:
        base = at.pointer
        groups: list[tuple[str, dict[str, Any]]] = [("/resources", node.get("resources") or {})]
        if node["kind"] == "gate":
            delegated = node.get("delegated") or {}
            groups.append(("/delegated/resources", delegated.get("resources") or {}))
        for prefix, group in groups:
            for field in ("required", "recommended"):
                for index, reference in enumerate(group.get(field, [])):
                    resource = self.known_resource(reference)
                    if resource is None:
                        pointer = f"{base}{prefix}/{field}/{index}"
                        resource = self.include_resource(reference, at.at(pointer))
                    if resource is not None:
                        direct[resource.path] = None
                        direct[resource.content_path] = None

    def check_recursion(self) -> None:
        trail = graph_checks.find_recursion(list(self.dependencies), self.dependencies)
        if trail is None:
            return
        parent, child = trail[-2], trail[-1]
        graph = self.graphs[parent]
        index = next(
            i
            for i, node in self.valid_nodes(graph)
            if node["kind"] == "subgraph" and node["graph"] == child
        )
        self.sink.add_error(
            Origin(graph.rel, graph.doc.source, f"/nodes/{index}/graph").fail(
                codes.GRAPH_RECURSION, f"Cross-graph recursion is not allowed: {' -> '.join(trail)}"
            )
        )

    def check_reason_codes(self) -> None:
        if self.catalog is None:
            return
        reasons = [c for c, e in self.catalog.entries.items() if e["kind"] == "route-reason"]
        for graph in self.graphs.values():
            gid = graph.id
            partial = self.partial.get(gid)
            for index, node in enumerate(graph.definition["nodes"]):
                # a schema-invalid node's code is checked when it and the kind are valid
                if (
                    partial is not None
                    and index in partial.nodes
                    and not (
                        isinstance(node, dict)
                        and partial.clean(index, "kind")
                        and partial.clean(index, "reasonCode")
                        and isinstance(node.get("reasonCode"), str)
                    )
                ):
                    continue
                if node.get("kind") not in ("action", "gate"):
                    continue
                code = node["reasonCode"]
                origin = Origin(graph.rel, graph.doc.source, f"/nodes/{index}/reasonCode")
                entry = self.catalog.entries.get(code)
                if entry is None:
                    error = origin.fail(
                        codes.ROUTE_REASON_CODE_MISSING,
                        f"Graph {gid} node {node.get('id')} reasonCode is not declared by the "
                        f"Provider code catalog: {code}",
                    )
                    near = near_code(code, reasons)
                    self.sink.add_error(error if near is None else hinted(error, near))
                elif entry["kind"] != "route-reason":
                    self.sink.add_error(
                        origin.fail(
                            codes.ROUTE_REASON_CODE_KIND_INVALID,
                            f"Graph {gid} node {node['id']} reasonCode must use a route-reason "
                            f"catalog entry: {code}",
                        )
                    )

    def check_dynamic_resources(self) -> None:
        for resource in list(self.resources.values()):
            if not resource.dynamic:
                continue
            origin = Origin(resource.rel, resource.doc.source, "/materializer")
            action = self.include_action(
                resource.metadata["materializer"], origin, None, "materializer referenced file"
            )
            if action is None:
                continue
            for problem in dynamic_resource_problems(self.root, resource, action):
                self.sink.add_error(problem)
            for direct in self.graph_files.values():
                if resource.path in direct:
                    for file in self.action_file_memo.get(action.path) or ():
                        direct[file] = None

    def check_skills(self) -> None:
        """Every loaded Action's agent Skill has readable frontmatter (routes read it)."""
        for action in self.actions.values():
            problem = skill_problem(self.root, action)
            if problem is not None:
                self.sink.add_error(problem)
