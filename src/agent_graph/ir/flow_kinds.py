"""The Flow IR's kind codes, apart from its records (:mod:`.flow_records` uses them).

The front end's checks name each action block's kind by these codes; taking them from
here keeps the records (their module, ``ir.schema`` and the record classes: about
1.5 ms of a 35-39 ms cold ``agc flow check``) for lowering, which a check never runs.
"""

#: Action kinds, by marker: 新建Agent, 复用Agent, 执行自定义命令, 执行Flow.
ACTION_KINDS: tuple[str, ...] = ("agent-new", "agent-reuse", "command", "flow")
AGENT_NEW, AGENT_REUSE, COMMAND, CALL = 0, 1, 2, 3
PIECE_KINDS: tuple[str, ...] = ("text", "outcome", "resource")
TEXT_PIECE, OUTCOME_PIECE, RESOURCE_PIECE = 0, 1, 2
