"""docs/agents.md shows what the adapters really do (issue 26 item 17).

The ``command:`` request example is compared with the request a real Run of the
shipped draft-review example sends to a ``command:`` agent.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from agent_graph import codes, flow
from flow_run_support import ECHO_STDIN, agent, command, package

ROOT = Path(__file__).resolve().parents[2]
AGENTS_MD = ROOT / "docs" / "agents.md"
DRAFT_REVIEW = ROOT / "examples" / "flows" / "draft-review"

#: A command: agent that keeps every request it gets and accepts the first draft.
AGENT = """
import json, pathlib, sys
request = json.load(sys.stdin)
log = pathlib.Path(sys.argv[1])
with log.open("a", encoding="utf-8") as out:
    out.write(json.dumps(request) + "\\n")
if request["marker"] == "new":
    pathlib.Path("DRAFT.md").write_text("A short draft.\\n")
    print(json.dumps({"result": "drafted", "content": "DRAFT.md", "agent": "agent-1"}))
else:
    print(json.dumps({"result": "accept", "content": "fine"}))
"""


def _section(title: str) -> str:
    text = AGENTS_MD.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _doc_request() -> dict[str, Any]:
    block = re.search(r"```json\n(.*?)```", _section("The `command:` adapter"), re.DOTALL)
    assert block is not None
    value: dict[str, Any] = json.loads(block.group(1))
    return value


def test_the_command_request_example_is_what_a_run_sends(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    log = tmp_path / "requests.jsonl"
    work = tmp_path / "work"
    work.mkdir()
    spec = "command:" + json.dumps([sys.executable, str(script), str(log)])
    summary = flow.run(DRAFT_REVIEW, "a note", state=tmp_path / "run.json", agent=spec, cwd=work)
    assert summary.state == "completed"
    sent = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    (reuse,) = [r for r in sent if r["marker"] == "reuse"]
    shown = _doc_request()
    assert set(shown) == set(reuse)
    assert (shown["flow"], shown["node"], shown["marker"]) == (
        reuse["flow"], reuse["node"], reuse["marker"],
    )  # fmt: skip
    assert shown["results"][0]["name"] in [r["name"] for r in reuse["results"]]
    assert reuse["prompt"].startswith(shown["prompt"].split("…")[0])


def test_the_docs_name_no_claude_flag_its_help_lacks() -> None:
    assert "--max-turns" not in AGENTS_MD.read_text(encoding="utf-8")


def test_agent_steps_are_refused_in_parallel_branches_as_the_docs_say(tmp_path: Path) -> None:
    assert "No Agent steps in parallel branches" in _section("Limits and caveats")
    graph = (
        "start((开始)) --> s[s]\ns -->|已执行| k{{并行}}\nk --> a[a]\nk --> b[b]\n"
        "a -->|ok| j[j]\nb -->|已执行| j\nj -->|已执行| finish((结束))"
    )
    join = command("j", ECHO_STDIN, stdin='{"a": {a.outcome}, "b": {b.outcome}}')
    pkg = package(tmp_path, "p", graph, command("s", "1"), agent("a", "Do a.", {"ok": "Done."}),
                  command("b", "1"), join)  # fmt: skip
    found = [d.code for d in flow.check(pkg) if d.severity == "error"]
    assert found == [codes.FLOW_BRANCH_NOT_COMMAND]
    assert f"`{codes.FLOW_BRANCH_NOT_COMMAND}`" in AGENTS_MD.read_text(encoding="utf-8")
