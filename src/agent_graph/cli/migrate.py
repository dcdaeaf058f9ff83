"""``agc migrate [-m provider.yaml] [--check | --write]``: bring a 0.2 Provider to 0.3.1."""

from __future__ import annotations

import sys
from typing import Any

import click

from .context import manifest_path, options
from .options import provider_options, shell_command
from .render import emit, warnings_lines


@click.command("migrate")
@click.option("--check", is_flag=True, help="Exit 1 when anything would change (for CI).")
@click.option("--write", is_flag=True, help="Apply the changes (all files or none).")
@provider_options
@click.pass_context
def migrate_command(ctx: click.Context, /, check: bool, write: bool, **local: Any) -> None:
    """Rewrite a Provider written for 0.2.x to the 0.3.1 protocol.

    \b
    Without a flag, print the changes as a unified diff (a/ and b/ paths relative to
    the Provider root) and exit 0. Descriptors agent-graph.resource.v1 become
    resource.file.v1 or resource.graph-action.v1; 0.2 compatibility ranges become
    ^0.3.0. Only those values change: comments, key order and quoting stay as written.
    What needs a person is printed as a finding (code, file, line).
    """
    from ..authoring.migrate import plan_migration

    opts = options(ctx, **local)
    if check and write:
        raise click.UsageError("--check and --write exclude each other", ctx)
    if opts.skill or opts.registry:
        raise click.UsageError("migrate takes the Provider with -m, not --skill/--registry", ctx)
    manifest = manifest_path(opts.manifest)
    plan = plan_migration(manifest)
    mode = "write" if write else "check" if check else "diff"
    written: list[str] = []
    if write and plan.texts:
        written = plan.write()
    state = "clean" if not plan.texts else "migrated" if write else "changes"
    document: dict[str, Any] = {"state": state, "mode": mode, **plan.to_dict()}
    if mode == "diff":
        document["diff"] = plan.diff()
    findings = warnings_lines(plan.findings, opts.bases())
    if opts.fmt == "human" and findings:
        sys.stderr.write("\n".join(findings) + "\n")
    emit(opts.fmt, document, _lines(mode, plan, written, opts.manifest))
    if check and plan.texts:
        ctx.exit(1)


def _lines(mode: str, plan: Any, written: list[str], manifest: str | None) -> list[str]:
    if not plan.texts:
        return ["Nothing to migrate: the Provider already uses the 0.3.1 identities"]
    if mode == "diff":
        return [plan.diff().rstrip("\n")]
    changes = [f"{c.path}:{c.line}: {c.code}: {c.before} -> {c.after}" for c in plan.changes]
    if mode == "check":
        count = len(plan.files)
        where = [] if manifest is None else ["-m", manifest]  # so the hint runs as printed
        apply = shell_command(["agc", "migrate", *where, "--write"])
        return [*changes, f"{count} file(s) would change; apply them:", f"Next: {apply}"]
    return [*changes, f"Migrated {len(written)} file(s): {', '.join(written)}"]
