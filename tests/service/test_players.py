"""A club's players through the service, on real Redis: seats matched by name, merge,
rename and bind as audited roster changes, compare-and-append against a stale version, a
refused change that changes nothing, and one club learning nothing of another's players."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
import redis

from tablelog.service.access.identity import Role
from tablelog.service.api.server import BackgroundServer
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog_client import Client
from tablelog_client.sdk import TablelogError
from tests.service.helpers import refused


def _club(server: BackgroundServer) -> tuple[str, str]:
    assert server.built is not None
    members = server.built.members
    club = "players-" + uuid.uuid4().hex[:8]

    async def make() -> str:
        await members.create_club(club, "players club")
        boss = await members.add_member(club, "Boss", Role.OWNER)
        token, _record = await members.create_token(club, boss.member_id, 0)
        return token

    return club, str(server.run(make()))


@pytest.fixture
def club(server: BackgroundServer) -> Iterator[tuple[str, Client]]:
    club_id, token = _club(server)
    with Client(server.target, token=token, timeout=30) as owner:
        yield club_id, owner


def test_seats_become_players_and_changes_are_audited(
    club: tuple[str, Client], embedded_redis: EmbeddedRedis
) -> None:
    club_id, owner = club
    owner.create_game("splendor", ["Ann", "Bob"])
    owner.create_game("splendor", ["anne", "Cleo"])
    owner.create_game("splendor", ["  ANN ", "bob"])
    listed = owner.players()
    assert [p.display_name for p in listed.players] == ["Ann", "anne", "Bob", "Cleo"]
    assert listed.roster_version == 0

    merged = owner.merge_players("Ann", "ANNE")
    assert (merged.player.display_name, list(merged.player.aliases)) == ("Ann", ["anne"])
    assert merged.roster_version == 1
    renamed = owner.rename_player("bob", "Robert")
    assert (renamed.player.display_name, list(renamed.player.aliases)) == ("Robert", ["Bob"])
    me = owner.whoami().member
    bound = owner.bind_player("cleo", me.member_id)
    assert bound.player.member_id == me.member_id

    listed = owner.players()
    assert [p.display_name for p in listed.players] == ["Ann", "Cleo", "Robert"]
    assert listed.roster_version == 3
    assert all(p.on_roster for p in listed.players)
    log = owner.roster_changes()
    assert list(log.lines) == [
        "anne merged into Ann (by Boss)",
        "Bob renamed Robert (by Boss)",
        "Cleo bound to member Boss (by Boss)",
    ]
    assert [c.version for c in log.changes] == [1, 2, 3]
    assert all(c.actor_member_id == me.member_id for c in log.changes)
    stored = redis.Redis.from_url(embedded_redis.url)
    assert stored.xlen(f"tl:{{club:{club_id}}}:roster") == 3


def test_the_players_follow_new_games_and_an_unchanged_club_is_not_walked_again(
    club: tuple[str, Client], server: BackgroundServer
) -> None:
    club_id, owner = club
    owner.create_game("splendor", ["Ann", "Bob"])
    assert [p.display_name for p in owner.players().players] == ["Ann", "Bob"]
    assert server.built is not None
    store = server.built.recorder.store
    walks: list[str] = []
    listing = store.list_game_ids

    async def counted(club: str, *args: Any, **kwargs: Any) -> list[str]:
        walks.append(club)
        return await listing(club, *args, **kwargs)

    store.list_game_ids = counted  # type: ignore[method-assign]
    try:
        assert [p.display_name for p in owner.players().players] == ["Ann", "Bob"]
        assert walks == []  # nothing indexed since: the names kept
        owner.create_game("medici-card-game", ["Cleo", "bob", "Dan"])
        assert [p.display_name for p in owner.players().players] == ["Ann", "Bob", "Cleo", "Dan"]
        assert walks == [club_id]
    finally:
        del store.list_game_ids


def test_a_refused_or_stale_change_changes_nothing(
    club: tuple[str, Client], embedded_redis: EmbeddedRedis
) -> None:
    club_id, owner = club
    owner.create_game("splendor", ["Dan", "Eve"])
    owner.rename_player("Dan", "Daniel")
    stored = redis.Redis.from_url(embedded_redis.url)
    key = f"tl:{{club:{club_id}}}:roster"
    stale = refused(lambda: owner.merge_players("Daniel", "Eve", expected_version=5))
    assert (stale.code, stale.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "STALE_VERSION")
    assert stale.metadata["current_version"] == "1"
    taken = refused(lambda: owner.rename_player("Daniel", "eve"))
    assert (taken.code, taken.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert "merge them" in taken.message
    unknown = refused(lambda: owner.bind_player("Eve", "m_nobody"))
    assert unknown.code == grpc.StatusCode.NOT_FOUND
    assert stored.xlen(key) == 1
    assert owner.merge_players("Daniel", "Eve", expected_version=1).roster_version == 2


def test_one_club_learns_nothing_of_anothers_players(
    server: BackgroundServer, club: tuple[str, Client]
) -> None:
    _club_id, owner = club
    owner.create_game("splendor", ["Fay", "Gus"])
    owner.merge_players("Fay", "Gus")
    _other_id, token = _club(server)
    with Client(server.target, token=token) as other:
        assert list(other.players().players) == []
        assert other.players().roster_version == 0
        assert list(other.roster_changes().changes) == []
        other.create_game("splendor", ["Fay", "Hal"])
        assert [p.display_name for p in other.players().players] == ["Fay", "Hal"]
        assert list(other.players().players[0].aliases) == []


def test_concurrent_changes_each_apply_once_in_order(club: tuple[str, Client]) -> None:
    _club_id, owner = club
    names = [f"P{i}" for i in range(8)]
    owner.create_game("medici", names[:6])

    def rename(name: str) -> int | str:
        try:
            return owner.rename_player(name, name + " Jr").roster_version
        except TablelogError as error:  # lost a race twice: told, never half-applied
            return error.reason

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(rename, names))
    assert {a for a in answers if isinstance(a, str)} <= {"STALE_VERSION"}
    versions = [a for a in answers if isinstance(a, int)]
    log = owner.roster_changes()
    assert sorted(versions) == [c.version for c in log.changes] == list(range(1, len(versions) + 1))
    renamed = {p.display_name for p in owner.players().players if p.display_name.endswith("Jr")}
    assert len(renamed) == len(versions) >= 1
