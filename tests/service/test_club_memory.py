"""Club memory through the service, on real Redis: the projector follows ended games into
standings, ratings and statistics; an undo that reopens a game, an abandon and a merge of two
names move them, and so does an AmendMove that leaves an ended game over with another
winner (standings, records and rating histories); a rebuild from the streams gives the
same models; one club sees nothing of another's."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest
import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from tablelog.replay import fold as folding
from tablelog.replay.core import TERMINAL
from tablelog.replay.registry import find_game
from tablelog.service.api.server import BackgroundServer
from tablelog.service.memory.projector import Projector
from tablelog.service.metrics import REGISTRY, exposition
from tablelog.service.store.embedded import EmbeddedRedis, free_port
from tablelog.service.store.memory import MemoryStore
from tablelog.v1 import game_pb2, service_pb2, standings_pb2
from tablelog_client import Client
from tests.service.helpers import refused
from tests.service.test_players import _club
from tests.support.play import random_game


@pytest.fixture
def club(server: BackgroundServer) -> Iterator[tuple[str, Client]]:
    club_id, token = _club(server)
    with Client(server.target, token=token, timeout=30) as owner:
        yield club_id, owner


def play(client: Client, game: str, players: list[str], seed: int, moves: int | None = None) -> str:
    """Record a seeded random game of `game` move by move (all of it, or its first `moves`)."""
    played = random_game(game, len(players), seed)
    created = client.create_game(game, players)
    version = created.version
    for notation in played.notations[:moves]:
        version = client.record(created.game_id, notation, expected_version=version).game.version
    return created.game_id


def settled(
    client: Client, game: str, wanted: Callable[[standings_pb2.GetStandingsResponse], bool]
) -> standings_pb2.GetStandingsResponse:
    """The standings once the projector has caught up and `wanted` holds (within 20 s)."""
    deadline = time.monotonic() + 20
    while True:
        found = client.standings(game)
        if found.lag.pending_games == 0 and wanted(found):
            return found
        assert time.monotonic() < deadline, f"projections never caught up: {found.lag}"
        time.sleep(0.05)


def snapshot(client: Client, games: list[str]) -> list[bytes]:
    taken = [client.standings(g).SerializeToString(deterministic=True) for g in games]
    for g in games:
        stats = client.game_type_stats(g)
        stats.ClearField("lag")
        taken.append(stats.SerializeToString(deterministic=True))
    return taken


def clean(found: standings_pb2.GetStandingsResponse) -> standings_pb2.GetStandingsResponse:
    found.ClearField("lag")
    return found


def test_standings_follow_the_games_and_a_rebuild_gives_the_same(
    club: tuple[str, Client], embedded_redis: EmbeddedRedis
) -> None:
    club_id, owner = club
    game = "medici-card-game"
    seats = [
        ["Ann", "Bob", "Cleo"],
        ["Bob", "anne", "Cleo"],
        ["Cleo", "Ann", "Bob"],
        ["Ann", "Bob"],
    ]
    ids = [play(owner, game, players, seed) for seed, players in enumerate(seats, start=1)]
    table = settled(owner, game, lambda s: s.games == 4)
    rows = {r.display_name: r for r in table.rows}
    assert set(rows) == {"Ann", "anne", "Bob", "Cleo"}
    assert sum(r.games for r in rows.values()) == sum(len(s) for s in seats)
    assert round(sum(r.wins for r in rows.values()), 6) == 4
    # Points are the recorded scores: the same games folded here give the same totals.
    totals: dict[str, int] = {}
    for seed, players in enumerate(seats, start=1):
        result = find_game(game).result(random_game(game, len(players), seed).position.state)
        for seat, name in enumerate(players):
            totals[name] = totals.get(name, 0) + result.scores[seat].total
    assert {n: r.points for n, r in rows.items()} == totals
    assert all(r.rating.sigma < 25 / 3 for r in rows.values())
    assert table.lag.projected_games == 4

    # Undoing the last move reopens a game: it leaves the standings.
    owner.undo(ids[0])
    table = settled(owner, game, lambda s: s.games == 3)
    assert sum(r.games for r in table.rows) == sum(len(s) for s in seats[1:])
    # An abandoned game never counts.
    owner.abandon(ids[0])
    table = settled(owner, game, lambda s: s.games == 3)
    # A merge joins Ann and anne in one row, at once (the roster is read with the outcomes).
    owner.merge_players("Ann", "anne")
    merged = {r.display_name: r for r in owner.standings(game).rows}
    assert set(merged) == {"Ann", "Bob", "Cleo"}
    assert merged["Ann"].games == 3

    # The stored outcomes and every model are the same after a rebuild from the streams.
    stored = redis.Redis.from_url(embedded_redis.url)
    key = f"tl:{{club:{club_id}}}:memory:outcomes"
    before_outcomes = stored.hgetall(key)
    before = snapshot(owner, [game])
    rebuilt = owner.rebuild_projections()
    assert rebuilt.games == 3
    assert stored.hgetall(key) == before_outcomes
    settled(owner, game, lambda s: s.games == 3)
    assert snapshot(owner, [game]) == before


def a_replacement_that_changes_the_winner(
    position: folding.Position,
) -> tuple[int, game_pb2.Move, folding.Position]:
    """A player's move of an ended game and another legal move in its place after which
    every later move still applies and the game is over with other winners (found with the
    rules core, latest moves first): its revision, the move and the corrected position."""
    game = position.game
    winners = list(game.result(position.state).winners)
    for applied in reversed(list(position.moves())):
        if applied.chance:
            continue
        for inner in game.legal_moves(applied.before):
            move = position.table.wrap(inner)
            if move == applied.move:
                continue
            trial = folding.amend(position, folding.REPLACE, applied.revision, move)
            if trial.broken is not None or trial.position.to_move() != TERMINAL:
                continue
            if list(game.result(trial.position.state).winners) != winners:
                return applied.revision, move, trial.position
    raise AssertionError("no replacement keeps the tail and changes the winner")


def records(
    client: Client, game: str, names: list[str]
) -> dict[str, standings_pb2.PlayerGameRecord]:
    found: dict[str, standings_pb2.PlayerGameRecord] = {}
    for name in names:
        (record,) = client.player_record(name, game).games
        found[name] = record
    return found


def test_an_amended_result_moves_the_standings(club: tuple[str, Client]) -> None:
    """An ended game amended through AmendMove (no tail dropped, so it does not reopen) ends
    again with another winner: the standings, both players' records and their rating
    histories follow, and equal what a rebuild folding every game from its stream gives."""
    _club_id, owner = club
    game, names = "splendor", ["Ann", "Bob"]
    amended_id = play(owner, game, names, 7)
    other_id = play(owner, game, names, 3)
    settled(owner, game, lambda s: s.games == 2)
    before = records(owner, game, names)
    assert [p.game_id for p in before["Ann"].history] == [amended_id, other_id]

    position = folding.fold(owner.export(amended_id))
    revision, move, corrected = a_replacement_that_changes_the_winner(position)
    answer = owner.amend(amended_id, revision, move=move, reason="misread the card bought")
    assert [e.WhichOneof("body") for e in answer.events] == ["move_amended", "game_ended"]
    assert answer.events[0].move_amended.dropped_moves == 0
    assert answer.game.status == service_pb2.GAME_STATUS_ENDED

    # What the standings must now say, from the rules: the other game as it was, the
    # amended one as corrected.
    rules = find_game(game)
    results = [
        rules.result(random_game(game, 2, 3).position.state),
        rules.result(corrected.state),
    ]
    points = {n: sum(r.scores[seat].total for r in results) for seat, n in enumerate(names)}
    wins = {n: sum(seat in r.winners for r in results) for seat, n in enumerate(names)}
    assert len(results[1].winners) == 1  # (one winner: wins count whole)

    def followed(table: standings_pb2.GetStandingsResponse) -> bool:
        return {r.display_name: r.points for r in table.rows} == points

    table = settled(owner, game, followed)
    assert table.games == 2
    assert {r.display_name: r.wins for r in table.rows} == wins
    after = records(owner, game, names)
    for seat, name in enumerate(names):
        mine = after[name]
        assert mine.standing.games == 2
        assert mine.standing.wins == wins[name]
        assert mine.standing.points == points[name]
        # Ended again when amended, the game now comes after the other one: the history is
        # rated again from it on (the amended game's rating differs, having changed places).
        assert [p.game_id for p in mine.history] == [other_id, amended_id]
        assert mine.history[0].mu != before[name].history[1].mu
        assert mine.history[-1].mu == mine.standing.rating.mu
        assert list(mine.scores) == [r.scores[seat].total for r in results]
        assert mine.places != before[name].places
        assert mine.head_to_head[0].games == 2
    assert {n: r.standing.wins for n, r in before.items()} != wins

    def served() -> list[bytes]:
        taken = snapshot(owner, [game])
        for name in names:
            record = owner.player_record(name)
            record.ClearField("lag")
            taken.append(record.SerializeToString(deterministic=True))
        return taken

    incremental = served()
    rebuilt = owner.rebuild_projections(refold=True)
    assert (rebuilt.games, rebuilt.folded) == (2, 2)
    settled(owner, game, followed)
    assert served() == incremental


def test_a_player_record_and_game_type_stats(club: tuple[str, Client]) -> None:
    _club_id, owner = club
    game = "splendor"
    for seed in (3, 4):
        play(owner, game, ["Dana", "Eli"], seed)
    settled(owner, game, lambda s: s.games == 2)
    record = owner.player_record("dana")
    assert record.player.display_name == "Dana"
    (mine,) = record.games
    assert mine.game == "splendor"
    assert mine.standing.games == 2
    assert len(mine.history) == 2
    assert sum(mine.places) == 2
    assert len(mine.scores) == 2
    assert mine.head_to_head[0].opponent_name == "Eli"
    assert mine.head_to_head[0].games == 2
    figures = {f.name: f for f in mine.figures}
    assert figures["purchases"].games == 2
    stats = owner.game_type_stats(game)
    assert stats.games == 2
    assert [s.order for s in stats.seats] == [1, 2]
    assert round(sum(s.wins for s in stats.seats), 6) == 2
    assert stats.average_moves > 10
    missing = refused(lambda: owner.player_record("Nobody At All"))
    assert missing.reason == "PLAYER_NOT_FOUND"


def test_seasons_slice_the_standings(club: tuple[str, Client]) -> None:
    _club_id, owner = club
    play(owner, "splendor", ["Fay", "Gus"], 5)
    settled(owner, "splendor", lambda s: s.games == 1)
    this_year = time.gmtime().tm_year
    assert owner.standings("splendor", str(this_year)).games == 1
    assert owner.standings("splendor", str(this_year - 1)).games == 0
    season = owner.set_season("Old days", "2001-01-01", "2001-12-31")
    assert season.name == "Old days"
    assert owner.standings("splendor", "old DAYS").games == 0
    assert [s.name for s in owner.seasons()] == ["Old days"]
    bad = refused(lambda: owner.standings("splendor", "no such season"))
    assert bad.reason == "INVALID_REQUEST"
    bad = refused(lambda: owner.set_season("x", "2026-02-30", "2026-03-01"))
    assert bad.reason == "INVALID_REQUEST"


def test_one_club_sees_nothing_of_anothers_memory(
    server: BackgroundServer, club: tuple[str, Client]
) -> None:
    _club_id, owner = club
    play(owner, "splendor", ["Hal", "Ida"], 6)
    settled(owner, "splendor", lambda s: s.games == 1)
    _other, token = _club(server)
    with Client(server.target, token=token) as other:
        assert other.standings("splendor").games == 0
        assert list(other.standings("splendor").rows) == []
        assert other.standings("splendor").lag.projected_games == 0
        assert refused(lambda: other.player_record("Hal")).reason == "PLAYER_NOT_FOUND"


def _metric(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def test_projector_lag_is_a_metric(club: tuple[str, Client]) -> None:
    """Each projected game is observed in `tablelog_projection_lag_seconds` (from its note
    in the feed to its projection); once caught up, nothing is pending."""
    _club_id, owner = club
    before = _metric("tablelog_projection_lag_seconds_count")
    play(owner, "splendor", ["Ann", "Bob"], 3)
    settled(owner, "splendor", lambda s: s.games == 1)
    # (the server's loop observes the game just after writing it: give it a moment)
    deadline = time.monotonic() + 10
    while _metric("tablelog_projection_lag_seconds_count") == before:
        assert time.monotonic() < deadline, "no projection lag observed"
        time.sleep(0.02)
    assert _metric("tablelog_projection_lag_seconds_count") >= before + 1
    # Redis's clock and this process's are the one machine's: the lag is short and >= 0.
    assert 0 <= _metric("tablelog_projection_lag_seconds_sum") < 3600
    assert _metric("tablelog_projector_pending_games") == 0
    assert _metric("tablelog_projector_pending_clubs") == 0
    text = exposition()[0].decode()
    assert "tablelog_projection_lag_seconds_bucket{" in text
    assert "tablelog_projector_pending_clubs " in text


def test_an_idle_projector_leaves_redis_alone(
    club: tuple[str, Client], embedded_redis: EmbeddedRedis
) -> None:
    """Idle, a projector waits on one blocking read of the wake-up stream instead of
    polling the flagged clubs (it took 20 SPOPs a second per instance); a game ended then
    still wakes it."""
    _club_id, owner = club
    play(owner, "splendor", ["Ann", "Bob"], 5)
    settled(owner, "splendor", lambda s: s.games == 1)
    stored = redis.Redis.from_url(embedded_redis.url)

    def calls(command: str) -> int:
        return int(stored.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))

    spops, xreads = calls("spop"), calls("xread")
    time.sleep(1.5)
    assert calls("spop") - spops <= 2  # polling every 50 ms: about 30
    assert calls("xread") - xreads <= 4  # one a server every 3 s (or at a wake-up)
    play(owner, "splendor", ["Ann", "Bob"], 6)
    settled(owner, "splendor", lambda s: s.games == 2)


def test_a_projector_goes_on_while_redis_is_away() -> None:
    """A round that cannot reach Redis is logged and tried again after a pause: the
    projector keeps following (it never ends on an outage), and stops when told."""

    async def scenario() -> None:
        # (no retries: each round fails at once)
        client = aioredis.Redis(
            host="127.0.0.1",
            port=free_port(),
            socket_connect_timeout=0.2,
            retry=Retry(NoBackoff(), 0),
        )
        following = Projector(MemoryStore(client), cast(Any, None), cast(Any, None))

        async def clubs() -> list[str]:
            return []

        following.start(clubs)
        await asyncio.sleep(0.5)
        assert following._task is not None
        assert not following._task.done()
        await following.stop()
        await client.aclose()

    asyncio.run(scenario())


def test_figures_kept_per_club_are_bounded_whatever_the_callers_ask() -> None:
    """A caller picks the keys of the figures kept from a club's outcomes (a player's name, a
    season): however many it asks for, at most MAX_COMPUTED stay; an answer of None (no such
    player) is kept like any other instead of being computed again at every call."""
    from tablelog.service.api.standings_api import MAX_COMPUTED, StandingsServicer
    from tablelog.service.memory.views import ClubMemory

    cache = ClubMemory("c", 1, 1, [], cast(Any, None))
    made: list[str] = []

    def maker(name: str) -> Any:
        return lambda: made.append(name)  # (None: as for a name nobody played under)

    for index in range(MAX_COMPUTED + 50):
        StandingsServicer._computed(cache, ("player", f"name {index}"), maker(f"name {index}"))
    assert len(cache.computed) == MAX_COMPUTED
    newest = ("player", f"name {MAX_COMPUTED + 49}")
    StandingsServicer._computed(cache, newest, maker("again"))
    assert "again" not in made


def test_a_read_after_a_change_reads_the_changed_games_alone(
    embedded_redis: EmbeddedRedis,
) -> None:
    """The change log: a copy of the club is brought up to date by reading the games each
    version changed (no reload of the outcomes), and answers what a copy read whole does;
    a gap the log cannot cover (a rebuild's clear, a trimmed log, a page of many games)
    reads the outcomes whole again."""
    from tablelog.service.memory.roster_store import RosterStore
    from tablelog.service.memory.standings import Range
    from tests.service.test_ratings import game_outcome

    rng = random.Random(7)
    names = ["Ann", "Bob", "Cleo", "Dan"]

    async def scenario() -> None:
        client = aioredis.Redis.from_url(embedded_redis.url)
        store, rosters = MemoryStore(client), RosterStore(client)
        club_id = "log-" + uuid.uuid4().hex[:8]
        await client.set(store.key(club_id, "club"), "x")  # (a club's record exists)
        reader = Projector(store, rosters, cast(Any, None))

        def answers(projector: Projector) -> Any:
            memory = projector._cache[club_id]
            found: list[object] = []
            for game in ("splendor", "medici"):
                view = memory.view(game, Range())
                table = view.table()
                found.append((table, view.stats()))
                found.extend(view.record(row.player_id, table) for row in table)
            return found

        async def same_as_whole() -> None:
            await reader.club(club_id)
            fresh = Projector(store, rosters, cast(Any, None))
            await fresh.club(club_id)
            assert answers(reader) == answers(fresh)

        made = [game_outcome(rng, f"g{i:03d}", i, 10, names) for i in range(40)]
        await store.apply_many(
            club_id, [(o.game_id, 10, o.SerializeToString(deterministic=True)) for o in made]
        )
        await same_as_whole()
        assert (reader.reloads, reader.caught_up) == (1, 0)
        # A game ends, one is amended, one undone, an old one imported: one version each.
        changes = [
            game_outcome(rng, "g100", 100, 10, names),
            game_outcome(rng, "g005", 5, 11, names),
            None,
            game_outcome(rng, "old", 0, 10, names),
        ]
        for index, change in enumerate(changes):
            game_id = change.game_id if change is not None else "g007"
            await store.apply(club_id, game_id, 20 + index, change, "")
        assert await store.changes_after(club_id, 1, 5, 100) == {"g100", "g005", "g007", "old"}
        await same_as_whole()
        assert (reader.reloads, reader.caught_up) == (1, 1)

        # A page of a few games names them; of many, says "*": read whole.
        def blob(game_id: str, minute: int) -> bytes:
            return game_outcome(rng, game_id, minute, 10, names).SerializeToString()

        await store.apply_many(club_id, [(f"p{i}", 10, blob(f"p{i}", 50 + i)) for i in range(3)])
        await same_as_whole()
        assert (reader.reloads, reader.caught_up) == (1, 2)
        await store.apply_many(
            club_id, [(f"q{i:03d}", 10, blob(f"q{i:03d}", i)) for i in range(101)]
        )
        await same_as_whole()
        assert (reader.reloads, reader.caught_up) == (2, 2)
        # A rebuild's clear logs no version: a gap.
        await store.clear(club_id)
        await store.apply(club_id, "g001", 30, game_outcome(rng, "g001", 1, 30, names), "")
        await same_as_whole()
        assert (reader.reloads, reader.caught_up) == (3, 2)
        # A log trimmed past the copy's version: a gap too.
        version = await store.version(club_id)
        await store.apply(club_id, "g002", 30, game_outcome(rng, "g002", 2, 30, names), "")
        await client.xtrim(
            store.key(club_id, "memory:changes"), minid=f"{version + 2}-0", approximate=False
        )
        await store.apply(club_id, "g003", 30, game_outcome(rng, "g003", 3, 30, names), "")
        await same_as_whole()
        assert (reader.reloads, reader.caught_up) == (4, 2)
        # A version counter reset beside its log (never by the service): the log starts
        # again rather than refusing the write.
        await client.delete(store.key(club_id, "memory:version"))
        assert await store.apply(club_id, "g001", 31, None, "")
        assert await client.xlen(store.key(club_id, "memory:changes")) == 1
        # An id the log could not name (its ids are space-separated): "*", read whole.
        odd = game_outcome(rng, "a b", 9, 10, names)
        assert await store.apply(club_id, "a b", 1, odd, "")
        assert await store.changes_after(club_id, 1, 2, 100) is None
        await store.apply_many(club_id, [("c d", 1, odd.SerializeToString())])
        assert await store.changes_after(club_id, 2, 3, 100) is None
        await client.aclose()

    asyncio.run(scenario())
