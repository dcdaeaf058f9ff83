"""JSON Schema (draft 2020-12) files for every ``agent-graph.*.v1`` identity.

The ``*.schema.json`` files beside this module are package data: they are the
normative file shapes, :mod:`agent_graph.compiler.schema` validates with them and
``agc schema`` serves them. Each file's ``$id`` is
``https://agent-graph.dev/schemas/<name>.schema.json``; cross-file references are
relative to that base, so all files must be registered together.
"""
