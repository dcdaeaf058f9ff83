"""``resource locate`` / ``resource materialize`` (docs/resources.md)."""

from __future__ import annotations

import dataclasses
import json
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agent_graph import program_of
from agent_graph.canonical import digest_bytes, digest_text
from agent_graph.cli import main
from agent_graph.compiler import compile_manifest
from agent_graph.documents.schema import validate
from agent_graph.errors import AgentGraphError
from agent_graph.materialize import extension_for, locate, materialize
from agent_graph.vm import Program
from agent_graph.vm.locations import FileLocation, GraphActionLocation, HostActionLocation
from tree_support import write_tree

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
REV = "sha256:" + "a" * 64

# id -> (media type, action members)
VIEWS: dict[str, tuple[str, str]] = {
    "ok": ("text/markdown", "runner: command, command: \"printf '# ok\\\\n'\""),
    "env": ("text/plain", "runner: command, command: env"),
    "script": (
        "application/json",
        'runner: script, runtime: python, entry: scripts/view.py, args: ["a b", "$HOME"], '
        "cwd: provider",
    ),
    "sleep": ("text/plain", "runner: command, command: sleep 30"),
    "bg": ("text/plain", 'runner: command, command: "sleep 30 & echo $!"'),
    "flood": ("text/plain", 'runner: command, command: "yes | head -c 100000"'),
    "errflood": ("text/plain", 'runner: command, command: "yes >&2"'),
    "fail": ("text/plain", "runner: command, command: \"echo '  bad news ' >&2; exit 3\""),
    "signal": ("text/plain", 'runner: command, command: "kill -TERM $$"'),
    "bin": (
        "application/octet-stream",
        "runner: command, command: \"printf '\\\\377\\\\000\\\\001'\"",
    ),
    "lossy": ("text/plain", "runner: command, command: \"printf 'a\\\\377b'\""),
}


def _files() -> dict[str, str]:
    refs = ", ".join([*(f"resources/{x}.yaml" for x in VIEWS), "resources/static.md"])
    files = {
        "provider.yaml": "schema: agent-graph.provider.v1\nid: test.views\nversion: 0.1.0\n"
        "graphs: [graphs/main.yaml]\ncatalogs: {codes: codes.yaml}\n",
        "codes.yaml": "schema: agent-graph.code-catalog.v1\ncodes:\n"
        "  - {code: route.main.a, kind: route-reason, summary: Step a}\n",
        "graphs/main.yaml": "schema: agent-graph.graph.v1\nid: main\nentrypoints: {default: a}\n"
        "nodes:\n  - id: a\n    kind: action\n    reasonCode: route.main.a\n"
        "    action: actions/agent.yaml\n"
        f"    resources: {{recommended: [{refs}]}}\n"
        "  - {id: done, kind: terminal, terminalOutcome: completed}\n"
        "edges:\n  - {from: a, to: done}\n",
        "actions/agent.yaml": "{schema: agent-graph.action.v1, id: agent, runner: host, "
        "effect: read, handler: test.agent/v1}\n",
        "resources/static.md": "---\nid: test.static\nkind: procedure\nmedia-type: text/markdown\n"
        "---\n# Static\n",
        "scripts/view.py": "import json, os, sys\n"
        "print(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd()}))\n",
    }
    for name, (media, action) in VIEWS.items():
        files[f"resources/{name}.yaml"] = (
            f"schema: agent-graph.resource.graph-action.v1\nid: view.{name}\n"
            f"kind: context-view\nmediaType: {media}\nmaterializer: actions/m-{name}.yaml\n"
        )
        files[f"actions/m-{name}.yaml"] = (
            f"{{schema: agent-graph.action.v1, id: m.{name}, effect: read, {action}}}\n"
        )
    return files


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("views") / "provider root", _files())


@pytest.fixture(scope="module")
def program(root: Path) -> Program:
    return program_of(compile_manifest(root / "provider.yaml"))


def _code(call: Any) -> AgentGraphError:
    with pytest.raises(AgentGraphError) as info:
        call()
    return info.value


def _empty(cache: Path) -> bool:
    return not cache.exists() or not any(cache.iterdir())


def _run(program: Program, ident: str, cache: Path, **options: Any) -> Any:
    return materialize(program, ident, cache=cache, revision=REV, **options)


# -- locate -------------------------------------------------------------------------------


def test_locate_by_id_and_by_descriptor_path(program: Program, root: Path) -> None:
    by_id = locate(program, "view.ok")
    assert by_id == locate(program, "resources/ok.yaml") == locate(program, "./resources/ok.yaml")
    assert isinstance(by_id, GraphActionLocation)
    assert by_id.to_dict() == {
        "schema": "agent-graph.resource-location.graph-action.v1",
        "id": "view.ok",
        "kind": "context-view",
        "mediaType": "text/markdown",
        "materialize": {"resourceId": "view.ok"},
    }
    static = locate(program, "resources/static.md")
    assert isinstance(static, FileLocation)
    assert static.file_path == str(root / "resources/static.md")
    assert "readState" not in static.to_dict()


@pytest.mark.parametrize(
    ("reference", "code"),
    [
        ("nope", "resource-missing"),
        ("resources/nope.yaml", "resource-missing"),
        ("../x.yaml", "path-outside-provider"),
        ("resources/../../x.yaml", "path-outside-provider"),
        ("/etc/passwd", "absolute-path-forbidden"),
        ("scripts/view.py", "resource-missing"),
    ],
)
def test_locate_refuses(program: Program, reference: str, code: str) -> None:
    assert _code(lambda: locate(program, reference)).code == code


def test_host_action_location_and_materialize_refusal(tmp_path: Path) -> None:
    views = program_of(compile_manifest(EXAMPLES / "context-views/provider.yaml"))
    location = locate(views, "acme.team-digest")
    assert isinstance(location, HostActionLocation)
    assert "revision" not in location.to_dict()
    error = _code(lambda: _run(views, "acme.team-digest", tmp_path / "c"))
    assert error.code == "materializer-host-required"
    assert error.diagnostics[0].detail["location"] == location.to_dict()
    assert error.diagnostics[0].detail["inputDigest"] == location.input_digest
    assert _empty(tmp_path / "c")


# -- materialize: success -----------------------------------------------------------------


def test_materialize_writes_content_and_receipt(program: Program, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    done = _run(program, "view.ok", cache)
    digest = digest_text("# ok\n")
    hex_ = digest.removeprefix("sha256:")
    assert done.digest == digest
    assert done.file_path == str(cache / f"{hex_}.md")
    assert Path(done.file_path).read_bytes() == b"# ok\n"
    assert done.to_dict() == {
        "schema": "agent-graph.resource-location.graph-action.v1",
        "id": "view.ok",
        "kind": "context-view",
        "mediaType": "text/markdown",
        "revision": REV,
        "digest": digest,
        "filePath": done.file_path,
    }
    receipt = json.loads((cache / f"{hex_}.receipt.json").read_text())
    assert list(receipt) == [
        "schema",
        "provider",
        "resource",
        "revision",
        "digest",
        "mediaType",
        "file",
    ]
    assert receipt["schema"] == "agent-graph.materialization.v1"
    assert validate("materialization", receipt, path="receipt") is None
    assert (receipt["provider"], receipt["resource"], receipt["file"]) == (
        "test.views",
        "view.ok",
        done.file_path,
    )
    assert sorted(p.name for p in cache.iterdir()) == [f"{hex_}.md", f"{hex_}.receipt.json"]


def test_environment_is_minimal_plus_agent_graph_variables(
    program: Program, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "leak")
    monkeypatch.setenv("TZ", "UTC")
    work = tmp_path / "work"
    work.mkdir()
    done = _run(
        program,
        "view.env",
        tmp_path / "c",
        workspace=work,
        input={"b": 1, "a": [1.0, "é"]},
        extra_env={"EXTRA": "yes", "AGENT_GRAPH_REVISION": "overridden"},
    )
    lines = Path(done.file_path).read_text().splitlines()
    env = dict(line.split("=", 1) for line in lines if "=" in line)
    assert "SECRET_TOKEN" not in env
    assert "HOME" not in env
    assert env["TZ"] == "UTC"
    assert env["EXTRA"] == "yes"
    assert env["AGENT_GRAPH_PROVIDER_ROOT"] == str(root)
    assert env["AGENT_GRAPH_WORKSPACE"] == str(work)
    assert env["AGENT_GRAPH_REVISION"] == REV
    assert env["AGENT_GRAPH_INPUT"] == '{"b":1,"a":[1,"é"]}'
    assert env["PWD"] == str(work)  # cwd: workspace


def test_input_defaults_to_null(program: Program, tmp_path: Path) -> None:
    done = _run(program, "view.env", tmp_path / "c", workspace=tmp_path)
    assert "AGENT_GRAPH_INPUT=null" in Path(done.file_path).read_text().splitlines()


def test_script_runner_is_an_argv_without_shell(
    program: Program, root: Path, tmp_path: Path
) -> None:
    done = _run(program, "view.script", tmp_path / "c")
    assert done.file_path.endswith(".json")
    assert json.loads(Path(done.file_path).read_text()) == {
        "argv": ["a b", "$HOME"],
        "cwd": str(root),
    }


def test_binary_keeps_bytes_and_text_decodes_lossily(program: Program, tmp_path: Path) -> None:
    binary = _run(program, "view.bin", tmp_path / "c")
    assert binary.file_path.endswith(".bin")
    assert Path(binary.file_path).read_bytes() == b"\xff\x00\x01"
    assert binary.digest == digest_bytes(b"\xff\x00\x01")
    lossy = _run(program, "view.lossy", tmp_path / "c")
    assert Path(lossy.file_path).read_bytes() == "a\ufffdb".encode()
    assert lossy.digest == digest_text("a\ufffdb")
    assert [extension_for(m) for m in ("application/json", "text/markdown", "text/csv", "x/y")] == [
        ".json",
        ".md",
        ".txt",
        ".bin",
    ]


@pytest.mark.parametrize("view", ["view.ok", "view.bin", "view.lossy"])
def test_a_cached_view_is_read_back_only_while_it_has_its_receipts_digest(
    program: Program, tmp_path: Path, view: str
) -> None:
    """Issue 27: an output edited on disk is never served as the view of its revision."""
    done = _run(program, view, tmp_path / "c")
    cached = Path(done.file_path)
    assert done.read() == cached.read_bytes()
    receipt = json.loads(Path(done.receipt_path).read_text(encoding="utf-8"))
    assert receipt["digest"] == done.digest
    cached.write_bytes(cached.read_bytes() + b"edited\n")
    with pytest.raises(AgentGraphError) as caught:
        done.read()
    assert caught.value.code == "materialization-changed"
    assert f"its receipt says {done.digest}" in caught.value.message
    cached.unlink()
    with pytest.raises(AgentGraphError) as caught:
        done.read()
    assert caught.value.code == "materialization-changed"
    assert "cannot be read" in caught.value.message


def test_background_grandchild_is_killed(program: Program, tmp_path: Path) -> None:
    started = time.monotonic()
    done = _run(program, "view.bg", tmp_path / "c")
    assert time.monotonic() - started < 10
    pid = int(Path(done.file_path).read_text())
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    """Running (a zombie that no init reaps in a container is dead)."""
    for _ in range(50):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return False
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return False
        time.sleep(0.02)
    return True


def test_concurrent_materializations_leave_one_consistent_file(
    program: Program, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: _run(program, "view.ok", cache), range(4)))
    assert len({r.file_path for r in results}) == 1
    assert Path(results[0].file_path).read_bytes() == b"# ok\n"
    assert len(list(cache.iterdir())) == 2  # no temporary files left
    json.loads(Path(results[0].receipt_path).read_text())


# -- materialize: refusals and failures (no file, no receipt) ------------------------------


@pytest.mark.parametrize(
    ("ident", "options", "code", "message"),
    [
        ("view.sleep", {"timeout_ms": 300}, "materializer-timeout", "exceeded the 300ms timeout"),
        (
            "view.flood",
            {"max_output_bytes": 1000},
            "materializer-output-limit",
            "exceeded the 1000 byte stdout limit",
        ),
        (
            "view.errflood",
            {"max_error_bytes": 1000},
            "materializer-error-limit",
            "exceeded the 1000 byte stderr limit",
        ),
        ("view.fail", {}, "materializer-failed", "Materializer m.fail exited with 3: bad news"),
        ("view.signal", {}, "materializer-failed", "exited with null: "),
        (
            "view.script",
            {"extra_env": {"PATH": "/nonexistent-agc-path"}},
            "materializer-runtime-missing",
            "cannot start python3",
        ),
        ("view.ok", {"workspace": "/nonexistent-agc-dir"}, "materializer-workspace-missing", ""),
        ("test.static", {}, "resource-static", "is static and does not need materialization"),
        ("nope", {}, "resource-missing", "has no resource nope"),
        ("../x", {}, "path-outside-provider", ""),
        ("/abs", {}, "absolute-path-forbidden", ""),
    ],
)
def test_materialize_failures(
    program: Program, tmp_path: Path, ident: str, options: dict[str, Any], code: str, message: str
) -> None:
    cache = tmp_path / "cache"
    started = time.monotonic()
    error = _code(lambda: _run(program, ident, cache, **options))
    assert time.monotonic() - started < 10
    assert error.code == code
    assert message in error.message
    assert _empty(cache)


def test_exactly_the_limit_is_fine(program: Program, tmp_path: Path) -> None:
    done = _run(program, "view.ok", tmp_path / "c", max_output_bytes=5)
    assert Path(done.file_path).read_bytes() == b"# ok\n"


def test_signal_detail_names_the_signal(program: Program, tmp_path: Path) -> None:
    error = _code(lambda: _run(program, "view.signal", tmp_path / "c"))
    assert error.diagnostics[0].detail == {"exitCode": None, "signal": signal.SIGTERM.name}


@pytest.mark.parametrize("value", [0, -1, 1.5, "10", True, 2**53])
@pytest.mark.parametrize("name", ["timeout_ms", "max_output_bytes", "max_error_bytes"])
def test_limits_must_be_positive_safe_integers(
    program: Program, tmp_path: Path, name: str, value: Any
) -> None:
    error = _code(lambda: _run(program, "view.ok", tmp_path / "c", **{name: value}))
    assert error.code == "materializer-option-invalid"
    assert _empty(tmp_path / "c")


@pytest.mark.parametrize("revision", ["", "x", "sha256:" + "A" * 64, "sha256:" + "a" * 63])
def test_revision_shape_is_checked_first(program: Program, tmp_path: Path, revision: str) -> None:
    error = _code(lambda: materialize(program, "nope", cache=tmp_path, revision=revision))
    assert error.code == "revision-invalid"


def test_write_materializer_is_refused(program: Program, tmp_path: Path) -> None:
    """The loader refuses a write materializer (materializer-effect-invalid) and so does a
    Program built by hand (ir-corrupt): materialize never meets one."""
    files = _files()
    files["actions/m-ok.yaml"] = files["actions/m-ok.yaml"].replace("effect: read", "effect: write")
    manifest = write_tree(tmp_path / "p", files) / "provider.yaml"
    error = _code(lambda: compile_manifest(manifest))
    assert error.code == "materializer-effect-invalid"
    ir = program.ir
    index = next(x.materializer for x in ir.resources if x.id == "view.ok")
    actions = list(ir.actions)
    actions[index] = dataclasses.replace(actions[index], effect="write")
    edited = dataclasses.replace(ir, actions=tuple(actions))
    assert _code(lambda: Program(edited, program.root)).code == "ir-corrupt"


# -- CLI ----------------------------------------------------------------------------------


def _agc(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_locate_lines(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = str(root / "provider.yaml")
    code, out, _ = _agc(capsys, "resource", "locate", "view.ok", "-m", manifest)
    assert code == 0
    assert out.startswith(
        "Dynamic resource view.ok; run agc resource materialize view.ok --revision <rev> "
        "--cache <dir> -m "
    )
    code, out, _ = _agc(capsys, "resource", "locate", "test.static", "-m", manifest)
    assert (code, out) == (0, f"{root / 'resources/static.md'}\n")
    views = str(EXAMPLES / "context-views/provider.yaml")
    code, out, _ = _agc(capsys, "resource", "locate", "acme.team-digest", "-m", views)
    assert code == 0
    assert "Handler: acme.build-team-digest/v1" in out
    assert "Input schema: acme.team-digest-request/v1" in out
    assert "Input digest: sha256:" in out


def test_cli_materialize_the_readme_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    views = str(EXAMPLES / "context-views/provider.yaml")
    cache = str(tmp_path / "cache")
    args = ["resource", "materialize", "acme.workspace-status", "--revision", REV]
    code, out, _ = _agc(capsys, *args, "--cache", cache, "-m", views)
    assert code == 0
    first, second = out.splitlines()
    assert first.startswith(f"Materialized acme.workspace-status: {cache}/")
    assert second.startswith("Digest: sha256:")
    code, out, _ = _agc(capsys, "--format", "json", *args, "--cache", cache, "-m", views)
    assert json.loads(out)["filePath"] == first.split(": ", 1)[1]
    code, _, err = _agc(
        capsys, *args[:2], "acme.team-digest", *args[3:], "--cache", cache, "-m", views
    )
    assert code == 1
    assert "materializer-host-required" in err


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "abc", "", "9007199254740992"])
def test_cli_numeric_options(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    manifest = str(root / "provider.yaml")
    for option in ("--timeout-ms", "--max-output-bytes", "--max-error-bytes"):
        code, _, err = _agc(
            capsys,
            "resource",
            "materialize",
            "view.ok",
            "--revision",
            REV,
            "--cache",
            str(tmp_path / "c"),
            f"{option}={value}",
            "-m",
            manifest,
        )
        assert code == 2  # a bad option value is a usage error (docs/providers.md)
        assert err == f"ERROR option-invalid: Expected a positive integer, received: {value}\n"
    assert _empty(tmp_path / "c")


def test_cli_failure_is_coded_not_a_traceback(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _agc(
        capsys,
        "--format",
        "json",
        "resource",
        "materialize",
        "view.fail",
        "--revision",
        REV,
        "--cache",
        str(tmp_path / "c"),
        "-m",
        str(root / "provider.yaml"),
    )
    assert code == 1
    assert json.loads(err)["error"]["code"] == "materializer-failed"
    assert _empty(tmp_path / "c")


def test_the_vm_does_not_import_materialize() -> None:
    import subprocess
    import sys

    code = "import sys, agent_graph.vm; print('agent_graph.materialize' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("readme", ["docs/resources.md", "examples/context-views/README.md"])
def test_the_readme_materialize_command_runs_as_written(tmp_path: Path, readme: str) -> None:
    """The one-command materialization of docs/resources.md and the example's README, run by
    bash exactly as written."""
    import re
    import shutil
    import subprocess

    root = Path(__file__).resolve().parents[2]
    text = (root / readme).read_text(encoding="utf-8")
    (command,) = re.findall(r"```bash\n(agc resource materialize .*?)\n```", text, re.S)
    shutil.copytree(root / "examples", tmp_path / "examples")
    cache = tmp_path / "agc-cache"
    command = command.replace("/tmp/agc-cache", str(cache))
    done = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    receipts = list(cache.glob("*.receipt.json"))
    assert len(receipts) == 1
    assert str(cache) in done.stdout
