"""The embeddable host API: a compiled, immutable Program that evaluates and routes.

``Program`` is a pure function of (IR, installed root): it holds no mutable state,
so one instance can serve many threads. Evaluation never runs anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import codes
from ..canonical import is_digest
from ..errors import AgentGraphError, Diagnostic
from ..frozen import field, record
from ..ir import codec
from ..ir import records as r
from ..spelling import closest, did_you_mean
from .evaluate import (
    MAX_ALTERNATIVE_ROUTES,
    Candidate,
    Evaluator,
    catalog_hints,
    compute_revision,
)
from .kinds import Outcome, StatusCode
from .plans import Plans
from .state import Normalized, RoutingState, normalize

if TYPE_CHECKING:
    from .locations import FileLocation
    from .route import Route
    from .trace import Trace, TracingEvaluator

EVALUATION_SCHEMA = "agent-graph.evaluation.v1"
CODE_LOCATION_SCHEMA = "agent-graph.code-location.v1"

StateLike = RoutingState | Mapping[str, Any] | None


@record  # a frozen dataclass, cheaper to create: cold start
class Evaluation:
    """The result of :meth:`Program.evaluate`; :meth:`to_dict` is ``agent-graph.evaluation.v1``.

    ``candidates`` is the full ranked list (the output keeps the primary route and
    three alternatives), for hosts with their own chooser.
    """

    provider: str
    graph: str
    entry: str
    revision: str
    status_code: StatusCode
    outcome: Outcome | None
    candidates: tuple[Candidate, ...]
    diagnostics: tuple[Diagnostic, ...]
    #: how each node got its outcome (``evaluate(..., trace=True)`` only); not part of
    #: the result: two evaluations are equal whether or not one was traced
    trace: Trace | None = field(default=None, compare=False, repr=False)

    @property
    def primary(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": EVALUATION_SCHEMA,
            "provider": self.provider,
            "graph": self.graph,
            "entry": self.entry,
            "revision": self.revision,
            "statusCode": self.status_code,
        }
        if self.outcome:
            out["outcome"] = self.outcome
        if self.candidates:
            out["primaryRoute"] = self.candidates[0].summary()
        out["alternativeRoutes"] = [
            c.summary() for c in self.candidates[1 : 1 + MAX_ALTERNATIVE_ROUTES]
        ]
        out["diagnostics"] = [d.to_dict() for d in self.diagnostics]
        return out


@record  # a frozen dataclass, cheaper to create: cold start
class CodeLocation:
    """One Code Catalog entry as :meth:`Program.locate_code` finds it; :meth:`to_dict` is
    ``agent-graph.code-location.v1``. ``document`` is the entry's static document located
    as an installed file (no read state), or None."""

    provider: str
    code: str
    kind: str
    summary: str
    severity: str | None
    document: FileLocation | None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": CODE_LOCATION_SCHEMA,
            "provider": self.provider,
            "code": self.code,
            "kind": self.kind,
            "summary": self.summary,
        }
        if self.severity:
            out["severity"] = self.severity
        if self.document is not None:
            out["document"] = self.document.to_dict()
        return out


class Program:
    """A compiled Provider installed at ``root`` (where its files live).

    ``data`` is the IR's bytes when the records came from the compiler or the decoder
    (both check them); records without bytes are checked here (``ir-corrupt``).
    """

    __slots__ = ("_data", "_graph_index", "_hints", "_plans", "digest", "ir", "root")

    def __init__(
        self, ir: r.ProviderIR, root: str | os.PathLike[str], data: bytes | None = None
    ) -> None:
        if data is None:
            # records built by hand get the decoder's checks: the VM relies on them
            codec.check_bounds(ir)
        self.ir = ir
        self.root = Path(os.path.abspath(root))
        self._data = data if data is not None else codec.encode(ir)
        self.digest = codec.digest_of(self._data)
        # ids only: a lazily decoded Program decodes a graph when it is first evaluated
        self._hints = catalog_hints(ir)  # the same for every evaluation
        ids = codec.graph_ids(ir.graphs)
        # made as frames first use each graph; the cache of what a pure function of the
        # IR gives, so the Program stays immutable in what it answers
        self._plans = Plans(ir.graphs, ids)
        self._graph_index = {gid: i for i, gid in enumerate(ids)}  # last: freezes the rest

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "_graph_index"):
            raise AttributeError("Program is immutable")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Program is immutable")

    @property
    def provider_id(self) -> str:
        return self.ir.provider_id

    @property
    def graph_ids(self) -> tuple[str, ...]:
        """The Provider's Graph ids in IR order (none is decoded to list them)."""
        return tuple(self._graph_index)

    def to_bytes(self) -> bytes:
        """The canonical IR bytes (their SHA-256 is :attr:`digest`)."""
        return self._data

    def graph(self, graph_id: str) -> r.Graph:
        index = self._graph_index.get(graph_id)
        if index is None:
            raise self._graph_missing(graph_id)
        return self.ir.graphs[index]

    def _graph_missing(self, graph_id: str) -> AgentGraphError:
        close = closest(graph_id, self._graph_index)
        return AgentGraphError(
            codes.GRAPH_MISSING,
            f"Provider {self.ir.provider_id} has no graph {graph_id}",
            hint=f"did you mean {close}?" if close else None,
        )

    @property
    def has_catalog(self) -> bool:
        """Whether the Provider declares a Code Catalog (one without entries counts)."""
        return self.ir.catalog is not None

    def codes(self) -> tuple[r.CatalogEntry, ...]:
        """The Code Catalog entries in file order; empty without a catalog. Each entry's
        ``raw`` is the authored entry (read-only JSON; ``copy.deepcopy`` gives plain data)."""
        return self.ir.catalog or ()

    def locate_code(self, code: str) -> CodeLocation:
        """The catalog entry for ``code`` with its document located (``code-missing`` when
        the Provider has no catalog or no entry for ``code``)."""
        from .locations import FileLocation, locate_resource

        entry = next((e for e in self.codes() if e.code == code), None)
        if entry is None:
            raise AgentGraphError(
                codes.CODE_MISSING,
                f"Provider {self.ir.provider_id} has no catalog entry for {code}"
                + did_you_mean(code, (e.code for e in self.codes())),
            )
        document = None
        if entry.document != r.NONE:
            location = locate_resource(self.root, self.ir.resources[entry.document], None)
            if not isinstance(location, FileLocation):  # the compiler allows static ones only
                from ..ir.decoders import corrupt

                raise corrupt(f"catalog entry {code}: its document is not a static resource")
            document = location
        return CodeLocation(
            provider=self.ir.provider_id,
            code=entry.code,
            kind=entry.kind,
            summary=entry.summary,
            severity=entry.severity,
            document=document,
        )

    def _evaluate(
        self, graph_id: str, entry: str, state: Normalized, trace: bool = False
    ) -> Evaluation:
        index = self._graph_index.get(graph_id)
        if index is None:
            raise self._graph_missing(graph_id)
        graph = self.ir.graphs[index]
        revision = compute_revision(self.ir, graph, graph_id, entry, state)
        tracer: TracingEvaluator | None = None
        if trace:  # the recording evaluator is a subclass: the plain path pays nothing
            from .trace import TracingEvaluator

            evaluator: Evaluator = (
                tracer := TracingEvaluator(
                    self.ir, self.root, state, revision, self._hints, self._plans
                )
            )
        else:
            evaluator = Evaluator(self.ir, self.root, state, revision, self._hints, self._plans)
        result = evaluator.frame(index, entry)
        diagnostics = result.diagnostics
        alternatives = len(result.candidates) - 1
        if alternatives > MAX_ALTERNATIVE_ROUTES:
            diagnostics = list(diagnostics)
            diagnostics.append(
                Diagnostic(
                    codes.ROUTE_ALTERNATIVES_TRUNCATED,
                    f"Evaluation returned {MAX_ALTERNATIVE_ROUTES} of {alternatives} "
                    "alternative routes",
                    "info",
                    detail={"available": alternatives, "returned": MAX_ALTERNATIVE_ROUTES},
                )
            )
        return Evaluation(
            provider=self.ir.provider_id,
            graph=graph_id,
            entry=entry,
            revision=revision,
            status_code=result.status,
            outcome=result.outcome,
            candidates=tuple(result.candidates),
            diagnostics=tuple(diagnostics),
            trace=tracer.trace if tracer is not None else None,
        )

    def evaluate(
        self, graph: str, entry: str = "default", state: StateLike = None, *, trace: bool = False
    ) -> Evaluation:
        """Which steps are legal now for ``state`` (facts, outcomes, authorities).

        ``trace=True`` also records how every node got its outcome
        (:class:`~agent_graph.vm.trace.Trace`, as :attr:`Evaluation.trace`); the result is
        the same either way, and without it evaluation does no tracing work at all.
        """
        return self._evaluate(graph, entry, normalize(state), trace)

    def route(
        self,
        graph: str,
        entry: str,
        route_id: str,
        state: StateLike = None,
        revision: str | None = None,
    ) -> Route:
        """Resolve one legal route into what to run, read and record (``agent-graph.route.v1``)."""
        from .route import build_route

        if revision is not None and not is_digest(revision):
            raise AgentGraphError(
                codes.REVISION_INVALID,
                f"Revision must be sha256: plus 64 hex digits, got {revision!r}",
            )
        normalized = normalize(state)
        evaluation = self._evaluate(graph, entry, normalized)
        if revision is not None and revision != evaluation.revision:
            raise AgentGraphError(
                codes.ROUTE_REVISION_STALE,
                f"Expected revision {revision}, current revision is {evaluation.revision}",
            )
        candidate = next((c for c in evaluation.candidates if c.route_id == route_id), None)
        if candidate is None:
            raise AgentGraphError(
                codes.ROUTE_STALE,
                f"Route {route_id} is not available at revision {evaluation.revision}",
            )
        if (
            normalized.receipts_provider is not None
            and normalized.receipts_provider != self.ir.provider_id
        ):
            raise AgentGraphError(
                codes.RESOURCE_RECEIPTS_PROVIDER_MISMATCH,
                f"Resource receipts target Provider {normalized.receipts_provider}, "
                f"current Provider is {self.ir.provider_id}",
            )
        return build_route(self.ir, self.root, candidate, evaluation.revision, normalized)


def load_program(
    data: bytes,
    root: str | os.PathLike[str],
    *,
    expected_digest: str | None = None,
    lazy: bool = False,
) -> Program:
    """Decode and verify IR bytes; ``root`` is where the Provider's files are installed.

    ``lazy``: decode each graph when it is first used (``codec.decode(..., lazy=True)``):
    a damaged graph raises ``ir-corrupt`` when a call first reaches it, not here. For
    short-lived processes that use few graphs of a large Provider.
    """
    ir = codec.decode(data, expected_digest=expected_digest, lazy=lazy)
    return Program(ir, root, bytes(data))
