"""A deeply nested answer is agent-answer-too-deep, never "not JSON" (issue 26 item 8),
from every adapter that reads JSON answers: script: lines and command: programs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agent_graph import flow

FLOW = """---
name: deep
description: One Agent step.
---

```mermaid
flowchart TD
  start((开始)) --> a[a]
  a -->|ok| finish((结束))
```

## a

```新建Agent
Say ok.
```

### ok

Done.
"""


def nested(depth: int) -> str:
    return '{"result":"ok","content":' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("depth", [201, 300, 5000])
@pytest.mark.parametrize("adapter", ["script", "command"])
def test_a_deep_answer_is_its_own_coded_failure(tmp_path: Path, depth: int, adapter: str) -> None:
    package = tmp_path / "deep"
    package.mkdir()
    (package / "FLOW.md").write_text(FLOW, encoding="utf-8")
    if adapter == "script":
        answers = tmp_path / "answers.jsonl"
        answers.write_text(nested(depth) + "\n", encoding="utf-8")
        agent = f"script:{answers}"
    else:
        program = tmp_path / "answer.py"
        program.write_text(f"import sys\nsys.stdin.read()\nprint({nested(depth)!r})\n")
        agent = "command:" + json.dumps([sys.executable, str(program)])
    summary = flow.run(package, "t", state=tmp_path / "r.json", agent=agent)
    assert summary.state == "failed"
    record = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    (visit,) = record["visits"]
    assert "agent-answer-too-deep" in visit["error"]["summary"]
    assert "not JSON" not in visit["error"]["summary"]


def test_an_answer_at_the_limit_is_read(tmp_path: Path) -> None:
    package = tmp_path / "deep"
    package.mkdir()
    (package / "FLOW.md").write_text(FLOW, encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(nested(190) + "\n", encoding="utf-8")
    summary = flow.run(package, "t", state=tmp_path / "r.json", agent=f"script:{answers}")
    assert summary.state == "completed"
