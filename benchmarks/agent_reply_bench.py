"""Time the reply search of the ``claude``/``codex`` adapters and the fingerprint's caps
(issue 26 items 6 and 7) on the inputs that used to hang.

* Reply search: a reply of unclosed fences (``note ```json x`` lines) of growing size,
  searched by :func:`agent_graph.flow.agents.answer_search.find_answer_object` and, for
  comparison, by the backtracking fence pattern the adapters used before (only its fence
  stage, on the smaller sizes: it grows with the square of the size; ``--old-97k`` adds the
  97 KiB case of the issue, about 30-45 s).
* Fingerprint: ``flow.check`` of a package holding a 4 GiB sparse file (refused by its
  size now), against reading the file through sha256 as before (``--old-4g``, 20-40 s).

Prints a table and writes ``benchmarks/results/agent-reply.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_result

from agent_graph import flow
from agent_graph.flow.agents import answer_search

ROOT = Path(__file__).resolve().parents[1]
KIB = 1024
#: The fence pattern before issue 26 item 6, kept here to measure what was replaced.
OLD_FENCE = re.compile(r"(```|~~~)[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)\n[ \t]*\1", re.DOTALL)
ANSWER = '\nAnswer: {"result": "drafted", "content": "ok"}\n'


def reply(size: int) -> str:
    unit = "note ```json x\n"
    return unit * ((size - len(ANSWER)) // len(unit)) + ANSWER


def timed(function: Callable[..., object], *args: object) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def old_fences(text: str) -> int:
    return sum(1 for _ in OLD_FENCE.finditer(text))


def reply_rows(old_sizes: list[int], new_sizes: list[int]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for size in sorted(set(old_sizes) | set(new_sizes)):
        text = reply(size)
        meter = answer_search.Meter()
        found = answer_search.find_answer_object(text, meter=meter)
        assert found == {"result": "drafted", "content": "ok"}, found
        new_s = timed(answer_search.find_answer_object, text)
        old_s = timed(old_fences, text) if size in old_sizes else None
        rows.append(
            {"case": "unclosed fences", "kib": size // KIB, "new_s": round(new_s, 4),
             "old_s": None if old_s is None else round(old_s, 3),
             "steps_per_char": round(meter.steps / len(text), 2)}
        )  # fmt: skip
    return rows


def fingerprint_row(with_old: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "flows"
        shutil.copytree(ROOT / "examples" / "flows", base)
        big = base / "ship-release" / "references" / "big.md"
        big.touch()
        os.truncate(big, 4 * KIB**3)
        new_s = timed(flow.check, base / "ship-release")
        codes = [d.code for d in flow.check(base / "ship-release") if d.severity == "error"]
        old_s = timed(_hash_file, big) if with_old else None
    return {"case": "4 GiB sparse file in references/", "new_s": round(new_s, 3),
            "old_s": None if old_s is None else round(old_s, 1), "codes": codes}  # fmt: skip


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-97k", action="store_true", help="also time the old search at 97 KiB")
    parser.add_argument("--old-4g", action="store_true", help="also time hashing the 4 GiB file")
    options = parser.parse_args()
    old_sizes = [8 * KIB, 16 * KIB, 32 * KIB] + ([97 * KIB] if options.old_97k else [])
    rows = reply_rows(old_sizes, [97 * KIB, 1024 * KIB])
    print(f"{'reply search':<18}{'KiB':>6}{'new s':>10}{'old s':>10}{'steps/char':>12}")
    for row in rows:
        old = "-" if row["old_s"] is None else f"{row['old_s']:.3f}"
        print(f"{row['case']:<18}{row['kib']:>6}{row['new_s']:>10.4f}{old:>10}"
              f"{row['steps_per_char']:>12}")  # fmt: skip
    fingerprint = fingerprint_row(options.old_4g)
    old = "-" if fingerprint["old_s"] is None else f"{fingerprint['old_s']}"
    print(f"{fingerprint['case']}: check {fingerprint['new_s']} s ({fingerprint['codes']}); "
          f"hashing it as before: {old} s")  # fmt: skip
    write_result("agent-reply", {"reply_search": rows, "fingerprint": fingerprint})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
