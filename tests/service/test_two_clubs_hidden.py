"""The hidden-information checks (`tests/service/test_hidden_information.py`) again with two
clubs on one server, on Redis and on Redis Cluster: the operator creates a second club with
`CreateClub`, and its owner, recorder, players, spectator and a link token walk every read
path of their own dealt games, each of the five games on one of the two backends
(`ON_REDIS`), while the server's first club (the operator's own) holds a dealt game in
progress with a blind reserve of its own. What a
member may not see is derived as there; the same test runs, with the club's fixtures
replaced by the second club's (pytest finds a test's fixtures by the module it is collected
in). At the end the first club's game is as it was.

Across clubs, every call of one club's members naming the other's game is answered as no
game (`tests/service/test_two_clubs.py`), so no member of one club reads anything of the
other's games to check here."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog.service.logs import configure_logging
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog_client import Client
from tests.service import test_hidden_information as first_club
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.service.test_hidden_information import CASES, Case, Club


@dataclass(frozen=True)
class Served:
    server: BackgroundServer
    backend: str
    first_game: str
    """The first club's dealt game, a blind reserve in it."""
    first_events: list[bytes]
    """Its full record when the second club's walks began."""


@pytest.fixture(scope="module")
def served(request: pytest.FixtureRequest, embedded_redis: EmbeddedRedis) -> Iterator[Served]:
    """The session's server (on its embedded Redis), or one of its own on the Redis
    Cluster; either way the first club (the local owner's, who is the operator) has a game
    in progress."""
    running: BackgroundServer | None = None
    if request.param == "redis":
        server: BackgroundServer = request.getfixturevalue("server")
    else:
        configure_logging("warning", json=True)
        url = request.getfixturevalue("redis_cluster").url
        server = running = BackgroundServer(url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
    try:
        with Client(server.target, token=OWNER_TOKEN, timeout=30) as operator:
            game = operator.create_game("splendor", ["Ann", "Bob"], mode="dealt")
            operator.record(game.game_id, "reserve 1.deck", expected_version=game.version)
            events = [e.SerializeToString() for e in operator.export(game.game_id)]
        yield Served(server, request.param, game.game_id, events)
        with Client(server.target, token=OWNER_TOKEN, timeout=30) as operator:
            after = [e.SerializeToString() for e in operator.export(game.game_id)]
        assert after == events, "the first club's game changed"
    finally:
        if running is not None:
            running.stop()


ON_REDIS = ("splendor", "mercado-de-lisboa")
"""The games walked in the second club on Redis; the other three are walked on Redis Cluster.
Each game's walk costs 20-70 s on two shared cores, and each game runs in the first club on
Redis (test_hidden_information): so each game runs once in a second club, and both
backends carry one. These two hide the most kinds of things (a dealt deck and blind
reserves; money, hands and a bag)."""


@pytest.mark.parametrize(
    ("served", "case"),
    [
        pytest.param(
            "redis" if case.game in ON_REDIS else "cluster",
            case,
            id=f"{'redis' if case.game in ON_REDIS else 'cluster'}-{case.game}",
            # The cluster's walks (a server of their own on a local cluster) run with the
            # long tests, in .ci/run's second step: the README's command has 8 minutes.
            marks=() if case.game in ON_REDIS else pytest.mark.long,
        )
        for case in CASES
    ],
    indirect=["served"],
    scope="module",
)
def test_no_member_of_a_second_club_sees_another_seats_secret(
    case: Case, client: Client, club: Club, served: Served
) -> None:
    first_club.test_no_member_sees_another_seats_secret_by_any_path(
        case, client, club, served.server
    )


@pytest.fixture(scope="module")
def second_owner(served: Served) -> str:
    """The first owner token of a club the operator (the server's local owner) made."""
    with Client(served.server.target, token=OWNER_TOKEN, timeout=30) as operator:
        return operator.create_club(f"second club {uuid.uuid4().hex[:6]}").owner_token


@pytest.fixture
def client(served: Served, second_owner: str) -> Iterator[Client]:
    with Client(served.server.target, token=second_owner, timeout=30) as connected:
        assert not connected.whoami().operator
        yield connected


@pytest.fixture(scope="module")
def club(served: Served, second_owner: str) -> Club:
    with Client(served.server.target, token=second_owner, timeout=30) as owner:
        owner.update_club(players_may_record=True)

        def member(role: str) -> tuple[str, str]:
            added = owner.add_member(f"{role}-{uuid.uuid4().hex[:6]}", role)
            return added.member_id, owner.create_token(added.member_id).token

        players = [member("player") for _ in range(4)]
        return Club(member("recorder")[1], member("spectator")[1], players)
