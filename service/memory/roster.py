"""A club's players (issue 28): who sat at its games, matched by name, and the roster's
changes that say two names are one person (a merge), that a player goes by a new name (a
rename) or is a member of the club (a binding).

Seats are matched to players by `tablelog.service.recording.game_index.normalised_player`,
the comparison the ListGames player filter already makes ("ANN", "ann " and "Ａｎｎ" are
one name). A name no roster change mentions is a player of its own, whose id is derived from
the name (`implicit_id`), so every seat of every game, past and future, has a player without
any registration; a change names players by those ids, and a renamed player keeps the id of
the name it was first known by.

The roster is event-sourced like a game: each change is a `RosterEvent` appended to the
club's roster stream (the audit of who changed what, and when), and the roster is the fold
of those events (`fold_roster`): pure, so the service, the projections and the tests fold
the same way. `rename`, `merge` and `bind` check a change against a roster and return the
event body to append; they never change anything themselves."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from tablelog.service.access.identity import check_display_name
from tablelog.service.errors import InvalidRequest
from tablelog.service.recording.game_index import normalised_player
from tablelog.v1 import clubs_pb2

MAX_ROSTER_CHANGES: Final = 10_000
"""Changes a club's roster may hold: a bounded read and fold for every change and listing."""

MAX_CACHED_NAMES: Final = 100_000
"""Seat names a roster remembers the players of (`Roster.id_of`)."""

MAX_NAMES: Final = 64
"""Names (the display name and aliases) one player may have: a merge past it is refused."""


def implicit_id(name: str) -> str:
    """The id of the player first known by `name` (a seat's name): stable, and the same in
    every process, so a change can name a player nobody registered."""
    digest = hashlib.blake2b(normalised_player(name).encode(), digest_size=10)
    return "pl_" + digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str
    display_name: str
    names: tuple[str, ...]
    """Every name (as written) that is this player's: the display name first."""
    member_id: str = ""
    on_roster: bool = False

    def message(self) -> clubs_pb2.ClubPlayer:
        return clubs_pb2.ClubPlayer(
            player_id=self.player_id,
            display_name=self.display_name,
            aliases=[n for n in self.names if n != self.display_name],
            member_id=self.member_id,
            on_roster=self.on_roster,
        )


@dataclass(frozen=True, slots=True)
class Roster:
    """The players the roster's changes mention, and the name that leads to each."""

    version: int = 0
    players: Mapping[str, Player] = field(default_factory=dict)
    by_name: Mapping[str, str] = field(default_factory=dict)
    """normalised name -> player id, for every name of every player on the roster."""
    ids: dict[str, str] = field(default_factory=dict, init=False, compare=False, repr=False)
    """Seat name as written -> player id, filled as names are looked up: the read models
    look up every seat of every game, and normalising a name is the costly part."""

    def player_of(self, name: str) -> Player:
        """The player whose seats are named `name`: on the roster, or the player of its own
        that a name nobody mentioned is."""
        key = normalised_player(name)
        found = self.by_name.get(key)
        if found is not None:
            return self.players[found]
        shown = " ".join(name.split())
        return Player(implicit_id(name), shown, (shown,))

    def id_of(self, name: str) -> str:
        known = self.ids.get(name)
        if known is not None:
            return known
        found = self.by_name.get(normalised_player(name))
        player_id = found if found is not None else implicit_id(name)
        if len(self.ids) < MAX_CACHED_NAMES:
            self.ids[name] = player_id
        return player_id


def _with_player(roster: Roster, player: Player) -> Roster:
    players = dict(roster.players)
    players[player.player_id] = player
    by_name = dict(roster.by_name)
    for name in player.names:
        by_name[normalised_player(name)] = player.player_id
    return replace(roster, players=players, by_name=by_name)


def _known(roster: Roster, player_id: str, name: str) -> Player:
    """The player `player_id` on the roster, or (first mentioned now) the player of the
    name `name`."""
    found = roster.players.get(player_id)
    if found is not None:
        return found
    shown = " ".join(name.split())
    return Player(player_id, shown, (shown,), on_roster=True)


def advance(roster: Roster, event: clubs_pb2.RosterEvent) -> Roster:
    """The roster after one stored change (its version must follow on)."""
    if event.version != roster.version + 1:
        raise ValueError(f"roster change {event.version} does not follow {roster.version}")
    body = event.WhichOneof("body")
    roster = replace(roster, version=event.version)
    if body == "player_renamed":
        renamed = event.player_renamed
        player = _known(roster, renamed.player_id, renamed.from_name)
        names = (renamed.display_name, *(n for n in player.names if n != renamed.display_name))
        return _with_player(roster, replace(player, display_name=renamed.display_name, names=names))
    if body == "players_merged":
        merged = event.players_merged
        kept = _known(roster, merged.player_id, merged.display_name)
        gone = _known(roster, merged.merged_player_id, merged.merged_display_name)
        names = tuple(dict.fromkeys((*kept.names, *gone.names, *merged.merged_names)))
        member = kept.member_id or gone.member_id
        players = dict(roster.players)
        players.pop(gone.player_id, None)
        roster = replace(roster, players=players)
        return _with_player(roster, replace(kept, names=names, member_id=member, on_roster=True))
    if body == "player_bound":
        bound = event.player_bound
        player = _known(roster, bound.player_id, bound.display_name)
        return _with_player(roster, replace(player, member_id=bound.member_id, on_roster=True))
    raise ValueError(f"roster change {event.version} has no body")


def fold_roster(events: Iterable[clubs_pb2.RosterEvent]) -> Roster:
    roster = Roster()
    for event in events:
        roster = advance(roster, event)
    return roster


def _named(roster: Roster, name: str, field_name: str) -> Player:
    if not normalised_player(name):
        raise InvalidRequest(field_name, "Name the player.")
    check_display_name(name, field_name)
    return roster.player_of(name)


def rename(
    roster: Roster, name: str, new_name: str, seated: Iterable[str] = ()
) -> clubs_pb2.PlayerRenamed:
    """The change that gives the player `name` the display name `new_name`; refused when the
    new name is another player's (theirs on the roster, or a name seated in the club's games,
    `seated`): two people are joined by a merge, never by a rename."""
    player = _named(roster, name, "name")
    new = " ".join(check_display_name(new_name, "new_name").split())
    owner = roster.player_of(new)
    seated_keys = {normalised_player(s) for s in seated}
    if owner.player_id != player.player_id and (
        normalised_player(new) in roster.by_name or normalised_player(new) in seated_keys
    ):
        raise InvalidRequest(
            "new_name",
            f"{owner.display_name} is another player: to say they are the same person, "
            f"merge them (tablelog players merge {player.display_name!r} {owner.display_name!r}).",
        )
    if len(player.names) >= MAX_NAMES and normalised_player(new) not in {
        normalised_player(n) for n in player.names
    }:
        raise InvalidRequest("new_name", f"A player has at most {MAX_NAMES} names.")
    return clubs_pb2.PlayerRenamed(
        player_id=player.player_id, from_name=player.display_name, display_name=new
    )


def merge(roster: Roster, name: str, merged_name: str) -> clubs_pb2.PlayersMerged:
    """The change that makes every name of the player `merged_name` the player `name`'s."""
    kept = _named(roster, name, "name")
    gone = _named(roster, merged_name, "merged_name")
    if kept.player_id == gone.player_id:
        raise InvalidRequest(
            "merged_name", f"{merged_name.strip()!r} is already a name of {kept.display_name}."
        )
    if kept.member_id and gone.member_id and kept.member_id != gone.member_id:
        raise InvalidRequest(
            "merged_name",
            f"{kept.display_name} and {gone.display_name} are bound to two different members: "
            "unbind one first.",
        )
    if len(set(kept.names) | set(gone.names)) > MAX_NAMES:
        raise InvalidRequest("merged_name", f"A player has at most {MAX_NAMES} names.")
    return clubs_pb2.PlayersMerged(
        player_id=kept.player_id,
        merged_player_id=gone.player_id,
        display_name=kept.display_name,
        merged_display_name=gone.display_name,
        merged_names=list(gone.names),
    )


def bind(roster: Roster, name: str, member_id: str) -> clubs_pb2.PlayerBound:
    """The change that binds the player `name` to `member_id` (empty: unbinds); refused when
    that member is another player's already (the caller checks that the member exists)."""
    player = _named(roster, name, "name")
    if member_id:
        for other in roster.players.values():
            if other.member_id == member_id and other.player_id != player.player_id:
                raise InvalidRequest(
                    "member_id", f"That member is already the player {other.display_name}."
                )
    return clubs_pb2.PlayerBound(
        player_id=player.player_id, member_id=member_id, display_name=player.display_name
    )


def players_of(roster: Roster, seated: Iterable[str]) -> list[Player]:
    """Every player: those on the roster and those only seated (`seated`: the names of the
    club's seats), by display name."""
    found: dict[str, Player] = dict(roster.players)
    for name in seated:
        player = roster.player_of(name)
        if player.player_id not in found:
            found[player.player_id] = player
    return sorted(found.values(), key=lambda p: (normalised_player(p.display_name), p.player_id))


def change_words(event: clubs_pb2.RosterEvent, members: Mapping[str, str]) -> str:
    """A roster change in words, for the audit: "Anne merged into Ann (by Carla)"."""
    who = members.get(event.actor_member_id, event.actor_member_id or "the server")
    body = event.WhichOneof("body")
    if body == "player_renamed":
        r = event.player_renamed
        if r.from_name == r.display_name:
            return f"{r.display_name} put on the roster (by {who})"
        return f"{r.from_name} renamed {r.display_name} (by {who})"
    if body == "players_merged":
        m = event.players_merged
        return f"{m.merged_display_name} merged into {m.display_name} (by {who})"
    if body == "player_bound":
        b = event.player_bound
        if not b.member_id:
            return f"{b.display_name} unbound from any member (by {who})"
        return (
            f"{b.display_name} bound to member {members.get(b.member_id, b.member_id)} (by {who})"
        )
    return f"change {event.version} (by {who})"
