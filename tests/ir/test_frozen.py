"""Frozen records (agent_graph.frozen), and what a cold ``agc evaluate`` leaves unloaded."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from shapes import chain

from agent_graph import frozen
from agent_graph.errors import Diagnostic


@frozen.record
class _Sample:
    name: str
    size: int = 1
    tags: list[str] = frozen.field(default_factory=list)
    note: str | None = frozen.field(default=None, compare=False, repr=False)


def test_default_factories_make_a_fresh_value_per_record() -> None:
    first, second = _Sample("a"), _Sample("b")
    assert first.tags == []
    assert first.tags is not second.tags
    assert _Sample("a", 2, ["x"]).tags == ["x"]
    assert Diagnostic("c", "m").detail is not Diagnostic("c", "m").detail


@frozen.record
class _Point:
    x: int
    label: str = frozen.field(default="", compare=False)


def test_compare_and_repr_options() -> None:
    assert _Sample("a", note="x") == _Sample("a", note="y")
    assert _Sample("a", note="x") != _Sample("b", note="x")
    # a field left out of comparison is left out of the hash too, as in a dataclass
    assert _Point(1, "a") == _Point(1, "b")
    assert hash(_Point(1, "a")) == hash(_Point(1, "b")) == hash((1,))
    assert _Point(1) != _Point(2)
    assert repr(_Sample("a")) == "_Sample(name='a', size=1, tags=[])"
    assert repr(_Point(3, "hidden")) == "_Point(x=3, label='hidden')"


def test_replace_and_the_dataclasses_view_agree() -> None:
    sample = _Sample("a", 2)
    assert frozen.replace(sample, size=3) == _Sample("a", 3)
    assert dataclasses.replace(sample, size=3) == _Sample("a", 3)
    assert [f.name for f in dataclasses.fields(_Sample)] == ["name", "size", "tags", "note"]
    assert dataclasses.fields(_Sample)[2].default_factory is list
    assert dataclasses.fields(_Sample)[3].compare is False
    assert frozen.record_fields(_Sample) == ("name", "size", "tags", "note")
    with pytest.raises(TypeError, match="no field 'colour'"):
        frozen.replace(sample, colour=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.size = 4  # type: ignore[misc]


def test_record_fields_of_dataclasses_and_other_classes() -> None:
    @dataclasses.dataclass(frozen=True)
    class Plain:
        a: int
        b: str = ""

    assert frozen.record_fields(Plain) == ("a", "b")
    assert frozen.is_record(Plain)
    assert frozen.is_record(_Sample)
    assert not frozen.is_record(dict)
    assert not frozen.is_record(_Sample("a"))
    with pytest.raises(TypeError, match="is not a record"):
        frozen.record_fields(dict)


def test_declarations_a_record_refuses() -> None:
    with pytest.raises(ValueError, match="not both"):
        frozen.field(default=1, default_factory=list)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="without a default follows"):

        @frozen.record
        class Order:
            a: int = 1
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="no class or init-only fields"):

        @frozen.record
        class Shared:
            counter: ClassVar[int] = 0

    with pytest.raises(TypeError, match="does not extend another record"):

        @frozen.record
        class Wider(_Sample):  # type: ignore[misc,unused-ignore]
            extra: int = 0


@frozen.slotted
class _Working:
    name: str
    size: int = 1
    tags: list[str] = frozen.field(default_factory=list)
    note: str | None = frozen.field(default=None, compare=False, repr=False)

    def grow(self) -> None:
        self.size += 1


@dataclasses.dataclass(slots=True)
class _WorkingDataclass:
    name: str
    size: int = 1
    tags: list[str] = dataclasses.field(default_factory=list)
    note: str | None = dataclasses.field(default=None, compare=False, repr=False)


def test_a_slotted_record_behaves_as_a_slotted_dataclass() -> None:
    ours, theirs = _Working("a"), _WorkingDataclass("a")
    assert repr(ours).replace("_Working", "X") == repr(theirs).replace("_WorkingDataclass", "X")
    assert ours.tags is not _Working("b").tags  # a fresh value per instance
    ours.tags.append("t")
    ours.grow()  # mutable, and the class's own methods are kept
    assert (ours.size, ours.tags) == (2, ["t"])
    assert _Working("a", note="x") == _Working("a", note="y")  # note is not compared
    assert _Working("a") != _Working("b")
    assert _Working("a") != _WorkingDataclass("a")  # another class is never equal
    assert _Working.__hash__ is None  # unhashable, as a dataclass with eq
    with pytest.raises(AttributeError):
        ours.colour = "red"  # type: ignore[attr-defined]  # slots: no other attribute
    assert not hasattr(ours, "__dict__")
    assert _Working.__match_args__ == ("name", "size", "tags", "note")
    assert [f.name for f in dataclasses.fields(_Working)] == ["name", "size", "tags", "note"]
    assert dataclasses.replace(ours, size=5) == _Working("a", 5, ["t"])
    with pytest.raises(TypeError, match="without a default follows"):

        @frozen.slotted
        class Order:
            a: int = 1
            b: int  # type: ignore[misc]


def test_a_cold_flow_check_loads_no_dataclasses(tmp_path: Path) -> None:
    """The Flow front end's working records are slotted records (cold check 67-70 ms ->
    57-63 ms CPU in a clean virtualenv: ``dataclasses`` and ``inspect`` stay unloaded),
    and it freezes JSON without defining the Provider IR's records (-> 47-49 ms)."""
    package = tmp_path / "p"
    package.mkdir()
    (package / "FLOW.md").write_text(
        "---\nname: p\ndescription: One command.\n---\n\n```mermaid\nflowchart TD\n"
        "  start((开始)) --> a[a]\n  a -->|已执行| finish((结束))\n```\n\n## a\n\n"
        '```执行自定义命令\n{"command": "true"}\n```\n\n### 已执行\n\nRan.\n',
        encoding="utf-8",
    )
    probe = (
        "import contextlib, io, json, sys\n"
        "from agent_graph.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    code = main(sys.argv[1:])\n"
        "print(json.dumps([code, out.getvalue(), sorted(sys.modules)]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "flow", "check", str(package), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    code, out, modules = json.loads(done.stdout)
    assert (code, json.loads(out)["state"]) == (0, "valid")
    assert {"dataclasses", "inspect", "agent_graph.ir.records"} & set(modules) == set()


def test_cold_evaluate_loads_none_of_the_expensive_modules(tmp_path: Path) -> None:
    from agent_graph.cli.app import main

    shape = chain(tmp_path / "src", 5)
    bundle = tmp_path / "bundle"
    assert main(["build", str(bundle), "-m", str(shape.manifest)]) == 0
    probe = (
        "import sys\n"
        "before = set(sys.modules)  # what this interpreter loads anyway (site, .pth files)\n"
        "from agent_graph.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as done:\n"
        "    assert done.code in (0, None), done.code\n"
        "heavy = ['dataclasses', 'inspect', 'secrets', 'threading', 'difflib',"
        " 'click', 'yaml', 'jsonschema']\n"
        "print('LOADED', sorted(set(heavy) & set(sys.modules) - before), file=sys.stderr)\n"
    )
    argv = ["evaluate", shape.graph, "-m", str(bundle / "manifest.json"), "--format", "json"]
    env = {**os.environ, "AGC_TRUST_CACHE": str(tmp_path / "trust")}
    for _ in range(2):  # the first run verifies the whole bundle and fills the trust store
        done = subprocess.run(
            [sys.executable, "-c", probe, *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    evaluation: dict[str, Any] = json.loads(done.stdout)
    assert evaluation["statusCode"] == shape.expect
    loaded = [line for line in done.stderr.splitlines() if line.startswith("LOADED")]
    assert loaded == ["LOADED []"]
