"""A checked closure lowered to the compiled Flow program (:mod:`.records`).

Runs only on a closure without errors, so every lookup here succeeds; fingerprints are
computed bottom-up (a package's includes its children's), from the files as they are now.
"""

from __future__ import annotations

from ...documents.fingerprint import (
    FINGERPRINT_VERSION,
    children_first,
    fingerprint,
    package_files,
)
from ...ir import flow_records as r
from ...ir.frozen_json import freeze_json
from ...ir.schema import NONE
from . import actions as act
from . import templates
from .package import Closure, Package
from .structure import Decl, Structure

#: Each action block marker's node kind in the IR, from the markers' one table.
KIND_OF_MARKER = {marker: row.kind for marker, row in act.READERS.items()}
_PIECE = {"text": r.TEXT_PIECE, "outcome": r.OUTCOME_PIECE, "resource": r.RESOURCE_PIECE}


class _Lowering:
    def __init__(self, closure: Closure) -> None:
        self.closure = closure
        self.order = list(closure.packages)
        self.flow_index = {flow_id: i for i, flow_id in enumerate(self.order)}
        self.fingerprints: dict[str, str] = {}

    def fingerprint_of(self, flow_id: str) -> str:
        """C.4: the package's files and its children's fingerprints."""
        packages = self.closure.packages

        def combine(current: str, pairs: list[tuple[str, str]]) -> str:
            return fingerprint(current, package_files(packages[current].root), pairs)

        found = children_first(
            flow_id, lambda current: self._children(packages[current]), combine, self.fingerprints
        )
        return found[flow_id]

    @staticmethod
    def _children(package: Package) -> list[str]:
        assert package.structure is not None
        return sorted(package.structure.children)

    def flow(self, package: Package) -> r.Flow:
        structure = package.structure
        document = package.document
        assert structure is not None
        assert document is not None
        work = structure.work()
        nodes = {d.ref: i for i, d in enumerate(work)}
        forks = {f.ref: i for i, f in enumerate(structure.forks)}
        branch_of = {b: forks[f.ref] for f in structure.forks for b in f.branches}
        join_of = {f.join: forks[f.ref] for f in structure.forks if f.join is not None}
        lowered = tuple(
            self.node(d, structure, nodes, forks, branch_of.get(d.ref, NONE), join_of) for d in work
        )
        fork_records = tuple(
            r.Fork(f.ref, tuple(nodes[b] for b in f.branches), nodes[str(f.join)])
            for f in structure.forks
        )
        start = structure.out["start"][0].target.ref
        return r.Flow(
            id=package.id,
            name=document.name or "",
            description=document.description or "",
            path=package.display,
            fingerprint=self.fingerprint_of(package.id),
            files=tuple(r.FileDigest(p, h) for p, h in package_files(package.root)),
            children=tuple(self.flow_index[c] for c in self._children(package)),
            start=nodes[start],
            nodes=lowered,
            forks=fork_records,
        )

    def node(
        self,
        decl: Decl,
        structure: Structure,
        nodes: dict[str, int],
        forks: dict[str, int],
        branch_of: int,
        join_of: dict[str, int],
    ) -> r.Node:
        action = decl.action
        section = decl.section
        assert action is not None
        assert section is not None
        routes = []
        outs = structure.out.get(decl.ref, [])
        plain = [e.label for e in outs] == [None]
        for edge in outs:
            target = structure.decls[edge.target.ref]
            result = edge.label if edge.label is not None else "已完成"  # C.25
            routes.append(
                r.Route(
                    result,
                    nodes[target.ref] if target.kind == "work" else NONE,
                    forks[target.ref] if target.kind == "fork" else NONE,
                )
            )
        return r.Node(
            ref=decl.ref,
            name=decl.text,
            kind=KIND_OF_MARKER[action.kind],
            line=action.fence.line,
            prompt=tuple(r.Piece(_PIECE[p.kind], p.text, p.fragment) for p in action.prompt),
            command=self.command(action, nodes) if action.kind == act.COMMAND else None,
            call=self.call(action, plain) if action.kind == act.FLOW else None,
            results=tuple(r.Result(res.heading.text, res.description) for res in section.results),
            routes=tuple(routes),
            branch_of=branch_of,
            join_of=join_of.get(decl.ref, NONE),
        )

    @staticmethod
    def slots(found: list[templates.Slot], nodes: dict[str, int]) -> tuple[r.Slot, ...]:
        return tuple(
            r.Slot(s.path, nodes[s.branch] if s.branch is not None else NONE, s.parts)
            for s in found
        )

    def command(self, action: act.Action, nodes: dict[str, int]) -> r.Command:
        return r.Command(
            command=action.command,
            args=tuple(r.Arg(a.parts, a.script) for a in action.args),
            has_stdin=action.has_stdin,
            stdin=freeze_json(action.stdin),
            slots=self.slots(action.slots, nodes),
        )

    def call(self, action: act.Action, plain: bool) -> r.Call:
        return r.Call(
            flow=self.flow_index[str(action.flow)],
            plain=plain,
            has_task=action.has_task,
            task=freeze_json(action.task),
            slots=self.slots(action.task_slots, {}),
        )


def lower(closure: Closure) -> r.FlowIR:
    lowering = _Lowering(closure)
    flows = tuple(lowering.flow(p) for p in closure.packages.values())
    return r.FlowIR(
        root=0,
        fingerprint=flows[0].fingerprint,
        fingerprint_version=FINGERPRINT_VERSION,
        flows=flows,
    )
