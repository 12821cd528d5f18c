"""The hidden-information checks (`tests/service/test_hidden_information.py`) again, in a
second club on the same server: the operator creates a club with `CreateClub`, and its
owner, recorder, players, spectator and a link token walk every read path of their own
dealt games while the session's local club (the first club, whose tests share the server)
has games of its own. What a member may not see is derived as there; the same test runs,
with the club's fixtures replaced by the second club's (pytest finds a test's fixtures by
the module it is collected in)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog_client import Client
from tests.service import test_hidden_information as first_club
from tests.service.helpers import OWNER_TOKEN
from tests.service.test_hidden_information import CASES, Case, Club

SECOND_CLUB_GAMES = ("splendor", "mercado-de-lisboa")
"""The walk in a second club, for two games: the club changes who may look, not what a game
hides, and every game's walk runs in the first club (test_hidden_information). These two
hide the most kinds of things (a dealt deck and blind reserves; money, hands and a bag)."""


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if case.game in SECOND_CLUB_GAMES],
    ids=lambda case: case.game,
)
def test_no_member_of_a_second_club_sees_another_seats_secret(
    case: Case,
    client: Client,
    club: Club,
    server: BackgroundServer,
    embedded_redis: EmbeddedRedis,
) -> None:
    first_club.test_no_member_sees_another_seats_secret_by_any_path(
        case, client, club, server, embedded_redis
    )


@pytest.fixture(scope="module")
def second_owner(server: BackgroundServer) -> str:
    """The first owner token of a club the operator (the session's local owner) made."""
    with Client(server.target, token=OWNER_TOKEN, timeout=30) as operator:
        return operator.create_club(f"second club {uuid.uuid4().hex[:6]}").owner_token


@pytest.fixture
def client(server: BackgroundServer, second_owner: str) -> Iterator[Client]:
    with Client(server.target, token=second_owner, timeout=30) as connected:
        assert not connected.whoami().operator
        yield connected


@pytest.fixture(scope="module")
def club(server: BackgroundServer, second_owner: str) -> Club:
    with Client(server.target, token=second_owner, timeout=30) as owner:
        owner.update_club(players_may_record=True)

        def member(role: str) -> tuple[str, str]:
            added = owner.add_member(f"{role}-{uuid.uuid4().hex[:6]}", role)
            return added.member_id, owner.create_token(added.member_id).token

        players = [member("player") for _ in range(4)]
        return Club(member("recorder")[1], member("spectator")[1], players)
