"""Watch catch-ups take turns (`tablelog.service.recording.priority.CatchUps`): at most so
many at once, the next one starting as soon as one ends, one whose message waits for its
reader giving its turn to the next meanwhile, and one that runs past its patience no
longer holding a turn."""

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


def test_a_catch_up_whose_reader_is_slow_lends_its_turn_and_resumes_before_newcomers() -> None:
    async def scenario() -> None:
        catch_ups = CatchUps(turns=1, patience=60.0, reader_wait=0.01)
        taken = asyncio.Event()  # the slow reader takes its message
        order: list[str] = []

        async def slow() -> None:
            async with catch_ups.turn() as catch_up:
                order.append("slow starts")
                catch_up.sending()
                await taken.wait()
                await catch_up.working()
                order.append("slow resumes")
                await asyncio.sleep(0.05)  # the server's own work: its turn is held
                order.append("slow ends")

        async def other(name: str, hold: float = 0.0) -> None:
            async with catch_ups.turn() as catch_up:
                order.append(f"{name} starts")
                if hold:
                    await asyncio.sleep(hold)
                    taken.set()
                    catch_up.sending()
                    await asyncio.sleep(0.05)  # its reader is slow too
                    await catch_up.working()
                order.append(f"{name} ends")

        first = asyncio.create_task(slow())
        await asyncio.sleep(0)
        second = asyncio.create_task(other("second", hold=0.02))
        await asyncio.sleep(0)
        third = asyncio.create_task(other("third"))
        await asyncio.wait_for(asyncio.gather(first, second, third), 5)
        # The slow reader's turn went to the second; when the second's reader was slow in
        # turn, the first went on (having started) before the third, which had not.
        assert order == [
            "slow starts",
            "second starts",
            "slow resumes",
            "slow ends",
            "second ends",
            "third starts",
            "third ends",
        ]

    asyncio.run(scenario())


def test_a_catch_up_whose_reader_keeps_up_keeps_its_turn() -> None:
    async def scenario() -> None:
        catch_ups = CatchUps(turns=1, patience=60.0, reader_wait=0.5)
        order: list[str] = []

        async def catch_up(name: str) -> None:
            async with catch_ups.turn() as turn:
                order.append(f"{name} starts")
                for _ in range(5):
                    turn.sending()
                    await asyncio.sleep(0.01)  # each message taken well within the wait
                    await turn.working()
                order.append(f"{name} ends")

        await asyncio.wait_for(asyncio.gather(catch_up("a"), catch_up("b")), 5)
        assert order == ["a starts", "a ends", "b starts", "b ends"]

    asyncio.run(scenario())
