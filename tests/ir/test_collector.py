"""agent_graph.collector: the pause, the promotion after a big one, and that no garbage is
lost by it."""

from __future__ import annotations

import gc
import weakref

import pytest

from agent_graph.collector import collector_paused


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture(autouse=True)
def _collector_on() -> None:
    assert gc.isenabled()


def test_paused_inside_and_on_again_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_inside_a_pause_leaves_it_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_back_on_after_an_error() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_big_pause_promotes_what_it_built_and_cycles_are_still_collected() -> None:
    gc.collect()
    threshold = gc.get_threshold()[0]
    with collector_paused():
        # past the young generation's threshold: enough that its collection would run
        built = [[index] for index in range(threshold * 2)]
        first, second = _Node(), _Node()
        first.other, second.other = second, first  # a cycle made during the pause
        probe = weakref.ref(first)
        del first, second
    assert gc.get_count()[0] < threshold // 2  # the young generation did not keep them
    assert probe() is not None  # a cycle waits for a collection ...
    gc.collect()
    assert probe() is None  # ... and the next full one frees it
    assert len(built) == threshold * 2


def test_a_small_pause_leaves_the_generations_alone() -> None:
    gc.collect()
    with collector_paused():
        kept = [[index] for index in range(500)]  # under gc's first threshold (700)
    # a promotion would leave the young generation about empty; the margin is for
    # containers another thread of the test process frees meanwhile (each one lowers
    # the count: 99 of 100 was seen once)
    assert gc.get_threshold()[0] > 500
    assert gc.get_count()[0] >= 450
    assert len(kept) == 500
