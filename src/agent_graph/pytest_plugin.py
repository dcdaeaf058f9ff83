"""pytest plugin: a Provider's graph tests (``agent-graph.test.v1``) as pytest items.

Inert unless a Provider is named, so installing agent-graph changes no other test
suite. Opt in with ``--agc-provider PATH`` (relative to the invocation directory) or
the ini option ``agc_provider`` (relative to the ini file); PATH is a manifest or a
directory holding ``provider.yaml``. Cases are the YAML/JSON files below
``--agc-tests``/``agc_tests`` (default: ``tests`` next to the manifest), one item per
file, named by the case's ``name``. The Provider is compiled once per session; an
item fails with each unmet expectation's expected and received values and its line.

When pytest was started without explicit paths and its collection roots do not
already cover the graph tests directory, the directory is added to them, so a plain
``pytest`` runs the graph tests too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from .errors import AgentGraphError
    from .testing import CaseResult, GraphTestCase
    from .vm import Program


@dataclass(frozen=True, slots=True)
class _Settings:
    manifest: Path
    tests: Path
    cases: frozenset[str]


_SETTINGS = pytest.StashKey[_Settings]()
_PROGRAM = pytest.StashKey["Program | AgentGraphError"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agent-graph", "Agent Graph graph tests")
    group.addoption(
        "--agc-provider",
        dest="agc_provider",
        default=None,
        metavar="PATH",
        help="Collect this Provider's graph tests (a manifest, or a directory with "
        "provider.yaml). Without it (or the agc_provider ini option) the plugin does nothing.",
    )
    group.addoption(
        "--agc-tests",
        dest="agc_tests",
        default=None,
        metavar="DIR",
        help="Where the graph tests are (default: tests next to the manifest).",
    )
    parser.addini(
        "agc_provider", "Provider whose graph tests to collect (relative to the ini file)"
    )
    parser.addini("agc_tests", "Graph tests directory (relative to the ini file)")


def _configured(config: pytest.Config, name: str) -> Path | None:
    """An option (relative to the invocation directory) or else an ini value (to the ini file)."""
    value = config.getoption(name)
    if value:
        return Path(os.path.abspath(config.invocation_params.dir / value))
    ini = config.getini(name)
    if ini:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return Path(os.path.abspath(base / str(ini)))
    return None


def _covered(config: pytest.Config, directory: Path) -> bool:
    for arg in config.args:
        root = Path(os.path.abspath(config.invocation_params.dir / arg.split("::", 1)[0]))
        if directory == root or root in directory.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    manifest = _configured(config, "agc_provider")
    if manifest is None:
        return
    from .errors import AgentGraphError
    from .testing import discover

    if manifest.is_dir():
        manifest = manifest / "provider.yaml"
    tests = _configured(config, "agc_tests") or manifest.parent / "tests"
    try:
        found = discover(tests)
    except AgentGraphError as error:
        raise pytest.UsageError(f"agent-graph: {error.code}: {error.message}") from None
    cases = frozenset(os.path.realpath(path) for path in found)
    config.stash[_SETTINGS] = _Settings(manifest, tests, cases)
    if config.args_source != pytest.Config.ArgsSource.ARGS and not _covered(config, tests):
        config.args.append(str(tests))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    settings = parent.config.stash.get(_SETTINGS, None)
    if settings is None or file_path.suffix.lower() not in (".yaml", ".yml", ".json"):
        return None
    if os.path.realpath(file_path) not in settings.cases:
        return None
    collector: GraphTestFile = GraphTestFile.from_parent(parent, path=file_path)
    return collector


def _error_text(error: AgentGraphError) -> str:
    lines = [f"{error.code}: {error.message}"]
    lines += [f"  {d.location()}: {d.code}: {d.message}" for d in error.diagnostics]
    return "\n".join(lines)


def _program(config: pytest.Config) -> Program:
    from .errors import AgentGraphError

    cached = config.stash.get(_PROGRAM, None)
    if cached is None:
        from . import compile_provider

        try:
            cached = compile_provider(config.stash[_SETTINGS].manifest)
        except AgentGraphError as error:
            cached = error
        config.stash[_PROGRAM] = cached
    if isinstance(cached, AgentGraphError):
        raise cached
    return cached


class GraphTestFailed(AssertionError):
    """A case ran and some expectations were not met."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(f"graph test {result.name!r} failed")
        self.result = result


class GraphTestFile(pytest.File):
    """One ``agent-graph.test.v1`` file: a single case."""

    def collect(self) -> Iterator[GraphTestItem]:
        from .testing import load_case

        case = load_case(self.path)
        yield GraphTestItem.from_parent(self, name=case.name, case=case)

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        from .errors import AgentGraphError

        if isinstance(excinfo.value, AgentGraphError):
            return _error_text(excinfo.value)
        return super().repr_failure(excinfo)


class GraphTestItem(pytest.Item):
    """Evaluates one case against the session's compiled Provider (nothing is executed)."""

    def __init__(self, *, case: GraphTestCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        # A graph test takes no fixtures. Plugins that wrap every test's call and read
        # ``item.funcargs`` (pytest-lsp 1.0 ends its hook wrapper early without it, which
        # fails every non-function item) then see what a fixture-less function has.
        self.funcargs: dict[str, Any] = {}

    def runtest(self) -> None:
        from .testing import run_case

        result = run_case(_program(self.config), self.case)
        if not result.passed:
            raise GraphTestFailed(result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | TerminalRepr:
        from .errors import AgentGraphError
        from .testing import result_lines

        error = excinfo.value
        if isinstance(error, GraphTestFailed):
            lines = result_lines(error.result, self.config.rootpath)
            return "\n".join([f"graph test {self.case.name!r} failed:", *lines[1:]])
        if isinstance(error, AgentGraphError):
            return _error_text(error)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"graph test: {self.case.name}"
