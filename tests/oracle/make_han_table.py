"""Regenerate ``_HAN_ORDER`` in ``agent_graph/canonical.py`` from node's ICU.

ICU's root collation orders Han ideographs by radical and stroke count, while
pyuca (DUCET) orders them by code point. The table records ICU's order of the
ideographs pyuca weights as one implicit group: the URO block U+4E00–U+9FFF and
the twelve unified ideographs among the CJK compatibility ideographs.

Usage: python tests/oracle/make_han_table.py  (needs ``node`` on PATH; prints the
blob to paste into canonical.py). ``han_order_from_node`` is also used by the
differential test.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import zlib

COMPAT_UNIFIED = (
    0xFA0E, 0xFA0F, 0xFA11, 0xFA13, 0xFA14, 0xFA1F, 0xFA21, 0xFA23, 0xFA24, 0xFA27, 0xFA28, 0xFA29,
)  # fmt: skip

_SORT_JS = (
    "const s=JSON.parse(require('fs').readFileSync(0,'utf8'));"
    "s.sort((a,b)=>a.localeCompare(b));"
    "process.stdout.write(JSON.stringify(s.map(c=>c.codePointAt(0))));"
)


def han_code_points() -> list[int]:
    return [*range(0x4E00, 0xA000), *COMPAT_UNIFIED]


def han_order_from_node(node: str = "node") -> list[int]:
    """The code points of ``han_code_points()`` in node's ``localeCompare`` order."""
    chars = [chr(c) for c in han_code_points()]
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    done = subprocess.run(
        [node, "-e", _SORT_JS],
        input=json.dumps(chars),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    order: list[int] = json.loads(done.stdout)
    return order


def encode(order: list[int]) -> str:
    """Runs of consecutive code points as varints (start delta, length), zlib, base85."""
    runs: list[list[int]] = []
    for cp in order:
        if runs and cp == runs[-1][0] + runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([cp, 1])
    out = bytearray()

    def varint(n: int) -> None:
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)

    previous_end = 0
    for start, length in runs:
        delta = start - previous_end
        varint(delta * 2 if delta >= 0 else -delta * 2 - 1)
        varint(length)
        previous_end = start + length
    return base64.b85encode(zlib.compress(bytes(out), 9)).decode("ascii")


def main() -> None:
    blob = encode(han_order_from_node())
    print("_HAN_ORDER = (")
    for i in range(0, len(blob), 88):
        print(f'    "{blob[i : i + 88]}"')
    print(")")


if __name__ == "__main__":
    main()
