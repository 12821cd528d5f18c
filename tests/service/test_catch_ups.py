"""Watch catch-ups take turns (`tablelog.service.recording.priority.CatchUps`): at most so
many at once, the next one starting as soon as one ends, and one that runs past its
patience (a reader too slow to take its messages) no longer holding a turn."""

from __future__ import annotations

import asyncio

from tablelog.service.recording.priority import CatchUps


def test_at_most_the_turns_run_at_once_and_the_next_starts_when_one_ends() -> None:
    async def scenario() -> None:
        catch_ups = CatchUps(turns=2, patience=60.0)
        running = 0
        most = 0
        order: list[int] = []

        async def catch_up(index: int) -> None:
            nonlocal running, most
            async with catch_ups.turn():
                running += 1
                most = max(most, running)
                order.append(index)
                await asyncio.sleep(0.02)
                running -= 1

        await asyncio.wait_for(asyncio.gather(*(catch_up(i) for i in range(6))), 5)
        assert most == 2
        assert sorted(order) == list(range(6))

    asyncio.run(scenario())


def test_a_catch_up_past_its_patience_holds_no_turn() -> None:
    async def scenario() -> None:
        catch_ups = CatchUps(turns=1, patience=0.05)
        stuck = asyncio.Event()
        entered = asyncio.Event()

        async def slow_reader() -> None:
            async with catch_ups.turn():
                entered.set()
                await stuck.wait()  # never takes its messages

        slow = asyncio.create_task(slow_reader())
        await entered.wait()
        started = asyncio.get_running_loop().time()
        async with catch_ups.turn():  # waits out the slow one's patience, not its end
            waited = asyncio.get_running_loop().time() - started
        assert 0.03 <= waited < 1.0
        stuck.set()
        await slow

    asyncio.run(scenario())


def test_waiting_catch_ups_go_first_come_first_served_and_one_that_leaves_holds_no_one_up() -> None:
    async def scenario() -> None:
        catch_ups = CatchUps(turns=1, patience=60.0)
        release = asyncio.Event()
        order: list[str] = []

        async def catch_up(name: str, hold: asyncio.Event | None = None) -> None:
            async with catch_ups.turn():
                order.append(name)
                if hold is not None:
                    await hold.wait()

        first = asyncio.create_task(catch_up("first", release))
        await asyncio.sleep(0)
        waiting = []
        for name in ("a", "b", "c", "d"):
            waiting.append(asyncio.create_task(catch_up(name)))
            await asyncio.sleep(0)  # each in line before the next
        leaving = asyncio.create_task(catch_up("closed"))
        await asyncio.sleep(0)
        waiting.append(asyncio.create_task(catch_up("e")))
        await asyncio.sleep(0.01)
        leaving.cancel()  # its watch closed while it waited
        release.set()
        await asyncio.wait_for(asyncio.gather(first, *waiting), 1.0)
        assert order == ["first", "a", "b", "c", "d", "e"]

    asyncio.run(scenario())
