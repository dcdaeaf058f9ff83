"""The catalogue of every error and diagnostic code the toolchain emits.

Hosts branch on codes (see :mod:`agent_graph.errors`); this is the one list of them,
code -> one-line meaning, grouped by the section of ``docs/error-codes.md`` that
documents the code (a code used in several places is listed once, under the section
that describes it first). ``tests/test_error_codes.py`` scans the source and fails when
a code is used but not listed here, listed but not documented in its section, or
listed but no longer used.

``schema.<keyword>`` stands for the family of JSON Schema findings, one code per
validator keyword (``schema.required``, ``schema.type`` …).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["AREAS", "CODES", "SCHEMA_FINDING"]

#: The generated family of JSON Schema findings (``schema.`` + the failing keyword).
SCHEMA_FINDING: Final = "schema.<keyword>"

#: Section heading in ``docs/error-codes.md`` -> {code: meaning}.
AREAS: Final[Mapping[str, Mapping[str, str]]] = {
    "Reading files": {
        "file-missing": "a referenced file does not exist or is not a regular file",
        "file-read-failed": "the file exists but cannot be read",
        "file-too-large": "a definition file is over 32 MiB",
        "parse-failed": "not YAML 1.2 / JSON (syntax, duplicate key, bad bytes, nesting …)",
        "frontmatter-missing": "a Markdown resource or SKILL.md does not start with ---",
        "frontmatter-invalid": "frontmatter not closed, not a mapping, or not valid YAML",
    },
    "Shapes (JSON Schema)": {
        "schema-invalid": "a file does not match its schema (one diagnostic per finding)",
        SCHEMA_FINDING: "one schema finding, named by the failing keyword",
        "schema.truncated": "more than 100 items of one list failed; the rest are counted",
        "schema.depth": "a document nests too deeply to validate",
    },
    "Containment": {
        "absolute-path-forbidden": "a path given on the command line is absolute",
        "path-outside-provider": "a path escapes the Provider root lexically",
        "path-symlink-outside-provider": "a path stays inside lexically but a symlink leads out",
    },
    "Graphs": {
        "graph-node-duplicate": "two nodes share an id",
        "graph-terminal-missing": "no terminal node",
        "graph-entry-missing": "an entrypoint names a missing node",
        "graph-edge-node-missing": "an edge names a missing node",
        "graph-terminal-edge-invalid": "an edge leaves a terminal",
        "graph-edge-duplicate": "same kind, ends and outcome list as an earlier edge",
        "graph-repeat-target-invalid": "a repeat edge targets neither an action nor a gate",
        "graph-gated-by-source-invalid": "a gatedBy edge does not start at a gate",
        "graph-flow-cycle": "non-repeat edges form a cycle",
        "graph-id-duplicate": "two graph files declare one id",
        "subgraph-missing": "a subgraph node calls an unknown graph",
        "subgraph-entry-missing": "a subgraph node calls an unknown entry",
        "graph-recursion": "subgraph calls reach an ancestor",
    },
    "Actions, gates, resources, catalog": {
        "action-id-duplicate": "two Action files declare one id",
        "resource-id-duplicate": "two resource files declare one id",
        "resource-metadata-invalid": "Markdown frontmatter lacks string id, kind or media-type",
        "resource-kind-invalid": "a static resource kind outside the five known kinds",
        "gate-inspection-effect-invalid": "a gate inspection Action is not effect: read",
        "gate-resolution-effect-invalid": "a gate (or delegated) resolution Action is effect: read",
        "gate-delegated-policy-invalid": "delegated without a delegatable gate authority",
        "gate-delegated-inspection-missing": "delegated.inspection: skip without an inspection",
        "code-catalog-code-duplicate": "a catalog lists a code twice",
        "code-document-dynamic": "a catalog document is a graph-action or host-action view",
        "route-reason-code-missing": "with a catalog, a node's reasonCode is absent from it",
        "route-reason-code-kind-invalid": "a node's reasonCode is not a route-reason entry",
        "materializer-effect-invalid": "a view's materializer is not effect: read",
        "materializer-runner-invalid": "a materializer's runner does not suit its view protocol",
        "materializer-schema-missing": "a host-action materializer lacks inputSchema/outputSchema",
        "resource-schema-identity-invalid": "a host-action schema lacks a versioned identity",
        "resource-schema-invalid": "a host-action input schema is not a valid JSON Schema",
        "resource-input-invalid": "a host-action descriptor's input fails the input schema",
    },
    "Skills and registries": {
        "skill-binding-missing": "SKILL.md lacks metadata.agent-graph, .graph or .entry",
        "skill-locator-invalid": "the Skill locator is empty or of an unknown kind",
        "skill-locator-absolute": "the Skill locator is an absolute path",
        "provider-unresolved": "a provider: locator has no registry entry",
        "provider-id-mismatch": "the registry entry loads a Provider with another id",
        "skill-graph-missing": "the bound Graph does not exist",
        "skill-entry-missing": "the bound Entry does not exist",
        "registry-invalid": "the registry is not a mapping of ids to manifest paths",
    },
    "Evaluation and routing (`agc evaluate`, `agc route`, `Program`)": {
        "graph-missing": "the Provider has no such graph",
        "graph-selection-missing": "no graph given and no --skill binding selects one",
        "skill-graph-conflict": "an explicit graph disagrees with the --skill binding",
        "skill-entry-conflict": "an explicit entry disagrees with the --skill binding",
        "json-invalid": "--facts/--outcomes is not JSON (or YAML in an @file)",
        "json-object-required": "--facts/--outcomes, or a state's facts/outcomes, is not an object",
        "facts-invalid": "facts hold something that is not JSON data",
        "outcome-invalid": "an outcome is not one of the eight, or a record has no outcome",
        "authority-invalid": "authorities are not a list of strings",
        "state-invalid": "a state mapping has unknown members",
        "run-provider-mismatch": "a Run (--state, run status) belongs to another Provider",
        "resource-receipts-invalid": "a resource receipt set is malformed",
        "resource-receipts-provider-mismatch": "receipts were issued for another Provider",
        "revision-invalid": "--revision is not sha256: plus 64 hex digits",
        "route-revision-stale": "the state changed since the evaluation the host acted on",
        "route-stale": "the route id is not available at the current revision",
        "route-unavailable": "route without a route id, and the evaluation has no primary route",
        "route-arguments-invalid": "more positional arguments than [graph] [route-id]",
        "host-action-location-invalid": "a host-action location given to the helpers is malformed",
        "host-action-result-invalid": "a host-action result given to the helpers is malformed",
        "value-not-serializable": "a value to digest or serialise canonically is not JSON data",
        "required-fact-missing": "diagnostic: a reached node's requiresFacts fail (blocked)",
        "terminal-outcome-ambiguous": "diagnostic: terminals with different outcomes were reached",
        "no-route": "diagnostic: nothing actionable and no terminal reached (blocked)",
        "entry-missing": "the entry does not exist in the graph",
        "route-alternatives-truncated": "diagnostic (info): more than three alternatives",
    },
    "Graph tests (`agc test`)": {
        "test-path-missing": "the test path does not exist",
        "test-path-invalid": "the test path is neither a file nor a directory",
        "test-cases-empty": "no YAML or JSON cases under the path",
        "junit-target-exists": "--junit-xml would replace a file that is not a previous report",
    },
    "Runs (`agc run …`, `agent_graph.runs`)": {
        "run-target-exists": "run start, checkpoint or resume would replace an existing file",
        "state-key-invalid": "run record got a key that is not a state key of the Run's graph",
        "detail-invalid": "--detail is not JSON data",
        "run-version-unsupported": "a Run file written by a newer toolchain",
        "run-invalid": "event sequences with a gap, repeat or fall, or a value JSON cannot hold",
        "run-locked": "another writer held the Run's lock for over a minute",
        "run-lock-invalid": "the Run's lock is a symbolic link, a directory or not a regular file",
        "file-write-failed": "the Run (or another output) cannot be written",
    },
    "Build and bundles (`agc build`, `--manifest …/manifest.json`)": {
        "build-output-overlaps-source": "the output would replace the Provider root or a source",
        "build-output-exists": "the output exists and is neither empty nor a previous bundle",
        "build-path-conflict": "a reachable file sits where the bundle writes its own files",
        "build-absolute-path-leak": "a reachable file contains the source Provider's absolute path",
        "build-manifest-unwritable": "the manifest cannot be written as YAML",
        "build-write-failed": "the file system refused a write",
        "bundle-digest-mismatch": "manifest.json was edited: its digest does not match",
        "bundle-file-duplicate": "the manifest lists a file twice",
        "bundle-file-digest-mismatch": "a listed file's bytes changed",
        "bundle-catalog-mismatch": "a catalog entry does not match the files, or is incomplete",
        "bundle-provider-unlisted": "the Provider manifest is not listed",
        "bundle-provider-mismatch": "the Provider manifest identifies another Provider",
        "bundle-files-mismatch": "listed files differ from the reachable file set",
        "bundle-dependencies-mismatch": "the graph dependency index does not match the calls",
        "bundle-ir-binding-invalid": "ir/binding.json is malformed",
        "bundle-ir-unbound": "ir/binding.json binds another manifest",
        "bundle-ir-digest-mismatch": "the IR file's bytes do not match the binding",
        "bundle-ir-mismatch": "the IR's content does not match the bundle",
        "bundle-ir-unverified": "the bundle's IR is not what its sources compile to",
    },
    "Compiled IR": {
        "ir-corrupt": "IR bytes are damaged, truncated, or do not match the expected digest",
        "ir-version-unsupported": "IR written by another format version: recompile",
        "ir-target-exists": "agc ir build -o would overwrite a file that is not IR",
    },
    "Code Catalog and schemas (`agc code`, `agc schema`)": {
        "code-missing": "code locate: no such code, or the Provider has no code catalog",
        "schema-target-exists": "schema extract would replace a different file or a non-file",
    },
    "Materializing resources (`agc resource`)": {
        "resource-missing": "no Resource has that id, and no loaded descriptor is at that path",
        "resource-static": "a static resource was passed to materialize",
        "materializer-missing": "the dynamic resource names no materializer Action",
        "materializer-option-invalid": "a materialize limit or revision option is invalid",
        "materializer-timeout": "the materializer ran past its time limit (group killed)",
        "materializer-output-limit": "the materializer wrote more than the output limit",
        "materializer-error-limit": "the materializer wrote more than the error limit",
        "materializer-failed": "the materializer exited non-zero or was killed by a signal",
        "materializer-host-required": "a host-action resource: the host produces it",
        "materializer-runtime-missing": "the script runtime is not on the materializer's PATH",
        "materializer-workspace-missing": "the --workspace folder does not exist",
        "materializer-start-failed": "the materializer process could not be started",
        "materializer-cache-failed": "the cache folder cannot be written",
        "option-invalid": "a numeric command-line option is not a positive integer",
    },
    "Running processes (`agent_graph.exec`)": {
        "exec-argv-invalid": "the argument vector is empty, a string, or holds a non-string/NUL",
        "exec-env-invalid": "an environment name or value is not a NUL-free string",
        "exec-option-invalid": "a timeout, grace, byte limit or stdin option is invalid",
        "exec-cwd-missing": "the working directory does not exist",
        "exec-cwd-invalid": "the working directory is not a directory or cannot be entered",
        "exec-not-found": "the program does not exist (as a path, or on the child's PATH)",
        "exec-not-executable": "the program is a directory, not executable, or of a bad format",
        "exec-start-failed": "the system refused to start the program for another reason",
        "exec-timeout": "the process ran past its timeout; its group was killed",
        "exec-stdout-limit": "the process wrote more than the stdout byte limit",
        "exec-stderr-limit": "the process wrote more than the stderr byte limit",
        "exec-signal": "a signal ended the process",
        "exec-failed": "the process exited with a non-zero code",
    },
    "Authoring (`agc init`, `agc import`, `agc migrate`)": {
        "id-invalid": "no id can be derived from the text given (or it is too long)",
        "provider-target-exists": "agc init would replace a file that exists",
        "import-target-exists": "agc import would replace a file or folder that exists",
        "import-empty": "agc import scripts was given no script",
        "import-result-invalid": "the Provider would not validate (or would warn) after the import",
        "workflow-invalid": "a workflow file is not {id?, steps: [{id, command, …}]}",
        "workflow-step-duplicate": "two workflow steps share an id",
        "workflow-step-id-collision": "two workflow step ids slug to the same node id",
        "workflow-step-id-reserved": "a workflow step id slugs to start or done",
        "workflow-dependency-missing": "a step depends on a step the workflow does not have",
        "workflow-cycle": "workflow dependencies form a cycle",
        "migrate-bundle-refused": "agc migrate was pointed at a built bundle",
        "migrate-resource-identity": "change: a resource.v1 descriptor gets its 0.3.1 identity",
        "migrate-compatibility-range": "change: a 0.2 compatibility range becomes ^0.3.0",
        "migrate-range-manual": "finding: a range excludes 0.3 but is not a plain 0.2 range",
        "migrate-location-envelope-manual": "finding: a file names resource-location.v1",
        "yaml-edit-failed": "a targeted edit would not read back as intended; nothing written",
        "file-read-only": "a file to be changed is read-only; nothing was written",
    },
    "Flow packages (`agc flow`, `agent_graph.flow`)": {
        "flow-entry-invalid": (
            "the path is neither a package directory nor a file named exactly FLOW.md"
        ),
        "flow-entry-missing": "the path or the package's FLOW.md does not exist",
        "flow-encoding-invalid": (
            "FLOW.md is not UTF-8 text (or holds NUL): position of the first bad byte"
        ),
        "flow-fence-unterminated": (
            "a code block is never closed (it would swallow the rest of the file)"
        ),
        "resource-reference-not-md": "a references/… link target is not a .md file",
        "resource-script-not-mjs": "a scripts/… argument is not a .mjs file",
        "resource-path-dot-segment": "a references/… or scripts/… path has a . or .. segment",
        "resource-outside-package": "a resource's real path (symlinks followed) leaves the package",
        "resource-path-invalid": "a resource path has an empty segment, a backslash or a ? query",
        "flow-absolute-path": (
            "warning: a command, argument or link is a machine-specific absolute path"
        ),
        "resource-path-not-mapped": (
            "warning: an argument or command looks like a package script but is not mapped"
        ),
        "flow-frontmatter-missing": "FLOW.md does not start with a closed --- front matter block",
        "flow-frontmatter-extra-key": (
            "a front matter key other than name and description (or a line that is not key: value)"
        ),
        "flow-frontmatter-duplicate-key": "name or description appears twice",
        "flow-name-empty": "front matter name is missing or empty",
        "flow-description-empty": "front matter description is missing or empty",
        "flow-graph-count": "no ```mermaid block, or more than one",
        "flow-graph-direction": "the graph's first line is not exactly flowchart TD",
        "flow-graph-syntax": "a graph line outside the supported Mermaid subset (mermaid.lark)",
        "flow-graph-misplaced": "the graph block comes after the first level-2 heading",
        "flow-start-missing": "no start((开始)) node",
        "flow-start-duplicate": "a second node with the start shape ((开始))",
        "flow-finish-missing": "no finish((结束)) node",
        "flow-finish-duplicate": "a second node with the finish shape ((结束))",
        "flow-start-out-degree": "start has no outgoing edge, or more than one",
        "flow-finish-has-outgoing": "an edge leaves finish",
        "flow-edge-target-missing": "an edge names a node that is never declared",
        "flow-node-unreachable": "a work node cannot be reached from start",
        "flow-finish-unreachable": "no path from start reaches finish",
        "flow-node-cannot-finish": (
            "a reachable work node has no path to finish (off with --lenient)"
        ),
        "flow-node-ref-duplicate": "one ref declared as two kinds of node",
        "flow-node-name-duplicate": "two work nodes share a name",
        "flow-node-ref-invalid": "a ref is not ^[A-Za-z][A-Za-z0-9_-]*$",
        "flow-ref-reserved": "start or finish used as the ref of a work node or fork",
        "flow-node-label-conflict": "a ref declared again with another name",
        "flow-start-target-invalid": "the start edge is labelled or leads to a fork or finish",
        "flow-start-has-incoming": "an edge points to start",
        "flow-node-no-outgoing": "a work node has no outgoing edge",
        "flow-edge-label-missing": "an Agent or command node's edge has no result label",
        "flow-result-duplicate": (
            "a node has two edges with one label, or two ### headings with one text"
        ),
        "flow-fork-edge-labeled": "a fork's edge has a label",
        "flow-node-heading-missing": "a work node has no ## section with its name",
        "flow-heading-orphan": "a ## heading names no work node",
        "flow-heading-duplicate": "two ## headings with one text",
        "flow-heading-ignored": "warning: a ### heading before the first ## section (ignored)",
        "flow-action-block-count": "a node's action area holds no code block, or more than one",
        "flow-action-block-empty": "the action block is empty",
        "flow-action-marker-invalid": (
            "the block's info string is not 新建Agent, 复用Agent, 执行自定义命令 or 执行Flow"
        ),
        "flow-result-heading-missing": "a result edge has no ### heading in its node's section",
        "flow-result-description-empty": "a ### result heading has no description",
        "flow-result-heading-orphan": "a ### heading names no result edge of its node",
        "flow-result-reserved-name": (
            "warning: an Agent node uses 已执行, 已完成 or 已失败 as its own result"
        ),
        "flow-command-json-invalid": (
            "a command block is not a JSON object (after placeholder substitution)"
        ),
        "flow-command-missing": "command is missing, empty or not a string",
        "flow-command-args-invalid": "args is not an array of strings",
        "flow-command-stdin-invalid": "stdin is not valid JSON (NaN, Infinity, a repeated key)",
        "flow-command-unknown-field": (
            "a command member other than command, args, stdin (off with --lenient)"
        ),
        "flow-outcome-outside-string": (
            "{outcome} stands outside a JSON string in a command or 执行Flow block"
        ),
        "flow-command-result-invalid": (
            "a command node has more than one edge, or its label is not 已执行"
        ),
        "flow-fork-in-degree": "a fork has not exactly one incoming edge",
        "flow-fork-out-degree": "a fork has fewer than two branches",
        "flow-branch-in-degree": "a branch has incoming edges besides its fork's",
        "flow-branch-not-command": "a branch is not a command node",
        "flow-branch-join-mismatch": "a fork's branches do not all go to one work node",
        "flow-join-in-degree": "a join has fewer than two incoming edges",
        "flow-join-sources-mismatch": "a join is reached from nodes other than its fork's branches",
        "flow-join-ref-missing": "a join's stdin does not read a branch with {branch.outcome}",
        "flow-branch-ref-misplaced": "{ref.outcome} outside a join's stdin",
        "flow-branch-ref-not-standalone": "{ref.outcome} inside a string or joined to other text",
        "flow-branch-ref-unknown": "{ref.outcome} names no branch of the join's fork",
        "flow-join-not-command": "a join is an Agent node",
        "flow-ref-json-invalid": "a 执行Flow block is not a JSON object",
        "flow-ref-id-invalid": "执行Flow flow is missing or not a valid id",
        "flow-ref-extra-field": "a 执行Flow member other than flow and task",
        "flow-ref-edges-invalid": (
            "a 执行Flow node has neither one plain edge nor exactly 已完成 and 已失败"
        ),
        "flow-ref-in-parallel": "a 执行Flow node is a branch or a join",
        "flow-ref-target-missing": "no sibling package <flow>/FLOW.md",
        "flow-ref-cycle": "执行Flow references form a cycle (self-reference included)",
        "flow-child-reuse-first": "in a child Flow, a 复用Agent runs before any 新建Agent",
        "flow-id-not-referenceable": (
            "warning: the package directory name cannot be a 执行Flow target"
        ),
        "flow-id-duplicate": "agc flow list: two packages under one root share an id",
        "flow-root-missing": "agc flow list: the root is not a directory",
    },
    "Flow Runs (`agc flow run|resume|status|events`)": {
        "run-state-invalid": "--state is a directory, or its directory does not exist",
        "run-busy": "another process is running or resuming this Run (its lock is held)",
        "run-record-invalid": "a Run record that is truncated, not JSON or not of this shape",
        "run-record-modified": "a Run record changed outside agc (its checksum does not match)",
        "run-not-resumable": "resume of a Run that has completed or failed",
        "run-child-direct-resume": "resume of a child Run; it resumes with its parent (named)",
        "run-fingerprint-mismatch": "the Flow's files (or a child Flow's) changed since the Run",
        "run-entry-missing": "the Run's recorded FLOW.md no longer exists",
        "flow-program-missing": "runtime resume of a Run that kept no program, given no compile",
        "flow-program-unplaced": "a Flow program given to start does not say where its files are",
        "run-flow-mismatch": (
            "the recorded entry now holds another Flow, or the record another's nodes"
        ),
        "run-cwd-missing": "the Run's working directory does not exist (at start or resume)",
        "run-task-invalid": "the task (Python API) is not JSON data",
        "run-option-invalid": "max_parallel / max_visits / command timeout out of range (API)",
        "agent-required": "the Flow has Agent steps and no --agent adapter was given",
        "agent-bound": "the Agent to start a Run with is bound to another active Run",
        "agent-spec-invalid": "--agent names no adapter, or one that cannot be set up",
    },
    "Pictures and explanations (`agc graph`, `agc explain`, `agc flow graph`)": {
        "graphviz-missing": "--format svg, but Graphviz dot is not installed (message: how to)",
        "graphviz-failed": "Graphviz dot did not start, exited non-zero or was killed",
        "graphviz-timeout": "Graphviz dot took longer than its time limit (graph too large)",
        "explain-node-missing": "agc explain --node names no node of the evaluated frames",
        "explain-entry": "reason: the node is the frame's entry",
        "explain-edge": "reason: reached over an incoming edge that matched",
        "explain-repeat-reached": "reason: reached by a repeat edge",
        "explain-join-unmet": "reason: not reached, the join's incoming edges do not match",
        "explain-unreached": "reason: not reached, no edge leads here (or only a repeat edge)",
        "explain-requires-failed": "reason: blocked, a requiresFacts check fails",
        "explain-requires-met": "reason: every requiresFacts check holds",
        "explain-satisfied": "reason: completed, satisfiedBy holds",
        "explain-unverified": "reason: recorded completed, but satisfiedBy fails",
        "explain-recorded": "reason: the recorded outcome under the state key",
        "explain-no-record": "reason: pending, nothing recorded and satisfiedBy not met",
        "explain-terminal": "reason: a terminal's terminalOutcome",
        "explain-subgraph": "reason: a subgraph node's outcome from its child frame",
        "explain-repeat-reset": "reason: reset to pending by a repeat edge",
        "explain-candidate": "reason: offered as a route, with its rank",
        "explain-not-offered": "reason: pending, but its frame is complete or in error",
    },
    "Command line": {
        "usage-invalid": "unknown command or option, missing argument (exit 2)",
        "format-invalid": "--format is not human or json (exit 2)",
        "schema-type-unknown": "an unknown schema name",
        "schema-compile-failed": "a packaged schema that cannot be read",
        "unexpected-error": "anything else (a bug)",
    },
    "Warnings (the Provider still loads)": {
        "compatibility-range-excludes": "compatibility.agentGraph excludes the 0.3 line",
        "resource-protocol-legacy": "a 0.2 agent-graph.resource.v1 descriptor",
        "node-unreachable": "no edge path from any entrypoint reaches the node",
        "outcome-key-unknown": "an outcome is recorded for a key that is no state key of the graph",
        "action-file-unlisted": "a command Action runs a Provider file its files: does not list",
    },
}

#: Every code -> its meaning.
CODES: Final[Mapping[str, str]] = {
    code: meaning for entries in AREAS.values() for code, meaning in entries.items()
}
