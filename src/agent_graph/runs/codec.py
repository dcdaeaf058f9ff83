"""Run documents as bytes: written as the reference writes them, read with JS numbers.

Written: 2-space indented JSON and a newline (``JSON.stringify(run, null, 2)``),
UTF-8. Read: ``json.loads`` with ``JSON.parse``'s number model (integral values
within ±2**53 are ints, ``-0`` stays negative zero, larger integers become
doubles) and without the ``NaN``/``Infinity`` extensions, so a Run reads back as
the compiler's JSON reader and the reference would read it — at C speed, since
every mutation re-reads the whole file.

Unpaired surrogates (``"\\ud800"``) are refused both ways: no Unicode encoding can
hold one, so a Run holding one could be written but never printed (older versions
wrote them escaped; such a file is now refused where it is read, and left as it is).
"""

from __future__ import annotations

import json
from typing import Any

from .. import codes
from ..canonical import to_js_number
from ..documents.surrogates import unpaired_surrogate
from ..errors import AgentGraphError


def _int(text: str) -> int | float:
    if len(text) > 40:  # beyond a double's range of exact integers either way
        return to_js_number(float(text))
    number = int(text)
    if number == 0 and text.startswith("-"):
        return -0.0
    return to_js_number(number)


def _float(text: str) -> int | float:
    return to_js_number(float(text))


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str) -> Any:
    """Parse JSON text; ``ValueError``/``RecursionError`` when it is not JSON.

    An unpaired surrogate is a ``ValueError`` too (the positioned reader then names
    its line and column).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    found = unpaired_surrogate(text)
    if found is not None:
        raise ValueError(f"unpaired surrogate {found[1]} at index {found[0]}")
    return value


def dumps(document: Any) -> bytes:
    """The bytes of a Run file (``run-invalid`` for a value JSON text cannot hold).

    Such values (a number beyond a double, an unpaired surrogate) are refused by
    :func:`~agent_graph.runs.validation.check_document` before any write; this is
    the last guard, and it never writes an escaped surrogate.
    """
    try:
        text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        raise AgentGraphError(
            codes.RUN_INVALID, "The Run holds text that is not Unicode (an unpaired surrogate)"
        ) from None
    except ValueError as error:  # e.g. 1e400 read back as infinity
        raise AgentGraphError(
            codes.RUN_INVALID, f"The Run holds a value JSON cannot represent: {error}"
        ) from None
