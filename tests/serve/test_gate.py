"""The episode gate: a limit, a bounded FIFO queue, Busy with Retry-After past them."""

from __future__ import annotations

import asyncio

import pytest

from thresher.serve.gate import Busy, EpisodeGate


def run(coro):
    return asyncio.run(coro)


def test_limit_then_queue_then_busy():
    async def main():
        gate = EpisodeGate(limit=2, max_queued=1, queue_timeout_s=5)
        await gate.acquire()
        await gate.acquire()
        waiter = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        assert gate.running == 2 and gate.waiting == 1
        with pytest.raises(Busy) as busy:
            await gate.acquire()
        assert busy.value.retry_after >= 1
        gate.release(1.0)
        await waiter
        assert gate.running == 2 and gate.waiting == 0

    run(main())


def test_waiters_are_served_in_order():
    async def main():
        gate = EpisodeGate(limit=1, max_queued=3, queue_timeout_s=5)
        await gate.acquire()
        order = []

        async def take(name):
            await gate.acquire()
            order.append(name)

        tasks = [asyncio.ensure_future(take(n)) for n in "abc"]
        await asyncio.sleep(0)
        for _ in "abc":
            gate.release()
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        assert order == ["a", "b", "c"]

    run(main())


def test_a_wait_past_the_timeout_is_busy_and_leaves_the_line():
    async def main():
        gate = EpisodeGate(limit=1, max_queued=4, queue_timeout_s=0.05)
        await gate.acquire()
        with pytest.raises(Busy, match="within 0.05 s"):
            await gate.acquire()
        assert gate.waiting == 0
        gate.release()
        assert gate.running == 0

    run(main())


def test_a_cancelled_waiter_does_not_keep_a_slot():
    async def main():
        gate = EpisodeGate(limit=1, max_queued=2, queue_timeout_s=5)
        await gate.acquire()
        waiter = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        gate.release()
        assert gate.running == 0 and gate.waiting == 0
        await gate.acquire()  # the slot is there for the next request
        assert gate.running == 1

    run(main())


def test_retry_after_follows_recent_episode_times():
    gate = EpisodeGate(limit=1, max_queued=0, queue_timeout_s=1)
    gate.running = 1
    for _ in range(30):
        gate.release(20.0)
        gate.running = 1
    assert gate.retry_after() >= 19
