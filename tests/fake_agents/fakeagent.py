"""What the fake ``claude`` and ``codex`` executables share: the answer script, the
cursor, the session store and the call log. No network, no model.

Environment:

* ``FAKE_AGENT_SCRIPT``: a file with one JSON object per line, consumed in order by every
  call of either fake (a cursor file keeps the position, under a lock, so parallel
  branches each take their own line). A line is an answer ``{"result", "content"}`` with
  optional controls:

  - ``"fake"``: ``"answer"`` (default: the answer as structured output), ``"text"`` (the
    answer only inside prose, as ``"text"`` or a generated fenced block), ``"garbage"``
    (print ``"stdout"`` as is and exit 0), ``"crash"`` (print ``"stderr"``, exit
    ``"exit"``, default 1), ``"hang"`` (start a child that sleeps, then sleep: the test
    of killing the whole process group), ``"error"`` (the CLI reports a failed turn),
    ``"no-session"`` (the reply carries no session/thread id);
  - ``"expect"``: a substring the prompt must contain (else exit 3, so a test sees it);
  - ``"sleep"``: seconds to wait before answering;
  - ``"write"``: ``{file name: text}`` written into the working directory first.

  Without a script the fake answers with the first result name of the schema it was
  given and the content ``"fake content"``.
* ``FAKE_AGENT_HOME``: where the sessions (``sessions.json``), the cursor and the call log
  (``calls.jsonl``) live; default: the script's folder, else a per-user temp folder.
* ``FAKE_AGENT_CURSOR`` / ``FAKE_AGENT_LOG``: override those two paths.

Every call appends one line to the call log: the fake's name, its argv, cwd, prompt, the
session it used, whether it resumed, and the script line it took.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def home() -> str:
    explicit = os.environ.get("FAKE_AGENT_HOME")
    if explicit:
        path = explicit
    elif os.environ.get("FAKE_AGENT_SCRIPT"):
        path = os.path.dirname(os.path.abspath(os.environ["FAKE_AGENT_SCRIPT"]))
    else:
        path = os.path.join(tempfile.gettempdir(), f"fake-agents-{os.getuid()}")
    os.makedirs(path, exist_ok=True)
    return path


@contextmanager
def locked() -> Iterator[str]:
    """The fake's home, held exclusively (parallel branches call the fakes at once)."""
    where = home()
    with open(os.path.join(where, "lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield where
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def next_line() -> tuple[int | None, dict[str, Any] | None]:
    """The next script line (its 1-based number and object), or (None, None) without a
    script. Past the end of the script is an error: a test scripted too few answers."""
    script = os.environ.get("FAKE_AGENT_SCRIPT")
    if not script:
        return None, None
    with locked() as where:
        cursor = os.environ.get("FAKE_AGENT_CURSOR") or os.path.join(where, "cursor")
        try:
            with open(cursor, encoding="utf-8") as handle:
                position = int(handle.read().strip() or "0")
        except FileNotFoundError:
            position = 0
        with open(script, encoding="utf-8") as handle:
            lines = [line for line in handle.read().splitlines() if line.strip()]
        if position >= len(lines):
            die(f"fake agent: the script has no line {position + 1}", 4)
        with open(cursor, "w", encoding="utf-8") as handle:
            handle.write(str(position + 1))
    value = json.loads(lines[position])
    if not isinstance(value, dict):
        die(f"fake agent: script line {position + 1} is not an object", 4)
    return position + 1, value


def sessions(name: str, update: dict[str, Any] | None = None) -> dict[str, Any]:
    """The fake's sessions (``id -> record``); with ``update``, merged in and saved."""
    with locked() as where:
        path = os.path.join(where, "sessions.json")
        try:
            with open(path, encoding="utf-8") as handle:
                store: dict[str, Any] = json.load(handle)
        except FileNotFoundError:
            store = {}
        mine: dict[str, Any] = store.setdefault(name, {})
        if update:
            mine.update(update)
            with open(path + ".tmp", "w", encoding="utf-8") as handle:
                json.dump(store, handle)
            os.replace(path + ".tmp", path)
        return dict(mine)


def new_session_id() -> str:
    return str(uuid.uuid4())


def log(record: dict[str, Any]) -> None:
    with locked() as where:
        path = os.environ.get("FAKE_AGENT_LOG") or os.path.join(where, "calls.jsonl")
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def die(message: str, code: int = 1) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    raise SystemExit(code)


def read_stdin() -> str:
    return sys.stdin.buffer.read().decode("utf-8")


def default_answer(schema: dict[str, Any] | None) -> dict[str, Any]:
    names: list[Any] = []
    if isinstance(schema, dict):
        result = schema.get("properties", {}).get("result", {})
        names = list(result.get("enum", [])) if isinstance(result, dict) else []
    return {"result": names[0] if names else "done", "content": "fake content"}


def check_expect(line: dict[str, Any] | None, prompt: str) -> None:
    expect = (line or {}).get("expect")
    if isinstance(expect, str) and expect not in prompt:
        die(f"fake agent: the prompt does not contain {expect!r}", 3)


def act(line: dict[str, Any] | None) -> str:
    """Run the line's process-level behaviour; return the mode that is left to render."""
    control = line or {}
    mode = str(control.get("fake", "answer"))
    delay = control.get("sleep")
    if isinstance(delay, int | float):
        time.sleep(float(delay))
    if mode == "crash":
        die(str(control.get("stderr", "fake agent: crashed")), int(control.get("exit", 1)))
    if mode == "garbage":
        sys.stdout.write(str(control.get("stdout", "this is not json")))
        sys.stdout.flush()
        raise SystemExit(0)
    files = control.get("write")
    if isinstance(files, dict):  # an agent that edits its working directory
        for name, text in files.items():
            with open(os.path.join(os.getcwd(), str(name)), "w", encoding="utf-8") as handle:
                handle.write(str(text))
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        log({"hangChildPid": child.pid, "hangPid": os.getpid()})
        time.sleep(float(control.get("seconds", 3600)))
        raise SystemExit(0)
    return mode


def answer_of(line: dict[str, Any] | None, schema: dict[str, Any] | None) -> dict[str, Any]:
    if line is None:
        return default_answer(schema)
    return {k: v for k, v in line.items() if k not in {"fake", "expect", "sleep", "text", "write"}}


def as_text(line: dict[str, Any] | None, answer: dict[str, Any]) -> str:
    """The answer inside prose, as a model that ignores "only JSON" writes it."""
    text = (line or {}).get("text")
    if isinstance(text, str):
        return text
    body = json.dumps(answer, ensure_ascii=False, indent=2)
    return f"I have finished.\n\n```json\n{body}\n```\n\nLet me know if anything else is needed."
