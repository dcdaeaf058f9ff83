"""``agc build [output]``: write the Provider as a verified bundle (reference §6)."""

from __future__ import annotations

from typing import Any

import click

from .context import load, options
from .options import provider_options
from .render import emit, warnings_lines


@click.command("build")
@click.argument("output", required=False, default="dist/provider", metavar="[OUTPUT]")
@provider_options
@click.pass_context
def build_command(ctx: click.Context, /, output: str, **local: Any) -> None:
    """Write a bundle: provider.yaml, manifest.json, every reachable file, compiled IR.

    OUTPUT defaults to dist/provider (relative to the working directory). It is
    replaced only when it is empty or a previous bundle that verifies and holds
    nothing else (a file you added there stops the build); a failed build leaves it
    as it was. Hosts load the bundle with --manifest OUTPUT/manifest.json. The
    Provider's warnings (as agc validate shows them) follow the summary.
    """
    from ..bundles import cli_trust_store
    from ..compiler.provider.builder import build_bundle

    opts = options(ctx, **local)
    provider = load(opts, need="provider").provider
    result = build_bundle(provider, output, trust=cli_trust_store())
    emit(
        opts.fmt,
        result.manifest,
        [
            f"Built {provider.id}@{provider.version} at {result.destination}",
            f"Bundle digest: {result.digest}",
            f"Compiled IR: {result.ir_path}",
            *warnings_lines(provider.warnings, [provider.root]),
        ],
    )
