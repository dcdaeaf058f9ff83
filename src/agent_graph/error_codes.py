"""What each error and diagnostic code means, and which section documents it.

The codes themselves are the constants of :mod:`agent_graph.codes`, which the source
imports; this table gives each constant a one-line meaning under the heading of the
section of ``docs/error-codes.md`` that documents it (a code used in several places is
listed once, under the section that describes it first). Nothing in the toolchain imports
it: ``tests/project/test_error_codes.py`` holds the constants, this table and the docs in step.

``schema.<keyword>`` (:data:`SCHEMA_FINDING`) stands for the family of JSON Schema
findings, one code per validator keyword (``schema.required``, ``schema.type`` …).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from . import codes

__all__ = ["AREAS", "CODES", "SCHEMA_FINDING"]

#: The generated family of JSON Schema findings (``schema.`` + the failing keyword).
SCHEMA_FINDING: Final = codes.SCHEMA_FINDING

#: Section heading in ``docs/error-codes.md`` -> {code: meaning}.
AREAS: Final[Mapping[str, Mapping[str, str]]] = {
    "Reading files": {
        codes.FILE_MISSING: "a referenced file does not exist or is not a regular file",
        codes.FILE_READ_FAILED: "the file exists but cannot be read",
        codes.FILE_TOO_LARGE: "a definition file is over 32 MiB",
        codes.PARSE_FAILED: "not YAML 1.2 / JSON (syntax, duplicate key, bad bytes, nesting …)",
        codes.FRONTMATTER_MISSING: "a Markdown resource or SKILL.md does not start with ---",
        codes.FRONTMATTER_INVALID: "frontmatter not closed, not a mapping, or not valid YAML",
    },
    "Shapes (JSON Schema)": {
        codes.SCHEMA_INVALID: "a file does not match its schema (one diagnostic per finding)",
        codes.SCHEMA_FINDING: "one schema finding, named by the failing keyword",
        codes.SCHEMA_TRUNCATED: "more than 100 items of one list failed; the rest are counted",
        codes.SCHEMA_DEPTH: "a document nests too deeply to validate",
    },
    "Containment": {
        codes.ABSOLUTE_PATH_FORBIDDEN: "a path given on the command line is absolute",
        codes.PATH_OUTSIDE_PROVIDER: "a path escapes the Provider root lexically",
        codes.PATH_SYMLINK_OUTSIDE_PROVIDER: (
            "a path stays inside lexically but a symlink leads out"
        ),
    },
    "Graphs": {
        codes.GRAPH_NODE_DUPLICATE: "two nodes share an id",
        codes.GRAPH_TERMINAL_MISSING: "no terminal node",
        codes.GRAPH_ENTRY_MISSING: "an entrypoint names a missing node",
        codes.GRAPH_EDGE_NODE_MISSING: "an edge names a missing node",
        codes.GRAPH_TERMINAL_EDGE_INVALID: "an edge leaves a terminal",
        codes.GRAPH_EDGE_DUPLICATE: "same kind, ends and outcome list as an earlier edge",
        codes.GRAPH_REPEAT_TARGET_INVALID: "a repeat edge targets neither an action nor a gate",
        codes.GRAPH_GATED_BY_SOURCE_INVALID: "a gatedBy edge does not start at a gate",
        codes.GRAPH_FLOW_CYCLE: "non-repeat edges form a cycle",
        codes.GRAPH_ID_DUPLICATE: "two graph files declare one id",
        codes.SUBGRAPH_MISSING: "a subgraph node calls an unknown graph",
        codes.SUBGRAPH_ENTRY_MISSING: "a subgraph node calls an unknown entry",
        codes.GRAPH_RECURSION: "subgraph calls reach an ancestor",
    },
    "Actions, gates, resources, catalog": {
        codes.ACTION_ID_DUPLICATE: "two Action files declare one id",
        codes.RESOURCE_ID_DUPLICATE: "two resource files declare one id",
        codes.RESOURCE_METADATA_INVALID: "Markdown frontmatter lacks string id, kind or media-type",
        codes.RESOURCE_KIND_INVALID: "a static resource kind outside the five known kinds",
        codes.GATE_INSPECTION_EFFECT_INVALID: "a gate inspection Action is not effect: read",
        codes.GATE_RESOLUTION_EFFECT_INVALID: (
            "a gate (or delegated) resolution Action is effect: read"
        ),
        codes.GATE_DELEGATED_POLICY_INVALID: "delegated without a delegatable gate authority",
        codes.GATE_DELEGATED_INSPECTION_MISSING: "delegated.inspection: skip without an inspection",
        codes.CODE_CATALOG_CODE_DUPLICATE: "a catalog lists a code twice",
        codes.CODE_DOCUMENT_DYNAMIC: "a catalog document is a graph-action or host-action view",
        codes.ROUTE_REASON_CODE_MISSING: "with a catalog, a node's reasonCode is absent from it",
        codes.ROUTE_REASON_CODE_KIND_INVALID: "a node's reasonCode is not a route-reason entry",
        codes.MATERIALIZER_EFFECT_INVALID: "a view's materializer is not effect: read",
        codes.MATERIALIZER_RUNNER_INVALID: (
            "a materializer's runner does not suit its view protocol"
        ),
        codes.MATERIALIZER_SCHEMA_MISSING: (
            "a host-action materializer lacks inputSchema/outputSchema"
        ),
        codes.RESOURCE_SCHEMA_IDENTITY_INVALID: "a host-action schema lacks a versioned identity",
        codes.RESOURCE_SCHEMA_INVALID: "a host-action input schema is not a valid JSON Schema",
        codes.RESOURCE_INPUT_INVALID: "a host-action descriptor's input fails the input schema",
    },
    "Skills and registries": {
        codes.SKILL_BINDING_MISSING: "SKILL.md lacks metadata.agent-graph, .graph or .entry",
        codes.SKILL_LOCATOR_INVALID: "the Skill locator is empty or of an unknown kind",
        codes.SKILL_LOCATOR_ABSOLUTE: "the Skill locator is an absolute path",
        codes.PROVIDER_UNRESOLVED: "a provider: locator has no registry entry",
        codes.PROVIDER_ID_MISMATCH: "the registry entry loads a Provider with another id",
        codes.SKILL_GRAPH_MISSING: "the bound Graph does not exist",
        codes.SKILL_ENTRY_MISSING: "the bound Entry does not exist",
        codes.REGISTRY_INVALID: "the registry is not a mapping of ids to manifest paths",
    },
    "Evaluation and routing (`agc evaluate`, `agc route`, `Program`)": {
        codes.GRAPH_MISSING: "the Provider has no such graph",
        codes.GRAPH_SELECTION_MISSING: "no graph given and no --skill binding selects one",
        codes.SKILL_GRAPH_CONFLICT: "an explicit graph disagrees with the --skill binding",
        codes.SKILL_ENTRY_CONFLICT: "an explicit entry disagrees with the --skill binding",
        codes.JSON_INVALID: "--facts/--outcomes is not JSON (or YAML in an @file)",
        codes.JSON_OBJECT_REQUIRED: (
            "--facts/--outcomes, or a state's facts/outcomes, is not an object"
        ),
        codes.FACTS_INVALID: "facts hold something that is not JSON data",
        codes.OUTCOME_INVALID: "an outcome is not one of the eight, or a record has no outcome",
        codes.AUTHORITY_INVALID: "authorities are not a list of strings",
        codes.STATE_INVALID: "a state mapping has unknown members",
        codes.RUN_PROVIDER_MISMATCH: "a Run (--state, run status) belongs to another Provider",
        codes.RESOURCE_RECEIPTS_INVALID: "a resource receipt set is malformed",
        codes.RESOURCE_RECEIPTS_PROVIDER_MISMATCH: "receipts were issued for another Provider",
        codes.REVISION_INVALID: "--revision is not sha256: plus 64 hex digits",
        codes.ROUTE_REVISION_STALE: "the state changed since the evaluation the host acted on",
        codes.ROUTE_STALE: "the route id is not available at the current revision",
        codes.ROUTE_UNAVAILABLE: (
            "route without a route id, and the evaluation has no primary route"
        ),
        codes.ROUTE_ARGUMENTS_INVALID: "more positional arguments than [graph] [route-id]",
        codes.HOST_ACTION_LOCATION_INVALID: (
            "a host-action location given to the helpers is malformed"
        ),
        codes.HOST_ACTION_RESULT_INVALID: "a host-action result given to the helpers is malformed",
        codes.VALUE_NOT_SERIALIZABLE: "a value to digest or serialise canonically is not JSON data",
        codes.REQUIRED_FACT_MISSING: "diagnostic: a reached node's requiresFacts fail (blocked)",
        codes.TERMINAL_OUTCOME_AMBIGUOUS: (
            "diagnostic: terminals with different outcomes were reached"
        ),
        codes.NO_ROUTE: "diagnostic: nothing actionable and no terminal reached (blocked)",
        codes.ENTRY_MISSING: "the entry does not exist in the graph",
        codes.ROUTE_ALTERNATIVES_TRUNCATED: "diagnostic (info): more than three alternatives",
    },
    "Graph tests (`agc test`)": {
        codes.TEST_PATH_MISSING: "the test path does not exist",
        codes.TEST_PATH_INVALID: "the test path is neither a file nor a directory",
        codes.TEST_CASES_EMPTY: "no YAML or JSON cases under the path",
        codes.JUNIT_TARGET_EXISTS: "--junit-xml would replace a file that is not a previous report",
    },
    "Runs (`agc run …`, `agent_graph.runs`)": {
        codes.RUN_TARGET_EXISTS: "run start, checkpoint or resume would replace an existing file",
        codes.STATE_KEY_INVALID: "run record got a key that is not a state key of the Run's graph",
        codes.DETAIL_INVALID: "--detail is not JSON data",
        codes.RUN_VERSION_UNSUPPORTED: "a Run file written by a newer toolchain",
        codes.RUN_INVALID: (
            "event sequences with a gap, repeat or fall, or a value JSON cannot hold"
        ),
        codes.RUN_LOCKED: "another writer held the Run's lock for over a minute",
        codes.RUN_LOCK_INVALID: (
            "a Run's (or Flow Run record's) lock is a symlink, a directory or not a regular file"
        ),
        codes.FILE_WRITE_FAILED: "the Run (or another output) cannot be written",
    },
    "Build and bundles (`agc build`, `--manifest …/manifest.json`)": {
        codes.BUILD_OUTPUT_OVERLAPS_SOURCE: (
            "the output would replace the Provider root or a source"
        ),
        codes.BUILD_OUTPUT_EXISTS: "the output exists and is neither empty nor a previous bundle",
        codes.BUILD_PATH_CONFLICT: "a reachable file sits where the bundle writes its own files",
        codes.BUILD_ABSOLUTE_PATH_LEAK: (
            "a reachable file contains the source Provider's absolute path"
        ),
        codes.BUILD_MANIFEST_UNWRITABLE: "the manifest cannot be written as YAML",
        codes.BUILD_WRITE_FAILED: "the file system refused a write",
        codes.BUNDLE_DIGEST_MISMATCH: "manifest.json was edited: its digest does not match",
        codes.BUNDLE_FILE_DUPLICATE: "the manifest lists a file twice",
        codes.BUNDLE_FILE_DIGEST_MISMATCH: "a listed file's bytes changed",
        codes.BUNDLE_CATALOG_MISMATCH: "a catalog entry does not match the files, or is incomplete",
        codes.BUNDLE_PROVIDER_UNLISTED: "the Provider manifest is not listed",
        codes.BUNDLE_PROVIDER_MISMATCH: "the Provider manifest identifies another Provider",
        codes.BUNDLE_FILES_MISMATCH: "listed files differ from the reachable file set",
        codes.BUNDLE_DEPENDENCIES_MISMATCH: "the graph dependency index does not match the calls",
        codes.BUNDLE_IR_BINDING_INVALID: "ir/binding.json is malformed",
        codes.BUNDLE_IR_UNBOUND: "ir/binding.json binds another manifest",
        codes.BUNDLE_IR_DIGEST_MISMATCH: "the IR file's bytes do not match the binding",
        codes.BUNDLE_IR_MISMATCH: "the IR's content does not match the bundle",
        codes.BUNDLE_IR_UNVERIFIED: "the bundle's IR is not what its sources compile to",
    },
    "Compiled IR": {
        codes.IR_CORRUPT: "IR bytes are damaged, truncated, or do not match the expected digest",
        codes.IR_VERSION_UNSUPPORTED: "IR written by another format version: recompile",
        codes.IR_TARGET_EXISTS: "agc ir build -o would overwrite a file that is not IR",
    },
    "Code Catalog and schemas (`agc code`, `agc schema`)": {
        codes.CODE_MISSING: "code locate: no such code, or the Provider has no code catalog",
        codes.SCHEMA_TARGET_EXISTS: "schema extract would replace a different file or a non-file",
    },
    "Materializing resources (`agc resource`)": {
        codes.RESOURCE_MISSING: "no Resource has that id, and no loaded descriptor is at that path",
        codes.RESOURCE_STATIC: "a static resource was passed to materialize",
        codes.MATERIALIZER_MISSING: "the dynamic resource names no materializer Action",
        codes.MATERIALIZER_OPTION_INVALID: "a materialize limit or revision option is invalid",
        codes.MATERIALIZER_TIMEOUT: "the materializer ran past its time limit (group killed)",
        codes.MATERIALIZER_OUTPUT_LIMIT: "the materializer wrote more than the output limit",
        codes.MATERIALIZER_ERROR_LIMIT: "the materializer wrote more than the error limit",
        codes.MATERIALIZER_FAILED: "the materializer exited non-zero or was killed by a signal",
        codes.MATERIALIZER_HOST_REQUIRED: "a host-action resource: the host produces it",
        codes.MATERIALIZER_RUNTIME_MISSING: "the script runtime is not on the materializer's PATH",
        codes.MATERIALIZER_WORKSPACE_MISSING: "the --workspace folder does not exist",
        codes.MATERIALIZER_START_FAILED: "the materializer process could not be started",
        codes.MATERIALIZER_CACHE_FAILED: "the cache folder cannot be written",
        codes.MATERIALIZATION_CHANGED: "a cached view no longer has its receipt's digest",
        codes.OPTION_INVALID: (
            "a numeric command-line option is not a positive integer (or a percentage)"
        ),
    },
    "Running processes (`agent_graph.exec`)": {
        codes.EXEC_ARGV_INVALID: (
            "the argument vector is empty, a string, or holds a non-string/NUL"
        ),
        codes.EXEC_ENV_INVALID: "an environment name or value is not a NUL-free string",
        codes.EXEC_OPTION_INVALID: "a timeout, grace, byte limit or stdin option is invalid",
        codes.EXEC_CWD_MISSING: "the working directory does not exist",
        codes.EXEC_CWD_INVALID: "the working directory is not a directory or cannot be entered",
        codes.EXEC_NOT_FOUND: "the program does not exist (as a path, or on the child's PATH)",
        codes.EXEC_NOT_EXECUTABLE: "the program is a directory, not executable, or of a bad format",
        codes.EXEC_START_FAILED: "the system refused to start the program for another reason",
        codes.EXEC_TIMEOUT: "the process ran past its timeout; its group was killed",
        codes.EXEC_STDOUT_LIMIT: "the process wrote more than the stdout byte limit",
        codes.EXEC_STDERR_LIMIT: "the process wrote more than the stderr byte limit",
        codes.EXEC_SIGNAL: "a signal ended the process",
        codes.EXEC_FAILED: "the process exited with a non-zero code",
    },
    "Authoring (`agc init`, `agc import`, `agc migrate`)": {
        codes.ID_INVALID: "no id can be derived from the text given (or it is too long)",
        codes.PROVIDER_TARGET_EXISTS: "agc init would replace a file that exists",
        codes.IMPORT_TARGET_EXISTS: "agc import would replace a file or folder that exists",
        codes.IMPORT_EMPTY: "agc import scripts was given no script",
        codes.IMPORT_RESULT_INVALID: (
            "the Provider would not validate (or would warn) after the import"
        ),
        codes.WORKFLOW_INVALID: "a workflow file is not {id?, steps: [{id, command, …}]}",
        codes.WORKFLOW_STEP_DUPLICATE: "two workflow steps share an id",
        codes.WORKFLOW_STEP_ID_COLLISION: "two workflow step ids slug to the same node id",
        codes.WORKFLOW_STEP_ID_RESERVED: "a workflow step id slugs to start or done",
        codes.WORKFLOW_DEPENDENCY_MISSING: "a step depends on a step the workflow does not have",
        codes.WORKFLOW_CYCLE: "workflow dependencies form a cycle",
        codes.MIGRATE_BUNDLE_REFUSED: "agc migrate was pointed at a built bundle",
        codes.MIGRATE_RESOURCE_IDENTITY: "change: a resource.v1 descriptor gets its 0.3.1 identity",
        codes.MIGRATE_COMPATIBILITY_RANGE: "change: a 0.2 compatibility range becomes ^0.3.0",
        codes.MIGRATE_RANGE_MANUAL: "finding: a range excludes 0.3 but is not a plain 0.2 range",
        codes.MIGRATE_LOCATION_ENVELOPE_MANUAL: "finding: a file names resource-location.v1",
        codes.YAML_EDIT_FAILED: "a targeted edit would not read back as intended; nothing written",
        codes.FILE_READ_ONLY: "a file to be changed is read-only; nothing was written",
        codes.WRITE_CONFLICT: "a file was saved after the command read it; nothing was written",
        codes.WRITE_JOURNAL_INVALID: "an interrupted commit left a journal agc cannot read",
    },
    "Flow packages (`agc flow`, `agent_graph.flow`)": {
        codes.FLOW_ENTRY_INVALID: (
            "the path is neither a package directory nor a file named exactly FLOW.md, "
            "or the package directory's name is not UTF-8 text"
        ),
        codes.FLOW_ENTRY_MISSING: "the path or the package's FLOW.md does not exist",
        codes.FLOW_ENCODING_INVALID: (
            "FLOW.md is not UTF-8 text (or holds NUL): position of the first bad byte"
        ),
        codes.FLOW_FENCE_UNTERMINATED: (
            "a code block is never closed (it would swallow the rest of the file)"
        ),
        codes.RESOURCE_REFERENCE_NOT_MD: "a references/… link target is not a .md file",
        codes.RESOURCE_SCRIPT_NOT_MJS: "a scripts/… argument is not a .mjs file",
        codes.RESOURCE_PATH_DOT_SEGMENT: "a references/… or scripts/… path has a . or .. segment",
        codes.RESOURCE_OUTSIDE_PACKAGE: (
            "a resource's real path (symlinks followed) leaves the package"
        ),
        codes.RESOURCE_PATH_INVALID: (
            "a resource path has an empty segment, a backslash or a ? query, or a package "
            "file's name is not UTF-8 text"
        ),
        codes.FLOW_ABSOLUTE_PATH: (
            "warning: a command, argument or link is a machine-specific absolute path"
        ),
        codes.RESOURCE_PATH_NOT_MAPPED: (
            "warning: an argument or command looks like a package script but is not mapped"
        ),
        codes.FLOW_FRONTMATTER_MISSING: (
            "FLOW.md does not start with a closed --- front matter block"
        ),
        codes.FLOW_FRONTMATTER_EXTRA_KEY: (
            "a front matter key other than name and description (or a line that is not key: value)"
        ),
        codes.FLOW_FRONTMATTER_DUPLICATE_KEY: "name or description appears twice",
        codes.FLOW_NAME_EMPTY: "front matter name is missing or empty",
        codes.FLOW_DESCRIPTION_EMPTY: "front matter description is missing or empty",
        codes.FLOW_GRAPH_COUNT: "no ```mermaid block, or more than one",
        codes.FLOW_GRAPH_DIRECTION: "the graph's first line is not exactly flowchart TD",
        codes.FLOW_GRAPH_SYNTAX: "a graph line outside the supported Mermaid subset (mermaid.lark)",
        codes.FLOW_GRAPH_MISPLACED: "the graph block comes after the first level-2 heading",
        codes.FLOW_START_MISSING: "no start((开始)) node",
        codes.FLOW_START_DUPLICATE: "a second node with the start shape ((开始))",
        codes.FLOW_FINISH_MISSING: "no finish((结束)) node",
        codes.FLOW_FINISH_DUPLICATE: "a second node with the finish shape ((结束))",
        codes.FLOW_START_OUT_DEGREE: "start has no outgoing edge, or more than one",
        codes.FLOW_FINISH_HAS_OUTGOING: "an edge leaves finish",
        codes.FLOW_EDGE_TARGET_MISSING: "an edge names a node that is never declared",
        codes.FLOW_NODE_UNREACHABLE: "a work node cannot be reached from start",
        codes.FLOW_FINISH_UNREACHABLE: "no path from start reaches finish",
        codes.FLOW_NODE_CANNOT_FINISH: (
            "a reachable work node has no path to finish (off with --lenient)"
        ),
        codes.FLOW_NODE_REF_DUPLICATE: "one ref declared as two kinds of node",
        codes.FLOW_NODE_NAME_DUPLICATE: "two work nodes share a name",
        codes.FLOW_NODE_REF_INVALID: "a ref is not ^[A-Za-z][A-Za-z0-9_-]*$",
        codes.FLOW_REF_RESERVED: "start or finish used as the ref of a work node or fork",
        codes.FLOW_NODE_LABEL_CONFLICT: "a ref declared again with another name",
        codes.FLOW_START_TARGET_INVALID: "the start edge is labelled or leads to a fork or finish",
        codes.FLOW_START_HAS_INCOMING: "an edge points to start",
        codes.FLOW_NODE_NO_OUTGOING: "a work node has no outgoing edge",
        codes.FLOW_EDGE_LABEL_MISSING: "an Agent or command node's edge has no result label",
        codes.FLOW_RESULT_DUPLICATE: (
            "a node has two edges with one label, or two ### headings with one text"
        ),
        codes.FLOW_FORK_EDGE_LABELED: "a fork's edge has a label",
        codes.FLOW_NODE_HEADING_MISSING: "a work node has no ## section with its name",
        codes.FLOW_HEADING_ORPHAN: "a ## heading names no work node",
        codes.FLOW_HEADING_DUPLICATE: "two ## headings with one text",
        codes.FLOW_HEADING_IGNORED: "warning: a ### heading before the first ## section (ignored)",
        codes.FLOW_ACTION_BLOCK_COUNT: "a node's action area holds no code block, or more than one",
        codes.FLOW_ACTION_BLOCK_EMPTY: "the action block is empty",
        codes.FLOW_ACTION_MARKER_INVALID: (
            "the block's info string is not 新建Agent, 复用Agent, 执行自定义命令 or 执行Flow"
        ),
        codes.FLOW_RESULT_HEADING_MISSING: "a result edge has no ### heading in its node's section",
        codes.FLOW_RESULT_DESCRIPTION_EMPTY: "a ### result heading has no description",
        codes.FLOW_RESULT_HEADING_ORPHAN: "a ### heading names no result edge of its node",
        codes.FLOW_RESULT_RESERVED_NAME: (
            "warning: an Agent node uses 已执行, 已完成 or 已失败 as its own result"
        ),
        codes.FLOW_COMMAND_JSON_INVALID: (
            "a command block is not a JSON object (after placeholder substitution)"
        ),
        codes.FLOW_COMMAND_MISSING: "command is missing, empty or not a string",
        codes.FLOW_COMMAND_ARGS_INVALID: "args is not an array of strings",
        codes.FLOW_COMMAND_STDIN_INVALID: "stdin is not valid JSON (NaN, Infinity, a repeated key)",
        codes.FLOW_COMMAND_UNKNOWN_FIELD: (
            "a command member other than command, args, stdin (off with --lenient)"
        ),
        codes.FLOW_OUTCOME_OUTSIDE_STRING: (
            "{outcome} stands outside a JSON string in a command or 执行Flow block"
        ),
        codes.FLOW_COMMAND_RESULT_INVALID: (
            "a command node has more than one edge, or its label is not 已执行"
        ),
        codes.FLOW_FORK_IN_DEGREE: "a fork has not exactly one incoming edge",
        codes.FLOW_FORK_OUT_DEGREE: "a fork has fewer than two branches",
        codes.FLOW_BRANCH_IN_DEGREE: "a branch has incoming edges besides its fork's",
        codes.FLOW_BRANCH_NOT_COMMAND: "a branch is not a command node",
        codes.FLOW_BRANCH_JOIN_MISMATCH: "a fork's branches do not all go to one work node",
        codes.FLOW_JOIN_IN_DEGREE: "a join has fewer than two incoming edges",
        codes.FLOW_JOIN_SOURCES_MISMATCH: (
            "a join is reached from nodes other than its fork's branches"
        ),
        codes.FLOW_JOIN_REF_MISSING: "a join's stdin does not read a branch with {branch.outcome}",
        codes.FLOW_BRANCH_REF_MISPLACED: "{ref.outcome} outside a join's stdin",
        codes.FLOW_BRANCH_REF_NOT_STANDALONE: (
            "{ref.outcome} inside a string or joined to other text"
        ),
        codes.FLOW_BRANCH_REF_UNKNOWN: "{ref.outcome} names no branch of the join's fork",
        codes.FLOW_JOIN_NOT_COMMAND: "a join is an Agent node",
        codes.FLOW_REF_JSON_INVALID: "a 执行Flow block is not a JSON object",
        codes.FLOW_REF_ID_INVALID: (
            "执行Flow flow is missing, not a valid id, or over 255 characters"
        ),
        codes.FLOW_REF_EXTRA_FIELD: "a 执行Flow member other than flow and task",
        codes.FLOW_REF_EDGES_INVALID: (
            "a 执行Flow node has neither one plain edge nor exactly 已完成 and 已失败"
        ),
        codes.FLOW_REF_IN_PARALLEL: "a 执行Flow node is a branch or a join",
        codes.FLOW_REF_TARGET_MISSING: "no sibling package <flow>/FLOW.md",
        codes.FLOW_REF_CYCLE: "执行Flow references form a cycle (self-reference included)",
        codes.FLOW_CHILD_REUSE_FIRST: (
            "in a child Flow, a 复用Agent runs before any 新建Agent (off with --lenient)"
        ),
        codes.FLOW_ID_NOT_REFERENCEABLE: (
            "warning: the package directory name cannot be a 执行Flow target"
        ),
        codes.FLOW_ID_DUPLICATE: (
            "agc flow list DIR: two packages under one root share an id (without DIR: a warning)"
        ),
        codes.FLOW_ROOT_MISSING: "agc flow list: the root is not a directory",
    },
    "Flow Runs (`agc flow run|resume|status|events`)": {
        codes.RUN_STATE_INVALID: "--state is a directory, or its directory does not exist",
        codes.RUN_BUSY: "another process is running or resuming this Run (its lock is held)",
        codes.RUN_RECORD_INVALID: "a Run record that is truncated, not JSON or not of this shape",
        codes.RUN_RECORD_MODIFIED: "a Run record changed outside agc (its checksum does not match)",
        codes.RUN_RECORD_TOO_LARGE: (
            "a commit would make the Run record larger than its reader accepts: the Run failed"
        ),
        codes.RUN_CONTENT_INVALID: (
            "a content a Run record keeps in a side file is missing or damaged"
        ),
        codes.RUN_NOT_RESUMABLE: "resume of a Run that has completed or failed",
        codes.RUN_CHILD_DIRECT_RESUME: "resume of a child Run; it resumes with its parent (named)",
        codes.RUN_FINGERPRINT_MISMATCH: (
            "the Flow's files (or a child Flow's) changed since the Run"
        ),
        codes.RUN_ENTRY_MISSING: "the Run's recorded FLOW.md no longer exists",
        codes.FLOW_PROGRAM_MISSING: (
            "runtime resume of a Run that kept no program, given no compile"
        ),
        codes.FLOW_PROGRAM_UNPLACED: (
            "a Flow program given to start does not say where its files are"
        ),
        codes.RUN_FLOW_MISMATCH: (
            "the recorded entry now holds another Flow, or the record another's nodes"
        ),
        codes.RUN_CWD_MISSING: "the Run's working directory does not exist (at start or resume)",
        codes.RUN_CWD_INVALID: "the Run's recorded working directory exists but is not a directory",
        codes.COMMAND_INTERRUPTED: (
            "plain resume of a Run (or child Run) whose command was interrupted; nothing changed"
        ),
        codes.RUN_TASK_INVALID: "the task (Python API) is not JSON data",
        codes.RUN_OPTION_INVALID: "max_parallel / max_visits / command timeout out of range (API)",
        codes.AGENT_REQUIRED: "the Flow has Agent steps and no --agent adapter was given",
        codes.AGENT_BOUND: "the Agent to start a Run with is bound to another active Run",
        codes.AGENT_SPEC_INVALID: "--agent names no adapter, or one that cannot be set up",
        codes.AGENT_ASK_NO_TERMINAL: "--agent ask, but the process has no terminal to ask on",
        codes.AGENT_UNAVAILABLE: "the program --agent names is not there (claude, codex, command:)",
        codes.AGENT_REPLY_TOO_LARGE: "an agent CLI's reply is too long to search for an answer",
        codes.AGENT_ANSWER_TOO_DEEP: "an Agent's answer is JSON nested too deeply",
    },
    "Pictures and explanations (`agc graph`, `agc explain`, `agc flow graph`)": {
        codes.GRAPHVIZ_MISSING: "--format svg, but Graphviz dot is not installed (message: how to)",
        codes.GRAPHVIZ_FAILED: "Graphviz dot did not start, exited non-zero or was killed",
        codes.GRAPHVIZ_TIMEOUT: "Graphviz dot took longer than its time limit (graph too large)",
        codes.EXPLAIN_NODE_MISSING: (
            "agc explain --node names no node of the evaluated frames, or --reach none of the Graph"
        ),
        codes.REACH_TEST_EXISTS: "agc explain --reach --write-test FILE: FILE exists, not written",
        codes.EXPLAIN_ENTRY: "reason: the node is the frame's entry",
        codes.EXPLAIN_EDGE: "reason: reached over an incoming edge that matched",
        codes.EXPLAIN_REPEAT_REACHED: "reason: reached by a repeat edge",
        codes.EXPLAIN_JOIN_UNMET: "reason: not reached, the join's incoming edges do not match",
        codes.EXPLAIN_UNREACHED: "reason: not reached, no edge leads here (or only a repeat edge)",
        codes.EXPLAIN_REQUIRES_FAILED: "reason: blocked, a requiresFacts check fails",
        codes.EXPLAIN_REQUIRES_MET: "reason: every requiresFacts check holds",
        codes.EXPLAIN_SATISFIED: "reason: completed, satisfiedBy holds",
        codes.EXPLAIN_UNVERIFIED: "reason: recorded completed, but satisfiedBy fails",
        codes.EXPLAIN_RECORDED: "reason: the recorded outcome under the state key",
        codes.EXPLAIN_NO_RECORD: "reason: pending, nothing recorded and satisfiedBy not met",
        codes.EXPLAIN_TERMINAL: "reason: a terminal's terminalOutcome",
        codes.EXPLAIN_SUBGRAPH: "reason: a subgraph node's outcome from its child frame",
        codes.EXPLAIN_REPEAT_RESET: "reason: reset to pending by a repeat edge",
        codes.EXPLAIN_CANDIDATE: "reason: offered as a route, with its rank",
        codes.EXPLAIN_NOT_OFFERED: "reason: pending, but its frame is complete or in error",
    },
    "MCP server (`agc mcp`, `agc run decide`)": {
        codes.MCP_SDK_MISSING: "agc mcp serve without the MCP SDK (pip install 'agent-graph[mcp]')",
        codes.MCP_CONFIG_INVALID: "the --config file declares an observer id twice",
        codes.MCP_TOOLS_INVALID: "--tools names no profile and no tool",
        codes.PROMPT_UNKNOWN: "prompts/get names no prompt this server lists",
        codes.MCP_HTTP_INVALID: "--http is not a loopback HOST:PORT, or lacks --token-file",
        codes.FLOW_UNKNOWN: "flow_start names no Flow under the server's --flows directories",
        codes.FLOW_ANSWER_STALE: "flow_answer for a visit the Flow Run is not waiting on",
        codes.FLOW_DRIVER_FAILED: "the server's Flow driver thread failed unexpectedly",
        codes.ARGUMENTS_INVALID: (
            "tool arguments do not match the tool's input schema (JSON pointer)"
        ),
        codes.PROVIDER_INVALID: "a served Provider did not load, or its id is served twice",
        codes.RUN_MISSING: "no Run has this handle",
        codes.RUN_RECORD_CONFLICT: "run_record for a stale sequence or a key no route offered",
        codes.GATE_NOT_WAITING: "the route is not a Gate waiting for the user",
        codes.GATE_CONFIRMATION_MISMATCH: (
            "agc run decide: the typed confirmation was not the Gate id"
        ),
        codes.TTY_REQUIRED: "agc run decide without a terminal to ask on",
        codes.PATH_OUTSIDE_ROOTS: "a workspace argument leads out of the server's workspaces",
        codes.RESULT_TOO_LARGE: "a tool result over the 24 KiB cap",
    },
    "Language server (`agc lsp`)": {
        codes.LSP_SERVER_MISSING: "agc lsp without pygls (pip install 'agent-graph[lsp]')",
        codes.LSP_RENAME_REFUSED: (
            "a rename to a node id that is taken, malformed, or not a node id at all"
        ),
    },
    "Command line": {
        codes.USAGE_INVALID: "unknown command or option, missing argument (exit 2)",
        codes.FORMAT_INVALID: "--format is not human or json (exit 2)",
        codes.SCHEMA_TYPE_UNKNOWN: "an unknown schema name",
        codes.SCHEMA_COMPILE_FAILED: "a packaged schema that cannot be read",
        codes.UNEXPECTED_ERROR: "anything else (a bug)",
    },
    "Warnings (the Provider still loads)": {
        codes.COMPATIBILITY_RANGE_EXCLUDES: "compatibility.agentGraph excludes the 0.3 line",
        codes.RESOURCE_PROTOCOL_LEGACY: "a 0.2 agent-graph.resource.v1 descriptor",
        codes.NODE_UNREACHABLE: "no edge path from any entrypoint reaches the node",
        codes.OUTCOME_KEY_UNKNOWN: (
            "an outcome is recorded for a key that is no state key of the graph"
        ),
        codes.FACT_KEY_DOTTED: "a Fact key holds dots: one member, not a path; nest it",
        codes.ACTION_FILE_UNLISTED: (
            "a command Action runs a Provider file its files: does not list"
        ),
    },
}

#: Every code -> its meaning.
CODES: Final[Mapping[str, str]] = {
    code: meaning for entries in AREAS.values() for code, meaning in entries.items()
}
