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
from tablelog_client import Client
from tests.service.helpers import OWNER_TOKEN
from tests.service.test_hidden_information import (
    Club,
    test_no_member_sees_another_seats_secret_by_any_path,
)

__all__ = ["test_no_member_sees_another_seats_secret_by_any_path"]


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
