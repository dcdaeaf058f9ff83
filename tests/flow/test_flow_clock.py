"""The runtime's clock (``record.now``): the millisecond it is, however often it is read;
its text is kept for the millisecond it was made in, never for another."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import pytest

from agent_graph.flow.runtime import record

START = datetime(2026, 1, 31, 23, 59, 59, 998_500, tzinfo=UTC)


class _Clock:
    moments: ClassVar[list[datetime]] = []

    @classmethod
    def now(cls, tz: Any = None) -> datetime:
        return cls.moments.pop(0)


def test_now_is_the_millisecond_of_each_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    steps = [0, 200, 499, 500, 1499, 1500, 1500, -2000, 86_400_000_000, 3000, 3000]
    moments = [START + timedelta(microseconds=us) for us in steps]
    _Clock.moments = list(moments)
    monkeypatch.setattr(record, "datetime", _Clock)
    monkeypatch.setattr(record, "_last", None)
    seen = [record.now() for _ in moments]
    assert seen == [m.isoformat(timespec="milliseconds").replace("+00:00", "Z") for m in moments]
    assert seen[:3] == ["2026-01-31T23:59:59.998Z"] * 3
    assert seen[4] == "2026-01-31T23:59:59.999Z"
    assert seen[5] == "2026-02-01T00:00:00.000Z"
    assert seen[7] == "2026-01-31T23:59:59.996Z"  # the clock went back
    assert seen[8] == "2026-02-01T23:59:59.998Z"  # a day later, the same time of day
