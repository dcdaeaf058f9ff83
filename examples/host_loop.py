"""A minimal host loop over the weekly-report example: evaluate, route, act, record, repeat.

Run it from the repository root: ``python examples/host_loop.py``. The "acting" here is
simulated: each step publishes the fact that proves it done, as a real host would after
the agent or the user did the work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agent_graph

PROVIDER = Path(__file__).parent / "weekly-report" / "provider.yaml"

# What each step makes true in the world (a real host observes these facts itself).
EVIDENCE: dict[str, dict[str, Any]] = {
    "draft": {"report": {"digest": "sha256:1f"}},
    "approve": {"report": {"digest": "sha256:1f", "approved": True}},
    "publish": {"publication": {"url": "https://example.invalid/reports/week-48"}},
}


def main() -> None:
    program = agent_graph.compile_provider(PROVIDER)
    state: dict[str, Any] = {"facts": {}, "outcomes": {}, "authorities": []}
    for _ in range(10):
        evaluation = program.evaluate("report", "default", state)
        step = evaluation.primary
        if step is None:
            print(f"{evaluation.status_code}: {evaluation.outcome or 'no route'}")
            return
        route = program.route(
            "report", "default", step.route_id, state, revision=evaluation.revision
        )
        doc = route.to_dict()
        reading = [r["id"] for r in doc["resources"]["required"]]
        print(f"{step.node.id}: {doc['statusCode']}, read {reading or 'nothing'}")
        state["facts"].update(EVIDENCE.get(step.node.id, {}))
        state["outcomes"][doc["afterAction"]["recordNode"]] = "completed"
    raise SystemExit("the loop did not finish")


if __name__ == "__main__":
    main()
