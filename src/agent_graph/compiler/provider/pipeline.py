"""The compiler's passes, in the order they run, and the one function that runs them.

Each row names a pass and says what it needs from the passes above it. The Provider
table keeps the reference's check order exactly (docs/error-codes.md): the first
problem recorded is the error the reference would have thrown, so it becomes the
envelope's ``error.code``; later checks still run so one run reports every problem.
Checks the reference does not make (``check-skills``, and ``check-loose-ends``, which
only warns) come after all of its checks and before ``raise-collected``, so they add
problems without changing the first one.

``stop_after`` ends the run after a named pass (tools and tests look at the state
there); :func:`run` on a state that stopped earlier carries on from where it stopped.
"""

from __future__ import annotations

from typing import Any

from ..passes import Pass, run
from ..passes import pass_names as _names
from . import passes as p

__all__ = ["CHECKED", "PROVIDER_PASSES", "Pass", "pass_names", "run"]

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


#: The last pass of checking: a state stopped here holds a fully checked Provider.
CHECKED = "verify-bundle-ir"


def pass_names(passes: tuple[Pass[Any], ...] | None = None) -> list[str]:
    """The pass names of a table, in order (the Provider table by default)."""
    return _names(PROVIDER_PASSES if passes is None else passes)
