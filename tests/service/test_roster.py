"""The roster of a club's players as a pure fold (`tablelog.service.memory.roster`): seats matched
by the player filter's name comparison, renames that keep the old name, merges, bindings, and the
refusals that keep two people from being joined by accident."""

from __future__ import annotations

import pytest

from tablelog.service.errors import InvalidRequest
from tablelog.service.memory import roster as rosters
from tablelog.v1 import clubs_pb2


def applied(roster: rosters.Roster, body: object) -> rosters.Roster:
    event = clubs_pb2.RosterEvent(version=roster.version + 1, actor_member_id="m_1")
    field = {
        clubs_pb2.PlayerRenamed: "player_renamed",
        clubs_pb2.PlayersMerged: "players_merged",
        clubs_pb2.PlayerBound: "player_bound",
    }[type(body)]
    getattr(event, field).CopyFrom(body)
    return rosters.advance(roster, event)


def test_a_seat_name_is_a_player_with_an_id_from_its_name() -> None:
    empty = rosters.Roster()
    ann = empty.player_of("Ann")
    assert (
        ann.player_id == empty.player_of("  ANN ").player_id == empty.player_of("Ａｎｎ").player_id
    )
    assert ann.player_id != empty.player_of("Anna").player_id
    assert ann.display_name == "Ann"
    assert not ann.on_roster


def test_a_merge_joins_every_seat_of_both_names() -> None:
    roster = applied(rosters.Roster(), rosters.merge(rosters.Roster(), "Ann", "Anne"))
    ann = roster.player_of("anne")
    assert ann.player_id == rosters.implicit_id("Ann")
    assert ann.display_name == "Ann"
    assert ann.names == ("Ann", "Anne")
    assert roster.player_of("ANN").player_id == ann.player_id
    assert ann.message().aliases == ["Anne"]
    # Merging again is refused in the player's words; so is a merge of a name with itself.
    with pytest.raises(InvalidRequest, match="already a name of Ann"):
        rosters.merge(roster, "Ann", "ANNE")


def test_a_rename_keeps_the_old_name_and_the_id() -> None:
    roster = applied(rosters.Roster(), rosters.rename(rosters.Roster(), "Bob", "Robert"))
    bob = roster.player_of("bob")
    assert bob.player_id == rosters.implicit_id("Bob") == roster.player_of("Robert").player_id
    assert (bob.display_name, bob.names) == ("Robert", ("Robert", "Bob"))


def test_a_rename_to_another_players_name_is_refused_as_a_merge() -> None:
    roster = rosters.Roster()
    with pytest.raises(InvalidRequest, match="merge them"):
        rosters.rename(roster, "Ann", "Cleo", seated=["Ann", "cleo"])
    after = applied(roster, rosters.rename(roster, "Ann", "Annie"))
    with pytest.raises(InvalidRequest, match="merge them"):
        rosters.rename(after, "Bob", "ANN")
    # To a spelling of one's own name is fine.
    assert rosters.rename(after, "Ann", "ANNIE").display_name == "ANNIE"


def test_bindings_one_member_one_player() -> None:
    roster = applied(rosters.Roster(), rosters.bind(rosters.Roster(), "Ann", "m_ann"))
    assert roster.player_of("ann").member_id == "m_ann"
    with pytest.raises(InvalidRequest, match="already the player Ann"):
        rosters.bind(roster, "Bob", "m_ann")
    roster = applied(roster, rosters.bind(roster, "Bob", "m_bob"))
    with pytest.raises(InvalidRequest, match="two different members"):
        rosters.merge(roster, "Ann", "Bob")
    unbound = applied(roster, rosters.bind(roster, "Bob", ""))
    merged = applied(unbound, rosters.merge(unbound, "Ann", "Bob"))
    assert merged.player_of("bob").member_id == "m_ann"


def test_names_are_bounded_and_blank_names_refused() -> None:
    with pytest.raises(InvalidRequest):
        rosters.merge(rosters.Roster(), "   ", "Ann")
    with pytest.raises(InvalidRequest):
        rosters.rename(rosters.Roster(), "Ann", "x" * 500)


def test_players_lists_the_roster_and_the_seated_once_each() -> None:
    roster = applied(rosters.Roster(), rosters.merge(rosters.Roster(), "Ann", "Anne"))
    names = [p.display_name for p in rosters.players_of(roster, ["anne", "Bob", "ANN", "bob "])]
    assert names == ["Ann", "Bob"]


def test_the_fold_refuses_a_gap() -> None:
    event = clubs_pb2.RosterEvent(version=2, player_bound=clubs_pb2.PlayerBound(player_id="x"))
    with pytest.raises(ValueError, match="does not follow"):
        rosters.advance(rosters.Roster(), event)
