"""``agc``: the command-line front end.

``agc evaluate`` with plain options runs without importing click (:mod:`.fast`): it is
the command hosts start once per step, so its start-up time is the protocol's latency.
``agc flow check ENTRY`` does too (:mod:`.fast_flow`): editors and hooks run it on every
save. Everything else, and any form the fast paths do not take, goes through the click
application (:mod:`.app`), which also holds the exit-code contract.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from .fast import evaluate_fast

    handled = evaluate_fast(args)
    if handled is None:
        from .fast_flow import check_fast

        handled = check_fast(args)
    if handled is not None:
        return handled
    from .app import main as click_main

    return click_main(args)


def run() -> None:
    sys.exit(main())
