"""DeleteClub leaves nothing of the club in Redis (issue 23): its games' keys, its own keys
(members, tokens, listing index) and club memory's (the roster, seasons, the feed and the
projections), its tokens' lookups, and its name in the server's sets; and a projector or a
feed note that comes after the deletion writes nothing back. On a standalone Redis and on
a Redis Cluster (a club's keys in one slot, its games' in theirs)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tablelog.service.api.server import BackgroundServer, background_server
from tablelog.service.store.memory import MemoryStore
from tablelog.v1 import standings_pb2
from tablelog_client import Client
from tests.service.helpers import CHAIN, OWNER_TOKEN


@pytest.fixture(params=["standalone", "cluster"])
def redis_url(request: pytest.FixtureRequest) -> str:
    if request.param == "cluster":
        return str(request.getfixturevalue("redis_cluster").url)
    return str(request.getfixturevalue("embedded_redis").url)


def traces(server: BackgroundServer, club_id: str, game_ids: list[str]) -> list[str]:
    """Every key whose name holds the club id or one of its games' ids, and every set of
    the server's that names the club."""
    built: Any = server.built
    client: Any = built.recorder.store.redis

    async def found() -> list[str]:
        names = [
            key.decode()
            async for key in client.scan_iter(match="*", count=1000)
            if club_id in key.decode() or any(g in key.decode() for g in game_ids)
        ]
        memory = MemoryStore(client)
        for key in (memory.dirty_key, str(built.members.clubs_key)):
            if await client.sismember(key, club_id):
                names.append(f"{key} holds it")
        return sorted(names)

    names: Any = server.run(found())
    return list(names)


def test_deleting_a_club_leaves_nothing_of_it_in_redis(redis_url: str) -> None:
    with (
        background_server(redis_url, CHAIN, OWNER_TOKEN) as server,
        Client(server.target, token=OWNER_TOKEN, timeout=30) as operator,
    ):
        made = operator.create_club("doomed club")
        club_id = made.club.club_id
        with Client(server.target, token=made.owner_token, timeout=30) as owner:
            game = owner.create_game("splendor", ["Ann", "Bob"])
            version = game.version
            for _ in range(2):
                move = owner.legal_moves(game.game_id)[1][0].notation
                version = owner.record(game.game_id, move, expected_version=version).game.version
            owner.abandon(game.game_id, expected_version=version)  # noted in the feed
            owner.set_season("spring", "2026-03-01", "2026-05-31")
            owner.rename_player("Ann", "Anna")  # the roster
            owner.bind_seat(game.game_id, 1, owner.whoami().member.member_id)
            deadline = time.monotonic() + 20
            while owner.standings("splendor").lag.pending_games:
                assert time.monotonic() < deadline, "the projector never caught up"
                time.sleep(0.05)
            assert isinstance(owner.standings("splendor"), standings_pb2.GetStandingsResponse)
        before = traces(server, club_id, [game.game_id])
        for part in ("roster", "seasons", "memory:seen", "memory:checkpoint", "members", "tokens"):
            assert any(name.endswith(f"}}:{part}") for name in before), (part, before)
        assert any(name.endswith(":events") for name in before)
        assert any(name.endswith(":result") for name in before)  # the game's sealed result
        assert operator.delete_club(club_id) == 1
        assert traces(server, club_id, [game.game_id]) == []

        # A projector that took the club's feed before the deletion, and a note of a game of
        # it, write nothing back.
        built: Any = server.built
        memory = MemoryStore(built.recorder.store.redis)

        async def late_writes() -> None:
            await memory.apply(club_id, game.game_id, 9, None, "1-0")
            await memory.note_change(club_id, game.game_id)
            # A fold that read the game before the deletion stores no result after it.
            assert not await built.recorder.store.results.put(game.game_id, b"sealed", b"")

        server.run(late_writes())
        assert traces(server, club_id, [game.game_id]) == []
