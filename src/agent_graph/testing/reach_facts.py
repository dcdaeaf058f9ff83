"""Facts for ``agc explain --reach``: adding the facts a condition needs, never replacing
one that is there (a fact the user gave, or one an earlier step of the search set)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..ir import records as r

if TYPE_CHECKING:
    from ..vm import Program

#: A fact that only has to exist is given this value, or a value another condition of the
#: Provider compares its path with (one way each).
PRESENT: Final = True
#: What a move adds: dotted path -> value.
Added = tuple[tuple[str, Any], ...]


def set_fact(facts: dict[str, Any], path: tuple[str, ...], value: Any) -> bool:
    """Put ``value`` at ``path``, making objects on the way; False where the facts hold
    something else there (nothing the user gave is replaced)."""
    current = facts
    for segment in path[:-1]:
        found = current.get(segment)
        if found is None and segment not in current:
            current[segment] = found = {}
        if not isinstance(found, dict):
            return False
        current = found
    last = path[-1]
    if last in current:
        return current[last] == value if not isinstance(current[last], dict) else value is PRESENT
    current[last] = value
    return True


def copy_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [copy_json(v) for v in value]
    return value


#: Known fact values by path: every ``equals`` of the Provider's conditions.
Values = dict[tuple[str, ...], list[Any]]
#: How many ways to give the ``exists`` facts of one condition values (each its own move).
MAX_CHOICES: Final = 16


def fact_values(program: Program) -> Values:
    """The values the Provider's ``equals`` checks name, by path, in declaration order: a
    fact that only has to exist may need one of them for another condition."""
    from ..vm.facts import js_is

    out: Values = {}
    for graph in program.ir.graphs:
        for node in graph.nodes:
            for check in (*(node.requires or ()), *(node.satisfied_by or ())):
                if check.kind != r.EQUALS:
                    continue
                known = out.setdefault(check.path, [])
                if not any(js_is(v, check.value) for v in known):
                    known.append(check.value)
    return out


def with_facts(
    given: Mapping[str, Any], checks: tuple[r.FactCheck, ...], values: Values
) -> list[tuple[dict[str, Any], Added]]:
    """Each way to add facts to ``given`` that pass every check, with what each adds
    (none: they cannot all pass without replacing a fact)."""
    from itertools import islice, product

    from ..vm.facts import all_match, check_matches

    facts = copy_json(given)
    added: list[tuple[str, Any]] = []
    exists: list[r.FactCheck] = []
    for check in checks:
        if check_matches(facts, check):
            continue
        if check.kind == r.ABSENT:
            return []  # only taking a fact away would pass it: states only grow
        if check.kind == r.EXISTS:
            exists.append(check)
        elif set_fact(facts, check.path, check.value):
            added.append((".".join(check.path), check.value))
        else:
            return []
    choices = [[*values.get(check.path, ()), PRESENT] for check in exists]
    out = []
    for picked in islice(product(*choices), MAX_CHOICES):
        trial = copy_json(facts)
        more = []
        for check, value in zip(exists, picked, strict=True):
            if check_matches(trial, check):
                continue  # an earlier path made it
            if not set_fact(trial, check.path, value):
                break
            more.append((".".join(check.path), value))
        else:
            if (added or more) and all_match(trial, checks):
                out.append((trial, (*added, *more)))
    return out


def against(
    given: Mapping[str, Any], checks: tuple[r.FactCheck, ...]
) -> Iterator[tuple[dict[str, Any], Added]]:
    """Facts that make passing ``checks`` fail: one of their absent paths set (the only
    kind of check that facts which only grow can turn false), one way per path."""
    from ..vm.facts import check_matches

    for check in checks:
        if check.kind != r.ABSENT or not check_matches(given, check):
            continue
        facts = copy_json(given)
        if set_fact(facts, check.path, PRESENT):
            yield facts, ((".".join(check.path), PRESENT),)


def leaves(value: Any) -> list[str]:
    """The dotted paths of ``value``'s leaves (an empty object below the top is one)."""
    out: list[str] = []
    todo: list[tuple[str, Any]] = [("", value)]
    while todo:
        prefix, item = todo.pop()
        if isinstance(item, Mapping) and (item or not prefix):
            todo.extend((f"{prefix}{k}.", v) for k, v in item.items())
        else:
            out.append(prefix[:-1])
    return out


def check_text(check: r.FactCheck) -> str:
    path = ".".join(check.path)
    if check.kind == r.EQUALS:
        import json

        return f"{path} equals {json.dumps(check.value)}"
    return f"{path} {'exists' if check.kind == r.EXISTS else 'is absent'}"
