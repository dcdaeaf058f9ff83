"""Route resolution: turn one legal candidate into what to run, read and record.

A Route is a pure function of (Program, candidate, revision, state): command plans are
built from the Action contracts, locations from the precomputed resource table, and
read states from the host's receipts. Nothing is executed and no file is read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Diagnostic
from ..exec.argv import shell_argv
from ..ir import records as r
from .evaluate import Candidate
from .kinds import Availability, GateResolution, StatusCode
from .locations import FileLocation, Location, locate_file, locate_resource, with_read_state
from .state import Normalized, Receipt

ROUTE_SCHEMA = "agent-graph.route.v1"

_RUNTIME_COMMAND = {"node": "node", "bun": "bun", "python": "python3", "shell": "sh"}


def shell_quote(value: str) -> str:
    """POSIX single quoting; every argument is quoted, even a plain one."""
    return "'" + value.replace("'", "'\"'\"'") + "'"


@dataclass(frozen=True, slots=True)
class CommandStep:
    """One step of a command plan: a shell ``command`` or a host ``handler`` (exactly one),
    its effect, and where it runs (``cwd`` as authored, ``working_directory`` resolved).

    ``argv`` is the same step as an argument vector, for running it without a shell
    (``agent_graph.exec.run``); it is not part of the wire form. Script runner:
    ``(runtime command, absolute entry, *args)``, and ``command`` is that vector in POSIX
    shell quoting (the runtime word bare, every other item :func:`shell_quote`-d), so
    ``shlex.split(command) == list(argv)``. Command runner: ``command`` is the author's
    exact shell command and ``argv`` is ``shell_argv(command)`` (``/bin/sh -c command``).
    Host steps have no argv (``()``)."""

    effect: str
    cwd: str
    working_directory: str
    command: str | None = None
    handler: str | None = None
    argv: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = (
            {"command": self.command} if self.command is not None else {"handler": self.handler}
        )
        out["effect"] = self.effect
        out["cwd"] = self.cwd
        out["workingDirectory"] = self.working_directory
        return out


@dataclass(frozen=True, slots=True)
class RouteAction:
    """An Action as a Route shows it, with its Skill (agent runner) and schema files."""

    id: str
    runner: str
    effect: str
    skill: FileLocation | None
    input_schema: FileLocation | None
    output_schema: FileLocation | None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "runner": self.runner, "effect": self.effect}
        if self.skill is not None:
            out["skill"] = self.skill.to_dict()
        if self.input_schema is not None:
            out["inputSchema"] = self.input_schema.to_dict()
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema.to_dict()
        return out


@dataclass(frozen=True, slots=True)
class GateAction:
    """A gate's inspection or resolution Action with its own command plan."""

    action: RouteAction
    command_plan: tuple[CommandStep, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action.to_dict(),
            "commandPlan": [step.to_dict() for step in self.command_plan],
        }


@dataclass(frozen=True, slots=True)
class RouteGate:
    """The gate of a gate route: authored fields, how it resolves (``user`` or
    ``session-authority``) and its Actions. Both Actions are exposed on ``user`` routes
    too; a host must not run the resolution while the route requires the user."""

    id: str
    prompt: str
    authority: str | None
    delegatable: bool | None
    resolution: GateResolution
    inspection_action: GateAction | None
    resolution_action: GateAction | None
    fields: tuple[str, ...] = ("id", "prompt", "authority", "delegatable")

    def to_dict(self) -> dict[str, Any]:
        authored = {
            "id": self.id,
            "prompt": self.prompt,
            "authority": self.authority,
            "delegatable": self.delegatable,
        }
        # the reference spreads the authored gate object, so its key order is the author's
        out: dict[str, Any] = {
            name: authored[name] for name in self.fields if authored.get(name) is not None
        }
        out["resolution"] = self.resolution
        if self.inspection_action is not None:
            out["inspectionAction"] = self.inspection_action.to_dict()
        if self.resolution_action is not None:
            out["resolutionAction"] = self.resolution_action.to_dict()
        return out


@dataclass(frozen=True, slots=True)
class RouteResources:
    required: tuple[Location, ...]
    recommended: tuple[Location, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "required": [x.to_dict() for x in self.required],
            "recommended": [x.to_dict() for x in self.recommended],
        }


@dataclass(frozen=True, slots=True)
class Route:
    """One resolved route; :meth:`to_dict` is the ``agent-graph.route.v1`` document."""

    provider: str
    revision: str
    route_id: str
    graph: str
    node: str
    status_code: StatusCode
    reason_code: str
    hint: str | None
    availability: Availability
    call_path: tuple[str, ...]
    action: RouteAction | None
    command_plan: tuple[CommandStep, ...]
    resources: RouteResources
    gate: RouteGate | None
    diagnostics: tuple[Diagnostic, ...]
    record_node: str

    @property
    def requires_user(self) -> bool:
        return self.availability == "requires-user"

    def locations(self) -> tuple[Location, ...]:
        """Every location on the route: resources, then the Action files (route Action
        first, then gate Actions), each once per appearance."""
        out: list[Location] = [*self.resources.required, *self.resources.recommended]
        actions = [self.action] if self.action is not None else []
        if self.gate is not None:
            actions.extend(
                g.action for g in (self.gate.inspection_action, self.gate.resolution_action) if g
            )
        for action in actions:
            out.extend(x for x in (action.skill, action.input_schema, action.output_schema) if x)
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": ROUTE_SCHEMA,
            "provider": self.provider,
            "revision": self.revision,
            "routeId": self.route_id,
            "graph": self.graph,
            "node": self.node,
            "statusCode": self.status_code,
            "reasonCode": self.reason_code,
        }
        if self.hint:
            out["hint"] = self.hint
        out["availability"] = self.availability
        out["callPath"] = list(self.call_path)
        if self.action is not None:
            out["action"] = self.action.to_dict()
        out["commandPlan"] = [step.to_dict() for step in self.command_plan]
        out["resources"] = self.resources.to_dict()
        if self.gate is not None:
            out["gate"] = self.gate.to_dict()
        out["diagnostics"] = [d.to_dict() for d in self.diagnostics]
        out["afterAction"] = {"evaluate": True, "recordNode": self.record_node}
        return out


class _Builder:
    def __init__(self, ir: r.ProviderIR, root: Path, revision: str, state: Normalized) -> None:
        self.ir = ir
        self.root = root
        self.revision = revision
        self.receipts: tuple[Receipt, ...] = state.receipts
        # the reference resolves the workspace even for plans that do not use it
        workspace = state.workspace if state.workspace is not None else os.getcwd()
        self.workspace = os.path.abspath(workspace)

    def file(self, ref: r.FileRef | None) -> FileLocation | None:
        if ref is None:
            return None
        location = with_read_state(locate_file(self.root, ref), self.receipts)
        assert isinstance(location, FileLocation)
        return location

    def action(self, action: r.Action) -> RouteAction:
        skill = self.file(action.skill) if action.runner == "agent" else None
        return RouteAction(
            action.id,
            action.runner,
            action.effect,
            skill,
            self.file(action.input_schema),
            self.file(action.output_schema),
        )

    def plan(self, action: r.Action) -> tuple[CommandStep, ...]:
        where = str(self.root) if action.cwd == "provider" else self.workspace
        if action.runner == "command":
            assert action.command is not None
            command = action.command
            return (
                CommandStep(
                    action.effect, action.cwd, where, command=command, argv=shell_argv(command)
                ),
            )
        if action.runner == "script":
            assert action.entry is not None
            assert action.runtime is not None
            runtime = _RUNTIME_COMMAND[action.runtime]
            argv = (runtime, str(self.root / action.entry), *action.args)
            # the wire string: the runtime word bare, every other item quoted
            command = " ".join([runtime, *(shell_quote(arg) for arg in argv[1:])])
            return (CommandStep(action.effect, action.cwd, where, command=command, argv=argv),)
        if action.runner == "host":
            return (CommandStep(action.effect, action.cwd, where, handler=action.handler),)
        return ()

    def gate_action(self, index: int) -> GateAction | None:
        if index == r.NONE:
            return None
        action = self.ir.actions[index]
        return GateAction(self.action(action), self.plan(action))

    def locations(self, indexes: tuple[int, ...]) -> list[Location]:
        return [
            with_read_state(
                locate_resource(self.root, self.ir.resources[i], self.revision), self.receipts
            )
            for i in indexes
        ]

    def resources(self, candidate: Candidate, action: r.Action | None) -> RouteResources:
        node = candidate.node
        lists = node.resources
        gate = node.gate
        if (
            gate is not None
            and candidate.gate_resolution == "session-authority"
            and gate.delegated is not None
            and gate.delegated.resources is not None
        ):
            lists = gate.delegated.resources
        required = self.locations(lists.required) if lists else []
        recommended = self.locations(lists.recommended) if lists else []
        if action is not None and action.runner == "agent":
            skill = self.file(action.skill)
            if skill is not None:
                required.insert(0, skill)
        return RouteResources(tuple(required), tuple(recommended))

    def gate(self, candidate: Candidate) -> RouteGate | None:
        gate = candidate.node.gate
        if gate is None:
            return None
        resolution: GateResolution = candidate.gate_resolution or "user"
        delegated = gate.delegated if resolution == "session-authority" else None
        inspection = gate.inspection
        if delegated is not None and delegated.skip_inspection:
            inspection = r.NONE
        resolver = gate.resolution
        if delegated is not None and delegated.resolution != r.NONE:
            resolver = delegated.resolution
        return RouteGate(
            gate.id,
            gate.prompt,
            gate.authority,
            gate.delegatable,
            resolution,
            self.gate_action(inspection),
            self.gate_action(resolver),
            gate.fields,
        )


def build_route(
    ir: r.ProviderIR, root: Path, candidate: Candidate, revision: str, state: Normalized
) -> Route:
    """Resolve ``candidate`` (found at ``revision`` for ``state``) into a Route.

    ``ir`` and ``root`` (where the Provider's files are) rather than the ``Program``
    that holds them: the Program calls this, so this module never needs its type.
    """
    builder = _Builder(ir, root, revision, state)
    node = candidate.node
    action = ir.actions[node.action] if node.kind == r.ACTION else None
    # resources first: a broken Skill fails with the same error wherever it is exposed
    resources = builder.resources(candidate, action)
    return Route(
        provider=ir.provider_id,
        revision=revision,
        route_id=candidate.route_id,
        graph=candidate.graph.id,
        node=node.id,
        status_code=candidate.status_code,
        reason_code=candidate.reason_code,
        hint=candidate.hint,
        availability=candidate.availability,
        call_path=candidate.call_path,
        action=builder.action(action) if action is not None else None,
        command_plan=builder.plan(action) if action is not None else (),
        resources=resources,
        gate=builder.gate(candidate),
        diagnostics=(),
        record_node=candidate.state_key,
    )
