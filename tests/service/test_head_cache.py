"""The head cache (`tablelog.service.recording.heads.HeadCache`) is bounded by the bytes its heads
hold, least recently used out first; a head is counted by its state and a fixed cost per move, and
that estimate is held to what the heads of every game really hold."""

from __future__ import annotations

import dataclasses

import pytest
from google.protobuf import timestamp_pb2

from tablelog.replay import fold as folding
from tablelog.replay.registry import all_games
from tablelog.service.recording.heads import (
    FINISHED_SHARE,
    PER_MOVE_BYTES,
    Head,
    HeadCache,
    estimated_bytes,
    held_bytes,
)
from tests.support.histories import players_of
from tests.support.play import created, events_of, random_game


def positions(name: str, seed: int) -> list[folding.Position]:
    """The position after every event of a finished random game of `name`."""
    played = random_game(name, players_of(name), seed=seed)
    events = events_of(created(name, players_of(name)), played.moves, played.notations)
    position = folding.start(events[0].game_created)
    found = [position]
    for event in events[1:]:
        position = folding.advance(position, event)
        found.append(position)
    return found


def head(game_id: str, position: folding.Position) -> Head:
    when = timestamp_pb2.Timestamp(seconds=1)
    return Head(game_id, position, b"\x00" * 32, when, when)


def test_the_cache_holds_at_most_its_bytes_least_recently_used_out_first() -> None:
    games = [positions("splendor", seed)[-1] for seed in range(5)]
    sizes = [estimated_bytes(p) for p in games]
    cache = HeadCache(max_bytes=sizes[0] + sizes[1] + sizes[2] + 10)
    for index in range(3):
        cache.put(head(f"g{index}", games[index]))
    assert len(cache) == 3
    assert cache.bytes == sum(sizes[:3])
    assert cache.get("g0") is not None  # now the most recently used
    cache.put(head("g3", games[3]))
    assert cache.bytes <= cache.max_bytes
    assert cache.peek("g1") is None  # the least recently used went first
    assert cache.peek("g0") is not None
    assert cache.peek("g3") is not None
    cache.forget("g0")
    assert cache.bytes == sum(estimated_bytes(h.position) for h in _cached(cache, 5))


def _cached(cache: HeadCache, games: int) -> list[Head]:
    return [h for i in range(games) if (h := cache.peek(f"g{i}")) is not None]


def test_a_head_that_grows_is_counted_per_move_from_where_it_was_walked() -> None:
    line = positions("medici", 3)
    cache = HeadCache(max_bytes=1 << 30)
    cache.put(head("g", line[10]))
    walked = estimated_bytes(line[10])
    assert cache.bytes == walked
    cache.put(head("g", line[30]))  # twenty moves later, as changes put it
    assert cache.bytes == walked + 20 * PER_MOVE_BYTES
    cache.forget("g")
    assert cache.bytes == 0
    assert len(cache) == 0


def test_a_head_larger_than_the_cache_is_kept_alone() -> None:
    big = positions("castello-methoni", 1)[-1]
    cache = HeadCache(max_bytes=1_000)
    cache.put(head("small", positions("splendor", 1)[0]))
    cache.put(head("big", big))
    assert len(cache) == 1
    assert cache.peek("big") is not None


@pytest.mark.parametrize("name", sorted(all_games()))
def test_the_per_move_estimate_holds_for_every_game(name: str) -> None:
    """What a move adds to a head (its states before and after, sharing what did not
    change, its move and notation), averaged over a game, is within a factor of three of
    PER_MOVE_BYTES: the bound the cache keeps is the bound it says."""
    line = positions(name, 2)
    first, last = line[1], line[-1]
    moves = last.move_count - first.move_count
    per_move = (held_bytes(last) - held_bytes(first)) / moves
    assert PER_MOVE_BYTES / 3 <= per_move <= PER_MOVE_BYTES * 3, per_move
    # And the estimate the cache counts a head by is within that factor of its full walk.
    for position in (line[len(line) // 2], last):
        walked = held_bytes(position)
        assert walked / 3 <= estimated_bytes(position) <= walked * 3


def test_new_games_of_one_shape_are_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A creation's head is counted as `estimated_bytes` says, walked once per shape of new
    game (CreateGame walked every new game's state); a head with a player's move is walked."""
    from tablelog.service.recording import heads

    walks: list[folding.Position] = []
    walk = heads.estimated_bytes

    def counted(position: folding.Position) -> int:
        walks.append(position)
        return walk(position)

    monkeypatch.setattr(heads, "estimated_bytes", counted)
    new = [positions("splendor", seed)[0] for seed in range(3)]
    cache = HeadCache(max_bytes=1 << 30)
    for index, position in enumerate(new):
        cache.put(head(f"new{index}", position))
    assert len(walks) == 1
    assert cache.bytes == 3 * walk(new[0])
    moved = next(p for p in positions("splendor", 4) if p.move_count > p.chance_count)
    cache.put(head("moved", moved))
    assert len(walks) == 2
    assert cache.bytes == 3 * walk(new[0]) + walk(moved)


def test_finished_games_heads_hold_a_share_of_the_cache_and_go_first() -> None:
    """A night's finished games must not fill the cache game after game: their heads hold
    at most max_bytes // FINISHED_SHARE and are dropped before any game in play's; a game
    reopened (an undo of its last move) is a game in play again."""
    line = positions("splendor", 7)
    ended = dataclasses.replace(line[-1], status=folding.Status.ENDED)  # as GameEnded leaves it
    playing = line[len(line) // 2]
    size = estimated_bytes(ended)
    cache = HeadCache(max_bytes=FINISHED_SHARE * size * 2 + 10)  # room for two finished
    for index in range(3):
        cache.put(head(f"live{index}", playing))
    for index in range(4):
        cache.put(head(f"done{index}", ended))
    assert cache.finished_bytes <= cache.finished_max_bytes
    assert [cache.peek(f"done{i}") is not None for i in range(4)] == [False, False, True, True]
    assert all(cache.peek(f"live{i}") is not None for i in range(3))
    # Full: the finished heads go before the heads of games in play.
    crowded = HeadCache(max_bytes=estimated_bytes(playing) * 2 + size + 10)
    crowded.put(head("live0", playing))
    crowded.put(head("done", ended))  # used after live0: a plain LRU would drop live0
    crowded.put(head("live1", playing))
    crowded.put(head("live2", playing))
    assert crowded.peek("done") is None
    assert [crowded.peek(f"live{i}") is not None for i in range(3)] == [True, True, True]
    # Reopened: counted with the games in play again.
    cache.put(head("done3", playing))
    assert cache.finished_bytes == size  # only done2 is left among the finished
    assert cache.game_ids()[0] == "done2"
