"""The Run record's journal: what changed since the last commit, as one line, and the fold
that rebuilds the document from the snapshot and those lines.

A commit appends one line ``{"r":REVISION,["base":SNAPSHOT-CHECKSUM,]"set":{…},
"visits":[[INDEX,VISIT],…],"rounds":[[INDEX,ROUND],…],"events":[…],"recoveries":[…],
"chain":"sha256:…"}`` holding only what differs from the previous commit: the top-level
members whose value changed, the visits and rounds that are new or were not settled at
the previous commit (a visit that completed or failed, a joined round, never changes
again), and the events and recoveries added (both lists only grow). Its size is the
change's, not the document's. ``base`` opens a journal: the checksum of the snapshot the
lines apply to. ``chain`` is the SHA-256 of the previous line's ``chain`` (the snapshot's
``checksum`` for the first line), a newline and the line's bytes before ``,"chain"``: a
changed, removed or reordered line breaks every chain after it.

Values in the places that hold contents (the task, a visit's input and result content,
an event's task and content, a cursor's or round's input, the conclusion) are kept in
the record in their *stored form*: a value whose JSON is over :data:`SIDE_THRESHOLD`
bytes is stored once in a side file named by its digest, and the record holds
``{"$agcContent": "sha256:…"}`` in its place (a value that itself looks like such a
reference is stored in a side file whatever its size, so a reference is never ambiguous).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

Json = dict[str, Any]

SIDE_THRESHOLD: Final = 64 * 1024
REF: Final = "$agcContent"
#: Content places: top-level members, and members of each item of a list.
TOP_CONTENT: Final = ("task", "conclusion")
ITEM_CONTENT: Final = {
    "visits": ("input",),
    "rounds": ("input",),
    "events": ("task", "content"),
}
#: Lists whose items may change after they were added until they settle.
MUTABLE_LISTS: Final = ("visits", "rounds")
#: Lists that only grow.
GROWING_LISTS: Final = ("events", "recoveries")
LISTS: Final = (*MUTABLE_LISTS, *GROWING_LISTS)
CHAIN = re.compile(rb',"chain":"(sha256:[0-9a-f]{64})"\}\Z')


#: ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` with its encoder made
#: once, not at every call: a visit's two commits make about twenty texts (0.8 us saved
#: each; a string's is 0.7 -> 0.1 us)
_ENCODE: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def dumps(value: Any) -> str:
    return _ENCODE(value)


def chain_of(previous: str, body: bytes) -> str:
    return "sha256:" + hashlib.sha256(previous.encode("ascii") + b"\n" + body).hexdigest()


def settled(name: str, item: Json) -> bool:
    """An item that never changes again (so a commit need not look at it)."""
    if name == "visits":
        return item.get("status") in ("completed", "failed")
    return item.get("status") == "joined"


def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and REF in value


# -- the stored form ---------------------------------------------------------------------

#: Stores a large value's JSON text in a side file and returns its reference.
Keep = Callable[[str], Json]


def stored_value(value: Any, keep: Keep) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str) and len(value) * 4 <= SIDE_THRESHOLD:
        return value  # short enough whatever it encodes to
    text = dumps(value)
    if is_ref(value) or len(text.encode("utf-8")) > SIDE_THRESHOLD:
        return keep(text)
    return value


def stored_item(name: str, item: Json, keep: Keep) -> Json:
    places = ITEM_CONTENT.get(name, ())
    out = item
    for place in places:
        if place in item:
            value = stored_value(item[place], keep)
            if value is not item[place]:
                out = out if out is not item else dict(item)
                out[place] = value
    if name == "visits":
        result = item.get("result")
        if isinstance(result, dict) and "content" in result:
            content = stored_value(result["content"], keep)
            if content is not result["content"]:
                out = out if out is not item else dict(item)
                out["result"] = {**result, "content": content}
    return out


def stored_member(key: str, value: Any, keep: Keep) -> Any:
    if key in TOP_CONTENT:
        return stored_value(value, keep)
    if key == "cursor" and isinstance(value, dict) and "input" in value:
        stored = stored_value(value["input"], keep)
        if stored is not value["input"]:
            return {**value, "input": stored}
    return value


def _small(text: str) -> bool:
    return len(text) * 4 <= SIDE_THRESHOLD or len(text.encode("utf-8")) <= SIDE_THRESHOLD


def _looks_like_ref(name: str, item: Json) -> bool:
    for place in ITEM_CONTENT.get(name, ()):  # a loop, not any(): 0.45 -> 0.23 us an item
        if is_ref(item.get(place)):
            return True
    result = item.get("result") if name == "visits" else None
    return isinstance(result, dict) and is_ref(result.get("content"))


def item_text(name: str, item: Json, keep: Keep) -> str:
    """The JSON of an item's stored form. An item whose whole JSON is under the threshold
    holds no content over it: its text is the stored form's, made once."""
    if not _looks_like_ref(name, item):
        text = dumps(item)
        if _small(text):
            return text
    return dumps(stored_item(name, item, keep))


def member_text(key: str, value: Any, keep: Keep) -> str:
    """The JSON of a top-level member's stored form (as :func:`item_text`)."""
    if not (is_ref(value) or (isinstance(value, dict) and is_ref(value.get("input")))):
        text = dumps(value)
        if _small(text):
            return text
    return dumps(stored_member(key, value, keep))


def stored_document(document: Json, keep: Keep) -> Json:
    out: Json = {}
    for key, value in document.items():
        if key == "checksum":
            continue
        if key in LISTS and isinstance(value, list):
            out[key] = [stored_item(key, item, keep) for item in value]
        else:
            out[key] = stored_member(key, value, keep)
    return out


# -- resolving references ----------------------------------------------------------------

#: The value a reference stands for (raises a coded error when it cannot be read).
Resolve = Callable[[Json], Any]


def _resolved(value: Any, resolve: Resolve) -> Any:
    return resolve(value) if is_ref(value) else value


def resolve_item(name: str, item: Any, resolve: Resolve) -> Any:
    if not isinstance(item, dict):
        return item
    out = item
    for place in ITEM_CONTENT.get(name, ()):
        if is_ref(item.get(place)):
            out = out if out is not item else dict(item)
            out[place] = resolve(item[place])
    if name == "visits":
        result = item.get("result")
        if isinstance(result, dict) and is_ref(result.get("content")):
            out = out if out is not item else dict(item)
            out["result"] = {**result, "content": resolve(result["content"])}
    return out


def resolve_document(document: Json, resolve: Resolve) -> Json:
    """The document with every reference replaced by its value (the stored form is left
    as it was: items without references are shared, not copied)."""
    out: Json = {}
    for key, value in document.items():
        if key in LISTS and isinstance(value, list):
            out[key] = [resolve_item(key, item, resolve) for item in value]
        elif key in TOP_CONTENT:
            out[key] = _resolved(value, resolve)
        elif key == "cursor" and isinstance(value, dict) and is_ref(value.get("input")):
            out[key] = {**value, "input": resolve(value["input"])}
        else:
            out[key] = value
    return out


# -- what a commit changes ---------------------------------------------------------------


@dataclass
class Baseline:
    """What the last commit (or read) left: the top-level members' stored JSON, the list
    lengths and the stored JSON of each item that may still change."""

    keys: tuple[str, ...]
    members: dict[str, str]
    counts: dict[str, int]
    open_items: dict[str, dict[int, str]] = field(default_factory=dict)
    #: the members that are strings, numbers or null, as they are (compared without
    #: serialising them: most members of most commits are these, and unchanged)
    scalars: dict[str, Any] = field(default_factory=dict)
    #: the document's own keys as the last delta saw them (``checksum`` included), so the
    #: next one compares them in one step
    seen: tuple[str, ...] = ()

    @staticmethod
    def of(stored: Json) -> Baseline:
        keys = tuple(k for k in stored if k != "checksum")
        members = {k: dumps(stored[k]) for k in keys if k not in LISTS}
        counts = {name: len(stored.get(name) or []) for name in LISTS}
        open_items = {
            name: {
                index: dumps(item)
                for index, item in enumerate(stored.get(name) or [])
                if not settled(name, item)
            }
            for name in MUTABLE_LISTS
        }
        scalars = {k: stored[k] for k in members if type(stored[k]) in _SCALARS}
        return Baseline(keys, members, counts, open_items, scalars)


#: The types of the members compared as they are (not floats: ``0.0 == -0.0``, and
#: ``1 == 1.0``, where their JSON differs)
_SCALARS: Final = (str, int, bool, type(None))
_ABSENT: Final = object()


class NeedsSnapshot(Exception):
    """The change is not one a line can say (a member added or removed, a list shortened):
    the commit rewrites the snapshot instead."""


def delta(document: Json, base: Baseline, keep: Keep) -> tuple[list[str], Baseline]:
    """The parts of the line that takes ``base`` to ``document`` (JSON texts of its
    members, without braces) and the baseline it leaves."""
    seen = tuple(document)
    if seen != base.seen and tuple(k for k in seen if k != "checksum") != base.keys:
        raise NeedsSnapshot
    parts: list[str] = []
    members = dict(base.members)
    old_scalars = base.scalars
    scalars = dict(old_scalars)
    changed: list[str] = []
    for key in members:  # the members that are not lists, in document order
        value = document[key]
        old = old_scalars.get(key, _ABSENT)
        if value is old:  # (only scalars are kept: the same one is the same value)
            continue
        if type(value) in _SCALARS:
            if type(old) is type(value) and old == value:
                continue
            scalars[key] = value
        else:
            scalars.pop(key, None)
        # an int's JSON is its repr: the encoder would make a C encoder for it first, and
        # ``revision`` changes at every commit (0.8 -> 0.1 us)
        text = repr(value) if type(value) is int else member_text(key, value, keep)
        if text != base.members.get(key):
            members[key] = text
            changed.append(f"{dumps(key)}:{text}")
    if changed:
        parts.append('"set":{' + ",".join(changed) + "}")
    counts = dict(base.counts)
    open_items: dict[str, dict[int, str]] = {}
    for name in MUTABLE_LISTS:
        items = document[name]
        if len(items) < base.counts[name]:
            raise NeedsSnapshot
        found: list[str] = []
        still: dict[int, str] = {}
        indexes = [*base.open_items.get(name, {}), *range(base.counts[name], len(items))]
        for index in indexes:
            item = items[index]
            text = item_text(name, item, keep)
            if text != base.open_items.get(name, {}).get(index):
                found.append(f"[{index},{text}]")
            if not settled(name, item):
                still[index] = text
        if found:
            parts.append(f'"{name}":[' + ",".join(found) + "]")
        counts[name] = len(items)
        open_items[name] = still
    for name in GROWING_LISTS:
        items = document[name]
        if len(items) < base.counts[name]:
            raise NeedsSnapshot
        added = [item_text(name, item, keep) for item in items[base.counts[name] :]]
        if added:
            parts.append(f'"{name}":[' + ",".join(added) + "]")
        counts[name] = len(items)
    return parts, Baseline(base.keys, members, counts, open_items, scalars, seen)


class BadLine(Exception):
    """A journal line that does not apply to the document (its reason)."""


def apply(document: Json, line: Json) -> None:
    """Fold one journal line (stored form) into ``document`` (stored form)."""
    changes = line.get("set", {})
    if not isinstance(changes, dict):
        raise BadLine("`set` is not an object")
    for key, value in changes.items():
        if key not in document or key in LISTS or key == "checksum":
            raise BadLine(f"it sets {key!r}, not a member of the record")
        document[key] = value
    for name in MUTABLE_LISTS:
        items = document.get(name)
        for entry in line.get(name, []):
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int)):
                raise BadLine(f"an entry of `{name}` is not [index, item]")
            index, item = entry
            if not isinstance(items, list) or not 0 <= index <= len(items):
                raise BadLine(f"`{name}` index {index} is past the end of the list")
            if index == len(items):
                items.append(item)
            else:
                items[index] = item
    for name in GROWING_LISTS:
        added = line.get(name, [])
        items = document.get(name)
        if not (isinstance(added, list) and isinstance(items, list)):
            raise BadLine(f"`{name}` is not a list")
        items.extend(added)
