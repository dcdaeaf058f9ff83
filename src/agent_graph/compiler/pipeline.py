"""The compiler's passes, in the order they run, and the one function that runs them.

Each row names a pass and says what it needs from the passes above it. The Provider
table keeps the reference's check order exactly (reference-behaviour §1): the first
problem recorded is the error the reference would have thrown, so it becomes the
envelope's ``error.code``; later checks still run so one run reports every problem.
Checks the reference does not make (``check-skills``, and ``check-loose-ends``, which
only warns) come after all of its checks and before ``raise-collected``, so they add
problems without changing the first one.

``stop_after`` ends the run after a named pass (tools and tests look at the state
there); :func:`run` on a state that stopped earlier carries on from where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from .provider import passes as p


class _State(Protocol):
    @property
    def done(self) -> list[str]: ...


S = TypeVar("S", bound=_State)


class Pass(NamedTuple, Generic[S]):
    name: str
    needs: str
    run: Callable[[S], None]


PROVIDER_PASSES: tuple[Pass[p.ProviderState], ...] = (
    Pass("read-manifest", "a manifest path (provider.yaml or a bundle's manifest.json)", p.read_manifest),
    Pass("verify-bundle", "the manifest document; a bundle's part A and IR binding, then its provider.yaml", p.verify_bundle),
    Pass("check-manifest", "the Provider manifest document: schema, bundle identity, compatibility", p.check_manifest),
    Pass("load-catalog", "the manifest's catalogs.codes reference", p.load_catalog),
    Pass("load-graphs", "the manifest's graphs list: each graph's schema and graph checks", p.load_graphs),
    Pass("resolve-references", "the loaded graphs: subgraphs, actions, gates, resources of each node", p.resolve_references),
    Pass("check-recursion", "the subgraph dependencies resolve-references recorded", p.check_recursion),
    Pass("check-reason-codes", "the loaded code catalog and graphs", p.check_reason_codes),
    Pass("check-materializers", "the loaded dynamic resources and their Actions", p.check_materializers),
    Pass("check-skills", "the loaded Actions' agent Skills: readable frontmatter (beyond the reference)", p.check_skills),
    Pass("check-loose-ends", "the loaded Skills bound to this Provider, command Actions' files (warnings, beyond the reference)", p.check_loose_ends),
    Pass("raise-collected", "every problem the checks recorded (raised as one error)", p.raise_collected),
    Pass("digests", "a Provider that passed every check: its reachable files", p.digests),
    Pass("verify-bundle-sources", "the bundle (when there is one) and the loaded Provider: part B", p.verify_bundle_sources),
    Pass("verify-bundle-ir", "the bundle's IR (when it carries ours): it must be what the sources compile to", p.verify_bundle_ir),
    Pass("lower", "the checked Provider", p.lower),
    Pass("encode", "the lowered IR", p.encode),
)  # fmt: skip


def run(passes: tuple[Pass[S], ...], state: S, *, stop_after: str | None = None) -> S:
    """Run every pass ``state`` has not run yet, in table order, up to ``stop_after``."""
    names = [step.name for step in passes]
    if stop_after is not None and stop_after not in names:
        raise ValueError(f"no pass named {stop_after!r}; passes: {', '.join(names)}")
    for step in passes[len(state.done) :]:
        step.run(state)
        state.done.append(step.name)
        if step.name == stop_after:
            break
    return state


def pass_names(passes: tuple[Pass[Any], ...] = PROVIDER_PASSES) -> list[str]:
    return [step.name for step in passes]
