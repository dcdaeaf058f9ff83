"""Time the language server's answer to an edit: a buffer change to its diagnostics.

A generated Provider whose one Graph is a chain of ``--nodes`` action nodes (200 by
default, the size issue 28 names) is opened in a :class:`agent_graph.lsp.session.Session`,
the server's state without the protocol. Each round changes the Graph's buffer, breaking
one edge and then mending it, and asks for the Graph's diagnostics: what the server does
after its debounce. CPU time (``time.process_time``), the least and the median of the
rounds. The stdio transport adds its JSON-RPC framing on top (about 10-30 ms measured
through pygls' client on a loaded 2-core machine).

Prints a table and writes ``benchmarks/results/lsp.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import write_chain_provider
from results import write_result


def measure(nodes: int, rounds: int) -> dict[str, float]:
    from agent_graph.lsp.session import Session

    with tempfile.TemporaryDirectory() as scratch:
        graph = write_chain_provider(Path(scratch) / "p", nodes).parent / "graphs" / "chain.yaml"
        text = graph.read_text(encoding="utf-8")
        middle = f"n{nodes // 2}"
        broken = text.replace(f"to: {middle} }}", f"to: {middle}x }}", 1)
        assert broken != text, "the generated chain changed shape"
        session = Session()
        session.update(graph, text)
        session.diagnostics(graph)  # the first answer builds what later ones reuse
        times: dict[str, list[float]] = {"broken": [], "mended": []}
        for index in range(rounds * 2):
            state = "broken" if index % 2 == 0 else "mended"
            session.update(graph, broken if state == "broken" else text)
            start = time.process_time()
            found = session.diagnostics(graph)
            times[state].append((time.process_time() - start) * 1000)
            assert bool(found.get(graph)) == (state == "broken"), found
    return {
        f"{state}_{what}_ms": round(pick(values), 2)
        for state, values in times.items()
        for what, pick in (("min", min), ("median", statistics.median))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    figures = measure(args.nodes, args.rounds)
    print("| nodes | change | least ms (CPU) | median ms (CPU) |")
    print("|---|---|---|---|")
    for state in ("broken", "mended"):
        least, median = figures[f"{state}_min_ms"], figures[f"{state}_median_ms"]
        print(f"| {args.nodes} | {state} | {least} | {median} |")
    write_result("lsp", {"nodes": args.nodes, "rounds": args.rounds, **figures})


if __name__ == "__main__":
    main()
