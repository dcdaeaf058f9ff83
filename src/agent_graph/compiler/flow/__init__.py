"""The Flow front end: ``FLOW.md`` packages read, checked and lowered to Flow IR.

The pass table is :mod:`.pipeline`; the IR it writes is :mod:`agent_graph.ir.flow_records`,
which the runtime (:mod:`agent_graph.flow.runtime`) executes without this package.
"""
