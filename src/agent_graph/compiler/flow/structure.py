"""What a ``FLOW.md`` graph means: its nodes, how sections match them, routing, forks
and joins, reachability (A.12–A.37, A.44–A.78: docs/flows.md §What is checked).

Findings are recorded where they stand and nothing stops at the first; a check that
needs something an earlier finding already said is missing is skipped rather than
repeated in other words (an unlabelled command edge is "label missing", not also
"command result invalid").
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping

from ... import codes
from ...frozen import field, slotted
from ...spelling import closest
from . import actions as act
from .document import Document, Section
from .findings import Findings
from .mermaid import Edge, Occurrence
from .resources import PackageFiles

# typing for the type checker only: a cold agc flow check never loads it (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

REF: Final = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
EXECUTED, COMPLETED, FAILED = "已执行", "已完成", "已失败"
START_TEXT, FINISH_TEXT, FORK_TEXT = "开始", "结束", "并行"


@slotted
class Decl:
    """A declared node: ``kind`` work/fork/start/finish; ``text`` its name (work nodes)."""

    ref: str
    kind: str
    text: str
    line: int
    column: int
    section: Section | None = None
    action: act.Action | None = None

    @property
    def action_kind(self) -> str | None:
        return self.action.kind if self.action is not None else None


@slotted
class Fork:
    ref: str
    branches: list[str]
    join: str | None


@slotted
class Structure:
    """The checked graph: declarations in order, resolved edges, forks and their joins."""

    decls: dict[str, Decl] = field(default_factory=dict)
    out: dict[str, list[Edge]] = field(default_factory=dict)
    inc: dict[str, list[Edge]] = field(default_factory=dict)
    forks: list[Fork] = field(default_factory=list)
    children: list[str] = field(default_factory=list)  # distinct 执行Flow targets, in order
    calls: list[act.Action] = field(default_factory=list)  # every valid 执行Flow block
    # Edges from a declared node to an undeclared one: already reported, but their labels
    # still name results (so the result's ### heading is no orphan).
    loose: dict[str, list[Edge]] = field(default_factory=dict)
    # Declared targets of edges from an undeclared node: reported once at that node, so
    # they are not also "unreachable" (one root cause, one error).
    stranded: set[str] = field(default_factory=set)

    def work(self) -> list[Decl]:
        return [d for d in self.decls.values() if d.kind == "work"]


class _Checker:
    def __init__(
        self, doc: Document, files: PackageFiles, findings: Findings, strict: bool
    ) -> None:
        self.doc, self.files, self.findings, self.strict = doc, files, findings, strict
        self.s = Structure()
        self.mismatched: set[str] = set()  # joins whose branches disagree
        # the work nodes in declaration order, listed by declare (seven passes read them)
        self.works: list[Decl] = []
        # the first work node of each name, found by names (sections match headings to it)
        self.by_name: dict[str, Decl] = {}

    # -- declarations ----------------------------------------------------------------

    def declare(self, occurrences: list[Occurrence]) -> None:
        starts: list[Occurrence] = []
        for occ in occurrences:
            if occ.shape is None:
                continue
            kind = self._kind(occ)
            if kind is None:
                continue
            if kind == "start":
                starts.append(occ)
                if occ.ref != "start" and len(starts) == 1:
                    self.findings.error(
                        codes.FLOW_START_MISSING,
                        f"the start node is written start((开始)); {occ.ref}((开始)) is not it",
                        occ.line,
                        occ.column,
                    )
                    continue
                if starts[0].ref != occ.ref:
                    self.findings.error(
                        codes.FLOW_START_DUPLICATE,
                        f"{occ.ref}((开始)) is a second start node; a Flow has one",
                        occ.line,
                        occ.column,
                    )
                    continue
            elif kind == "finish" and occ.ref != "finish":
                first = self.s.decls.get("finish")
                code = (
                    codes.FLOW_FINISH_DUPLICATE if first is not None else codes.FLOW_FINISH_MISSING
                )
                self.findings.error(
                    code,
                    f"{occ.ref}((结束)) is not the finish node; the Flow has one, "
                    "written finish((结束))",
                    occ.line,
                    occ.column,
                )
                continue
            elif kind == "finish":
                pass
            elif occ.ref in ("start", "finish"):
                self.findings.error(
                    codes.FLOW_REF_RESERVED,
                    f"{occ.ref!r} is reserved for the {occ.ref} node; choose another ref",
                    occ.line,
                    occ.column,
                )
                continue
            elif not REF.match(occ.ref):
                self.findings.error(
                    codes.FLOW_NODE_REF_INVALID,
                    f"ref {occ.ref!r} must start with a letter and hold only letters, digits, "
                    "- and _ (ASCII)",
                    occ.line,
                    occ.column,
                )  # still declared, so its edges and section are not reported again
            self._remember(Decl(occ.ref, kind, occ.text or "", occ.line, occ.column))
        self.works = self.s.work()

    def _kind(self, occ: Occurrence) -> str | None:
        if occ.shape == "box":
            return "work"
        expected = {"circle": (START_TEXT, FINISH_TEXT), "hexagon": (FORK_TEXT,)}[occ.shape or ""]
        if occ.text not in expected:
            shape = f"(({occ.text}))" if occ.shape == "circle" else f"{{{{{occ.text}}}}}"
            allowed = "start((开始)) and finish((结束))" if occ.shape == "circle" else "ref{{并行}}"
            self.findings.error(
                codes.FLOW_GRAPH_SYNTAX,
                f"{occ.ref}{shape}: this shape is only for {allowed}",
                occ.line,
                occ.column,
            )
            return None
        return {START_TEXT: "start", FINISH_TEXT: "finish", FORK_TEXT: "fork"}[occ.text or ""]

    def _remember(self, decl: Decl) -> None:
        known = self.s.decls.get(decl.ref)
        if known is None:
            self.s.decls[decl.ref] = decl
            return
        if known.kind != decl.kind:
            self.findings.error(
                codes.FLOW_NODE_REF_DUPLICATE,
                f"ref {decl.ref!r} is declared as a {_what(known)} at line {known.line} and "
                f"as a {_what(decl)} here; refs are unique in a Flow",
                decl.line,
                decl.column,
            )
        elif known.text != decl.text:
            self.findings.error(
                codes.FLOW_NODE_LABEL_CONFLICT,
                f"{decl.ref!r} was declared as [{known.text}] at line {known.line}; a ref "
                "may be declared again only with the same shape and name",
                decl.line,
                decl.column,
            )

    def names(self) -> None:
        seen = self.by_name
        for decl in self.works:
            first = seen.get(decl.text)
            if first is not None:
                self.findings.error(
                    codes.FLOW_NODE_NAME_DUPLICATE,
                    f"{decl.ref} and {first.ref} are both named {decl.text!r}; names match "
                    "section headings, so each is unique",
                    decl.line,
                    decl.column,
                )
            else:
                seen[decl.text] = decl

    def ends(self) -> None:
        where = (self.doc.header_line, self.doc.header_column)
        decls = self.s.decls
        if "start" not in decls and not self._reported(codes.FLOW_START_MISSING):
            self.findings.error(
                codes.FLOW_START_MISSING, "the graph has no start((开始)) node", *where
            )
        if "finish" not in decls and not self._reported(codes.FLOW_FINISH_MISSING):
            self.findings.error(
                codes.FLOW_FINISH_MISSING, "the graph has no finish((结束)) node", *where
            )

    def _reported(self, code: str) -> bool:
        return any(d.code == code for d in self.findings.items)

    def resolve(self, edges: list[Edge]) -> None:
        decls = self.s.decls
        for edge in edges:
            ok = True
            for end in (edge.source, edge.target):
                if end.ref in decls:
                    continue
                ok = False
                if end.ref in ("start", "finish") and end.shape is None:
                    continue  # the missing start/finish is reported once, at the header
                if end.shape is None:
                    self.findings.error(
                        codes.FLOW_EDGE_TARGET_MISSING,
                        _undeclared(end.ref, decls),
                        end.line,
                        end.column,
                    )
            if not ok and edge.source.ref in decls:
                self.s.loose.setdefault(edge.source.ref, []).append(edge)
            elif not ok and edge.target.ref in decls:
                self.s.stranded.add(edge.target.ref)
            if ok:
                self.s.out.setdefault(edge.source.ref, []).append(edge)
                self.s.inc.setdefault(edge.target.ref, []).append(edge)

    # -- sections ----------------------------------------------------------------------

    def sections(self, graph_known: bool) -> None:
        by_name = self.by_name  # a second node of one name: said once, by names
        seen: set[str] = set()
        for section in self.doc.sections:
            heading = section.heading
            if heading.text in seen:
                self.findings.error(
                    codes.FLOW_HEADING_DUPLICATE,
                    f"a second section '## {heading.text}'; each node has one",
                    heading.line,
                )
                continue
            seen.add(heading.text)
            decl = by_name.get(heading.text)
            if graph_known and decl is None:
                self.findings.error(
                    codes.FLOW_HEADING_ORPHAN,
                    f"'## {heading.text}' names no node of the graph (level-2 headings are "
                    "node sections only; use ### or prose for notes)",
                    heading.line,
                )
                continue
            action = self._action(section)
            if decl is not None:
                decl.section, decl.action = section, action
        if graph_known:
            for decl in self.works:
                if decl.section is None and by_name[decl.text] is decl:
                    self.findings.error(
                        codes.FLOW_NODE_HEADING_MISSING,
                        f"node {decl.ref} has no section '## {decl.text}'",
                        decl.line,
                        decl.column,
                    )

    def _action(self, section: Section) -> act.Action | None:
        fences = section.fences
        if not fences:
            self.findings.error(
                codes.FLOW_ACTION_BLOCK_COUNT,
                f"section '## {section.heading.text}' has no action block before its first "
                "### result",
                section.heading.line,
            )
            return None
        if len(fences) > 1:
            extra = fences[1]
            self.findings.error(
                codes.FLOW_ACTION_BLOCK_COUNT,
                f"section '## {section.heading.text}' has {len(fences)} code blocks before "
                "its results; the action area holds exactly one",
                extra.line,
                extra.column,
            )
            return None
        fence = fences[0]
        if fence.info not in act.MARKERS:
            self.findings.error(
                codes.FLOW_ACTION_MARKER_INVALID,
                f"action marker {fence.info!r} is not one of {', '.join(act.MARKERS)}",
                fence.line,
                fence.info_column if fence.info else fence.column,
            )
            return None
        if not fence.body.strip():
            self.findings.error(
                codes.FLOW_ACTION_BLOCK_EMPTY, "the action block is empty", fence.line, fence.column
            )
            return None
        return act.read_action(fence, self.files, self.findings, self.strict)

    # -- edges per node kind -----------------------------------------------------------

    def routing(self) -> None:
        for decl in self.s.decls.values():
            outs = self.s.out.get(decl.ref, [])
            if decl.kind == "start":
                self._start(decl, outs)
            elif decl.kind == "finish":
                for edge in outs:
                    self._at_arrow(
                        codes.FLOW_FINISH_HAS_OUTGOING, "finish((结束)) has no outgoing edges", edge
                    )
            elif decl.kind == "work":
                self._work(decl, outs)
        for edge in self.s.inc.get("start", []):
            self._at_arrow(codes.FLOW_START_HAS_INCOMING, "no edge may point to start", edge)

    def _at_arrow(self, code: str, message: str, edge: Edge) -> None:
        self.findings.error(code, message, edge.line, edge.column)

    def _start(self, decl: Decl, outs: list[Edge]) -> None:
        if not outs:
            self.findings.error(
                codes.FLOW_START_OUT_DEGREE, "start has no outgoing edge", decl.line, decl.column
            )
            return
        for extra in outs[1:]:
            self._at_arrow(
                codes.FLOW_START_OUT_DEGREE, "start has exactly one outgoing edge", extra
            )
        first = outs[0]
        target = self.s.decls[first.target.ref]
        if first.label is not None or target.kind != "work":
            what = "is labelled" if first.label is not None else f"points to a {_what(target)}"
            self._at_arrow(
                codes.FLOW_START_TARGET_INVALID,
                f"the start edge {what}; it is unlabelled and leads to a work node",
                first,
            )

    def _work(self, decl: Decl, outs: list[Edge]) -> None:
        if not outs and decl.ref not in self.s.loose:  # a broken edge is reported already
            self.findings.error(
                codes.FLOW_NODE_NO_OUTGOING,
                f"node {decl.ref} has no outgoing edge",
                decl.line,
                decl.column,
            )
        kind = decl.action_kind
        if kind is None:
            return
        if kind == act.FLOW:
            self._flow_edges(decl, outs)
            return
        unlabelled = [e for e in outs if not e.label]
        for edge in unlabelled:
            self._at_arrow(
                codes.FLOW_EDGE_LABEL_MISSING,
                f"edge from {decl.ref} has no result label (-->|result| next)",
                edge,
            )
        labels: dict[str, Edge] = {}
        for edge in outs:
            if not edge.label:
                continue
            if edge.label in labels:
                self._at_arrow(
                    codes.FLOW_RESULT_DUPLICATE,
                    f"{decl.ref} has two edges for result {edge.label!r}",
                    edge,
                )
                continue
            labels[edge.label] = edge
            if kind != act.COMMAND and edge.label in (EXECUTED, COMPLETED, FAILED):
                self.findings.warning(
                    codes.FLOW_RESULT_RESERVED_NAME,
                    f"Agent node {decl.ref} uses the fixed result name {edge.label!r} as its own",
                    edge.line,
                    edge.column,
                )
        if kind == act.COMMAND and outs and not unlabelled:
            if len(outs) != 1:
                self.findings.error(
                    codes.FLOW_COMMAND_RESULT_INVALID,
                    f"command node {decl.ref} has {len(outs)} outgoing edges; it has exactly "
                    "one, labelled 已执行",
                    decl.line,
                    decl.column,
                )
            elif outs[0].label != EXECUTED:
                self._at_arrow(
                    codes.FLOW_COMMAND_RESULT_INVALID,
                    f"a command node's only result is 已执行, not {outs[0].label!r}",
                    outs[0],
                )
        self._result_headings(decl, labels)

    def _flow_edges(self, decl: Decl, outs: list[Edge]) -> None:
        section = decl.section
        headings = section.results if section is not None else []
        labels = [e.label for e in outs]
        if len(outs) == 1 and labels == [None]:
            if headings:
                self.findings.error(
                    codes.FLOW_REF_EDGES_INVALID,
                    f"执行Flow node {decl.ref} has one plain edge, so it has no ### results "
                    f"(found ### {headings[0].heading.text})",
                    decl.line,
                    decl.column,
                )
            return
        if len(outs) == 2 and sorted(str(x) for x in labels) == sorted((COMPLETED, FAILED)):
            self._result_headings(decl, {str(e.label): e for e in outs})
            return
        if outs:
            self.findings.error(
                codes.FLOW_REF_EDGES_INVALID,
                f"执行Flow node {decl.ref} has either one plain edge or exactly the two edges "
                "已完成 and 已失败",
                decl.line,
                decl.column,
            )

    def _result_headings(self, decl: Decl, labels: dict[str, Edge]) -> None:
        section = decl.section
        if section is None:
            return
        seen: set[str] = set()
        broken = self.s.loose.get(decl.ref)
        loose = {e.label for e in broken} if broken else ()
        for result in section.results:
            heading = result.heading
            if heading.text in seen:
                self.findings.error(
                    codes.FLOW_RESULT_DUPLICATE,
                    f"a second '### {heading.text}' in {decl.ref}'s section",
                    heading.line,
                )
                continue
            seen.add(heading.text)
            if heading.text not in labels and heading.text not in loose:
                self.findings.error(
                    codes.FLOW_RESULT_HEADING_ORPHAN,
                    f"'### {heading.text}' names no result edge of {decl.ref}",
                    heading.line,
                )
            elif not result.described:
                self.findings.error(
                    codes.FLOW_RESULT_DESCRIPTION_EMPTY,
                    f"result '### {heading.text}' of {decl.ref} has no description",
                    heading.line,
                )
        for label, edge in labels.items():
            if label not in seen:
                self._at_arrow(
                    codes.FLOW_RESULT_HEADING_MISSING,
                    f"result {label!r} of {decl.ref} has no '### {label}' heading with its "
                    "description",
                    edge,
                )

    # -- forks and joins ---------------------------------------------------------------

    def forks(self) -> None:
        joins: dict[str, set[str]] = {}
        for decl in self.s.decls.values():
            if decl.kind != "fork":
                continue
            fork = self._fork(decl)
            self.s.forks.append(fork)
            if fork.join is not None:
                joins[fork.join] = set(fork.branches)
        for decl in self.works:
            action = decl.action
            if action is None:
                continue
            allowed = joins.get(decl.ref)
            for use in action.branch_uses:
                if allowed is None or not use.in_stdin or action.kind != act.COMMAND:
                    self.findings.error(
                        codes.FLOW_BRANCH_REF_MISPLACED,
                        f"{{{use.ref}.outcome}} may appear only in a join's stdin; "
                        f"{decl.ref} is not a join" + ("" if allowed is None else " stdin"),
                        use.line,
                        use.column,
                    )
                elif use.standalone and use.ref not in allowed:
                    self.findings.error(
                        codes.FLOW_BRANCH_REF_UNKNOWN,
                        f"{use.ref!r} is not a branch of the fork that joins at {decl.ref} "
                        f"(branches: {', '.join(sorted(allowed))})",
                        use.line,
                        use.column,
                    )

    def _fork(self, decl: Decl) -> Fork:
        inc = self.s.inc.get(decl.ref, [])
        outs = self.s.out.get(decl.ref, [])
        if len(inc) != 1:
            self.findings.error(
                codes.FLOW_FORK_IN_DEGREE,
                f"fork {decl.ref} has {len(inc)} incoming edges; a fork has exactly one "
                "(loop back to the node before it)",
                decl.line,
                decl.column,
            )
        if len(outs) < 2:
            self.findings.error(
                codes.FLOW_FORK_OUT_DEGREE,
                f"fork {decl.ref} has {len(outs)} branch(es); a fork has two or more",
                decl.line,
                decl.column,
            )
        for edge in outs:
            if edge.label is not None:
                self._at_arrow(codes.FLOW_FORK_EDGE_LABELED, "a fork's edges have no label", edge)
        branches: list[str] = []
        targets: list[tuple[Edge, str]] = []
        for edge in outs:
            branch = self.s.decls[edge.target.ref]
            if branch.ref in branches:
                continue
            branches.append(branch.ref)
            if branch.kind != "work":
                self._at_arrow(
                    codes.FLOW_BRANCH_NOT_COMMAND,
                    f"a fork's branch is a command node, not a {_what(branch)}",
                    edge,
                )
                continue
            if len(self.s.inc.get(branch.ref, [])) != 1:
                self.findings.error(
                    codes.FLOW_BRANCH_IN_DEGREE,
                    f"branch {branch.ref} has other incoming edges; its only one comes from "
                    f"fork {decl.ref}",
                    branch.line,
                    branch.column,
                )
            if branch.action_kind == act.FLOW:
                self.findings.error(
                    codes.FLOW_REF_IN_PARALLEL,
                    f"执行Flow node {branch.ref} cannot be a parallel branch",
                    branch.line,
                    branch.column,
                )
                continue
            if branch.action_kind not in (act.COMMAND, None):
                self.findings.error(
                    codes.FLOW_BRANCH_NOT_COMMAND,
                    f"branch {branch.ref} is an Agent node; parallel branches run commands only",
                    branch.line,
                    branch.column,
                )
                continue
            outs_of = self.s.out.get(branch.ref, [])
            targets.extend((out, out.target.ref) for out in outs_of if out.label == EXECUTED)
        join = self._join(decl, branches, targets)
        return Fork(decl.ref, branches, join)

    def _join(self, fork: Decl, branches: list[str], targets: list[tuple[Edge, str]]) -> str | None:
        if not targets:
            return None
        first = targets[0][1]
        join = self.s.decls[first]
        if join.kind != "work":
            for edge, _ in targets:
                self._at_arrow(
                    codes.FLOW_BRANCH_JOIN_MISMATCH,
                    f"the branches of {fork.ref} join at a work node, not at {_what(join)}",
                    edge,
                )
            return None
        mismatched = [edge for edge, target in targets if target != first]
        for edge in mismatched:
            self._at_arrow(
                codes.FLOW_BRANCH_JOIN_MISMATCH,
                f"the branches of {fork.ref} all go to one join; this one goes to "
                f"{edge.target.ref}, the first to {first}",
                edge,
            )
        if mismatched:
            # Still the join the author meant (so its branch references are not misplaced),
            # but its other rules wait until the branches agree.
            self.mismatched.add(first)
            return first
        sources = [e.source.ref for e in self.s.inc.get(first, [])]
        if len(sources) < 2:
            self.findings.error(
                codes.FLOW_JOIN_IN_DEGREE,
                f"join {first} has {len(sources)} incoming edge(s); a join has two or more",
                join.line,
                join.column,
            )
        elif sorted(sources) != sorted(branches) and len(sources) >= 2:
            others = sorted(set(sources) - set(branches))
            self.findings.error(
                codes.FLOW_JOIN_SOURCES_MISMATCH,
                f"join {first} is reached from {', '.join(others) or 'fewer branches'}; its "
                f"incoming edges come exactly from the branches of {fork.ref}",
                join.line,
                join.column,
            )
        if join.action_kind == act.FLOW:
            self.findings.error(
                codes.FLOW_REF_IN_PARALLEL,
                f"执行Flow node {first} cannot be a join",
                join.line,
                join.column,
            )
            return None
        if join.action_kind not in (act.COMMAND, None):
            self.findings.error(
                codes.FLOW_JOIN_NOT_COMMAND,
                f"join {first} is an Agent node; a join is a command that reads the branch "
                "results in its stdin",
                join.line,
                join.column,
            )
            return None
        action = join.action
        if action is not None and action.valid:
            present = {u.ref for u in action.branch_uses if u.in_stdin and u.standalone}
            for branch in branches:
                if branch not in present:
                    self.findings.error(
                        codes.FLOW_JOIN_REF_MISSING,
                        f"join {first}'s stdin does not read branch {branch}: add "
                        f'"{branch}": {{{branch}.outcome}}',
                        action.fence.line,
                        action.fence.column,
                    )
        return first

    # -- reachability ------------------------------------------------------------------

    def reach(self) -> None:
        if "start" not in self.s.decls:
            return
        # Ends of broken edges count as reached and as finishing: each broken edge is one
        # error already, not also a cascade of unreachable and never-ending nodes.
        forward = _closure(["start", *self.s.stranded], self.s.out, True)
        for decl in self.works:
            if decl.ref not in forward:
                self.findings.error(
                    codes.FLOW_NODE_UNREACHABLE,
                    f"node {decl.ref} cannot be reached from start",
                    decl.line,
                    decl.column,
                )
        if "finish" not in self.s.decls:
            return
        where = (self.doc.header_line, self.doc.header_column)
        if "finish" not in forward and not any(ref in forward for ref in self.s.loose):
            self.findings.error(
                codes.FLOW_FINISH_UNREACHABLE, "no path from start reaches finish", *where
            )
            return
        if not self.strict:
            return
        backward = _closure(["finish", *self.s.loose], self.s.inc, False)
        for decl in self.works:
            if decl.ref in forward and decl.ref not in backward:
                self.findings.error(
                    codes.FLOW_NODE_CANNOT_FINISH,
                    f"no path leads from {decl.ref} to finish, so a Run that gets there can "
                    "never end (agc flow check --lenient accepts it)",
                    decl.line,
                    decl.column,
                )

    def children(self) -> None:
        for decl in self.works:
            action = decl.action
            if action is not None and action.kind == act.FLOW and action.flow is not None:
                self.s.calls.append(action)
                if action.flow not in self.s.children:
                    self.s.children.append(action.flow)


def _undeclared(ref: str, decls: Mapping[str, Decl]) -> str:
    close = closest(ref, decls)
    shape = f"declare it once with its shape, as {ref}[Node name]"
    if close:
        return f"{ref!r} is not declared; did you mean {close}? (or {shape})"
    return f"{ref!r} is not declared; {shape}"


def _closure(starts: list[str], adjacency: dict[str, list[Edge]], forward: bool) -> set[str]:
    """The refs reached from ``starts`` along edges (``forward``) or against them: the two
    walks take the end to follow by a flag rather than a function (a call per edge: the
    reach check of a 1,000-node Flow 0.70 -> 0.56 ms)."""
    seen = set(starts)
    todo = list(starts)
    get = adjacency.get
    while todo:
        edges = get(todo.pop())
        if not edges:
            continue
        for edge in edges:
            nxt = edge.target.ref if forward else edge.source.ref
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _what(decl: Decl) -> str:
    return {"work": "work node", "fork": "fork", "start": "start", "finish": "finish"}[decl.kind]


def check_structure(
    doc: Document, files: PackageFiles, findings: Findings, strict: bool
) -> Structure:
    """Every graph and section rule; the structure, for lowering when nothing failed."""
    checker = _Checker(doc, files, findings, strict)
    graph = doc.graph
    if graph is None or graph.syntax_errors:
        checker.sections(graph_known=False)
        return checker.s
    checker.declare(graph.occurrences)
    checker.names()
    checker.ends()
    checker.resolve(graph.edges)
    checker.sections(graph_known=True)
    checker.routing()
    checker.forks()
    checker.reach()
    checker.children()
    return checker.s


def reuse_first(structure: Structure, findings: Findings) -> None:
    """C.7, for a package that runs as a child: no path from start meets 复用Agent before
    新建Agent (a child Run starts with no Agent)."""
    if "start" not in structure.decls:
        return
    seen = {"start"}
    todo = deque(["start"])
    while todo:
        ref = todo.popleft()
        for edge in structure.out.get(ref, []):
            nxt = edge.target.ref
            if nxt in seen:
                continue
            seen.add(nxt)
            decl = structure.decls[nxt]
            kind = decl.action_kind
            if kind == act.AGENT_NEW:
                continue
            if kind == act.AGENT_REUSE and decl.action is not None:
                fence = decl.action.fence
                findings.error(
                    codes.FLOW_CHILD_REUSE_FIRST,
                    f"this Flow runs as a child Run, which starts with no Agent: {nxt} "
                    "reuses an Agent before any 新建Agent creates one",
                    fence.line,
                    fence.column,
                )
                continue
            todo.append(nxt)
