"""The Flow pass table: a ``FLOW.md`` package and the Flows it runs, in the order they run.

The same form and machinery as the Provider table (``compiler/provider/pipeline.py``):
``compile_flow(path, stop_after=…)`` runs it. ``agc flow check`` stops after
``load-closure`` and reports every finding; a compile goes on to the IR bytes.
"""

from __future__ import annotations

from ..passes import Pass
from . import passes as f

FLOW_PASSES: tuple[Pass[f.FlowState], ...] = (
    Pass("find-entry", "a path: a package directory or its FLOW.md", f.find_entry),
    Pass("read-entry", "the entry package: its FLOW.md read and scanned (Markdown, then the Mermaid graph)", f.read_entry),
    Pass("check-entry", "the scanned entry: Appendix A (nodes, edges, sections, actions, resources)", f.check_entry),
    Pass("load-closure", "the checked entry's 执行Flow targets: each read, scanned and checked the same way", f.load_closure),
    Pass("raise-collected", "every finding of the closure (the first error raised, with all of them)", f.raise_collected),
    Pass("lower", "the checked closure: Flow IR records, fingerprints included", f.lower),
    Pass("encode", "the lowered Flow IR", f.encode),
)  # fmt: skip

#: The last pass of checking: a state stopped here holds every finding of the closure.
FLOW_CHECKED = "load-closure"
