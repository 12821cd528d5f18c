"""A projection is never the truth: after seeded random games, amends after the end, undos
that reopen ended games, abandons, merges of players and imports, the models the projector
built incrementally equal the models rebuilt from the streams (issue 28), on real Redis."""

from __future__ import annotations

import random
import time

import redis

from tablelog.replay import fold as folding
from tablelog.replay.registry import all_games
from tablelog.service.api.server import BackgroundServer
from tablelog.service.memory import results
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2
from tablelog_client import Client
from tablelog_client.sdk import TablelogError
from tests.service.test_club_memory import play
from tests.service.test_players import _club
from tests.support.histories import random_history
from tests.support.play import choose

NAMES = ["Ann", "anne", "Bob", "Cleo", "Dan", "ERIN"]
KINDS = ["medici-card-game", "splendor", "medici-card-game"]


def unsealed(events: list[events_pb2.Event]) -> list[events_pb2.Event]:
    for event in events:
        for sealing in ("prev_hash", "hash", "chain_key_id"):
            event.ClearField(sealing)
    return events


def result_key(game_id: str) -> str:
    """Where a game's sealed result is kept (`tablelog.service.store.result_storage`)."""
    return f"tl:{{{game_id}}}:result"


def caught_up(client: Client) -> None:
    deadline = time.monotonic() + 30
    while client.standings("splendor").lag.pending_games:
        assert time.monotonic() < deadline, "the projector never caught up"
        time.sleep(0.05)


def models(client: Client, games: list[str]) -> list[bytes]:
    """Every model the API serves for `games`, without the lag (which is about now)."""
    taken: list[bytes] = []
    names: set[str] = set()
    for game in games:
        table = client.standings(game)
        table.ClearField("lag")
        taken.append(table.SerializeToString(deterministic=True))
        names |= {row.display_name for row in table.rows}
        stats = client.game_type_stats(game)
        stats.ClearField("lag")
        taken.append(stats.SerializeToString(deterministic=True))
    for name in sorted(names):
        record = client.player_record(name)
        record.ClearField("lag")
        taken.append(record.SerializeToString(deterministic=True))
    return taken


def amend_after_end(client: Client, game_id: str, rng: random.Random) -> bool:
    """Replace a random move of an ended game by another legal one, dropping the tail that
    no longer applies; whether the service took it."""
    position = folding.fold(client.export(game_id))
    moves = position.moves()
    target = moves[rng.randrange(len(moves))]
    other = choose(position.game, target.before, rng)
    try:
        client.amend(game_id, target.revision, move=position.table.wrap(other), drop_tail=True)
    except TablelogError:
        return False
    return True


def test_rebuilt_models_equal_the_incremental_ones(
    server: BackgroundServer, embedded_redis: EmbeddedRedis
) -> None:
    club_id, token = _club(server)
    rng = random.Random(2028)
    with Client(server.target, token=token, timeout=30) as owner:
        ended: list[str] = []
        for seed in range(7):
            game = KINDS[seed % len(KINDS)]
            seats = rng.sample(NAMES, 2 if game == "splendor" else rng.choice((2, 3)))
            ended.append(play(owner, game, seats, seed))
        caught_up(owner)
        stored = redis.Redis.from_url(embedded_redis.url)
        # Sealed when the game ended; stale once the undo and redo below move its head.
        before_undo = stored.get(result_key(ended[1]))
        assert isinstance(before_undo, bytes)
        # A game left in progress, then abandoned: it never counts.
        unfinished = play(owner, "splendor", ["Bob", "Cleo"], 40, moves=30)
        owner.abandon(unfinished)
        # Undo of an ended game's last move reopens it (and leaves it out); redo ends it again.
        owner.undo(ended[0])
        owner.undo(ended[1])
        owner.redo(ended[1])
        amended = sum(amend_after_end(owner, g, rng) for g in ended[2:5])
        assert amended >= 1
        owner.merge_players("Ann", "anne")
        owner.rename_player("ERIN", "Erin")
        # Imports: seeded histories with undos, amends and annotations, ended or not.
        for seed, game in enumerate(sorted(all_games())):
            events = unsealed(random_history(game, 120, seed))
            owner.import_events(events, accept_unverified=True)
        abandoned_after = play(owner, "medici-card-game", ["Dan", "Bob"], 77)
        owner.undo(abandoned_after)
        owner.abandon(abandoned_after)
        stored = redis.Redis.from_url(embedded_redis.url)
        key = f"tl:{{club:{club_id}}}:memory:outcomes"
        # A deleted game leaves club memory: once counted, its tombstone takes it out, and a
        # rebuild leaves it out too.
        deleted = ended[6]
        caught_up(owner)
        assert stored.hexists(key, deleted)
        owner.delete_game(deleted, reason="recorded by mistake")
        caught_up(owner)
        assert not stored.hexists(key, deleted)

        games = sorted(all_games())
        incremental = models(owner, games)
        outcomes = stored.hgetall(key)
        assert len(outcomes) >= 4
        listed = len(list(owner.list_games()))

        def rebuilt_equal(refold: bool, folded: int) -> None:
            done = owner.rebuild_projections(refold=refold)
            assert (done.games, done.folded) == (len(outcomes), folded)
            caught_up(owner)
            assert stored.hgetall(key) == outcomes
            assert not stored.hexists(key, deleted)
            assert models(owner, games) == incremental

        # Every game folded from its verified events (the results ignored, sealed again)...
        rebuilt_equal(refold=True, folded=listed)
        # ... then every game from its sealed result, none folded, the same models.
        rebuilt_equal(refold=False, folded=0)
        # A damaged result, a stale one (sealed before the game's head moved), one moved from
        # another club's game (its seal binds that game's id) and a missing one: those four
        # games are folded again, and the models are the same.
        sealed = stored.get(result_key(ended[2]))
        assert isinstance(sealed, bytes)
        damaged = bytearray(sealed)
        damaged[-1] ^= 1
        stored.set(result_key(ended[2]), bytes(damaged))
        # (The service itself never stores a result its game has moved past.)
        assert server.built is not None
        store = server.built.recorder.store
        assert isinstance(store, RedisEventStore)
        moved_past = results.unseal(store.chain, ended[1], before_undo).last_hash
        assert not server.run(store.results.put(ended[1], before_undo, moved_past))
        stored.set(result_key(ended[1]), before_undo)
        _other_id, other_token = _club(server)
        with Client(server.target, token=other_token, timeout=30) as other:
            foreign = play(other, "splendor", ["Ann", "Bob"], 3)
            caught_up(other)
        stored.set(result_key(ended[3]), stored.get(result_key(foreign)) or b"")
        stored.delete(result_key(ended[4]))
        rebuilt_equal(refold=False, folded=4)
        # Their results sealed again by that rebuild: none folded now.
        rebuilt_equal(refold=False, folded=0)
